"""The emulated shoe: its dealer, its determinism, and whole shoes through a real pty."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from protocol_helpers import SerialHost, shoe_view, truth_view

from firmware_protocol.connection import EventsLost, HostConnection, LinkDown, LinkUp
from firmware_protocol.messages import (
    Button,
    ButtonPressed,
    CardDrawn,
    CardPushedBack,
    CardUnreadable,
    CutCard,
    Lights,
    Message,
    ShoeState,
    ShoeStateCode,
)
from shoe_daemon.emulator import (
    DealerScript,
    Disconnect,
    EmulatedShoe,
    Faults,
    Noise,
    Pause,
    ShoeSimulator,
    stacked_scenario,
)
from shoe_daemon.game.cards import RANK_VALUES
from shoe_daemon.game.tableau import next_side

ROOT = Path(__file__).resolve().parents[2]


def payload(m: Message):
    return dataclasses.replace(m, time_ms=0, flags=0)


# -- the dealer -------------------------------------------------------------------------------------

def test_same_seed_same_shoe_different_seed_different_shoe():
    a = list(DealerScript(seed=11))
    b = list(DealerScript(seed=11))
    c = list(DealerScript(seed=12))
    assert a == b and a != c
    assert sum(isinstance(x, CardDrawn) for x in a) > 380


def test_dealer_follows_the_tableau_burns_and_respects_the_cut_card():
    script = DealerScript(decks=8, seed=3)
    actions = list(script)
    dealt = script.dealt
    assert actions[:3] == [ShoeState(ShoeStateCode.INSERTED), ButtonPressed(Button.NEW_SHOE),
                           ButtonPressed(Button.BURN)]
    burn = [d for d in dealt if d.side == "burn"]
    assert len(burn) == 1 + (RANK_VALUES[burn[0].card[0]] or 10)
    assert [d.counter for d in dealt] == list(range(1, len(dealt) + 1))
    coups = {}
    for d in dealt:
        if d.coup is not None:
            coups.setdefault(d.coup, []).append(d)
    for cards in coups.values():
        punto, banco = [], []
        for d in cards:
            assert next_side(punto, banco).value == d.side
            (punto if d.side == "punto" else banco).append(RANK_VALUES[d.card[0]])
        assert next_side(punto, banco) is None
    assert sum(isinstance(a, ButtonPressed) and a.button == Button.COUP_CONFIRM for a in actions) == len(coups)
    (cut,) = [a for a in actions if isinstance(a, CutCard)]
    assert 416 - 16 <= cut.counter <= 416 - 14
    # The cut card came out during the second-last coup.
    cut_index = actions.index(cut)
    confirms_after = [a for a in actions[cut_index:] if isinstance(a, ButtonPressed)]
    assert len(confirms_after) == 2
    assert actions[-1] == ShoeState(ShoeStateCode.REMOVED)


def test_dealer_faults_are_independent_streams():
    base = DealerScript(seed=5)
    list(base)
    faulty = DealerScript(seed=5, faults=Faults(unreadable=0.1, push_back=0.05, extra_card=0.1, missing_card=0.1))
    actions = list(faulty)
    # The shoe's order is untouched by dealer faults.
    n = min(len(base.dealt), len(faulty.dealt))
    assert [d.card for d in base.dealt[:n - 20]] == [d.card for d in faulty.dealt[:n - 20]]
    kinds = Counter(type(a).__name__ for a in actions)
    assert kinds["CardUnreadable"] > 10 and kinds["CardPushedBack"] > 3
    assert {m.kind for m in faulty.mistakes} == {"extra", "missing"}
    assert sum(not d.readable for d in faulty.dealt) == kinds["CardUnreadable"]
    assert any(d.mistake == "extra" for d in faulty.dealt)
    # A pushed-back card comes out again with the same counter.
    for i, a in enumerate(actions):
        if isinstance(a, CardPushedBack):
            again = actions[i + 1]
            assert isinstance(again, CardDrawn | CardUnreadable) and again.counter == a.counter


def test_stacked_deck_and_coup_limit():
    stack = "9H 2C TD TS 5S KH 4C 8D".split()
    script = DealerScript(stack=stack, burn=False, coups=1)
    actions = list(script)
    assert [a.card for a in actions if isinstance(a, CardDrawn)] == ["9H", "2C", "TD", "TS"]  # Punto's natural 9
    assert [d.side for d in script.dealt] == ["punto", "banco", "punto", "banco"]
    assert actions[-1] == ButtonPressed(Button.COUP_CONFIRM)
    # Without a coup limit a short stack runs dry: EMPTY, then the shoe is removed.
    dry = list(DealerScript(stack=stack, burn=False))
    assert ShoeState(ShoeStateCode.EMPTY) in dry and dry[-1] == ShoeState(ShoeStateCode.REMOVED)


def test_faults_parse():
    f = Faults.parse(["noise=0.1", "push-back=0.02", "disconnect_time=2"])
    assert (f.noise, f.push_back, f.disconnect_time) == (0.1, 0.02, 2.0)
    for bad in ("nosuch=0.1", "drop", "drop=2", "drop=x"):
        with pytest.raises(ValueError):
            Faults.parse([bad])


# -- the simulator on an in-memory line -----------------------------------------------------

def simulate(sim: ShoeSimulator, host: HostConnection, seconds: float, t: float = 0.0, dt: float = 0.005):
    """Step shoe and host together; returns the host's events."""
    events: list = []
    host.connection_made(t)
    unplugged_until = None
    end = t + seconds
    while t < end:
        t += dt
        if unplugged_until is not None and t >= unplugged_until:
            unplugged_until = None
            sim.connected(t)
            host.connection_made(t)
        result = sim.step(t)
        if unplugged_until is None:
            host.receive_data(result.data, t)
            sim.receive_data(host.tick(t), t)
        events += host.events()
        if result.disconnect is not None and unplugged_until is None:
            unplugged_until = t + result.disconnect
            host.connection_lost(t, "unplugged")
            events += host.events()
        if sim.done and unplugged_until is None and host.in_sync and host.last_seq == sim.conn.last_seq:
            break
    return events


FAULTS = Faults(noise=0.02, corrupt=0.02, drop=0.02, unreadable=0.02, push_back=0.01, disconnect=0.004,
                extra_card=0.02, missing_card=0.02, disconnect_time=0.3)


def test_whole_shoe_in_memory_with_every_fault():
    sim = ShoeSimulator(decks=8, seed=21, pace=0, faults=FAULTS, heartbeat=0.2, boot_id=1)
    host = HostConnection(resend_timeout=0.1, hello_interval=0.05)
    events = simulate(sim, host, 120.0)
    assert sim.done and host.in_sync
    got = [e for e in events if isinstance(e, Message) and e.sequenced]
    assert [payload(e) for e in got] == [payload(m) for m in sim.sent_events]
    assert shoe_view(events) == truth_view(sim.dealt)
    assert not [e for e in events if isinstance(e, EventsLost)]
    kinds = Counter(r.kind for r in sim.fault_log)
    assert kinds["drop"] and kinds["corrupt"] and kinds["noise"] and kinds["disconnect"]


def test_same_seed_same_messages_and_faults():
    def one_run():
        sim = ShoeSimulator(decks=1, seed=99, pace=0, faults=FAULTS, heartbeat=0.2)
        simulate(sim, HostConnection(resend_timeout=0.1), 60.0)
        return ([(m.seq, payload(m)) for m in sim.sent_events],
                [r for r in sim.fault_log if r.first])

    assert one_run() == one_run()


def test_scenario_directives():
    scenario = [ShoeState(ShoeStateCode.INSERTED), Noise(b"\x13\x37"), *stacked_scenario(["AS", "KD"]),
                Pause(0.5), CardDrawn("QC", 3, 80)]
    sim = ShoeSimulator(scenario=scenario, pace=0, heartbeat=0.2)
    events = simulate(sim, HostConnection(), 5.0)
    cards = [e for e in events if isinstance(e, CardDrawn)]
    assert [c.card for c in cards] == ["AS", "KD", "QC"]
    assert cards[2].time_ms - cards[1].time_ms >= 500
    assert [d.card for d in sim.dealt] == ["AS", "KD", "QC"]


# -- the real thing: a pty, pyserial, a host loop ------------------------------------------

def test_whole_8_deck_shoe_through_a_pty_with_faults():
    faults = Faults(noise=0.02, corrupt=0.02, drop=0.02, unreadable=0.02, push_back=0.005, disconnect=0.003,
                    disconnect_time=0.2)
    shoe = EmulatedShoe(decks=8, seed=2024, pace=0, faults=faults, heartbeat=0.2)
    with shoe:
        assert os.path.islink(shoe.path)  # disconnects need a stable name
        host = SerialHost(shoe.path, resend_timeout=0.15, hello_interval=0.05)
        try:
            ok = host.run_until(
                lambda: shoe.wait(0) and host.conn.in_sync and host.conn.last_seq == shoe.simulator.conn.last_seq,
                timeout=45)
        finally:
            host.close()
        assert shoe.error is None
        assert ok, f"host stuck: last_seq={host.conn.last_seq} shoe={shoe.simulator.conn.last_seq}"
    events = host.events
    got = [e for e in events if isinstance(e, Message) and e.sequenced]
    assert [payload(e) for e in got] == [payload(m) for m in shoe.sent_events]
    view, truth = shoe_view(events), truth_view(shoe.dealt)
    assert view == truth  # every card accounted for, unreadable ones as unreadable
    assert len(truth) > 380 and sum(v is None for v in truth.values()) > 0
    assert not host.of(EventsLost)
    assert host.conn.stats.decode_errors > 0 and host.conn.stats.resend_requests > 0
    if shoe.disconnects:
        assert len(host.of(LinkDown)) >= shoe.disconnects
        assert all(u.resumed for u in host.of(LinkUp)[1:])


def test_reconnect_through_the_link_and_lights():
    scenario = [*stacked_scenario(["AS", "2S", "3S", "4S"]), Disconnect(0.3), CardDrawn("5S", 5, 99),
                CardDrawn("6S", 6, 99)]
    shoe = EmulatedShoe(scenario=scenario, pace=0.05, heartbeat=0.2)
    with shoe:
        first_target = os.readlink(shoe.path)
        host = SerialHost(shoe.path, hello_interval=0.05)
        try:
            assert host.run_until(lambda: len(host.of(LinkUp)) >= 1, timeout=5)
            port = host.port
            port.write(host.conn.set_lights(Lights.BANCO, time.monotonic()))
            assert host.run_until(lambda: shoe.wait(0) and shoe.disconnects == 1 and host.conn.in_sync
                                  and host.conn.last_seq == shoe.simulator.conn.last_seq, timeout=10)
        finally:
            host.close()
        assert os.path.islink(shoe.path) and os.path.exists(shoe.path)
        assert first_target  # the link pointed at a pty before; it points at the new one now
    assert [c.card for c in host.of(CardDrawn)] == ["AS", "2S", "3S", "4S", "5S", "6S"]
    assert host.of(LinkDown) and host.opens >= 2
    assert host.of(LinkUp)[-1].resumed
    assert any(light.lights == Lights.BANCO for _, light in shoe.simulator.lights_log)
    assert shoe.simulator.conn.lights == Lights.BANCO  # restored after the reconnect


def test_inject_while_running():
    shoe = EmulatedShoe(scenario=[ShoeState(ShoeStateCode.INSERTED)], pace=0, heartbeat=0.2)
    with shoe:
        host = SerialHost(shoe.path, hello_interval=0.05)
        try:
            assert host.run_until(lambda: host.conn.in_sync and len(host.of(ShoeState)) == 1, timeout=5)
            shoe.inject(CardDrawn("7C", 1, 99), ButtonPressed(Button.COUP_CONFIRM))
            assert host.run_until(lambda: len(host.of(ButtonPressed)) == 1, timeout=5)
        finally:
            host.close()
    assert [c.card for c in host.of(CardDrawn)] == ["7C"]


def test_cli_prints_the_path_first_and_speaks_the_protocol(tmp_path):
    link = tmp_path / "shoe0"
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoe_daemon", "emulate", "--seed", "4", "--pace", "0", "--coups", "3",
         "--heartbeat", "0.2", "--link", str(link), "--linger", "20"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        first = proc.stdout.readline().strip()
        assert first == str(link)
        host = SerialHost(first, hello_interval=0.05)
        try:
            assert host.run_until(lambda: len(host.of(ButtonPressed)) >= 5, timeout=15), proc.stderr
        finally:
            host.close()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    confirms = [b for b in host.of(ButtonPressed) if b.button == Button.COUP_CONFIRM]
    assert len(confirms) == 3
    expected = DealerScript(seed=4, coups=3, shoes=None)
    assert [payload(m) for m in host.events if isinstance(m, Message) and m.sequenced] == \
        [payload(dataclasses.replace(a, seq=i + 1)) for i, a in enumerate(expected)]
    assert "dealt" in err
