"""A full or read-only file system under the journal: typed errors, nothing lost, and a resume.

On a real tmpfs (tests/journal/fs.py). Before, a full disk came out of ``append`` as a bare
``sqlite3.OperationalError`` and a read-only one out of ``Journal.open`` as an ``OSError``.
"""

from __future__ import annotations

import pytest

from shoe_daemon.journal import Journal, JournalFull, JournalUnavailable

from .fs import fill, remount, tmpfs
from .helpers import card, new_shoe


def test_a_full_disk_refuses_the_append_whole_and_it_resumes_when_space_returns(tmp_path):
    with tmpfs(tmp_path / "fs", "4m") as fs:
        path = fs / "journal.sqlite3"
        acked = []
        with Journal.open(path, synchronous="full") as j:
            acked += j.append_many([new_shoe(0)] + [card(i) for i in range(1, 50)])
            j.record_coup("1-1", 1, 1, {"winner": "banco"})
            filler = fill(fs)
            assert j.writable() == "disk_full"
            refused = None
            for k in range(200):                 # until the WAL cannot grow any more
                batch = [card(1000 + k * 20 + i) for i in range(20)]
                try:
                    acked += j.append_many(batch)
                except JournalFull as exc:
                    refused = batch
                    assert exc.cause == "disk_full" and "full" in str(exc)
                    break
            assert refused is not None, "the journal never reported the full disk"
            with pytest.raises(JournalFull):
                j.record_coup("1-2", 1, 2, {"winner": "punto"})
            assert j.pending_recall == 1
            assert j.wait_writable(timeout=0.3, interval=0.05) is False
            assert j.last_seq() == len(acked)    # all or nothing: not one record of the refused batch
            filler.unlink()
            assert j.wait_writable(timeout=5, interval=0.05) is True
            assert j.pending_recall == 0 and j.coup("1-2").result == {"winner": "punto"}
            acked += j.append_many(refused)      # the same batch again: taken once
            assert acked == list(range(1, len(acked) + 1))
            assert j.verify(full=True).ok
        with Journal.open(path) as j:            # and after a restart
            assert j.last_seq() == len(acked) and j.verify(full=True).ok
            assert [e.event for e in j.last_events(20)] == refused


def test_a_read_only_file_system_is_a_clear_refusal_and_reads_still_work(tmp_path):
    with tmpfs(tmp_path / "fs", "4m") as fs:
        path = fs / "journal.sqlite3"
        with Journal.open(path) as j:
            j.append_many([new_shoe(0), card(1), card(2)])
        remount(fs, readonly=True)
        try:
            with pytest.raises(JournalUnavailable) as err:
                Journal.open(path)
            assert err.value.cause == "read_only" and "read-only" in str(err.value)
            with pytest.raises(JournalUnavailable):
                Journal.open(fs / "new.sqlite3")   # nor can a new one be created
        finally:
            remount(fs, readonly=False)
        with Journal.open(path) as j:
            assert j.last_seq() == 3 and j.writable() is None


def test_a_new_journal_on_a_full_disk(tmp_path):
    with tmpfs(tmp_path / "fs", "2m") as fs:
        fill(fs)
        with pytest.raises(JournalFull):
            Journal.open(fs / "journal.sqlite3")
        assert not (fs / "journal.sqlite3").exists()
