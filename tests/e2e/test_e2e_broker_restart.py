"""Mosquitto stopped and restarted mid-shoe while the shoe keeps dealing.

The daemon queues what it publishes while the broker is away and sends it on reconnect, in order:
a subscriber with a persistent session (the broker keeps it across its restart) gets every message,
first arrivals in seq order with none missing (duplicates of a resent or republished message are
byte for byte the same). Afterwards the retained state a new display gets is the latest: status
online, coup/current, shoe, history, alerts/active and sources agree with the last result, and the
broker_connection_lost alert was cleared when the connection came back (restored is news only).
"""

from __future__ import annotations

import json
import time

from tests.e2e.harness import write_config
from tests.e2e.rules import (
    card_list,
    check_cards,
    check_results,
    coups_from_dealt,
    dealt_list,
    live_stream,
    n_results,
    statuses,
)
from tests.support.mosquitto import Subscriber

PREFIX = "baccarat/e2e"
COUPS = 40
RETAINED = ("status", "coup/current", "shoe", "history", "alerts/active", "sources")


def test_broker_restart_mid_shoe_loses_nothing(tmp_path, mosquitto_factory, mqtt_subscriber, shoe_factory,
                                               daemon_factory):
    broker = mosquitto_factory(persistence=True)
    # A real dealer's pace (scaled down) so the shoe keeps dealing through the outage.
    shoe = shoe_factory(decks=8, seed=202, pace=0.012, coups=COUPS, shoes=None)
    sub = mqtt_subscriber(broker.port, f"{PREFIX}/#", client_id="e2e-display", persistent=True)
    cfg = write_config(tmp_path / "daemon.toml", shoe_port=shoe.link, journal=tmp_path / "journal.sqlite3",
                       mqtt_port=broker.port)
    daemon = daemon_factory(cfg).start()
    shoe.start()
    sub.wait_for(lambda msgs: n_results(msgs, PREFIX) >= 8, timeout=30)
    before = n_results(sub.snapshot(), PREFIX)
    broker.restart(down_for=0.5)
    sub.wait_for(lambda msgs: n_results(msgs, PREFIX) >= COUPS, timeout=45)
    assert shoe.wait(15), "the emulator did not finish its script"
    assert before < COUPS - 5, "the broker restart was not mid-shoe"
    assert "lost the MQTT broker" in daemon.log_text()

    # Let the daemon publish what the shoe's last events produced (e.g. the final button press).
    deadline = time.monotonic() + 15
    seen = -1
    while len(sub.snapshot()) != seen and time.monotonic() < deadline:
        seen = len(sub.snapshot())
        time.sleep(0.5)

    # A display that joins now draws the latest state from the retained topics.
    late = Subscriber(broker.port, f"{PREFIX}/#").start()
    try:
        got = late.wait_for(lambda msgs: (lambda r: r if all(t in r for t in RETAINED) else None)(
            {m.topic[len(PREFIX) + 1:]: json.loads(m.payload) for m in msgs if m.retain}), timeout=20)
    finally:
        late.stop()

    stream = live_stream(sub.snapshot(), PREFIX)
    truth = coups_from_dealt(shoe.dealt)
    cards = check_cards(stream)
    results = check_results(stream, truth)
    assert [r["coup"] for r in results] == list(range(1, COUPS + 1))
    assert card_list(cards) == dealt_list(shoe.dealt)

    # Retained state: the last payload of each topic, consistent with the last result.
    last = {suffix: body for suffix, body in stream}
    for topic in RETAINED[1:]:
        assert got[topic] == last[topic], f"retained {topic} is not the last one published"
    assert got["status"]["state"] == "online"
    final = results[-1]
    assert got["history"]["coups"][-1] == {k: v for k, v in final.items()
                                           if k not in ("schema", "seq", "t", "table_id", "type")}
    current = got["coup/current"]
    if current["coup"] == final["coup"]:
        assert (current["punto"], current["banco"]) == (final["punto"], final["banco"])
        assert current["settled"] and current["next_side"] is None
    else:  # the snapshot already shows the next, empty coup
        assert current["coup"] == final["coup"] + 1 and current["punto"] == current["banco"] == []
    assert got["shoe"]["coups"] == COUPS
    assert got["sources"]["sources"]["shoe"]["link"] == "up"
    assert got["alerts/active"]["alerts"] == [], got["alerts/active"]
    broker_alerts = [(b["action"], b["alert"]["evidence"].get("code"), b["alert"]["severity"])
                     for s, b in stream if s == "alerts/event" and b["alert"]["source"] == "mqtt"]
    assert broker_alerts == [("raised", "broker_connection_lost", "warning"),
                             ("cleared", "broker_connection_lost", "warning"),
                             ("raised", "broker_connection_restored", "info")], broker_alerts

    assert daemon.stop() == 0, daemon.log_text()
    sub.wait_for(lambda msgs: statuses(msgs, PREFIX)[-1:] == ["offline"], timeout=20)
