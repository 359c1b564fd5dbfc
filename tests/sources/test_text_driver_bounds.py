"""The text driver under bad input: bounded lines, flat memory, coalesced faults.

A reader that spews garbage (a wrong baud rate, a broken cable, noise) must cost a few events a
second and a fixed amount of memory, whatever arrives; every bad line is still accounted for.
"""

from __future__ import annotations

import random
import re
import tracemalloc
from types import SimpleNamespace

from shoe_daemon.core.events import Kind
from shoe_daemon.sources.text_driver import COALESCE, DEFAULT_PATTERN, MAX_LINE, TextLineDriver


def make(pattern=None):
    return TextLineDriver(SimpleNamespace(text_pattern=pattern))


def faults(events):
    return [e.data for e in events if e.kind is Kind.FAULT]


def test_an_over_long_line_is_dropped_to_its_end_with_one_fault():
    d = make()
    events = []
    for _ in range(10):                                   # 1,000 bytes of one line, in pieces
        events += d.feed(b"A" * 100, 1.0)[0]
    events += d.feed(b"9H\nKD\n", 1.0)[0]                 # the end of that line, then a good one
    assert faults(events) == [{"code": "line_too_long", "line": "A" * MAX_LINE}]
    assert [e.data["card"] for e in events if e.kind is Kind.CARD] == ["KD"]
    assert len(d._buffer) == 0


def test_a_burst_of_garbage_is_one_fault_then_one_count():
    d = make()
    events = []
    for i in range(2000):
        events += d.feed(f"garbage {i}\r\n".encode(), 10.0 + i * 0.0002)[0]
    assert faults(events) == [{"code": "unrecognised_line", "line": "garbage 0"}]
    events, _ = d.tick(10.0 + COALESCE)
    assert faults(events) == [{"code": "unrecognised_line", "line": "garbage 1999", "count": 1999,
                               "coalesced": True, "since": 10.0}]
    assert d.tick(10.0 + 2 * COALESCE)[0] == []           # quiet: the burst is over
    events, _ = d.feed(b"XX\n", 20.0)                     # the next bad line is news again
    assert faults(events) == [{"code": "unrecognised_line", "line": "XX"}]


def test_lone_bad_lines_are_reported_one_by_one_as_before():
    d = make()
    got = []
    for t, line in ((1.0, b"READER READY\r\n"), (1.2, b"KS\r\n"), (8.0, b"1X\r\n")):
        got += d.feed(line, t)[0]
        got += d.tick(t + 0.1)[0]
    assert faults(got) == [{"code": "unrecognised_line", "line": "READER READY"},
                           {"code": "unrecognised_line", "line": "1X"}]


def test_a_pending_count_is_reported_when_the_link_drops():
    d = make()
    d.connected(0.0)
    d.feed(b"x\ny\nz\n", 1.0)
    down = d.disconnected(1.1, "unplugged")
    assert [e.data.get("count") for e in down if e.kind is Kind.FAULT] == [2]
    assert down[-1].kind is Kind.LINK_DOWN


def expected_faults(blob: bytes) -> dict[str, int]:
    """The bad lines in ``blob``, counted independently of the driver."""
    rx = re.compile(DEFAULT_PATTERN, re.I)
    out = {"unrecognised_line": 0, "line_too_long": 0, "cards": 0}
    for line in re.split(rb"[\r\n]", blob)[:-1]:          # the last piece has no line end
        if len(line) > MAX_LINE:
            out["line_too_long"] += 1
        elif line.decode("ascii", "replace").strip():
            out["cards" if rx.search(line.decode("ascii", "replace")) else "unrecognised_line"] += 1
    return out


def feed_random(d, rng, n_chunks, total, t=0.0):
    """Feed ``n_chunks`` random 4 KiB reads 1 ms apart; tally cards and faults (with counts)."""
    n_events = 0
    for _ in range(n_chunks):
        t += 0.001
        events, _ = d.feed(rng.randbytes(4096), t)
        events += d.tick(t)[0]
        n_events += len(events)
        for e in events:
            key = "cards" if e.kind is Kind.CARD else e.data["code"]
            total[key] += e.data.get("count", 1) if e.kind is Kind.FAULT else 1
    return n_events, t


def test_fifty_megabytes_of_random_bytes_make_few_events_and_every_bad_line_is_counted():
    d = make()
    total = {"unrecognised_line": 0, "line_too_long": 0, "cards": 0}
    chunks = 50 * 256                                     # 50 MiB in 4 KiB reads, 1 ms apart: 12.8 s
    n_events, t = feed_random(d, random.Random(13), chunks, total)
    for e in d.disconnected(t, "end"):
        if e.kind is Kind.FAULT:
            total[e.data["code"]] += e.data.get("count", 1)
    # At most a first event and one count per code per second of input, plus the cards.
    assert n_events - total["cards"] <= 2 * 2 * 14
    assert len(d._buffer) <= MAX_LINE
    # Every bad line is accounted for: the same random stream, counted without the driver.
    rng = random.Random(13)
    assert total == expected_faults(b"".join(rng.randbytes(4096) for _ in range(chunks)))


def test_memory_stays_flat_whatever_arrives():
    d = make()
    total = {"unrecognised_line": 0, "line_too_long": 0, "cards": 0}
    rng = random.Random(7)
    feed_random(d, rng, 64, total)                        # warm up (caches, the first bursts)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        feed_random(d, rng, 2 * 256, total, t=1.0)        # 2 MiB more
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024, f"memory grew by {grown} bytes"
