"""No [mqtt] host: the daemon runs its embedded broker (MQTT 3.1.1 on 127.0.0.1), and a plain paho
subscriber speaking MQTT 3.1.1 gets the table's state and every result, right."""

from __future__ import annotations

import json

from tests.e2e.harness import free_port, write_config
from tests.e2e.rules import (
    card_list,
    check_cards,
    check_results,
    coups_from_dealt,
    dealt_list,
    live_stream,
)
from tests.support.mosquitto import Subscriber

PREFIX = "baccarat/e2e"
COUPS = 8


def test_embedded_broker_serves_a_311_subscriber(tmp_path, shoe_factory, daemon_factory):
    shoe = shoe_factory(decks=8, seed=707, pace=0, coups=COUPS, shoes=None)
    port = free_port()
    cfg = write_config(tmp_path / "daemon.toml", shoe_port=shoe.link, journal=tmp_path / "journal.sqlite3",
                       embedded_port=port)
    daemon = daemon_factory(cfg).start()
    sub = Subscriber(port, f"{PREFIX}/#", protocol="3.1.1").start(timeout=20)
    try:
        # The retained state is there for a display that joins before the first card.
        status = sub.wait_for(lambda msgs: [json.loads(m.payload) for m in msgs
                                            if m.topic == f"{PREFIX}/status" and m.retain], timeout=20)
        assert status[-1]["state"] == "online"
        sub.wait_for(lambda msgs: any(m.topic == f"{PREFIX}/coup/current" and m.retain for m in msgs), timeout=20)
        shoe.start()
        sub.wait_for(lambda msgs: sum(1 for m in msgs if m.topic == f"{PREFIX}/coup/result") >= COUPS, timeout=30)
        assert shoe.wait(10)
        msgs = sub.snapshot()
    finally:
        sub.stop()
    assert daemon.stop() == 0, daemon.log_text()

    stream = live_stream(msgs, PREFIX)
    truth = coups_from_dealt(shoe.dealt)
    cards = check_cards(stream)
    results = check_results(stream, truth)
    assert [r["coup"] for r in results] == list(range(1, COUPS + 1))
    assert card_list(cards) == dealt_list(shoe.dealt)
