"""A clean run: the daemon deals 20 coups from the emulated shoe (pace 0) through real Mosquitto.

Every card is announced once, in the shoe's order (burn cards included), with both totals and the
next side the tableau calls for; every result is the one the rules give for the emulator's coup;
the messages arrive in publication order with seq strictly increasing and none missing.
"""

from __future__ import annotations

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

PREFIX = "baccarat/e2e"
COUPS = 20


def test_clean_run_every_card_and_result_right(tmp_path, mosquitto, mqtt_subscriber, shoe_factory, daemon_factory):
    shoe = shoe_factory(decks=8, seed=101, pace=0, coups=COUPS, shoes=None)
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/#")
    cfg = write_config(tmp_path / "daemon.toml", shoe_port=shoe.link, journal=tmp_path / "journal.sqlite3",
                       mqtt_port=mosquitto.port)
    daemon = daemon_factory(cfg).start()
    shoe.start()
    sub.wait_for(lambda msgs: n_results(msgs, PREFIX) >= COUPS, timeout=30)
    assert shoe.wait(10), "the emulator did not finish its script"
    assert daemon.stop() == 0, daemon.log_text()
    sub.wait_for(lambda msgs: statuses(msgs, PREFIX)[-1:] == ["offline"], timeout=20)

    stream = live_stream(sub.snapshot(), PREFIX)
    truth = coups_from_dealt(shoe.dealt)
    assert len(truth) == COUPS
    cards = check_cards(stream)
    results = check_results(stream, truth)
    assert [r["coup"] for r in results] == list(range(1, COUPS + 1))
    # Every card the shoe dealt is announced exactly once, in order.
    assert card_list(cards) == dealt_list(shoe.dealt)
    assert sum(1 for c in cards if c["role"] == "burn") == sum(1 for d in shoe.dealt if d.side == "burn")

    # Each result comes after the last card of its coup and before the first card of the next.
    position = {id(body): i for i, (_, body) in enumerate(stream)}
    for r in results:
        own = [position[id(c)] for c in cards if c["role"] == "coup" and c["coup"] == r["coup"]]
        later = [position[id(c)] for c in cards if c["role"] == "coup" and c["coup"] == r["coup"] + 1]
        assert max(own) < position[id(r)] < (min(later) if later else len(stream))

    # After every card the retained snapshot announces both totals.
    for i, (suffix, body) in enumerate(stream):
        if suffix == "coup/card" and body["role"] == "coup":
            current = next(b for s, b in stream[i + 1:] if s == "coup/current")
            assert current["announce"] == f"Punto {body['punto_total']}, Banco {body['banco_total']}"
            assert (current["punto_total"], current["banco_total"]) == (body["punto_total"], body["banco_total"])

    assert statuses(sub.snapshot(), PREFIX) == ["online", "offline"]
    assert "Traceback" not in daemon.log_text()
