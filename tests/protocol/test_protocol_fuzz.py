"""Fuzzing the decoder and the host connection (hypothesis).

Properties: no exception, bounded memory, any split of a stream decodes the
same, a damaged stretch costs only the frames it touches (and the one it runs
into), and NO FALSE CARD: nothing is ever decoded that was not encoded by a
valid frame in the stream.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_protocol.codec import MAX_ENCODED, DecodeError, Decoder, encode_frame
from firmware_protocol.connection import HostConnection, ShoeConnection
from firmware_protocol.messages import (
    MESSAGE_CLASSES,
    Button,
    CardDrawn,
    Lights,
    Message,
    ShoeStateCode,
    TamperKind,
    UnreadableReason,
    is_sequenced,
)
from shoe_daemon.game.cards import ALL_CODES

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

u8, u16, u32 = st.integers(0, 255), st.integers(0, 65535), st.integers(0, 2**32 - 1)
text16 = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=16)

FIELD_STRATEGIES = {
    "card": st.sampled_from(ALL_CODES),
    "counter": st.integers(1, 65535),
    "quality": st.integers(0, 100),
    "reason": st.sampled_from(list(UnreadableReason)),
    "state": st.sampled_from(list(ShoeStateCode)),
    "what": st.sampled_from(list(TamperKind)),
    "button": st.sampled_from(list(Button)),
    "code": st.integers(1, 65535),
    "active": st.booleans(),
    "detail": u16,
    "version": st.integers(1, 255),
    "boot_id": u32,
    "last_acked": u16,
    "ring_size": st.just(64),
    "ring_count": st.integers(0, 64),
    "heartbeat_ms": st.integers(1, 65535),
    "fw_major": u8, "fw_minor": u8, "fw_patch": u8,
    "capabilities": u32,
    "model": text16, "serial": text16,
    "uptime_s": u32, "cards_read": u32, "cards_unreadable": u32, "rx_errors": u32,
    "lights": st.sampled_from(list(Lights)),
    "status": u8, "unacked": u8,
    "card_counter": u16, "cut_card_at": u16, "fault_code": u16, "ring_count_": u8,
    "host_time_ms": st.integers(0, 2**64 - 1), "shoe_rx_ms": u32,
    "first_seq": u16, "count": st.integers(1, 255),
    "min_version": st.just(1), "max_version": st.integers(1, 255),
    "ack_seq": u16, "blink": st.booleans(),
}


@st.composite
def messages(draw, classes=None):
    cls = draw(st.sampled_from(classes or list(MESSAGE_CLASSES.values())))
    kwargs = {name: draw(FIELD_STRATEGIES[name]) for name in cls.FIELDS}
    if cls.__name__ == "CardPushedBack":
        kwargs["card"] = draw(st.one_of(st.none(), st.sampled_from(ALL_CODES)))
    return cls(**kwargs, seq=draw(u16), time_ms=draw(u32), flags=draw(st.sampled_from([0, 1])))


def feed_in_chunks(data: bytes, cuts: list[int], decoder: Decoder | None = None):
    dec = decoder or Decoder()
    out = []
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    for a, b in zip(points, points[1:], strict=False):
        out += dec.feed(data[a:b])
        assert dec.buffered <= MAX_ENCODED
    return out


def key(item):
    return ("error", item.kind) if isinstance(item, DecodeError) else item


@FUZZ
@given(msg=messages())
def test_every_message_round_trips(msg):
    wire = encode_frame(msg)
    assert 0 not in wire[:-1] and wire[-1] == 0 and len(wire) <= MAX_ENCODED + 1
    assert Decoder().feed(wire) == [msg]


@FUZZ
@given(data=st.binary(max_size=3000), cuts=st.lists(st.integers(0, 3000), max_size=30))
def test_random_bytes_never_raise_and_never_decode(data, cuts):
    out = feed_in_chunks(data, cuts)
    # A valid frame needs a CRC-32 match: random bytes do not produce messages.
    assert all(isinstance(x, DecodeError) for x in out)


@FUZZ
@given(data=st.binary(max_size=2000), cuts1=st.lists(st.integers(0, 2000), max_size=20),
       cuts2=st.lists(st.integers(0, 2000), max_size=20))
def test_any_split_decodes_the_same(data, cuts1, cuts2):
    assert [key(x) for x in feed_in_chunks(data, cuts1)] == [key(x) for x in feed_in_chunks(data, cuts2)]


@st.composite
def streams(draw):
    msgs = draw(st.lists(messages(), min_size=1, max_size=12))
    leading = draw(st.lists(st.booleans(), min_size=len(msgs), max_size=len(msgs)))
    frames = [encode_frame(m, leading_delimiter=lead) for m, lead in zip(msgs, leading, strict=True)]
    return msgs, frames


MUTATIONS = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(0, 7)),
    st.tuples(st.just("replace"), st.integers(0, 10**6), st.binary(min_size=1, max_size=20)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.binary(min_size=1, max_size=300)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 40)),
    st.tuples(st.just("zero"), st.integers(0, 10**6), st.just(0)),
)


def mutate(data: bytes, mutation) -> tuple[bytes, int, int]:
    """Apply one mutation; returns (new data, a, b): bytes [a, b) of the original were touched."""
    kind, pos, arg = mutation
    pos %= max(1, len(data))
    b = bytearray(data)
    if not data and kind in ("flip", "replace", "delete"):
        return data, 0, 0   # earlier mutations deleted everything: nothing left to touch
    if kind == "flip":
        b[pos] ^= 1 << arg
        return bytes(b), pos, pos + 1
    if kind == "replace":
        end = min(len(b), pos + len(arg))
        b[pos:end] = arg[: end - pos]
        return bytes(b), pos, end
    if kind == "insert":
        return bytes(b[:pos] + arg + b[pos:]), pos, pos
    if kind == "delete":
        end = min(len(b), pos + arg)
        del b[pos:end]
        return bytes(b), pos, end
    b.insert(pos, 0)
    return bytes(b), pos, pos


@FUZZ
@given(stream=streams(), mutation=MUTATIONS, cuts=st.lists(st.integers(0, 5000), max_size=20))
def test_a_damaged_stream_never_gives_a_false_message(stream, mutation, cuts):
    msgs, frames = stream
    data = b"".join(frames)
    damaged, a, b = mutate(data, mutation)
    out = feed_in_chunks(damaged, cuts)
    decoded = [x for x in out if not isinstance(x, DecodeError)]
    # No false message (and so no false card): everything decoded was sent, as sent.
    for m in decoded:
        assert m in msgs
    # Frames wholly before the damage, and frames after the first delimiter that follows
    # it, are decoded: the decoder is back in step at the next 0x00.
    spans, start = [], 0
    for f in frames:
        spans.append((start, start + len(f)))
        start += len(f)
    resync = data.find(b"\x00", b)
    expected = [m for m, (s, e) in zip(msgs, spans, strict=True)
                if e <= a or (resync >= 0 and s > resync)]
    assert all(m in decoded for m in expected)


@FUZZ
@given(stream=streams(), mutations=st.lists(MUTATIONS, min_size=1, max_size=6),
       cuts=st.lists(st.integers(0, 5000), max_size=20))
def test_many_mutations_never_give_a_false_card(stream, mutations, cuts):
    msgs, frames = stream
    data = b"".join(frames)
    for mutation in mutations:
        data, _, _ = mutate(data, mutation)
    for m in feed_in_chunks(data, cuts):
        if isinstance(m, Message):
            assert m in msgs


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cards=st.lists(st.sampled_from(ALL_CODES), min_size=1, max_size=30),
       mutations=st.lists(MUTATIONS, max_size=5), cuts=st.lists(st.integers(0, 3000), max_size=15),
       noise=st.binary(max_size=200))
def test_host_connection_survives_damage_and_invents_nothing(cards, mutations, cuts, noise):
    t = 100.0
    shoe = ShoeConnection(now=t, boot_id=42)
    host = HostConnection()
    host.connection_made(t)
    stream = noise + shoe.send_hello(t)
    sent = []
    for i, c in enumerate(cards):
        t += 0.01
        frame = shoe.send_frame(CardDrawn(c, i + 1, 95), t)
        sent.append(frame.message)
        stream += frame.data
    stream += shoe.tick(t)
    for mutation in mutations:
        stream, _, _ = mutate(stream, mutation)
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    delivered = []
    for a, b in zip(points, points[1:], strict=False):
        t += 0.05
        host.receive_data(stream[a:b], t)
        host.tick(t)
        delivered += [e for e in host.events() if isinstance(e, CardDrawn)]
    for m in delivered:
        assert m in sent
    seqs = [m.seq for m in delivered]
    assert len(seqs) == len(set(seqs))  # exactly once
    assert seqs == sorted(seqs)         # in order
    if not mutations:
        assert delivered == sent


@FUZZ
@given(data=st.binary(max_size=1500), times=st.lists(st.floats(0, 10), max_size=10))
def test_both_connections_take_any_bytes(data, times):
    host = HostConnection()
    shoe = ShoeConnection(now=0.0, boot_id=1)
    t = 0.0
    step = max(1, len(data) // (len(times) + 1))
    for i in range(0, len(data) + 1, step):
        t += times[i % len(times)] if times else 0.1
        chunk = data[i:i + step]
        host.receive_data(chunk, t)
        shoe.receive_data(chunk, t)
        assert isinstance(host.tick(t), bytes) and isinstance(shoe.tick(t), bytes)
        host.events()
        shoe.events()
    assert not any(is_sequenced(e.TYPE) for e in host.events() if isinstance(e, Message))
