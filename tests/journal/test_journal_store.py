"""The journal store on a real SQLite file: append, replay, recall, concurrency."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.journal import (
    APPLICATION_ID,
    Entry,
    Journal,
    JournalBusy,
    JournalNotFound,
    JournalReadOnly,
    genesis,
    link,
)

from .helpers import card, new_shoe, rows, shoes

# --------------------------------------------------------------------------- round trip

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
events_st = st.builds(
    Event,
    t=st.floats(min_value=0, max_value=4e9, allow_nan=False),
    kind=st.sampled_from(list(Kind)),
    source=st.text(max_size=12),
    data=st.dictionaries(st.text(max_size=10), json_values, max_size=5),
)


@pytest.fixture(scope="module")
def shared_journal(tmp_path_factory):
    j = Journal.open(tmp_path_factory.mktemp("rt") / "j.sqlite3", synchronous="normal")
    yield j
    j.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.lists(events_st, min_size=1, max_size=8), group=st.booleans())
def test_round_trip_is_byte_identical(shared_journal, batch, group):
    j = shared_journal
    before = j.last_seq()
    seqs = j.append_many(batch) if group else [j.append(e) for e in batch]
    assert seqs == list(range(before + 1, before + 1 + len(batch)))
    back = list(j.events(since_seq=before))
    assert [e.seq for e in back] == seqs
    assert [e.event.to_json() for e in back] == [e.to_json() for e in batch]
    assert [e.event for e in back] == batch


def test_round_trip_survives_reopen_and_full_verify(tmp_path):
    path = tmp_path / "j.sqlite3"
    events = shoes(3, 40)
    with Journal.open(path, synchronous="full") as j:
        assert j.append(events[0]) == 1
        assert j.append_many(events[1:]) == list(range(2, len(events) + 1))
        jid = j.journal_id
    with Journal.open(path, verify="full") as j:
        assert j.journal_id == jid
        assert j.report is not None and j.report.ok and j.report.full and j.report.records == len(events)
        assert [e.event.to_json() for e in j.events()] == [e.to_json() for e in events]
        assert j.append(card(999)) == len(events) + 1


def test_file_layout_chain_and_meta(tmp_path):
    path = tmp_path / "j.sqlite3"
    events = shoes(2, 5)
    with Journal.open(path) as j:
        j.append_many(events)
        jid = j.journal_id
        assert j.meta["format"] == "2" and j.created
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    got = conn.execute("SELECT seq, t, kind, source, body, checksum FROM events ORDER BY seq").fetchall()
    prev = genesis(jid)
    for (seq, t, kind, source, body, checksum), ev in zip(got, events, strict=True):
        assert body == ev.to_json() and (t, kind, source) == (ev.t, ev.kind.value, ev.source)
        assert checksum == link(prev, seq, body)
        prev = checksum
    # a checkpoint at each new shoe, holding the chain value before it
    cps = conn.execute("SELECT seq, prev_checksum FROM checkpoints ORDER BY seq").fetchall()
    by_seq = {seq: checksum for seq, _b, checksum in rows(path)}
    assert cps == [(1, genesis(jid)), (6, by_seq[5])]
    conn.close()


def test_rejects_events_that_would_not_replay(tmp_path):
    with Journal.open(tmp_path / "j.sqlite3") as j:
        j.append(card(0))
        for bad in (
            Event(5, Kind.CARD, "shoe", {}),                      # int t: would come back as 5.0
            Event(float("nan"), Kind.CARD, "shoe", {}),
            Event(1.0, "card", "shoe", {}),                       # type: ignore[arg-type]
            Event(1.0, Kind.CARD, "shoe", {"x": object()}),
        ):
            with pytest.raises((ValueError, TypeError)):
                j.append_many([card(1), bad])                     # all or nothing
        assert j.last_seq() == 1
        with pytest.raises(TypeError):
            j.append("not an event")                              # type: ignore[arg-type]


# --------------------------------------------------------------------------- replay


def test_current_shoe_events_across_shoes(tmp_path):
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as j:
        assert list(j.current_shoe_events()) == [] and j.current_shoe_start() is None
        pre = [card(i) for i in range(3)]                         # cards before any new_shoe
        j.append_many(pre)
        assert [e.seq for e in j.current_shoe_events()] == [1, 2, 3]
        for s in range(4):
            j.append(new_shoe(100 * s))
            j.append_many([card(100 * s + k) for k in range(1, 7 + s)])
        start = j.current_shoe_start()
        got = list(j.current_shoe_events())
        assert got[0].seq == start and got[0].event.kind is Kind.NEW_SHOE
        assert [e.event for e in got] == [new_shoe(300)] + [card(300 + k) for k in range(1, 10)]
        assert [e.seq for e in got] == list(range(start, j.last_seq() + 1))
        seq, event = got[1]                                       # entries unpack as (seq, event)
        assert isinstance(got[1], Entry) and event.kind is Kind.CARD
    with Journal.open(path) as j:                                 # same after a restart
        assert [e.event for e in j.current_shoe_events()] == [e.event for e in got]
        assert j.report is not None and j.report.first_seq == start


def test_events_since_and_limit_and_last(tmp_path):
    with Journal.open(tmp_path / "j.sqlite3", synchronous="normal") as j:
        j.append_many([card(i) for i in range(2500)])
        assert [e.seq for e in j.events(since_seq=2490)] == list(range(2491, 2501))
        assert [e.seq for e in j.events(since_seq=100, limit=1500)] == list(range(101, 1601))
        assert len(list(j.events())) == 2500
        assert list(j.events(since_seq=2500)) == []
        assert [e.seq for e in j.last_events(3)] == [2498, 2499, 2500]
        assert [r.seq for r in j.last_records(2)] == [2499, 2500]
        # appends during an iteration are seen when their seq comes
        it = j.events(since_seq=2499)
        assert next(it).seq == 2500
        j.append(card(2500))
        assert next(it).seq == 2501


# --------------------------------------------------------------------------- recall of coups


def test_coup_recall(tmp_path):
    path = tmp_path / "j.sqlite3"
    with Journal.open(path) as j:
        j.append_many([card(i) for i in range(240)])      # the events the rows are anchored at
        for shoe in (1, 2):
            for coup in range(1, 31):
                result = {"winner": "banco" if coup % 2 else "punto", "coup": coup, "shoe": shoe}
                j.record_coup(f"{shoe}-{coup}", shoe, coup, json.dumps(result), seq=shoe * 100 + coup)
        last = j.coups()
        assert [(c.shoe, c.coup) for c in last] == [(2, k) for k in range(21, 31)]
        assert [c.coup for c in j.coups(last=40, shoe=1)] == list(range(1, 31))
        assert len(j.coups(last=100)) == 60
        c = j.coup("1-7")
        assert c is not None and c.result == {"winner": "banco", "coup": 7, "shoe": 1} and c.seq == 107
        assert j.coup("9-9") is None
        j.record_coup("1-7", 1, 7, '{"winner":"tie"}')            # a correction replaces it
        assert j.coup("1-7").result == {"winner": "tie"}          # type: ignore[union-attr]
        with pytest.raises(ValueError):
            j.record_coup("x", 1, 1, "not json")
        j.record_coup("2-31", 2, 31, {"winner": "punto", "cards": ["TH", "9S"]})   # a mapping: stored as JSON
        assert j.coup("2-31").result_json == '{"cards":["TH","9S"],"winner":"punto"}'  # type: ignore[union-attr]
    with Journal.open(path) as j:                                 # survives a restart
        assert j.coup_count() == 61 and len(j.coups(last=10)) == 10
        n = j.rebuild_coups([("3-1", 3, 1, '{"winner":"punto"}'), ("3-2", 3, 2, '{"winner":"tie"}', 42)])
        assert n == 2 and [c.coup_id for c in j.coups()] == ["3-1", "3-2"] and j.coup("3-2").seq == 42  # type: ignore[union-attr]


# --------------------------------------------------------------------------- opening, concurrency


def test_open_modes(tmp_path):
    path = tmp_path / "sub" / "dir" / "j.sqlite3"
    with pytest.raises(JournalNotFound):
        Journal.open(path, create=False)
    with pytest.raises(JournalNotFound):
        Journal.open(path, readonly=True)
    with Journal.open(path) as j:                                 # creates parents
        j.append(card(0))
        with pytest.raises(JournalBusy, match="in use"):
            Journal.open(path)                                    # one writer at a time
        with Journal.open(path, readonly=True) as r:              # readers are welcome
            assert r.last_seq() == 1 and r.verify(full=True).ok
            with pytest.raises(JournalReadOnly):
                r.append(card(1))
    with Journal.open(path) as j:                                 # the lock went with close()
        assert j.last_seq() == 1
    with pytest.raises(ValueError):
        Journal.open(path, synchronous="off")                     # type: ignore[arg-type]


def test_threads_append_concurrently(tmp_path):
    with Journal.open(tmp_path / "j.sqlite3", synchronous="normal") as j:
        results: list[list[int]] = []

        def worker(w: int) -> None:
            mine = []
            for i in range(40):
                if i % 4 == 0:
                    mine += j.append_many([card(w * 1000 + i), card(w * 1000 + i + 500)])
                else:
                    mine.append(j.append(card(w * 1000 + i)))
            results.append(mine)

        threads = [threading.Thread(target=worker, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        every = sorted(s for r in results for s in r)
        assert every == list(range(1, 4 * 50 + 1))
        assert all(r == sorted(r) for r in results)
        report = j.verify(full=True)
        assert report.ok and report.records == 200


def test_deferred_sync_commits_without_sqlites_fsync_and_sync_makes_it_durable(tmp_path, monkeypatch):
    """defer_sync(): the daemon's loop commits, then fsyncs the WAL in a thread (Journal.sync)."""
    import os

    path = tmp_path / "j.sqlite3"
    with Journal.open(path, synchronous="full") as j:
        j.append(new_shoe(0))
        assert not j.unsynced                                  # full: SQLite synced the commit itself
        assert j._db().execute("PRAGMA synchronous").fetchone()[0] == 2   # FULL
        j.defer_sync()
        assert j._db().execute("PRAGMA synchronous").fetchone()[0] == 1   # NORMAL: no fsync at commit
        j.append_many([card(1), card(2)])
        assert j.unsynced
        synced = []
        real_fsync = os.fsync
        monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")),
                                                     real_fsync(fd)))
        j.sync()
        assert synced == [str(path) + "-wal"] and not j.unsynced
        j.sync()                                               # nothing new: no fsync
        assert len(synced) == 1
        j.record_coup("1-1", 1, 1, {"winner": "punto"})        # the recall row's relaxation keeps NORMAL
        assert j._db().execute("PRAGMA synchronous").fetchone()[0] == 1
    with Journal.open(path, verify="full") as j:
        assert j.count() == 3 and j.report.ok


def test_deferred_sync_is_a_no_op_in_normal_mode(tmp_path):
    with Journal.open(tmp_path / "j.sqlite3", synchronous="normal") as j:
        j.defer_sync()
        j.append(new_shoe(0))
        assert not j.unsynced
