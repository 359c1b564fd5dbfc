"""ShoeLink v1: decoder and link throughput, and the wire time of a card frame.

    .venv/bin/python -m bench protocol
"""

from __future__ import annotations

import random
import time

from firmware_protocol.codec import Decoder, encode_frame, encode_raw
from firmware_protocol.connection import HostConnection, ShoeConnection
from firmware_protocol.messages import CardDrawn
from shoe_daemon.game.cards import ALL_CODES

BITS_PER_BYTE = 10  # 8N1: start + 8 data + stop


def _best(fn, repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def card_frame_bytes() -> tuple[int, int, int]:
    frame = CardDrawn("TH", 42, 97, seq=1234, time_ms=5000)
    raw = len(encode_raw(frame))
    wire = len(encode_frame(frame))
    return raw, wire, wire + 1


def main() -> None:
    rng = random.Random(1)
    n = 20_000
    frames = [CardDrawn(rng.choice(ALL_CODES), i % 416 + 1, rng.randint(80, 100), seq=i % 65536, time_ms=i * 700)
              for i in range(n)]
    stream = b"".join(encode_frame(f) for f in frames)
    chunks = [stream[i:i + 4096] for i in range(0, len(stream), 4096)]
    small = [stream[i:i + 17] for i in range(0, len(stream), 17)]

    enc = _best(lambda: [encode_frame(f) for f in frames])
    dec = _best(lambda: _feed(chunks))
    dec_small = _best(lambda: _feed(small))

    def link():
        t = 0.0
        shoe = ShoeConnection(now=t, boot_id=1)
        host = HostConnection()
        host.connection_made(t)
        host.receive_data(shoe.send_hello(t), t)
        host.events()
        shoe.receive_data(host.tick(t), t)
        for i, f in enumerate(frames[:5000]):
            t += 0.001
            host.receive_data(shoe.send(f, t), t)
            host.events()
            if i % 8 == 0:
                shoe.receive_data(host.tick(t), t)
    link_s = _best(link, repeat=3)

    mb = len(stream) / 1e6
    print(f"card frames: {n}, {len(stream)} bytes ({len(stream) / n:.0f} bytes each)")
    print(f"encode_frame           {n / enc:>12,.0f} frames/s")
    print(f"Decoder.feed 4 KiB     {n / dec:>12,.0f} frames/s  {mb / dec:6.2f} MB/s")
    print(f"Decoder.feed 17 B      {n / dec_small:>12,.0f} frames/s  {mb / dec_small:6.2f} MB/s")
    print(f"Shoe->Host link        {5000 / link_s:>12,.0f} events/s (encode, decode, order, ack)")
    raw, wire, with_lead = card_frame_bytes()
    print(f"card frame: {raw} bytes raw, {wire} on the wire (COBS + 0x00), {with_lead} with a leading 0x00")
    for baud in (9600, 115200):
        per_byte = BITS_PER_BYTE / baud
        print(f"  at {baud:>6} baud 8N1: {wire * per_byte * 1000:6.3f} ms ({with_lead * per_byte * 1000:6.3f} ms "
              f"with leading 0x00), max {baud / BITS_PER_BYTE / wire:,.0f} card frames/s")


def _feed(chunks) -> None:
    dec = Decoder()
    for c in chunks:
        dec.feed(c)
    assert dec.frames > 0


if __name__ == "__main__":
    main()
