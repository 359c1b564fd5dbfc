"""A flapping shoe link loses no card: clustered unplugs while the dealer keeps dealing.

The emulated shoe deals at a real dealer's pace (0.12 s a card) and pulls its own cable after
3 % of its events for 1.5 s; an unplug during an outage extends it, so unplugs cluster (seed 13:
eight of them, the longest outage 4.9 s). The shoe never waits: what it deals meanwhile waits in
its ring. The daemon runs with the shipped back-off (``reconnect_min = 0.5``, ``reconnect_max =
30``). A back-off that keeps doubling while the port is away reconnects 7.5 s after the 4.9 s
outage began (the tries fall at 0, 0.5, 1.5, 3.5, 7.5 s), by which time the shoe had dealt 65
events; the ring here holds 48 (a legal ring_size; 64 in the reference shoe, which the drill in
bench/drills.py runs for a whole shoe), so a slow reconnect overwrites unacknowledged cards. The
daemon must reopen the port as soon as it is back: every card the emulator dealt is announced
exactly once, no events are reported lost and every result is right.
"""

from __future__ import annotations

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
COUPS = 40
SEED = 13
RING = 48


def test_flapping_link_loses_no_card(tmp_path, mosquitto, mqtt_subscriber, shoe_factory, daemon_factory):
    shoe = shoe_factory(decks=8, seed=SEED, pace=0.12, coups=COUPS, shoes=1, ring_size=RING,
                        faults=Faults(disconnect=0.03, disconnect_time=1.5))
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/#")
    cfg = write_config(tmp_path / "daemon.toml", shoe_port=shoe.link, journal=tmp_path / "journal.sqlite3",
                       mqtt_port=mosquitto.port)
    # The shipped back-off, not the harness's fast one.
    text = cfg.read_text().replace("reconnect_min = 0.05", "reconnect_min = 0.5")
    cfg.write_text(text.replace("reconnect_max = 0.25", "reconnect_max = 30.0"))
    daemon = daemon_factory(cfg).start()
    shoe.start()
    assert shoe.wait(60), "the emulator did not finish its script"
    try:
        sub.wait_for(lambda msgs: n_results(msgs, PREFIX) >= COUPS, timeout=10)
    except TimeoutError:
        pass  # a lost card holds its coup: the checks below say what went wrong
    assert daemon.stop() == 0, daemon.log_text()

    assert shoe.disconnects >= 5, "the link did not flap"
    stream = live_stream(sub.snapshot(), PREFIX)
    faults = [body["alert"] for suffix, body in stream
              if suffix == "alerts/event" and body["alert"]["kind"] == "fault"]
    lost = [a["evidence"] for a in faults if a["evidence"].get("code") == "events_lost"]
    assert not lost, f"events lost: {lost}"
    assert shoe.simulator.conn.counters.overwritten_unacked == 0
    cards = check_cards(stream)
    assert card_list(cards) == dealt_list(shoe.dealt), "a card lost or announced twice"
    results = check_results(stream, coups_from_dealt(shoe.dealt))
    assert [r["coup"] for r in results] == list(range(1, COUPS + 1))
