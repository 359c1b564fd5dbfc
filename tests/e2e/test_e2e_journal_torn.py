"""A damaged journal tail: the daemon refuses to deal until a person recovers the journal.

After a crash (SIGKILL) the journal's last record is damaged, in two ways: the record's body
torn in place (edited with sqlite3), or the write-ahead log cut short (the last transaction gone,
which the head witness notices). The daemon then exits non-zero (3) before dealing, with a message
naming the problem and the way out, and never reports READY. ``shoe-daemon journal recover --out
x.jsonl --carry-shoe`` sets the journal aside and starts a fresh one holding the intact current
shoe; the daemon then starts, resumes the shoe's link after the last intact event, and the shoe
sends again what the damaged tail held: the new journal has every card of the ground truth once.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import struct
import tempfile
import time
from pathlib import Path

import pytest

from shoe_daemon.core.events import Kind
from shoe_daemon.journal import Journal
from tests.e2e.harness import run_cli, write_config
from tests.e2e.rules import card_list, dealt_list, n_results, statuses

PREFIX = "baccarat/e2e"
COUPS = 6


def journal_cards(path) -> list[tuple[int, str]]:
    with Journal.open(path, readonly=True) as j:
        return card_list(e.event.data for e in j.events() if e.event.kind is Kind.CARD)


def tear_last_body(path) -> str:
    """The last record's body cut in half in place (its checksum left as it was)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("UPDATE events SET body = substr(body, 1, length(body) / 2) "
                     "WHERE seq = (SELECT max(seq) FROM events)")
        conn.commit()
    finally:
        conn.close()
    return "checksum mismatch"


def _wal_commit_ends(wal: bytes) -> list[int]:
    """File offsets just past each commit frame of a WAL (frames of the current salt only)."""
    magic, _version, page_size, _ckpt, salt1, salt2 = struct.unpack(">6I", wal[:24])
    assert magic in (0x377F0682, 0x377F0683)
    ends, off = [], 32
    while off + 24 + page_size <= len(wal):
        _page, commit_size, s1, s2 = struct.unpack(">4I", wal[off:off + 16])
        if (s1, s2) != (salt1, salt2):
            break
        off += 24 + page_size
        if commit_size:
            ends.append(off)
    return ends


def _last_seq_if_cut(path: Path, size: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "copy.sqlite3"
        shutil.copyfile(path, copy)
        shutil.copyfile(f"{path}-wal", f"{copy}-wal")
        os.truncate(f"{copy}-wal", size)
        conn = sqlite3.connect(copy)
        try:
            return conn.execute("SELECT max(seq) FROM events").fetchone()[0]
        finally:
            conn.close()


def cut_wal(path) -> str:
    """The WAL cut short inside the commit frame of the last transaction that appended events (a
    torn write: SQLite drops that transaction and what follows, the head witness remembers it)."""
    path = Path(path)
    wal = Path(f"{path}-wal").read_bytes()
    acknowledged = int(Path(f"{path}-head").read_text().split()[3])
    for end in reversed(_wal_commit_ends(wal)):
        if _last_seq_if_cut(path, end - 100) < acknowledged:
            os.truncate(f"{path}-wal", end - 100)
            return "records missing at the end"
    raise AssertionError("the journal's last events are not in its WAL")


@pytest.mark.parametrize("damage", [tear_last_body, cut_wal], ids=["torn-body", "cut-wal"])
def test_torn_journal_tail_stops_the_daemon_until_recovered(tmp_path, mosquitto, mqtt_subscriber, shoe_factory,
                                                           daemon_factory, notify, damage):
    shoe = shoe_factory(decks=8, seed=505, pace=0, coups=COUPS, shoes=None)
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/#")
    journal = tmp_path / "journal.sqlite3"
    cfg = write_config(tmp_path / "daemon.toml", shoe_port=shoe.link, journal=journal, mqtt_port=mosquitto.port)
    daemon = daemon_factory(cfg).start()
    shoe.start()
    sub.wait_for(lambda msgs: n_results(msgs, PREFIX) >= COUPS, timeout=30)
    assert shoe.wait(10)
    assert daemon.kill() == -9
    sub.wait_for(lambda msgs: statuses(msgs, PREFIX) == ["online", "offline"], timeout=20)

    problem = damage(journal)

    ready_before = notify.count("READY", "1")
    daemon.start(wait_ready=False)
    rc = daemon.wait_exit(30)
    log = daemon.log_text()
    assert rc == 3, log
    assert "journal corrupt" in log and problem in log and str(journal) in log, log
    assert "refusing to deal" in log and "journal recover" in log, log
    assert "Traceback" not in log, log
    assert notify.count("READY", "1") == ready_before, "READY=1 from a daemon that refused to deal"
    assert statuses(sub.snapshot(), PREFIX) == ["online", "offline"], "it connected to MQTT"

    out = tmp_path / "x.jsonl"
    rec = run_cli("journal", "recover", "--config", str(cfg), "--out", str(out), "--carry-shoe")
    assert rec.returncode == 0, rec.stdout + rec.stderr
    assert out.stat().st_size > 0
    assert list(tmp_path.glob("journal.sqlite3.corrupt-*")), "the damaged journal was not kept aside"

    daemon.start()
    sub.wait_for(lambda msgs: statuses(msgs, PREFIX) == ["online", "offline", "online"], timeout=20)
    assert "journal verified" in daemon.log_text()
    # The shoe sends again what the damaged tail held: the new journal has every card once.
    deadline = time.monotonic() + 20
    while journal_cards(journal) != dealt_list(shoe.dealt) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert journal_cards(journal) == dealt_list(shoe.dealt)
    assert daemon.stop() == 0, daemon.log_text()
