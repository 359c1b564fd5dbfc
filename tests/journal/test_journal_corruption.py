"""Every kind of damage is detected, with the right seq and reason, and never skipped."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from shoe_daemon.journal import Journal, JournalCorrupt, Reason, link

from .helpers import build, card, rows, shoes, sql

# 3 shoes of 20 records: seq 1, 21, 41 are new_shoe; the current shoe is seq 41..60.
N_SHOES, PER_SHOE = 3, 20
LAST = N_SHOES * PER_SHOE
CURRENT = LAST - PER_SHOE + 1


@pytest.fixture
def jpath(tmp_path) -> Path:
    path = tmp_path / "j.sqlite3"
    build(path, shoes(N_SHOES, PER_SHOE))
    return path


def corrupt_on_open(path: Path, verify: str = "quick") -> JournalCorrupt:
    with pytest.raises(JournalCorrupt) as info:
        Journal.open(path, verify=verify)  # type: ignore[arg-type]
    return info.value


def assert_corrupt(path: Path, reason: Reason, seq: int | None, last_good: int | None, *, full_only: bool = False):
    """Opening for dealing raises (unless the damage is before the current shoe: then only a full
    verification sees it); the full verification reports the same problem."""
    if full_only:
        with Journal.open(path) as j:                             # quick: from the last checkpoint
            assert j.report is not None and j.report.ok
    else:
        err = corrupt_on_open(path)
        assert (err.reason, err.seq, err.last_good_seq) == (reason, seq, last_good), err
    err = corrupt_on_open(path, verify="full")
    assert (err.reason, err.seq, err.last_good_seq) == (reason, seq, last_good), err
    assert str(path) in str(err) and reason.text in str(err)
    with Journal.open(path, readonly=True, verify="none") as j:
        report = j.verify(full=True)
    assert not report.ok and (report.reason, report.seq, report.last_good_seq) == (reason, seq, last_good)
    return err


def test_intact_journal_verifies(jpath):
    with Journal.open(jpath) as j:
        assert j.report is not None and j.report.ok and (j.report.first_seq, j.report.last_seq) == (CURRENT, LAST)
        full = j.verify(full=True)
        assert full.ok and full.records == LAST and full.highest_seq == LAST
        assert "journal OK" in full.summary()


# --------------------------------------------------------------------------- torn / altered records


def test_torn_last_record_body_truncated(jpath):
    sql(jpath, "UPDATE events SET body = substr(body, 1, length(body) - 7) WHERE seq = ?", (LAST,))
    err = assert_corrupt(jpath, Reason.CHECKSUM_MISMATCH, LAST, LAST - 1)
    assert "torn" in err.detail and "not a valid event" in err.detail


def test_torn_last_record_checksum_altered(jpath):
    sql(jpath, "UPDATE events SET checksum = substr(checksum, 1, 60) WHERE seq = ?", (LAST,))
    assert_corrupt(jpath, Reason.CHECKSUM_MISMATCH, LAST, LAST - 1)


def test_middle_record_altered_in_current_shoe(jpath):
    seq = CURRENT + 5
    sql(jpath, "UPDATE events SET body = replace(body, '\"card\":\"', '\"card\":\"X') WHERE seq = ?", (seq,))
    assert_corrupt(jpath, Reason.CHECKSUM_MISMATCH, seq, seq - 1)


def test_middle_record_altered_in_old_shoe_found_by_full_verification(jpath):
    sql(jpath, "UPDATE events SET body = replace(body, '\"counter\":7', '\"counter\":8') WHERE seq = 8")
    assert_corrupt(jpath, Reason.CHECKSUM_MISMATCH, 8, 7, full_only=True)


def test_altered_record_with_recomputed_checksum_breaks_the_next_link(jpath):
    # A careful forger recomputes the checksum of the record it changed: the next one breaks.
    by_seq = {s: (b, c) for s, b, c in rows(jpath)}
    seq = CURRENT + 3
    body = by_seq[seq][0].replace('"counter":', '"counter":1')
    sql(jpath, "UPDATE events SET body = ?, checksum = ? WHERE seq = ?", (body, link(by_seq[seq - 1][1], seq, body), seq))
    assert_corrupt(jpath, Reason.CHECKSUM_MISMATCH, seq + 1, seq)


def test_records_reordered(jpath):
    a, b = CURRENT + 2, CURRENT + 3
    r = {s: (body, c) for s, body, c in rows(jpath)}
    sql(jpath, "UPDATE events SET body = ?, checksum = ? WHERE seq = ?", (*r[b], a))
    sql(jpath, "UPDATE events SET body = ?, checksum = ? WHERE seq = ?", (*r[a], b))
    assert_corrupt(jpath, Reason.CHECKSUM_MISMATCH, a, a - 1)


def test_query_column_altered(jpath):
    sql(jpath, "UPDATE events SET kind = 'new_shoe' WHERE seq = ?", (LAST - 1,))
    # the index now calls seq LAST-1 a new shoe without a checkpoint: quick anchors on it
    err = corrupt_on_open(jpath)
    assert (err.reason, err.seq) == (Reason.CHECKPOINT_MISMATCH, LAST - 1)
    err = corrupt_on_open(jpath, verify="full")
    assert (err.reason, err.seq, err.last_good_seq) == (Reason.COLUMN_MISMATCH, LAST - 1, LAST - 2)
    sql(jpath, "UPDATE events SET kind = 'card', source = 'camera' WHERE seq = ?", (LAST - 1,))
    assert_corrupt(jpath, Reason.COLUMN_MISMATCH, LAST - 1, LAST - 2)


def test_unparsable_body_with_a_valid_chain(jpath):
    # What a writer bug would leave: a consistent chain over a body that is not an event.
    r = {s: (b, c) for s, b, c in rows(jpath)}
    seq = LAST - 1
    bad = '{"data":{},"kind":"no_such_kind","source":"shoe","t":1.0}'
    c1 = link(r[seq - 1][1], seq, bad)
    c2 = link(c1, LAST, r[LAST][0])
    sql(jpath, "UPDATE events SET body = ?, checksum = ? WHERE seq = ?", (bad, c1, seq))
    sql(jpath, "UPDATE events SET checksum = ? WHERE seq = ?", (c2, LAST))
    os.unlink(f"{jpath}-head")  # the witness would (rightly) see the rewrite; test the body check
    err = assert_corrupt(jpath, Reason.UNPARSABLE_BODY, seq, seq - 1)
    assert "no_such_kind" in err.detail


# --------------------------------------------------------------------------- missing records


def test_deleted_middle_row(jpath):
    sql(jpath, "DELETE FROM events WHERE seq = ?", (CURRENT + 4,))
    err = assert_corrupt(jpath, Reason.SEQ_GAP, CURRENT + 4, CURRENT + 3)
    assert f"seq {CURRENT + 4} missing" in err.detail


def test_deleted_row_in_old_shoe(jpath):
    sql(jpath, "DELETE FROM events WHERE seq BETWEEN 5 AND 7")
    err = assert_corrupt(jpath, Reason.SEQ_GAP, 5, 4, full_only=True)
    assert "seq 5..7 missing" in err.detail


def test_deleted_first_rows(jpath):
    sql(jpath, "DELETE FROM events WHERE seq <= 2")
    assert_corrupt(jpath, Reason.SEQ_GAP, 1, 0)


def test_deleted_last_rows(jpath):
    sql(jpath, "DELETE FROM events WHERE seq > ?", (LAST - 2,))
    err = assert_corrupt(jpath, Reason.TAIL_MISSING, LAST - 1, LAST - 2)
    assert f"seq {LAST - 1}..{LAST} missing" in err.detail


def test_deleted_last_rows_behind_sqlite_back_found_by_head_witness(jpath):
    sql(jpath, "DELETE FROM events WHERE seq > ?", (LAST - 3,))
    sql(jpath, "UPDATE sqlite_sequence SET seq = ? WHERE name = 'events'", (LAST - 3,))
    err = assert_corrupt(jpath, Reason.TAIL_MISSING, LAST - 2, LAST - 3)
    assert "acknowledged" in err.detail


def test_checkpoint_row_deleted_or_altered(jpath, tmp_path):
    other = tmp_path / "other.sqlite3"
    shutil.copy(jpath, other)
    shutil.copy(f"{jpath}-head", f"{other}-head")
    sql(jpath, "DELETE FROM checkpoints WHERE seq = ?", (CURRENT,))
    err = corrupt_on_open(jpath)
    assert (err.reason, err.seq) == (Reason.CHECKPOINT_MISMATCH, CURRENT)
    err = corrupt_on_open(jpath, verify="full")
    assert (err.reason, err.seq, err.last_good_seq) == (Reason.CHECKPOINT_MISMATCH, CURRENT, CURRENT - 1)
    sql(other, "UPDATE checkpoints SET prev_checksum = ? WHERE seq = ?", ("0" * 64, CURRENT))
    err = corrupt_on_open(other)
    assert (err.reason, err.seq) == (Reason.CHAIN_BREAK, CURRENT)
    err = corrupt_on_open(other, verify="full")
    assert (err.reason, err.seq, err.last_good_seq) == (Reason.CHECKPOINT_MISMATCH, CURRENT, CURRENT - 1)


# --------------------------------------------------------------------------- not a journal


def test_garbage_empty_and_foreign_files(tmp_path):
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(random.Random(1).randbytes(20000))
    err = corrupt_on_open(garbage)
    assert err.reason is Reason.NOT_A_DATABASE and err.seq is None
    empty = tmp_path / "empty.sqlite3"
    empty.write_bytes(b"")
    err = corrupt_on_open(empty)
    assert err.reason is Reason.NOT_A_DATABASE and "empty" in err.detail
    assert empty.stat().st_size == 0                              # never "created" over
    foreign = tmp_path / "foreign.sqlite3"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE x(a)")
    conn.commit()
    conn.close()
    assert corrupt_on_open(foreign).reason is Reason.NOT_A_JOURNAL
    text = tmp_path / "text.sqlite3"
    text.write_text("SQLite format 3 but not really\n")
    assert corrupt_on_open(text).reason is Reason.NOT_A_DATABASE


def test_main_database_truncated_at_random_offsets(jpath, tmp_path):
    size = jpath.stat().st_size
    rnd = random.Random(20240607)
    offsets = sorted(rnd.sample(range(1, size - 1), 14)) + [0, 17, 100, 4096, size - 1]
    for off in offsets:
        p = tmp_path / f"t{off}.sqlite3"
        shutil.copy(jpath, p)
        shutil.copy(f"{jpath}-head", f"{p}-head")
        os.truncate(p, off)
        with pytest.raises(JournalCorrupt) as info:
            Journal.open(p).close()
        assert info.value.reason in (
            Reason.NOT_A_DATABASE, Reason.SQLITE_INTEGRITY, Reason.SEQ_GAP, Reason.CHECKSUM_MISMATCH,
            Reason.TAIL_MISSING, Reason.NOT_A_JOURNAL,
        ), (off, info.value)  # fmt: skip


def _journal_with_wal(tmp_path: Path) -> tuple[Path, list[str]]:
    """A journal whose last 200 records are only in the -wal file, as after a crash."""
    src = tmp_path / "src.sqlite3"
    events = shoes(1, 50) + [card(i) for i in range(50, 250)]
    with Journal.open(src) as j:
        j.append_many(events[:50])                                # checkpointed into the db on close
    snap = tmp_path / "snap.sqlite3"
    with Journal.open(src) as j:
        for e in events[50:]:
            j.append(e)
        for suffix in ("", "-wal", "-head"):                      # the files as a power cut leaves them
            shutil.copy(f"{src}{suffix}", f"{snap}{suffix}")
    assert Path(f"{snap}-wal").stat().st_size > 0
    return snap, [e.to_json() for e in events]


def test_wal_truncated_at_random_offsets(tmp_path):
    snap, bodies = _journal_with_wal(tmp_path)
    wal_size = Path(f"{snap}-wal").stat().st_size
    rnd = random.Random(99)
    for off in sorted(rnd.sample(range(0, wal_size - 1), 12)) + [0, 31, wal_size - 1]:
        p = tmp_path / f"w{off}.sqlite3"
        for suffix in ("", "-wal", "-head"):
            shutil.copy(f"{snap}{suffix}", f"{p}{suffix}")
        os.truncate(f"{p}-wal", off)
        with pytest.raises(JournalCorrupt) as info:
            Journal.open(p).close()
        err = info.value
        # SQLite keeps the committed transactions before the cut: a prefix, whose end is reported
        with Journal.open(p, readonly=True, verify="none") as j:
            kept = [e.event.to_json() for e in j.events()]
        assert kept == bodies[: len(kept)] and 50 <= len(kept) < len(bodies)
        assert (err.reason, err.seq, err.last_good_seq) == (Reason.TAIL_MISSING, len(kept) + 1, len(kept)), off
    # the whole WAL intact: all there
    p = tmp_path / "whole.sqlite3"
    for suffix in ("", "-wal", "-head"):
        shutil.copy(f"{snap}{suffix}", f"{p}{suffix}")
    with Journal.open(p, verify="full") as j:
        assert [e.event.to_json() for e in j.events()] == bodies


def test_wal_lost_or_older_copy_restored(tmp_path):
    snap, bodies = _journal_with_wal(tmp_path)
    os.unlink(f"{snap}-wal")                                      # a backup that forgot the -wal
    err = corrupt_on_open(snap)
    assert (err.reason, err.seq, err.last_good_seq) == (Reason.TAIL_MISSING, 51, 50)
    assert "acknowledged" in err.detail
