"""The API's audit log is anchored in the journal: every way of cutting it is detected.

Real files: a journal on disk and the audit log written by ``AuditLog`` beside it, then damaged
as a person with a text editor, ``truncate`` or a script would; ``verify_audit`` (what
`shoe-daemon journal verify --audit` and the daemon's start run) must refuse each. Before, the
log's own chain caught an edited middle line only.
"""

from __future__ import annotations

import json

import pytest

from shoe_daemon.api.audit import AuditLog
from shoe_daemon.journal import Journal
from shoe_daemon.journal.audit import audit_path, check_at_start, line_hash, verify_audit

from .helpers import build, shoes
from .test_journal_cli import cli

N = 6


@pytest.fixture
def files(tmp_path):
    """A journal and its audit log of N lines, each recorded in the journal."""
    jpath = tmp_path / "journal.sqlite3"
    build(jpath, shoes(1, 10))
    apath = audit_path(jpath)
    with Journal.open(jpath) as j:
        log = AuditLog(apath, journal=j)
        for i in range(N):
            log.write({"t": 1.0 + i, "user": "sup1", "action": "void_coup", "reason": f"reason {i}", "status": 200})
    return jpath, apath


def check(jpath, apath):
    with Journal.open(jpath, readonly=True) as j:
        return verify_audit(j, apath)


def rechain(lines: list[str]) -> list[str]:
    """Recompute every ``prev``: what a forger who knows the format does after removing a line."""
    out, prev = [], ""
    for line in lines:
        entry = json.loads(line)
        entry["prev"] = prev
        text = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        out.append(text)
        prev = line_hash(text)
    return out


def test_intact_log_verifies_here_and_in_the_cli(files):
    jpath, apath = files
    report = check(jpath, apath)
    assert report.ok and report.lines == N and report.recorded == N, report
    r = cli("verify", "--journal", str(jpath), "--audit")
    assert r.returncode == 0 and "audit log OK" in r.stdout and f"{N} line(s)" in r.stdout, r.stdout + r.stderr


def cut_tail(apath):
    data = apath.read_bytes()
    apath.write_bytes(data[: len(data) - 25])


def delete_last_line(apath):
    lines = apath.read_text().splitlines(keepends=True)
    apath.write_text("".join(lines[:-1]))


def empty(apath):
    apath.write_bytes(b"")


def remove(apath):
    apath.unlink()


def rechained_deletion(apath):
    lines = apath.read_text().splitlines()
    apath.write_text("\n".join(rechain(lines[:2] + lines[3:])) + "\n")


def edit_middle(apath):
    lines = apath.read_text().splitlines()
    lines[2] = lines[2].replace("reason 2", "reason X")
    apath.write_text("\n".join(lines) + "\n")


def rechained_edit(apath):
    lines = apath.read_text().splitlines()
    lines[4] = lines[4].replace("sup1", "sup2")
    apath.write_text("\n".join(rechain(lines)) + "\n")


def appended_forgery(apath):
    lines = apath.read_text().splitlines()
    extra = rechain([*lines, lines[-1], lines[-1]])[-2:]
    apath.write_text("\n".join(lines + extra) + "\n")


@pytest.mark.parametrize("damage", [cut_tail, delete_last_line, empty, remove, rechained_deletion, edit_middle,
                                    rechained_edit, appended_forgery])
def test_every_cut_is_detected(files, damage):
    jpath, apath = files
    damage(apath)
    report = check(jpath, apath)
    assert not report.ok, report
    r = cli("verify", "--journal", str(jpath), "--audit", str(apath))
    assert r.returncode == 1 and "audit log fails verification" in r.stdout, r.stdout + r.stderr


def test_a_crash_between_the_line_and_its_record_is_not_damage(files):
    jpath, apath = files
    with Journal.open(jpath) as j:
        AuditLog(apath).write({"t": 9.0, "user": "sup1", "action": "x"})        # the line, not its record
        report = verify_audit(j, apath)
        assert report.ok and report.unrecorded == 1
        assert check_at_start(j, apath).report.ok                               # the start records it
        assert verify_audit(j, apath).unrecorded == 0


def test_start_sets_a_failing_log_aside_and_starts_a_new_one(files):
    jpath, apath = files
    delete_last_line(apath)
    with Journal.open(jpath) as j:
        result = check_at_start(j, apath)
        assert not result.report.ok and result.set_aside == f"{apath}.corrupt-1"
        assert not apath.exists() and (apath.parent / f"{apath.name}.corrupt-1").exists()   # never deleted
        assert json.loads(j.meta["audit_set_aside"])[0]["lines_recorded"] == N
        log = AuditLog(apath, journal=j)
        log.write({"t": 10.0, "user": "sup1", "action": "after"})
        assert verify_audit(j, apath).ok
    assert check(jpath, apath).ok


def test_a_journal_without_a_record_adopts_an_intact_log(tmp_path):
    """A fresh journal (made by recover) or one migrated from format 1 has no record yet."""
    jpath = tmp_path / "journal.sqlite3"
    build(jpath, shoes(1, 5))
    apath = audit_path(jpath)
    log = AuditLog(apath)                                   # written without a journal
    for i in range(3):
        log.write({"t": float(i), "action": "x"})
    with Journal.open(jpath) as j:
        result = check_at_start(j, apath)
        assert result.report.ok and result.adopted == 3
    delete_last_line(apath)
    assert not check(jpath, apath).ok
