"""`shoe-daemon journal verify|show|export|recover`, run as a technician would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.journal import Journal, genesis, link

from .helpers import build, shoes, sql

ROOT = Path(__file__).resolve().parents[2]
N_SHOES, PER_SHOE = 3, 20
LAST = N_SHOES * PER_SHOE
CURRENT = LAST - PER_SHOE + 1


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.upper().startswith("SHOE_DAEMON__")}
    return subprocess.run(
        [sys.executable, "-m", "shoe_daemon", "journal", *args],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
        env={**base, "PYTHONPATH": str(ROOT), **(env or {})},
    )  # fmt: skip


@pytest.fixture
def jpath(tmp_path) -> Path:
    path = tmp_path / "j.sqlite3"
    build(path, shoes(N_SHOES, PER_SHOE))
    return path


def body_of(line: dict) -> str:
    event = {k: v for k, v in line.items() if k not in ("seq", "checksum")}
    return json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_help_documents_actions_and_exit_codes():
    r = cli("--help")
    assert r.returncode == 0
    for word in ("verify", "show", "export", "recover", "exit status", "corrupt"):
        assert word in r.stdout
    r = cli("export", "--help")
    assert r.returncode == 0 and "--intact-only" in r.stdout and "--journal" in r.stdout and "--config" in r.stdout


def test_verify(jpath, tmp_path):
    r = cli("verify", "--journal", str(jpath))
    assert r.returncode == 0 and "journal OK (quick)" in r.stdout and f"seq {CURRENT}..{LAST}" in r.stdout
    r = cli("verify", "--full", "--journal", str(jpath))
    assert r.returncode == 0 and f"{LAST} record(s) verified (seq 1..{LAST})" in r.stdout
    r = cli("verify", "--full", "--json", "--journal", str(jpath))
    assert r.returncode == 0 and json.loads(r.stdout)["ok"] is True

    sql(jpath, "UPDATE events SET body = replace(body, 'counter\":9', 'counter\":99') WHERE seq = 10")  # an old shoe
    assert cli("verify", "--journal", str(jpath)).returncode == 0
    r = cli("verify", "--full", "--journal", str(jpath))
    assert r.returncode == 1
    assert "seq 10: checksum mismatch" in r.stdout and "last good seq: 9" in r.stdout
    data = json.loads(cli("verify", "--full", "--json", "--journal", str(jpath)).stdout)
    assert (data["ok"], data["reason"], data["seq"], data["last_good_seq"]) == (False, "checksum_mismatch", 10, 9)

    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x00garbage" * 1000)
    r = cli("verify", "--journal", str(garbage))
    assert r.returncode == 1 and "file is not a database" in r.stdout
    r = cli("verify", "--journal", str(tmp_path / "missing.sqlite3"))
    assert r.returncode == 2 and "no such journal" in r.stderr


def test_journal_path_from_config_or_environment(jpath, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[journal]\npath = "{jpath}"\nsynchronous = "normal"\n')
    r = cli("verify", "--config", str(cfg))
    assert r.returncode == 0 and str(jpath) in r.stdout
    r = cli("show", "--last", "1", env={"SHOE_DAEMON__JOURNAL__PATH": str(jpath)})
    assert r.returncode == 0 and str(jpath) in r.stdout
    cfg.write_text("[journal]\npaht = 'x'\n")
    r = cli("verify", "--config", str(cfg))
    assert r.returncode == 2 and "config error: unknown key journal.paht (did you mean path?)" in r.stderr
    r = cli("verify", "--config", str(cfg), "--journal", str(jpath))
    assert r.returncode == 2 and "not allowed with" in r.stderr  # one or the other


def test_show(jpath):
    r = cli("show", "--last", "5", "--journal", str(jpath))
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert f"current shoe from seq {CURRENT}" in r.stdout
    assert [int(x.split()[0]) for x in lines[-5:]] == list(range(LAST - 4, LAST + 1))
    assert "card" in lines[-1] and "shoe" in lines[-1]
    r = cli("show", "--last", "3", "--json", "--journal", str(jpath))
    got = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["seq"] for x in got] == [LAST - 2, LAST - 1, LAST] and all(len(x["checksum"]) == 64 for x in got)


def test_export(jpath, tmp_path):
    out = tmp_path / "out.jsonl"
    r = cli("export", "--out", str(out), "--journal", str(jpath))
    assert r.returncode == 0 and f"exported {LAST} event(s)" in r.stderr
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["seq"] for x in lines] == list(range(1, LAST + 1))
    with Journal.open(jpath, readonly=True, verify="none") as j:
        prev = genesis(j.journal_id)
        stored = [e.event.to_json() for e in j.events()]
    for line, body in zip(lines, stored, strict=True):              # checkable with hashlib alone
        assert body_of(line) == body and Event.from_json(body).kind in Kind
        prev = link(prev, line["seq"], body)
        assert line["checksum"] == prev

    sql(jpath, "DELETE FROM events WHERE seq = 25")
    out2 = tmp_path / "out2.jsonl"
    r = cli("export", "--out", str(out2), "--journal", str(jpath))
    assert r.returncode == 1 and "seq 25: gap in seq" in r.stderr and "nothing written" in r.stderr
    assert not out2.exists()
    r = cli("export", "--out", str(out2), "--intact-only", "--journal", str(jpath))
    assert r.returncode == 1 and "seq 25: gap in seq" in r.stderr and "stopped" in r.stderr and "seq 1..24" in r.stderr
    assert [json.loads(x)["seq"] for x in out2.read_text().splitlines()] == list(range(1, 25))


def test_recover_with_carry_shoe(jpath, tmp_path):
    bad = CURRENT + 8
    sql(jpath, "UPDATE events SET checksum = 'ff' WHERE seq = ?", (bad,))
    with pytest.raises(Exception, match="checksum mismatch"):
        Journal.open(jpath)                                       # the daemon would refuse to deal
    with Journal.open(jpath, verify="none"):                      # a writer holds the journal
        r = cli("recover", "--out", str(tmp_path / "rec.jsonl"), "--journal", str(jpath))
        assert r.returncode == 2 and "in use" in r.stderr
    r = cli("recover", "--out", str(tmp_path / "rec.jsonl"), "--carry-shoe", "--journal", str(jpath))
    assert r.returncode == 0, r.stderr
    assert f"seq {bad}: checksum mismatch" in r.stderr and f"exported {bad - 1} intact event(s)" in r.stderr
    aside = Path(f"{jpath}.corrupt-1")
    assert aside.exists() and "carrying 8 event(s)" in r.stderr
    exported = [json.loads(x) for x in (tmp_path / "rec.jsonl").read_text().splitlines()]
    assert [x["seq"] for x in exported] == list(range(1, bad))

    with Journal.open(aside, readonly=True, verify="none") as old:  # kept, untouched: evidence
        assert old.last_seq() == LAST and not old.verify(full=True).ok
        old_id = old.journal_id
        old_shoe = [e.event for e in old.events(since_seq=CURRENT - 1, limit=bad - CURRENT)]
    with Journal.open(jpath) as fresh:                            # dealing resumes
        assert fresh.journal_id != old_id
        meta = json.loads(fresh.meta["recovered_from"])
        assert (meta["journal_id"], meta["last_good_seq"], meta["reason"]) == (old_id, bad - 1, "checksum_mismatch")
        carried = list(fresh.current_shoe_events())
        assert [e.seq for e in carried] == list(range(1, 9)) and [e.event for e in carried] == old_shoe

    r = cli("recover", "--out", str(tmp_path / "rec2.jsonl"), "--journal", str(jpath))
    assert r.returncode == 0 and "nothing to recover" in r.stderr and not (tmp_path / "rec2.jsonl").exists()
    r = cli("recover", "--out", str(tmp_path / "rec3.jsonl"), "--force", "--journal", str(jpath))
    assert r.returncode == 0 and Path(f"{jpath}.corrupt-2").exists()


def test_recover_garbage_file(tmp_path):
    path = tmp_path / "j.sqlite3"
    path.write_bytes(b"this is not a journal" * 100)
    r = cli("recover", "--out", str(tmp_path / "rec.jsonl"), "--carry-shoe", "--journal", str(path))
    assert r.returncode == 0 and "file is not a database" in r.stderr and "exported 0 intact" in r.stderr
    assert Path(f"{path}.corrupt-1").read_bytes() == b"this is not a journal" * 100
    assert (tmp_path / "rec.jsonl").read_text() == ""
    assert cli("verify", "--full", "--journal", str(path)).returncode == 0
