"""The camera in the core: stand-in for unread cards and a dead link, cross-check otherwise."""

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table
from shoe_daemon.game.engine import TableRules


def shoe(t, code, **data):
    return Event(float(t), Kind.CARD, "shoe", {"card": code, **data})


def cam(t, code, zone, status="ok", confidence=0.98):
    value = None if code is None else {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}.get(code[0], None)
    if code is not None and value is None:
        value = int(code[0])
    return Event(float(t), Kind.CAMERA_CARD, "camera",
                 {"card": code, "value": value, "status": status, "confidence": confidence, "zone": zone})


def published(outs, topic):
    return [o.payload for o in outs if isinstance(o, Publish) and o.topic == topic]


def alerts(outs, action="raised"):
    return [p["alert"] for p in published(outs, "alerts/event") if p["action"] == action]


def feed(table, events):
    return [o for e in events for o in Pipeline(table).feed_one(e)]


def linked(table):
    feed(table, [Event(0.0, Kind.LINK_UP, "shoe", {"driver": "protocol", "missed": 0})])
    return table


def test_an_unread_card_is_taken_from_the_camera_in_the_expected_zone():
    t = linked(Table(TableRules(), "t1"))
    outs = feed(t, [shoe(1, "2S"), Event(2.0, Kind.CARD_UNREADABLE, "shoe", {"counter": 2}),
                    shoe(3, "4D"), shoe(4, "5C"), cam(5, "3H", "banco", confidence=0.97)])
    cards = published(outs, "coup/card")
    assert [(c["card"], c["side"], c["source"]) for c in cards] == [
        ("2S", "punto", "shoe"), ("3H", "banco", "camera"), ("4D", "punto", "shoe"), ("5C", "banco", "shoe")]
    assert cards[1]["confidence"] == 0.97
    result = published(outs, "coup/result")[0]
    assert (result["punto_total"], result["banco_total"], result["winner"]) == (6, 8, "banco")
    assert not t.active_alerts


def test_a_camera_reading_that_came_first_fills_the_unread_card():
    t = linked(Table(TableRules(), "t1"))
    outs = feed(t, [shoe(1, "2S"), cam(2, "2S", "punto"), cam(3, "3H", "banco"),
                    Event(4.0, Kind.CARD_UNREADABLE, "shoe", {"counter": 2})])
    assert [(c["card"], c["source"]) for c in published(outs, "coup/card")] == [("2S", "shoe"), ("3H", "camera")]
    assert not t.active_alerts


def test_an_unsure_camera_asks_a_person_and_never_guesses():
    t = linked(Table(TableRules(), "t1"))
    outs = feed(t, [shoe(1, "2S"), Event(2.0, Kind.CARD_UNREADABLE, "shoe", {"counter": 2}),
                    cam(3, None, "banco", status="unsure", confidence=0.4)])
    assert [a["kind"] for a in alerts(outs)] == ["card_unreadable", "manual_entry_needed"]
    assert [c["card"] for c in published(outs, "coup/card")] == ["2S"]
    outs = Pipeline(t).feed_one(Event(4.0, Kind.CARD, "api", {"card": "3H", "user": "dealer", "reason": "read by eye"}))
    assert [(c["card"], c["source"]) for c in published(outs, "coup/card")] == [("3H", "api")]
    assert {a["kind"] for a in alerts(outs, "cleared")} == {"card_unreadable", "manual_entry_needed"}
    assert not t.active_alerts


def test_when_both_read_a_card_the_shoe_stands_and_a_disagreement_is_flagged():
    t = linked(Table(TableRules(), "t1"))
    outs = feed(t, [shoe(1, "2S"), cam(2, "2H", "punto", confidence=0.91), shoe(3, "3H"), cam(4, "3H", "banco")])
    (mismatch,) = alerts(outs)
    assert mismatch["kind"] == "camera_mismatch" and mismatch["severity"] == "warning"
    assert mismatch["evidence"] == {"coup": "1-1", "zone": "punto", "position": 0, "camera": "2H", "shoe": "2S",
                                    "confidence": 0.91}
    assert t.engine.snapshot().punto[0].code == "2S"


def test_a_camera_reading_ahead_of_the_shoe_is_checked_when_the_shoe_reads_it():
    t = linked(Table(TableRules(), "t1"))
    outs = feed(t, [cam(1, "9D", "punto"), shoe(2, "9C")])
    assert [a["kind"] for a in alerts(outs)] == ["camera_mismatch"]


def test_a_card_seen_in_the_other_box_is_a_wrong_side_error():
    t = linked(Table(TableRules(), "t1"))
    # P 2S, B 3H, P 4D, B 5C: the camera sees Punto's 4D land in the Banco box.
    outs = feed(t, [shoe(1, "2S"), shoe(2, "3H"), cam(3, "2S", "punto"), cam(4, "3H", "banco"),
                    cam(5, "4D", "banco"), shoe(6, "4D")])
    kinds = [a["kind"] for a in alerts(outs)]
    assert kinds == ["wrong_side"]
    assert alerts(outs)[0]["severity"] == "error"
    assert t.lights == "error"


def test_while_the_link_is_down_the_camera_deals_and_the_resends_are_matched():
    t = linked(Table(TableRules(), "t1"))
    # The camera reports every card that comes to rest (here 2S first), so it knows each card's place.
    feed(t, [shoe(1, "2S", lseq=1), cam(1.5, "2S", "punto"), Event(2.0, Kind.LINK_DOWN, "shoe", {"reason": "unplugged"})])
    outs = feed(t, [cam(3, "3H", "banco"), cam(4, "4D", "punto")])
    assert [(c["card"], c["source"]) for c in published(outs, "coup/card")] == [("3H", "camera"), ("4D", "camera")]
    # The shoe comes back and resends what it dealt meanwhile: the same 3H, but 5D where the camera read 4D.
    outs = feed(t, [Event(5.0, Kind.LINK_UP, "shoe", {"driver": "protocol", "missed": 2}),
                    shoe(6, "3H", lseq=2), shoe(7, "5D", lseq=3)])
    assert not published(outs, "coup/card")  # nothing dealt twice
    corrected = [a for a in alerts(outs) if a["kind"] == "card_corrected"]
    assert corrected and t.engine.snapshot().punto[1].code == "5D"
    # after the resends, the shoe deals as usual
    outs = feed(t, [shoe(8, "5C", lseq=4)])
    assert [(c["card"], c["source"]) for c in published(outs, "coup/card")] == [("5C", "shoe")]


def test_a_text_reader_resends_nothing_so_camera_cards_stand():
    t = Table(TableRules(), "t1")
    feed(t, [Event(0.0, Kind.LINK_UP, "shoe", {"driver": "text"}), shoe(1, "2S"),
             Event(2.0, Kind.LINK_DOWN, "shoe", {"reason": "unplugged"}), cam(3, "3H", "banco"),
             Event(4.0, Kind.LINK_UP, "shoe", {"driver": "text"})])
    outs = feed(t, [shoe(5, "4D")])
    assert [(c["card"], c["side"]) for c in published(outs, "coup/card")] == [("4D", "punto")]


def test_an_unsure_camera_while_the_link_is_down_waits_for_a_person_or_the_shoe():
    t = linked(Table(TableRules(), "t1"))
    feed(t, [shoe(1, "2S", lseq=1), Event(2.0, Kind.LINK_DOWN, "shoe", {"reason": "unplugged"})])
    outs = feed(t, [cam(3, None, "banco", status="unsure", confidence=0.3)])
    assert [a["kind"] for a in alerts(outs)] == ["manual_entry_needed"]
    outs = feed(t, [Event(4.0, Kind.LINK_UP, "shoe", {"driver": "protocol", "missed": 1}), shoe(5, "3H", lseq=2)])
    assert [(c["card"], c["source"]) for c in published(outs, "coup/card")] == [("3H", "shoe")]
    assert not [a for a in t.active_alerts.values() if a["kind"] == "manual_entry_needed"]


def test_zones_other_than_punto_and_banco_are_ignored():
    t = linked(Table(TableRules(), "t1"))
    assert feed(t, [cam(1, "9H", "discard")]) == []


def test_coup_current_says_which_source_produced_each_card():
    t = linked(Table(TableRules(), "t1"))
    outs = feed(t, [shoe(1, "2S", counter=1), Event(2.0, Kind.CARD_UNREADABLE, "shoe", {"counter": 2}),
                    shoe(3, "4D", counter=3)])
    waiting = published(outs, "coup/current")[-1]
    assert waiting["card_sources"] == {"punto": [{"source": "shoe"}], "banco": []}
    outs = feed(t, [cam(4, "3H", "banco", confidence=0.97), Event(5.0, Kind.CARD_UNREADABLE, "shoe", {"counter": 4}),
                    cam(6, None, "banco", status="unsure", confidence=0.4),
                    Event(7.0, Kind.CARD, "api", {"card": "5C", "user": "dealer"})])
    current = published(outs, "coup/current")[-1]
    assert (current["punto"], current["banco"], current["settled"]) == (["2S", "4D"], ["3H", "5C"], True)
    assert current["card_sources"] == {
        "punto": [{"source": "shoe"}, {"source": "shoe"}],
        "banco": [{"source": "camera", "confidence": 0.97}, {"source": "api"}],
    }
    # The next coup starts with no sources, then the shoe's own.
    outs = feed(t, [shoe(8, "9H")])
    assert published(outs, "coup/current")[-1]["card_sources"] == {"punto": [{"source": "shoe"}], "banco": []}


def test_card_sources_follow_push_backs_and_corrections():
    t = linked(Table(TableRules(closing="confirm"), "t1"))
    feed(t, [shoe(1, "2S"), shoe(2, "3H"), shoe(3, "4D"),
             Event(4.0, Kind.CARD_PUSHED_BACK, "shoe", {"card": "4D"}),
             Event(5.0, Kind.CARD, "camera", {"card": "4C", "confidence": 0.9}), shoe(6, "5C")])
    outs = Pipeline(t).feed_one(Event(7.0, Kind.CORRECT_CARD, "api", {"index": 1, "card": "3D", "user": "sup"}))
    current = published(outs, "coup/current")[-1]
    assert (current["punto"], current["banco"]) == (["2S", "4C"], ["3D", "5C"])
    assert current["card_sources"] == {
        "punto": [{"source": "shoe"}, {"source": "camera", "confidence": 0.9}],
        "banco": [{"source": "api"}, {"source": "shoe"}],
    }


def test_a_lost_camera_is_a_warning_and_the_table_deals_on():
    t = linked(Table(TableRules(), "t1"))
    outs = feed(t, [Event(0.5, Kind.LINK_UP, "camera", {"driver": "camera", "source": "0"}),
                    Event(1.0, Kind.LINK_DOWN, "camera", {"reason": "no more frames"})])
    (lost,) = alerts(outs)
    assert (lost["kind"], lost["severity"], lost["key"]) == ("link_lost", "warning", "camera:link_lost")
    outs = feed(t, [shoe(2, "2S")])
    assert published(outs, "coup/card")[0]["card"] == "2S" and t.lights == "banco"
    outs = feed(t, [Event(3.0, Kind.LINK_UP, "camera", {"driver": "camera", "source": "0"})])
    assert [a["id"] for a in alerts(outs, "cleared")] == [lost["id"]] and not t.active_alerts
    # The shoe's own link is still an error.
    (shoe_lost,) = alerts(feed(t, [Event(4.0, Kind.LINK_DOWN, "shoe", {"reason": "unplugged"})]))
    assert shoe_lost["severity"] == "error"
