"""The core: events in, outputs out, deterministic to the byte."""

import random

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish, RecordCoup, SetLights
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table
from shoe_daemon.game.cards import ALL_CODES
from shoe_daemon.game.coup import play_coup
from shoe_daemon.game.engine import TableRules


def card(t, code, source="shoe", **data):
    return Event(t, Kind.CARD, source, {"card": code, **data})


def shuffled(seed, decks=8):
    cards = [c for c in ALL_CODES for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return cards


def run(table, events):
    return [o for e in events for o in Pipeline(table).feed_one(e)]


def published(outs, topic=None):
    return [o for o in outs if isinstance(o, Publish) and (topic is None or o.topic == topic)]


def wire(outs):
    return [(o.topic, o.encode(), o.qos, o.retain) for o in published(outs)]


def test_same_events_same_bytes_and_seq_counts_every_message():
    events = [card(i * 0.5, c) for i, c in enumerate(shuffled(1)[:200])]
    a, b = run(Table(TableRules(), "t1"), events), run(Table(TableRules(), "t1"), events)
    assert wire(a) == wire(b)
    seqs = [o.payload["seq"] for o in published(a)]
    assert seqs == list(range(1, len(seqs) + 1))
    assert all(o.payload["table_id"] == "t1" and o.payload["schema"] == 1 for o in published(a))


def test_results_match_an_independent_deal_and_are_recorded():
    cards = shuffled(7)[:120]
    outs = run(Table(TableRules(), "t1"), [card(float(i), c) for i, c in enumerate(cards)])
    results = [o.payload for o in published(outs, "coup/result")]
    records = [o for o in outs if isinstance(o, RecordCoup)]
    rest = cards
    for res in results:
        expected, used = play_coup(rest)
        rest = rest[used:]
        assert res["punto"] == [c.code for c in expected.punto]
        assert res["banco"] == [c.code for c in expected.banco]
        assert res["winner"] == expected.winner.value
    assert [r.coup_id for r in records] == [r["coup_id"] for r in results]
    # the totals are announced after every card
    cards_msgs = published(outs, "coup/card")
    assert len(cards_msgs) == len(cards)
    assert [m.payload["shoe_seq"] for m in cards_msgs] == list(range(1, len(cards) + 1))
    assert all("punto_total" in m.payload and "banco_total" in m.payload for m in cards_msgs)
    current = published(outs, "coup/current")
    assert len(current) == len(cards_msgs) and all(m.retain for m in current)


def test_unreadable_card_waits_for_the_camera_and_keeps_dealing_order():
    cards = ["2S", "3H", "4D", "5C", "6S", "7H"]   # P 2+4=6 stands... banco 3+5=8: natural
    t = Table(TableRules(), "t1")
    run(t, [card(0, cards[0])])
    outs = Pipeline(t).feed_one(Event(1, Kind.CARD_UNREADABLE, "shoe", {"counter": 2}))
    alert = published(outs, "alerts/event")[0].payload["alert"]
    assert alert["kind"] == "card_unreadable" and alert["evidence"]["expected_side"] == "banco"
    assert SetLights("error") in outs
    # the shoe goes on: its cards wait behind the unread one
    outs = run(t, [card(2, cards[2]), card(3, cards[3])])
    assert not published(outs, "coup/card")
    outs = Pipeline(t).feed_one(card(4, "3H", source="camera", confidence=0.99))
    dealt = [m.payload for m in published(outs, "coup/card")]
    assert [(d["card"], d["side"], d["source"]) for d in dealt] == [
        ("3H", "banco", "camera"), ("4D", "punto", "shoe"), ("5C", "banco", "shoe")]
    assert dealt[0]["confidence"] == 0.99
    assert not t.active_alerts
    result = published(outs, "coup/result")[0].payload
    assert result["banco_total"] == 8 and result["natural"]


def test_link_loss_is_an_alert_until_the_link_is_back():
    t = Table(TableRules(), "t1")
    outs = Pipeline(t).feed_one(Event(1, Kind.LINK_DOWN, "shoe", {"reason": "unplugged"}))
    assert [a["kind"] for a in t.active_alerts.values()] == ["link_lost"]
    assert published(outs, "sources")[0].payload["sources"]["shoe"]["link"] == "down"
    Pipeline(t).feed_one(Event(2, Kind.LINK_DOWN, "shoe", {"reason": "again"}))
    assert len(t.active_alerts) == 1
    outs = Pipeline(t).feed_one(Event(3, Kind.LINK_UP, "shoe", {"model": "x"}))
    assert not t.active_alerts
    assert published(outs, "alerts/event")[0].payload["action"] == "cleared"


def test_tamper_persists_across_a_new_shoe_until_cleared():
    t = Table(TableRules(), "t1")
    Pipeline(t).feed_one(Event(1, Kind.TAMPER, "shoe", {"what": "lid_open"}))
    (alert_id,) = t.active_alerts
    new_shoe = t.prepare(Event(2, Kind.BUTTON, "shoe", {"button": "new_shoe"}))
    assert new_shoe.kind is Kind.NEW_SHOE and new_shoe.data["carried_alerts"][0]["id"] == alert_id
    # a restart replays from the new shoe: a fresh table still has the alert
    fresh = Table(TableRules(), "t1")
    Pipeline(fresh).feed_one(new_shoe)
    assert list(fresh.active_alerts) == [alert_id]
    Pipeline(fresh).feed_one(Event(3, Kind.CLEAR_ALERT, "api", {"alert_id": alert_id, "user": "sup", "reason": "lid closed"}))
    assert not fresh.active_alerts
    outs = Pipeline(fresh).feed_one(Event(4, Kind.CLEAR_ALERT, "api", {"alert_id": alert_id}))
    assert published(outs, "alerts/event")[0].payload["alert"]["kind"] == "action_rejected"


def test_lights_follow_the_tableau():
    t = Table(TableRules(), "t1")
    lights = [o.state for e in [card(0, "2S"), card(1, "3H"), card(2, "4D"), card(3, "5C")]
              for o in Pipeline(t).feed_one(e) if isinstance(o, SetLights)]
    # P gets 2, next B; ... P 6 stands, B 8 natural -> complete
    assert lights == ["banco", "punto", "banco", "complete"]


def test_bad_card_code_is_a_fault_not_a_card():
    t = Table(TableRules(), "t1")
    outs = Pipeline(t).feed_one(card(0, "ZZ", source="api"))
    assert not published(outs, "coup/card")
    assert published(outs, "alerts/event")[0].payload["alert"]["kind"] == "fault"


def test_retained_state_covers_every_retained_topic():
    t = Table(TableRules(), "t1")
    topics = {m.topic for m in t.retained()}
    assert topics == {"coup/current", "shoe", "alerts/active", "sources", "history", "roads", "stats"}
    run(t, [card(0, "9S"), card(1, "3H"), card(2, "TD"), card(3, "KC")])
    hist = [m for m in t.retained() if m.topic == "history"][0].payload
    assert hist["coups"][0]["winner"] == "punto"


def test_roads_stats_and_odds_follow_every_coup():
    t = Table(TableRules(), "t1")
    outs = run(t, [card(float(i), c) for i, c in enumerate(["9S", "3H", "TD", "KC", "2S", "8H", "3D", "KD"])])
    roads = published(outs, "roads")[-1].payload
    assert [c["winner"] for c in roads["big_road"]["cells"]] == ["punto", "banco"]
    assert published(outs, "stats")[-1].payload["banco"] == 1
    odds = published(outs, "odds")[-1].payload
    assert odds["available"] and odds["cards"] == 8 * 52 - 8
    assert odds["banco"] + odds["punto"] + odds["tie"] == odds["total"]
    assert all(m.retain for m in published(outs, "odds"))


def test_odds_beyond_the_threshold_raise_one_pit_alert_per_bet():
    # A threshold below the house edges of Punto and Banco (about -1.1 % and -1.2 % for
    # the player) makes them alert, and Tie (-14 %) not; a real advantage needs a deep shoe.
    t = Table(TableRules(), "t1", odds_alert_edge=-0.02)
    cards = shuffled(3)[:60]
    outs = run(t, [card(float(i), c) for i, c in enumerate(cards)])
    raised = [m.payload["alert"] for m in published(outs, "alerts/event")
              if m.payload["alert"]["kind"] == "odds_advantage"]
    assert sorted(a["evidence"]["bet"] for a in raised) == ["banco", "punto"]
    assert all(-0.02 < a["evidence"]["player_advantage"] < 0 for a in raised)
    quiet = Table(TableRules(), "t1", odds_alert_edge=0.0)
    outs = run(quiet, [card(float(i), c) for i, c in enumerate(cards)])
    assert not [m for m in published(outs, "alerts/event") if m.payload["alert"]["kind"] == "odds_advantage"]


def test_a_voided_settled_coup_leaves_history_and_roads():
    t = Table(TableRules(), "t1")
    run(t, [card(0.0, "9S"), card(1.0, "3H"), card(2.0, "TD"), card(3.0, "KC")])  # punto natural
    assert [r["coup_id"] for r in t.history] == ["1-1"]
    coup_id = t.engine.snapshot().coup_id
    outs = Pipeline(t).feed_one(Event(4.0, Kind.VOID_COUP, "api", {"user": "sup", "reason": "misdeal", "coup_id": coup_id}))
    assert not t.history
    assert published(outs, "history")[-1].payload["coups"] == []
    assert published(outs, "roads")[-1].payload["big_road"]["cells"] == []


def test_acknowledging_does_not_change_messages_already_built():
    t = Table(TableRules(), "t1")
    outs = Pipeline(t).feed_one(Event(1.0, Kind.TAMPER, "shoe", {"what": "lid_opened"}))
    raised = published(outs, "alerts/event")[0]
    before = raised.encode()
    (alert_id,) = t.active_alerts
    Pipeline(t).feed_one(Event(2.0, Kind.ACK_ALERT, "api", {"alert_id": alert_id, "user": "sup", "reason": "seen"}))
    assert raised.encode() == before
    assert t.active_alerts[alert_id]["acknowledged"]["by"] == "sup"


def test_link_changes_keep_the_shoe_presence():
    t = Table(TableRules(), "t1")
    Pipeline(t).feed_one(Event(1.0, Kind.SHOE_INSERTED, "shoe", {}))
    Pipeline(t).feed_one(Event(2.0, Kind.LINK_DOWN, "shoe", {"reason": "unplugged"}))
    assert t.sources["shoe"]["shoe"] == "inserted" and t.sources["shoe"]["link"] == "down"
    Pipeline(t).feed_one(Event(3.0, Kind.LINK_UP, "shoe", {"model": "x"}))
    assert t.sources["shoe"] == {"shoe": "inserted", "link": "up", "since": 3.0, "info": {"model": "x"}}
