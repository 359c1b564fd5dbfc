"""The shoe's cable pulled mid-coup and plugged back (the pty closed, a new one behind the same
stable link), several times in a shoe.

The daemon reports the link lost (a link_lost alert), reopens the port when it is back, and the
protocol fetches what the shoe dealt meanwhile: every card of the emulator's ground truth is
announced exactly once, in order, and every result is right; each link_lost alert is cleared when
the link comes back, and none is left active.
"""

from __future__ import annotations

from firmware_protocol.messages import CardDrawn
from shoe_daemon.emulator import Faults
from tests.e2e.harness import write_config
from tests.e2e.rules import (
    card_list,
    check_cards,
    check_results,
    coups_from_dealt,
    dealt_list,
    live_stream,
    n_results,
)

PREFIX = "baccarat/e2e"
COUPS = 20
SEED = 303


def mid_coup_unplugs(shoe) -> list[int]:
    """Counters of the cards after which the cable was pulled with the coup still open."""
    by_seq = {m.seq: m for m in shoe.sent_events}
    by_counter = {d.counter: d for d in shoe.dealt}
    last_of_coup = {}
    for d in shoe.dealt:
        if d.coup is not None:
            last_of_coup[d.coup] = d.counter
    out = []
    for f in shoe.simulator.fault_log:
        msg = by_seq.get(f.seq)
        if f.kind == "disconnect" and isinstance(msg, CardDrawn):
            d = by_counter[msg.counter]
            if d.coup is not None and last_of_coup[d.coup] != d.counter:
                out.append(d.counter)
    return out


def test_shoe_unplugged_mid_coup_loses_no_card(tmp_path, mosquitto, mqtt_subscriber, shoe_factory, daemon_factory):
    shoe = shoe_factory(decks=8, seed=SEED, pace=0, coups=COUPS, shoes=None,
                        faults=Faults(disconnect=0.03, disconnect_time=0.3))
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/#")
    cfg = write_config(tmp_path / "daemon.toml", shoe_port=shoe.link, journal=tmp_path / "journal.sqlite3",
                       mqtt_port=mosquitto.port)
    daemon = daemon_factory(cfg).start()
    shoe.start()
    sub.wait_for(lambda msgs: n_results(msgs, PREFIX) >= COUPS, timeout=40)
    assert shoe.wait(15), "the emulator did not finish its script"
    assert daemon.stop() == 0, daemon.log_text()

    assert shoe.disconnects >= 2, "the cable was not pulled"
    assert mid_coup_unplugs(shoe), "no unplug fell mid-coup: choose another seed"

    stream = live_stream(sub.snapshot(), PREFIX)
    truth = coups_from_dealt(shoe.dealt)
    cards = check_cards(stream)
    results = check_results(stream, truth)
    assert [r["coup"] for r in results] == list(range(1, COUPS + 1))
    assert card_list(cards) == dealt_list(shoe.dealt), "a card lost or announced twice"

    # link_lost raised on every unplug the daemon saw, each cleared by the link coming back.
    events = [body for suffix, body in stream if suffix == "alerts/event" and body["alert"]["kind"] == "link_lost"]
    raised = [e["alert"]["id"] for e in events if e["action"] == "raised"]
    cleared = [e["alert"]["id"] for e in events if e["action"] == "cleared"]
    assert raised, "no link_lost alert"
    assert raised == cleared
    assert all(e["alert"]["key"] == "shoe:link_lost" for e in events)
    active = [body for suffix, body in stream if suffix == "alerts/active"][-1]
    assert not [a for a in active["alerts"] if a["kind"] == "link_lost"]
    sources = [body for suffix, body in stream if suffix == "sources"]
    assert [s["sources"].get("shoe", {}).get("link") for s in sources].count("down") == len(raised)
    assert sources[-1]["sources"]["shoe"]["link"] == "up"
    assert sources[-1]["sources"]["shoe"]["info"]["resumed"] is True
    # Nothing the shoe sent was given up as lost.
    faults = [body for suffix, body in stream if suffix == "alerts/event" and body["alert"]["kind"] == "fault"]
    assert not [f for f in faults if f["alert"]["evidence"].get("code") == "events_lost"], faults
