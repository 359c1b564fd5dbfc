"""The core's side of the API's writes, without I/O: bets and their settlement, recall records,
manual cards, supervisor actions aimed at a coup; all of it replays to the same bytes."""

from __future__ import annotations

from shoe_daemon.config import LimitsConfig
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish, RecordCoup
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table, limits_from_config
from shoe_daemon.game.engine import TableRules


def table() -> Table:
    t = Table(TableRules(decks=8), "t1")
    t.limits = limits_from_config(LimitsConfig())  # 10-10000 on Punto/Banco, 5-1000 on Tie
    return t


def run(t: Table, events: list[Event]) -> tuple[list, list[Event]]:
    """Through the service's pipeline: the events as journaled, and the outputs."""
    handled = Pipeline(t).feed(events)
    return [o for h in handled for o in h.outputs], [h.event for h in handled]


def card(t, code, source="shoe", **data):
    return Event(float(t), Kind.CARD, source, {"card": code, **data})


def api(t, kind, **data):
    return Event(float(t), kind, "api", {"user": "u", "role": "r", "reason": "why", **data})


def rejected(outs) -> list[str]:
    return [o.payload["alert"]["message"] for o in outs if isinstance(o, Publish) and o.topic == "alerts/event"
            and o.payload["alert"]["kind"] == "action_rejected"]


BETS = [{"seat": 1, "kind": "banco", "amount": "20"}, {"seat": 2, "kind": "tie", "amount": "10"},
        {"seat": 3, "kind": "punto", "amount": "15.5"}]


def test_bets_are_settled_with_the_coup_and_recorded():
    t = table()
    outs, journaled = run(t, [api(0, Kind.BETS, coup_id="1-1", bets=BETS),
                              card(1, "2H"), card(2, "8S"), card(3, "3C"), card(4, "KD")])
    assert rejected(outs) == []
    assert journaled[0].data["limits"]["banco"] == {"min": "10", "max": "10000", "table_max": "100000"}
    (record,) = [o for o in outs if isinstance(o, RecordCoup)]
    result = record.result
    assert result["winner"] == "banco" and [c["card"] for c in result["dealt"]] == ["2H", "8S", "3C", "KD"]
    assert result["sources"] == ["shoe"]
    s = result["settlement"]
    assert s == t.settlements["1-1"] and s["status"] == "settled" and s["placed"]["by"] == "u"
    assert [(b["outcome"], b["won"], b["returned"]) for b in s["bets"]] == [
        ("win", "19", "39"), ("lose", "0", "0"), ("lose", "0", "0")]
    assert s["totals"] == {"staked": "45.5", "won": "19", "returned": "39", "net": "-6.5"}
    # History and the coup/result payload are as before: the settlement lives in the recall record.
    (res,) = [o for o in outs if isinstance(o, Publish) and o.topic == "coup/result"]
    assert "settlement" not in res.payload and "dealt" not in res.payload


def test_bets_refused_by_the_core():
    t = table()
    outs, _ = run(t, [api(0, Kind.BETS, coup_id="1-2", bets=BETS)])
    assert rejected(outs) == ["bets rejected: bets are open for coup 1-1, not 1-2"]
    outs, _ = run(t, [api(1, Kind.BETS, bets=[{"seat": 4, "kind": "tie", "amount": "2000"}])])
    assert rejected(outs) == ["bets rejected: seat 4: tie bet 2000 is above the table maximum 1000"]
    run(t, [card(2, "2H"), card(3, "8S"), card(4, "3C")])
    assert t.betting_coup() == "1-1"  # still being dealt: bets go to it until it is complete
    run(t, [card(5, "KD")])
    outs, _ = run(t, [api(6, Kind.BETS, coup_id="1-1", bets=BETS)])
    assert rejected(outs) == ["bets rejected: bets are open for coup 1-2, not 1-1"]
    assert "1-1" not in t.bets


def test_the_limits_journaled_with_the_bets_decide_on_replay():
    live = table()
    outs, journaled = run(live, [api(0, Kind.BETS, bets=[{"seat": 1, "kind": "tie", "amount": "900"}])])
    assert rejected(outs) == []
    replay = Table(TableRules(decks=8), "t1")
    replay.limits = limits_from_config(LimitsConfig(tie={"min": 5, "max": 100, "table_max": 100}))
    assert rejected([o for e in journaled for o in Pipeline(replay).feed_one(e)]) == []
    assert replay.bets["1-1"]["bets"] == live.bets["1-1"]["bets"]


def test_a_void_coup_is_recorded_and_its_bets_returned():
    t = table()
    outs, _ = run(t, [api(0, Kind.BETS, bets=BETS), card(1, "5H"), card(2, "6D"),
                      api(3, Kind.VOID_COUP, coup_id="1-1", reason="misdeal")])
    (record,) = [o for o in outs if isinstance(o, RecordCoup)]
    assert record.coup_id == "1-1" and record.result["voided"] is True and record.result["reason"] == "misdeal"
    assert record.result["punto"] == ["5H"] and [c["card"] for c in record.result["dealt"]] == ["5H", "6D"]
    s = record.result["settlement"]
    assert s["status"] == "void" and [b["returned"] for b in s["bets"]] == ["20", "10", "15.5"]
    assert s["totals"] == {"staked": "45.5", "won": "0", "returned": "45.5", "net": "0"}


def test_supervisor_actions_name_their_coup_and_resolve_is_an_event():
    t = table()
    run(t, [card(1, "8C", counter=1), card(2, "2C", counter=3)])  # a counter gap: the coup is held
    assert t.engine.snapshot().held
    outs, _ = run(t, [api(3, Kind.RESOLVE_COUP, coup_id="1-2")])
    assert rejected(outs) == ["resolve_coup rejected: the current coup is 1-1, not 1-2"]
    outs, _ = run(t, [api(4, Kind.RESOLVE_COUP, coup_id="1-1")])
    assert rejected(outs) == [] and not t.engine.snapshot().held


def test_a_manual_card_only_stands_in_for_one_the_shoe_could_not_give():
    t = table()
    up = Event(0.0, Kind.LINK_UP, "shoe", {"driver": "protocol"})
    outs, journaled = run(t, [up, card(1, "9H", "api")])
    assert journaled[1].data["shoe_link"] == "up"
    assert rejected(outs) == ["manual card refused: no card is awaited (no unreadable card is pending "
                              "and the shoe link is up)"]
    outs, _ = run(t, [Event(2.0, Kind.CARD_UNREADABLE, "shoe", {"counter": 1}), card(3, "9H", "api", user="d")])
    assert rejected(outs) == []
    (dealt,) = [o.payload for o in outs if isinstance(o, Publish) and o.topic == "coup/card"]
    assert dealt["source"] == "api" and dealt["fills_unreadable"] == 1 and dealt["user"] == "d"
    cleared = [o.payload["alert"] for o in outs if isinstance(o, Publish) and o.payload.get("action") == "cleared"]
    assert cleared[0]["cleared"]["by"] == "d"
    down = Event(4.0, Kind.LINK_DOWN, "shoe", {"reason": "unplugged"})
    outs, _ = run(t, [down, card(5, "2S", "api")])
    assert rejected(outs) == []  # the shoe link is down: the dealer deals by hand


def test_replaying_the_journaled_events_gives_the_same_bytes():
    events = [Event(0.0, Kind.LINK_UP, "shoe", {}), api(1, Kind.BETS, bets=BETS), card(2, "9H", "api"),
              card(3, "2H"), card(4, "8S"), card(5, "3C"), card(6, "KD"),
              api(7, Kind.BETS, bets=BETS[:1]), card(8, "5H"), card(9, "6D"),
              api(10, Kind.CORRECT_CARD, coup_id="1-2", index=0, card="4H"),
              api(11, Kind.VOID_COUP, coup_id="1-2")]
    live = table()
    outs, journaled = run(live, events)
    replay = table()
    again = [o for e in journaled for o in Pipeline(replay).feed_one(e)]
    assert [(type(o).__name__, getattr(o, "topic", None), repr(o)) for o in outs] == \
           [(type(o).__name__, getattr(o, "topic", None), repr(o)) for o in again]
    assert replay.settlements == live.settlements and set(live.settlements) == {"1-1", "1-2"}
