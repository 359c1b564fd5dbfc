"""The daemon killed with SIGKILL mid-coup and started again on the same journal.

The emulated dealer stops mid-coup (its script ends after the third card of coup 6; the shoe keeps
running: heartbeats, ring); the daemon is killed there. The dealer then goes on while the daemon is
dead: the shoe deals until its window of unacknowledged events is full. While it is dead the broker
publishes its Last Will (status offline). The restarted daemon verifies and replays the journal,
publishes the same partial coup as its retained coup/current (byte for byte: the replay is
deterministic), resumes the shoe's link after the last journaled event (fetching what the shoe
dealt meanwhile), and deals on: every card
of the ground truth is announced once (journal and MQTT agree), every result is right, and the
message stream stays in order with no seq missing across the two processes.
"""

from __future__ import annotations

import json
import time

import pytest

from firmware_protocol.messages import CardDrawn
from shoe_daemon.core.events import Kind
from shoe_daemon.emulator import DealerScript
from shoe_daemon.journal import Journal
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
COUPS = 10
KILL_COUP = 6           # killed after the third card of this coup (of the session)


def scripted_session(seed: int, coups: int = COUPS, kill_coup: int = KILL_COUP, cut_at: int | None = None):
    """The dealer's actions for ``coups`` coups (new shoes as needed, the cut card ``cut_at`` cards
    from the end), cut after the third card of coup ``kill_coup``, and its ground truth."""
    script = DealerScript(decks=8, seed=seed, shoes=None, coups=coups, cut=cut_at)
    actions = []
    counted = 0
    cut = None
    for action in script:
        actions.append(action)
        if isinstance(action, CardDrawn):
            d = next(d for d in reversed(script.dealt) if d.counter == action.counter)
            if d.coup == kill_coup:
                counted += 1
                if counted == 3:
                    cut = len(actions)
    assert cut is not None and counted >= 4
    return actions[:cut], actions[cut:], script


SESSIONS = {
    # (coups in all, coup killed in): one shoe; or in the second shoe, the first one dealt down to
    # its cut card (a restart replays the second shoe only: shoe number, coup ids, history go on).
    "first-shoe": dict(seed=404, coups=COUPS, kill_coup=KILL_COUP),
    "second-shoe": dict(seed=405, coups=0, kill_coup=0, cut_at=380),
}


@pytest.mark.parametrize("session", list(SESSIONS))
def test_sigkill_mid_coup_resumes_the_coup(tmp_path, mosquitto, mqtt_subscriber, shoe_factory, daemon_factory,
                                           session):
    kw = dict(SESSIONS[session])
    if session == "second-shoe":
        # The first shoe ends at its cut card (about 6 coups with 380 cards left): count them.
        probe = DealerScript(decks=8, seed=kw["seed"], shoes=2, cut=kw["cut_at"])
        list(probe)
        first_shoe = max(d.coup for d in probe.dealt if d.shoe == 1 and d.coup is not None)
        kw.update(coups=first_shoe + 6, kill_coup=first_shoe + 3)
    first, rest, script = scripted_session(**kw)
    coups = kw["coups"]
    shoe = shoe_factory(pace=0, scenario=first)
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/#")
    journal = tmp_path / "journal.sqlite3"
    cfg = write_config(tmp_path / "daemon.toml", shoe_port=shoe.link, journal=journal, mqtt_port=mosquitto.port)
    daemon = daemon_factory(cfg).start()
    shoe.start()

    killed = next(d for d in script.dealt if d.coup == kw["kill_coup"])
    killed_shoe = killed.shoe
    killed_coup = kw["kill_coup"] - min(d.coup for d in script.dealt if d.shoe == killed_shoe and d.coup) + 1

    def paused_coup(msgs):
        """The coup/current of the pause (coup 6, three cards) once the shoe topic after it is in too."""
        bodies = [(m.topic, json.loads(m.payload)) for m in msgs if not m.retain]
        for i, (topic, body) in enumerate(bodies):
            if (topic == f"{PREFIX}/coup/current" and body["coup"] == killed_coup and body["shoe"] == killed_shoe
                    and len(body["punto"]) + len(body["banco"]) == 3):
                if any(t == f"{PREFIX}/shoe" and b["seq"] == body["seq"] + 1 for t, b in bodies[i:]):
                    return next(m.payload for m in msgs if not m.retain and m.topic == f"{PREFIX}/coup/current"
                                and json.loads(m.payload)["seq"] == body["seq"])
        return None

    before_kill = sub.wait_for(paused_coup, timeout=30)
    assert daemon.kill() == -9
    # The broker noticed: the Last Will says offline while the daemon is dead.
    sub.wait_for(lambda msgs: statuses(msgs, PREFIX) == ["online", "offline"], timeout=20)
    retained_seen = len(sub.snapshot())

    # The dealer goes on while the daemon is dead: the shoe deals until its window of events
    # nobody acknowledged is full, and keeps them in its ring.
    sent_before = len(shoe.sent_events)
    shoe.inject(*rest)
    deadline = time.monotonic() + 20
    while len(shoe.sent_events) < sent_before + 10 and time.monotonic() < deadline:
        time.sleep(0.02)
    dealt_while_dead = [m for m in shoe.sent_events[sent_before:] if isinstance(m, CardDrawn)]
    assert len(dealt_while_dead) >= 5

    daemon.start()
    sub.wait_for(lambda msgs: statuses(msgs, PREFIX) == ["online", "offline", "online"], timeout=20)

    # After the restart the last journaled events' messages go out again (same seq, same bytes),
    # then the retained state: the coup it was killed in is shown again, byte for byte.
    killed_seq = json.loads(before_kill)["seq"]

    def current_again_after_restart(msgs):
        fresh = [m for m in msgs[retained_seen:] if not m.retain and m.topic == f"{PREFIX}/coup/current"
                 and json.loads(m.payload)["seq"] == killed_seq]
        return fresh[0].payload if fresh else None

    after = sub.wait_for(current_again_after_restart, timeout=20)
    assert after == before_kill, "the restarted daemon does not show the coup it was killed in"

    sub.wait_for(lambda msgs: n_results(msgs, PREFIX) >= coups, timeout=40)
    assert shoe.wait(15), "the emulator did not finish its script"
    assert daemon.stop() == 0, daemon.log_text()
    sub.wait_for(lambda msgs: statuses(msgs, PREFIX)[-1:] == ["offline"], timeout=20)

    assert "events of the current shoe replayed" in daemon.log_text()
    stream = live_stream(sub.snapshot(), PREFIX)    # in order, nothing missing, across both processes
    truth = coups_from_dealt(script.dealt)
    sent = [(m.counter, m.card) for m in shoe.sent_events if isinstance(m, CardDrawn)]
    assert sent == dealt_list(script.dealt)
    cards = check_cards(stream)
    results = check_results(stream, truth)
    assert [(r["shoe"], r["coup"]) for r in results] == sorted(truth)
    assert len(results) == coups and {r["shoe"] for r in results} == {d.shoe for d in script.dealt}
    assert card_list(cards) == dealt_list(script.dealt), "a card lost or doubled over the kill"
    with Journal.open(journal, readonly=True) as j:
        journaled = [e.event.data for e in j.events() if e.event.kind is Kind.CARD]
    assert card_list(journaled) == dealt_list(script.dealt), "the journal lost or doubled a card"
    sources = [body for suffix, body in stream if suffix == "sources"]
    assert sources[-1]["sources"]["shoe"]["info"]["resumed"] is True
    # The recall records: one per coup, shoe 1's untouched by the restart in a later shoe.
    with Journal.open(journal, readonly=True) as j:
        recorded = {c.coup_id: c.result for c in j.coups(last=1000)}
    assert sorted(recorded) == sorted(r["coup_id"] for r in results)
    for r in results:
        assert (recorded[r["coup_id"]]["punto"], recorded[r["coup_id"]]["banco"]) == (r["punto"], r["banco"])
    assert statuses(sub.snapshot(), PREFIX) == ["online", "offline", "online", "offline"]
