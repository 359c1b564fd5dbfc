"""The link state machines, host and shoe, on an in-memory line with a fake clock."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_helpers import Line

from firmware_protocol.codec import DecodeError, ErrorKind, encode_frame
from firmware_protocol.connection import (
    NEED_DATA,
    ClockSynced,
    EventsLost,
    HostConnection,
    HostLinkChanged,
    LinkDown,
    LinkState,
    LinkUp,
    ResendRequested,
    ShoeConnection,
    seq_diff,
    time_diff,
)
from firmware_protocol.messages import (
    CardDrawn,
    Fault,
    FaultCode,
    Heartbeat,
    HostHello,
    Lights,
    ResendGone,
    ResendRequest,
    Status,
)
from shoe_daemon.game.cards import ALL_CODES


def card(i: int) -> CardDrawn:
    return CardDrawn(ALL_CODES[i % 52], i % 65535 + 1, 90)


class Harness:
    """Shoe <-> line <-> host, stepped by a fake clock."""

    def __init__(self, *, up: Line | None = None, down: Line | None = None, boot_id: int = 0xB007,
                 shoe_kwargs: dict | None = None, host_kwargs: dict | None = None, t0: float = 1000.0):
        self.t = t0
        self.shoe = ShoeConnection(now=t0, boot_id=boot_id, **(shoe_kwargs or {}))
        self.host = HostConnection(**(host_kwargs or {}))
        self.up = up or Line()
        self.down = down or Line()
        self.events: list = []
        self.shoe_events: list = []
        self.plugged = True
        self._to_host = b""
        self.host.connection_made(self.t)

    def send(self, msg, deliver: bool = True) -> CardDrawn:
        data = self.shoe.send_frame(msg, self.t)
        if deliver:
            self._to_host += data.data
        return data.message

    def run(self, seconds: float, dt: float = 0.01) -> None:
        end = self.t + seconds
        while self.t < end - 1e-9:
            self.t += dt
            data = self._to_host + self.shoe.tick(self.t)
            self._to_host = b""
            if self.plugged:
                self.host.receive_data(self.up.carry(data), self.t)
            self.events += self.host.events()
            back = self.host.tick(self.t) if self.plugged else b""
            self.events += self.host.events()
            self.shoe.receive_data(self.down.carry(back), self.t)
            self.shoe_events += self.shoe.events()

    def unplug(self) -> None:
        self.plugged = False
        self.host.connection_lost(self.t, "unplugged")
        self.events += self.host.events()

    def plug(self) -> None:
        self.plugged = True
        self.host.connection_made(self.t)

    def of(self, cls) -> list:
        return [e for e in self.events if isinstance(e, cls)]

    def cards(self) -> list[CardDrawn]:
        return self.of(CardDrawn)


def strip(msgs):
    return [dataclasses.replace(m, flags=0) for m in msgs]


def test_seq_and_time_arithmetic():
    assert seq_diff(0, 65535) == 1 and seq_diff(65535, 0) == -1 and seq_diff(5, 5) == 0
    assert time_diff(10, 2**32 - 10) == 20 and time_diff(2**32 - 10, 10) == -20


def test_handshake_brings_the_link_up():
    h = Harness()
    assert h.host.state is LinkState.HANDSHAKING
    assert h.host.next_event() is NEED_DATA
    h.run(0.1)
    (up,) = h.of(LinkUp)
    assert up.info.boot_id == 0xB007 and up.info.version == 1 and up.info.ring_size == 64
    assert up.info.model == "EMU-SHOE" and up.missed == 0 and not up.resumed
    assert h.host.state is LinkState.UP and h.host.info == up.info
    assert any(isinstance(e, HostHello) for e in h.shoe_events)
    assert HostLinkChanged(True) in h.shoe_events
    assert h.of(ClockSynced)


def test_events_arrive_in_order_and_are_acknowledged():
    h = Harness()
    h.run(0.1)
    sent = [h.send(card(i)) for i in range(10)]
    h.run(0.1)
    assert h.cards() == sent
    assert h.shoe.last_acked == sent[-1].seq and h.shoe.unacked == 0
    assert h.host.in_sync and h.host.last_seq == sent[-1].seq


def test_a_dropped_frame_is_requested_again():
    h = Harness()
    h.run(0.1)
    sent = [h.send(card(i), deliver=(i != 2)) for i in range(5)]
    h.run(0.2)
    assert strip(h.cards()) == sent
    assert h.cards()[2].retransmit
    assert ResendRequested(sent[2].seq, 1, 1) in h.events
    assert not h.of(EventsLost)


def test_a_lost_last_frame_is_found_by_the_heartbeat():
    h = Harness()
    h.run(0.1)
    sent = [h.send(card(i), deliver=(i != 4)) for i in range(5)]
    h.run(0.2)
    assert h.cards() == sent[:4]  # nothing tells the host yet
    h.run(1.2)  # a heartbeat carries last_seq
    assert strip(h.cards()) == sent


def test_duplicates_are_suppressed():
    h = Harness()
    h.run(0.1)
    msg = h.send(card(1))
    h._to_host += encode_frame(msg) + encode_frame(dataclasses.replace(msg, flags=1))
    h.run(0.1)
    assert h.cards() == [msg]
    assert h.host.stats.duplicates == 2


def test_sequence_numbers_wrap():
    h = Harness(shoe_kwargs={"first_seq": 65530})
    h.run(0.1)
    sent = [h.send(card(i), deliver=(i not in (5, 6, 9))) for i in range(20)]
    h.run(0.5)
    assert [m.seq for m in sent][4:8] == [65534, 65535, 0, 1]
    assert strip(h.cards()) == sent
    assert h.shoe.last_acked == sent[-1].seq


def test_link_timeout_then_rehandshake_fetches_what_was_missed():
    h = Harness()
    h.run(0.1)
    before = [h.send(card(i)) for i in range(3)]
    h.run(0.1)
    h.up.up = h.down.up = False  # the cable is cut, the port stays open
    during = [h.send(card(i)) for i in range(3, 8)]
    h.run(4.0)
    assert h.of(LinkDown) == [LinkDown("timeout")]
    assert HostLinkChanged(False) in h.shoe_events
    h.up.up = h.down.up = True
    h.run(1.0)
    ups = h.of(LinkUp)
    assert len(ups) == 2 and ups[1].resumed and ups[1].missed == 5
    assert strip(h.cards()) == before + during


def test_unplug_and_reconnect():
    h = Harness()
    h.run(0.1)
    before = [h.send(card(i)) for i in range(2)]
    h.run(0.1)
    h.unplug()
    assert h.of(LinkDown) == [LinkDown("unplugged")]
    assert h.host.state is LinkState.DOWN
    during = [h.send(card(i)) for i in range(2, 5)]
    h.run(0.5)
    h.plug()
    h.run(0.3)
    assert h.of(LinkUp)[-1].missed == 3
    assert strip(h.cards()) == before + during


def test_shoe_restart_is_a_new_session():
    h = Harness()
    h.run(0.1)
    old = [h.send(card(i)) for i in range(4)]
    h.run(0.1)
    # Power cycle: a new boot_id, seqs from 1 again, two cards dealt before the host hears of it.
    h.shoe = ShoeConnection(now=h.t, boot_id=0xB008)
    new = [h.send(card(i), deliver=False) for i in range(10, 12)]
    h._to_host += h.shoe.send_hello(h.t)
    h.run(0.3)
    assert LinkDown("shoe_restarted") in h.events
    up = h.of(LinkUp)[-1]
    assert up.info.boot_id == 0xB008 and not up.resumed and up.missed == 2
    assert strip(h.cards()) == old + new


def test_ring_overflow_is_reported_as_lost():
    h = Harness(shoe_kwargs={"ring_size": 8})
    h.run(0.1)
    h.unplug()
    sent = [h.send(card(i)) for i in range(20)]
    # Card 9 overwrote seq 1: the outage starts and FAULT RING_OVERFLOW takes seq 10 (section 9.1).
    assert h.shoe.counters.overwritten_unacked == 13
    h.plug()
    h.run(0.3)
    assert h.of(EventsLost) == [EventsLost(1, 13, "not_in_ring")]
    assert strip(h.cards()) == sent[12:]
    # The raise was overwritten too; the clear, sent when the host's ACK ended the outage, arrives.
    faults = h.of(Fault)
    assert [(f.code, f.active, f.detail) for f in faults] == [(FaultCode.RING_OVERFLOW, False, 13)]
    assert h.host.in_sync


def test_resend_of_a_frame_no_longer_held_is_gone():
    shoe = ShoeConnection(now=0.0, boot_id=1, ring_size=4, ring_overflow_fault=False)
    for i in range(10):
        shoe.send(card(i), 0.0)
    shoe.receive_data(encode_frame(ResendRequest(3, 5)), 0.1)
    out = [m for m in _decode(shoe.tick(0.1)) if not isinstance(m, Heartbeat)]
    assert out[0] == ResendGone(3, 4, seq=10, time_ms=100)
    assert [m.seq for m in out[1:]] == [7] and out[1].retransmit


def test_host_records_gone_events_as_lost_and_moves_on():
    h = Harness()
    h.run(0.1)
    sent = [h.send(card(i), deliver=(i != 1)) for i in range(3)]
    # The shoe has lost seq 2 (say, RAM trouble): it answers GONE.
    h.shoe._ring.clear()
    h.run(0.3)
    assert EventsLost(sent[1].seq, 1, "gone") in h.events
    assert h.cards() == [sent[0], sent[2]]
    assert h.host.in_sync


def test_resume_from_the_journal():
    shoe_side = Harness()
    shoe_side.run(0.1)
    sent = [shoe_side.send(card(i)) for i in range(10)]
    shoe_side.run(0.1)
    assert shoe_side.shoe.last_acked == sent[-1].seq
    # The daemon restarts; its journal says it has everything up to seq 5.
    h = Harness(host_kwargs={"resume": (0xB007, sent[4].seq)})
    h.shoe = shoe_side.shoe
    h.run(0.3)
    up = h.of(LinkUp)[0]
    assert up.resumed and up.missed == 5  # a new HostConnection, resumed from the journal
    assert strip(h.cards()) == sent[5:]


def test_first_contact_fetches_what_no_host_acknowledged():
    h = Harness()
    h.unplug()
    h.host = HostConnection()
    sent = [h.send(card(i)) for i in range(6)]
    h.shoe.last_acked = sent[2].seq  # an earlier host got the first three
    h.plug()
    h.run(0.3)
    assert h.of(LinkUp)[0].missed == 3
    assert strip(h.cards()) == sent[3:]


def test_clock_sync_maps_shoe_time_to_host_time():
    h = Harness(t0=1_764_460_800.0)
    h.run(0.1)
    (synced,) = h.of(ClockSynced)
    assert synced.rtt_ms < 50
    msg = h.send(card(1))
    h.run(0.05)
    assert abs(h.host.host_time(msg.time_ms) - (h.t - 0.05)) < 0.03
    assert h.shoe.host_epoch_offset_ms is not None


def test_shoe_clock_wrap():
    h = Harness(shoe_kwargs={"clock_start_ms": 2**32 - 300})
    h.run(0.1)
    times = []
    for i in range(6):
        times.append(h.host.host_time(h.send(card(i)).time_ms))
        h.run(0.1)
    assert [m.time_ms < 2**31 for m in h.cards()] == [False, False, True, True, True, True]
    assert all(b > a for a, b in zip(times, times[1:], strict=False))


def test_lights_are_sent_and_reconciled():
    h = Harness()
    h.run(0.1)
    h.down.up = False
    h.host.set_lights(Lights.PUNTO, h.t)  # lost on the way
    h.down.up = True
    assert h.shoe.lights is Lights.OFF
    h.run(1.5)  # the next heartbeat shows OFF: the host sends PUNTO again
    assert h.shoe.lights is Lights.PUNTO
    h.shoe.receive_data(h.host.set_lights(Lights.ERROR_STOP, h.t, blink=True), h.t)
    assert (h.shoe.lights, h.shoe.blink) == (Lights.ERROR_STOP, True)


def test_status_request():
    h = Harness()
    h.run(0.1)
    for i in range(3):
        h.send(card(i))
    h.run(0.1)
    h.shoe.receive_data(h.host.request_status(h.t), h.t)
    h.run(0.05)
    (status,) = h.of(Status)
    assert status.card_counter == 3 and status.last_acked == h.shoe.last_seq


def test_an_echoed_host_frame_is_a_wrong_direction_error():
    h = Harness()
    h.run(0.1)
    h.host.receive_data(encode_frame(HostHello()), h.t)
    (err,) = [e for e in h.host.events() if isinstance(e, DecodeError)]
    assert err.kind is ErrorKind.WRONG_DIRECTION


def test_an_event_the_host_cannot_read_keeps_its_place():
    from firmware_protocol.vectors import _raw, _wire

    h = Harness()
    h.run(0.1)
    a = h.send(card(1))
    h.shoe.last_seq += 1  # the firmware's newer event type takes seq 3 ...
    h._to_host += _wire(_raw(0x3F, b"\x01", seq=h.shoe.last_seq))
    b = h.send(card(2))
    h.run(0.2)
    kinds = [type(e).__name__ for e in h.events if isinstance(e, CardDrawn | DecodeError)]
    assert kinds == ["CardDrawn", "DecodeError", "CardDrawn"]
    assert h.cards() == [a, b] and h.host.in_sync and not h.of(ResendRequested)


def test_retries_exhausted_gives_the_event_up():
    h = Harness(host_kwargs={"resend_retries": 3, "resend_timeout": 0.2})
    h.run(0.1)
    h.down.up = False  # the host's requests never arrive; the shoe's frames do
    sent = [h.send(card(i), deliver=(i != 1)) for i in range(3)]
    h.run(1.5)
    assert EventsLost(sent[1].seq, 1, "retries") in h.events
    assert h.cards() == [sent[0], sent[2]]
    assert [e.attempt for e in h.of(ResendRequested)] == [1, 2, 3]


def _decode(data):
    from firmware_protocol.codec import Decoder

    return Decoder().feed(data)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), drop=st.floats(0, 0.08), corrupt=st.floats(0, 0.08),
       first_seq=st.sampled_from([1, 65500]))
def test_lossy_line_delivers_every_card_once_in_order(seed, drop, corrupt, first_seq):
    h = Harness(up=Line(drop, corrupt, seed), down=Line(drop, corrupt, seed + 1),
                shoe_kwargs={"first_seq": first_seq})
    h.run(0.5)
    sent = []
    for i in range(60):
        sent.append(h.send(card(i)))
        h.run(0.1)
    h.run(6.0)
    delivered = strip(h.cards())
    assert set(delivered) <= set(sent)  # never a false card
    assert delivered == sent
    assert not h.of(EventsLost)


def test_a_host_withholding_acks_keeps_the_link_and_the_shoe_keeps_every_event_for_the_next_session():
    """PROTOCOL.md 9.2: a host that cannot store events lights the stop and acknowledges nothing past
    the point its session started from; a later session fetches every event dealt meanwhile."""
    from firmware_protocol.connection import HostConnection, ShoeConnection
    from firmware_protocol.messages import CardDrawn, Lights

    t = 0.0
    shoe = ShoeConnection(now=t, boot_id=7)
    held = HostConnection()
    held.withhold_acks()
    held.connection_made(t)
    held.set_lights(Lights.ERROR_STOP, t)
    shoe.receive_data(held.tick(t), t)
    held.receive_data(shoe.send_hello(t), t)
    for i in range(5):
        t += 0.3
        held.receive_data(shoe.send(CardDrawn("9H", i + 1, 100), t), t)
        held.events()
        shoe.receive_data(held.tick(t), t)
    for _ in range(8):               # keep-alives go on: the link stays up, still no ACK past the start
        t += 0.5
        held.receive_data(shoe.tick(t), t)
        shoe.receive_data(held.tick(t), t)
    assert shoe.lights is Lights.ERROR_STOP
    assert held.state.name == "UP" and held.last_seq == shoe.last_seq
    assert shoe.unacked == 5 and shoe.last_acked == 0

    # The next session (the journal writable again) fetches the five cards.
    fresh = HostConnection()
    fresh.connection_made(t)
    shoe.receive_data(fresh.tick(t), t)
    fresh.receive_data(shoe.send_hello(t), t)
    got = []
    for _ in range(20):
        t += 0.1
        shoe.receive_data(fresh.tick(t), t)
        fresh.receive_data(shoe.tick(t), t)
        got += [e for e in fresh.events() if isinstance(e, CardDrawn)]
    assert [e.counter for e in got] == [1, 2, 3, 4, 5]
    assert shoe.unacked == 0
