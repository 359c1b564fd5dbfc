"""Faults that stop the game safely (issue 13, the core's part): a fault the shoe clears clears its
alert; repeats are one alert with a count; a fault that stops the dealing holds the game under the
error policy; a replay from a later shoe republishes the sources as the live run did."""

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish, SetLights
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table
from shoe_daemon.game.engine import TableRules


def published(outs, topic):
    return [o.payload for o in outs if isinstance(o, Publish) and o.topic == topic]


def raised(outs):
    return [p["alert"] for p in published(outs, "alerts/event") if p["action"] == "raised"]


def fault(t, code, active=True, severity="error", **more):
    return Event(t, Kind.FAULT, "shoe", {"code": code, "active": active, "severity": severity, **more})


def cards(t0, *codes):
    return [Event(t0 + i, Kind.CARD, "shoe", {"card": c}) for i, c in enumerate(codes)]


def test_a_fault_the_shoe_clears_clears_its_alert_instead_of_raising_a_second():
    p = Pipeline(Table(TableRules(), "t1"))
    outs = p.feed_one(fault(1.0, "0x0001", severity="warning", name="OPTICS_DIRTY", action="alert"))
    [alert] = raised(outs)
    assert alert["message"].startswith("shoe fault optics dirty (0x0001)")
    assert [a["id"] for a in p.table.active_alerts.values()] == [alert["id"]]
    outs = p.feed_one(fault(2.0, "0x0001", active=False, severity="warning", name="OPTICS_DIRTY"))
    assert raised(outs) == []
    assert [e["alert"]["id"] for e in published(outs, "alerts/event") if e["action"] == "cleared"] == [alert["id"]]
    assert p.table.active_alerts == {} and published(outs, "alerts/active")[-1]["alerts"] == []


def test_a_repeated_fault_is_one_alert_with_a_count_and_the_list_is_republished_per_doubling():
    p = Pipeline(Table(TableRules(), "t1"))
    outs = []
    for i in range(2000):
        outs += p.feed_one(Event(float(i), Kind.FAULT, "shoe", {"code": "unrecognised_line", "text": f"junk {i}"}))
    assert len(raised(outs)) == 1
    [active] = p.table.active_alerts.values()
    assert active["count"] == 2000 and active["last_t"] == 1999.0
    lists = published(outs, "alerts/active")
    assert len(lists) == 1 + 10            # raised, then at 2, 4, ..., 1024: 2,000 lines, 11 messages
    assert lists[-1]["alerts"][0]["count"] == 1024


def test_a_card_jam_stops_the_dealing_and_holds_the_coup_until_a_supervisor_resolves_it():
    p = Pipeline(Table(TableRules(on_error="hold"), "t1"))
    p.feed(cards(1.0, "2S", "3S"))                          # Punto 2, Banco 3: the coup goes on
    outs = p.feed_one(fault(3.0, "0x0003", name="CARD_JAM", action="stop_dealing"))
    assert SetLights("error") in outs
    assert published(outs, "coup/current")[-1]["held"] is True
    outs = [o for e in cards(4.0, "4S", "4H") for o in p.feed_one(e)]    # 6 v 7: complete, but held
    assert published(outs, "coup/result") == []
    outs = p.feed_one(Event(6.0, Kind.RESOLVE_COUP, "api", {"user": "sup", "reason": "jam cleared"}))
    assert [r["winner"] for r in published(outs, "coup/result")] == ["banco"]


def test_lost_events_between_coups_hold_the_next_coup_so_nothing_settles_under_the_stop_light():
    p = Pipeline(Table(TableRules(on_error="hold"), "t1"))
    p.feed(cards(1.0, "9S", "2H", "KD", "3C"))             # a natural 9: settled
    outs = p.feed_one(fault(5.0, "events_lost", first_seq=40, count=2, reason="ring overflow"))
    assert SetLights("error") in outs and p.table.engine.hold_pending
    outs = [o for e in cards(6.0, "9H", "2D", "KH", "3S") for o in p.feed_one(e)]
    assert published(outs, "coup/result") == []            # the next coup is held
    assert published(outs, "coup/current")[-1]["held"] is True
    outs = p.feed_one(Event(10.0, Kind.RESOLVE_COUP, "api", {"user": "sup", "reason": "checked"}))
    assert [r["coup_id"] for r in published(outs, "coup/result")] == ["1-2"]


def test_with_the_continue_policy_a_fault_changes_nothing_but_the_alert():
    p = Pipeline(Table(TableRules(on_error="continue"), "t1"))
    p.feed_one(fault(1.0, "0x0003", name="CARD_JAM"))
    outs = [o for e in cards(2.0, "9S", "2H", "KD", "3C") for o in p.feed_one(e)]
    assert len(published(outs, "coup/result")) == 1


def test_a_replay_from_a_later_shoe_republishes_the_sources_as_the_live_run_published_them():
    live = Pipeline(Table(TableRules(), "t1"))
    live.table.retained()                                   # as the daemon does before its first event
    journal = []
    for e in [Event(1.0, Kind.LINK_UP, "shoe", {"driver": "protocol"}), Event(2.0, Kind.SHOE_INSERTED, "shoe", {}),
              Event(3.0, Kind.NEW_SHOE, "api", {"user": "pit", "reason": ""}),
              Event(4.0, Kind.LINK_DOWN, "shoe", {"reason": "unplugged"})]:
        journal += [h.event for h in live.feed([e])]
    restored = Pipeline(Table(TableRules(), "t1"))
    restored.restore(journal[2:])                           # the journal's window: the current shoe
    mine, theirs = restored.table.last_payload("sources"), live.table.last_payload("sources")
    assert mine["seq"] == theirs["seq"] and mine == theirs
    assert mine["sources"]["shoe"]["shoe"] == "inserted"


def test_the_protocol_drivers_card_jam_and_its_clear_hold_and_clear_through_the_core():
    from shoe_daemon.sources.protocol_driver import fault_data

    p = Pipeline(Table(TableRules(on_error="hold"), "t1"))
    p.feed(cards(1.0, "2S", "3S"))
    outs = p.feed_one(Event(3.0, Kind.FAULT, "shoe", fault_data(0x0003, True, 0)))
    [alert] = raised(outs)
    assert alert["message"] == "shoe fault: card jam (0x0003)" and alert["severity"] == "error"
    assert SetLights("error") in outs and p.table.engine.snapshot().held
    outs = p.feed_one(Event(4.0, Kind.FAULT, "shoe", fault_data(0x0003, False, 0)))
    assert raised(outs) == [] and p.table.active_alerts == {}
    # The jam is cleared, but the coup stays held until a supervisor has looked.
    assert p.table.engine.snapshot().held
