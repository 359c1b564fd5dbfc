"""The one pipeline: stamp -> journal -> core -> emit, for the daemon, replay, the virtual session and
the tests; and the error split: the game's refusals become alerts, a bug propagates."""

import sqlite3

import pytest

from shoe_daemon.core.errors import NotJournaled
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table
from shoe_daemon.game.engine import DealingEngine, TableRules


class SqliteLog:
    """A journal for the test: events appended to SQLite on disk, as the daemon's journal does."""

    def __init__(self, path):
        self.db = sqlite3.connect(path)
        self.db.execute("create table events (seq integer primary key, body text)")

    def append_many(self, events):
        seqs = []
        with self.db:
            for e in events:
                seqs.append(self.db.execute("insert into events (body) values (?)", (e.to_json(),)).lastrowid)
        return seqs

    def events(self):
        return [Event.from_json(body) for (body,) in self.db.execute("select body from events order by seq")]


def shoe_cards(*codes, t0=10.0):
    return [Event(t0 + i, Kind.CARD, "shoe", {"card": c, "counter": i + 1}) for i, c in enumerate(codes)]


def test_events_are_journaled_stamped_before_the_core_sees_them_and_a_replay_gives_the_same_bytes(tmp_path):
    log = SqliteLog(tmp_path / "j.sqlite")
    emitted = []
    live = Pipeline(Table(TableRules(), "t1"), journal=log, emit=emitted.append)
    live.table.retained()
    tamper = Event(1.0, Kind.TAMPER, "shoe", {"what": "lid_open"})
    new_shoe = Event(2.0, Kind.NEW_SHOE, "api", {"user": "pit", "reason": "fresh"})
    handled = live.feed([tamper, new_shoe, *shoe_cards("9H", "2C", "3D", "4S")])
    assert [h.seq for h in handled] == [1, 2, 3, 4, 5, 6]
    assert emitted == [o for h in handled for o in h.outputs]
    # The new shoe was stamped after the tamper was handled: it carries the tamper alert.
    journaled = log.events()
    assert [a["kind"] for a in journaled[1].data["carried_alerts"]] == ["tamper"]
    assert journaled[1] == handled[1].event
    # The journal replayed through a fresh core gives the same messages, byte for byte.
    again = []
    Pipeline(Table(TableRules(), "t1")).restore(journaled, again.append)
    assert [o.encode() for o in again if isinstance(o, Publish)] == \
        [o.encode() for o in emitted if isinstance(o, Publish)]


def test_a_journal_that_fails_stops_the_batch_before_the_core_sees_it(tmp_path):
    class Full:
        def append_many(self, events):
            raise OSError(28, "No space left on device")

    pipeline = Pipeline(Table(TableRules(), "t1"), journal=Full())
    cards = shoe_cards("9H", "2C")
    with pytest.raises(NotJournaled) as refused:
        pipeline.feed(cards)
    assert isinstance(refused.value.__cause__, OSError)
    assert refused.value.handled == [] and refused.value.pending == cards
    assert pipeline.table.events == 0 and pipeline.table.engine.snapshot().punto == ()


def test_a_refusal_mid_batch_says_what_went_through_and_what_is_left_to_feed_again(tmp_path):
    class FullAfterFirst(SqliteLog):
        full = False

        def append_many(self, events):
            if self.full:
                raise OSError(28, "No space left on device")
            self.full = True
            return super().append_many(events)

    log = FullAfterFirst(tmp_path / "j.sqlite")
    pipeline = Pipeline(Table(TableRules(), "t1"), journal=log)
    first = Event(1.0, Kind.TAMPER, "shoe", {"what": "lid_open"})
    new_shoe = Event(2.0, Kind.NEW_SHOE, "api", {"user": "pit"})   # stamped: a sub-batch of its own
    later = shoe_cards("9H")
    with pytest.raises(NotJournaled) as refused:
        pipeline.feed([first, new_shoe, *later])
    assert [h.event.kind for h in refused.value.handled] == [Kind.TAMPER]
    assert refused.value.pending == [new_shoe, *later]         # as given: stamped again when fed again
    log.full = False
    again = pipeline.feed(refused.value.pending)
    assert [h.seq for h in again] == [2, 3] and [e.kind for e in log.events()] == [Kind.TAMPER, Kind.NEW_SHOE, Kind.CARD]


def test_the_game_refusing_an_action_is_an_alert_not_an_exception():
    pipeline = Pipeline(Table(TableRules(), "t1"))
    outs = pipeline.feed_one(Event(1.0, Kind.VOID_COUP, "api", {"user": "sup", "reason": "x", "coup_id": "1-9"}))
    alerts = [o.payload["alert"] for o in outs if isinstance(o, Publish) and o.topic == "alerts/event"]
    assert [(a["kind"], a["severity"]) for a in alerts] == [("action_rejected", "info")]
    outs = pipeline.feed_one(Event(2.0, Kind.CARD, "shoe", {"card": "ZZ"}))
    assert any(o.payload["alert"]["kind"] == "fault" for o in outs if isinstance(o, Publish) and o.topic == "alerts/event")


def test_a_bug_in_the_core_propagates_instead_of_becoming_an_alert(monkeypatch):
    table = Table(TableRules(), "t1")

    def broken(*args, **kwargs):
        raise TypeError("a programming error")

    monkeypatch.setattr(DealingEngine, "close_coup", broken)
    with pytest.raises(TypeError, match="a programming error"):
        Pipeline(table).feed_one(Event(1.0, Kind.CLOSE_COUP, "api", {"user": "sup"}))


def test_whether_an_event_is_stamped_depends_on_the_event_alone_not_on_the_table_state():
    """The pipeline finds its sub-batches by stamping the batch once against the state before it,
    and stamps only each sub-batch's first event again: that is right only if prepare() stamps an
    event (returns another object) or not whatever the table's state."""
    samples = [
        *shoe_cards("9H"),
        Event(1.0, Kind.CARD, "api", {"card": "9H", "user": "sup", "reason": "typed"}),
        Event(1.0, Kind.CARD, "api", {"card": "9H", "user": "sup", "reason": "typed", "shoe_link": "up"}),
        Event(1.0, Kind.BUTTON, "shoe", {"button": "new_shoe"}),
        Event(1.0, Kind.BUTTON, "shoe", {"button": "coup_confirm"}),
        Event(1.0, Kind.NEW_SHOE, "api", {"user": "pit", "reason": "fresh"}),
        Event(1.0, Kind.BETS, "api", {"user": "dealer", "coup_id": "1-1", "bets": []}),
        Event(1.0, Kind.TAMPER, "shoe", {"what": "lid_open"}),
        Event(1.0, Kind.LINK_DOWN, "shoe", {"reason": "unplugged"}),
        Event(1.0, Kind.FAULT, "shoe", {"code": 3, "active": True}),
    ]
    fresh = Table(TableRules(), "t1")
    busy = Pipeline(Table(TableRules(), "t1"))
    busy.feed([Event(0.5, Kind.TAMPER, "shoe", {"what": "lid_open"}), *shoe_cards("9H", "2C", "3D", t0=0.6)])
    assert busy.table.alerts.active and busy.table.engine.snapshot().punto   # a state unlike the fresh one
    on_fresh = [fresh.prepare(event) is event for event in samples]
    on_busy = [busy.table.prepare(event) is event for event in samples]
    assert on_fresh == on_busy
    assert set(on_fresh) == {True, False}   # the sample has both (the test would pass vacuously otherwise)
