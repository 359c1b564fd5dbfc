"""Journal benchmark: append latency and rate, verification and start-up times.

    .venv/bin/python -m bench journal

- appends, synchronous "full" and "normal": single appends and group commits of 10
  (latency of one call: p50/p99; events per second);
- a journal of 1,000,000 events (``BENCH_JOURNAL_EVENTS``), a new shoe every 500 events:
  start-up (open + quick verification from the last checkpoint + PRAGMA quick_check),
  replay of the current shoe, and the full verification (whole chain + integrity_check).

Files go to a temporary directory in ``BENCH_DIR`` (default: the system's temporary
directory): fsync times depend on that disk.
"""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.journal import Journal

CARDS = [r + s for r in "A23456789TJQK" for s in "SHDC"]
SHOE_EVERY = 500


def _event(i: int, rnd: random.Random) -> Event:
    t = 1_700_000_000.0 + i * 0.7
    if i % SHOE_EVERY == 0:
        return Event(t, Kind.NEW_SHOE, "api", {"user": "supervisor-1", "reason": "new shoe", "decks": 8})
    return Event(t, Kind.CARD, "shoe", {"card": rnd.choice(CARDS), "counter": i % SHOE_EVERY, "quality": 97})


def _pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def bench_appends(directory: Path, synchronous: str, group: int, calls: int) -> dict[str, float]:
    path = directory / f"append-{synchronous}-{group}.sqlite3"
    rnd = random.Random(1)
    lat = []
    with Journal.open(path, synchronous=synchronous) as j:  # type: ignore[arg-type]
        j.append(_event(0, rnd))
        i = 1
        t_all = time.perf_counter()
        for _ in range(calls):
            batch = [_event(i + k, rnd) for k in range(group)]
            t0 = time.perf_counter()
            if group == 1:
                j.append(batch[0])
            else:
                j.append_many(batch)
            lat.append(time.perf_counter() - t0)
            i += group
        total = time.perf_counter() - t_all
    return {
        "p50_ms": statistics.median(lat) * 1e3,
        "p99_ms": _pct(lat, 99) * 1e3,
        "events_per_s": calls * group / total,
    }


def build_big(path: Path, n: int) -> float:
    rnd = random.Random(2)
    t0 = time.perf_counter()
    with Journal.open(path, synchronous="normal", verify="none") as j:
        for start in range(0, n, 10_000):
            j.append_many([_event(i, rnd) for i in range(start, min(n, start + 10_000))])
    return time.perf_counter() - t0


def main() -> dict[str, object]:
    n = int(os.environ.get("BENCH_JOURNAL_EVENTS", "1000000"))
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="bench-journal-", dir=os.environ.get("BENCH_DIR")) as tmp:
        directory = Path(tmp)
        print(f"journal appends (files in {directory})")
        print(f"  {'synchronous':<12} {'commit of':>9} {'p50 ms':>8} {'p99 ms':>8} {'events/s':>10}")
        for synchronous in ("full", "normal"):
            for group, calls in ((1, 2000), (10, 500)):
                r = bench_appends(directory, synchronous, group, calls)
                results[f"append_{synchronous}_{group}"] = r
                print(f"  {synchronous:<12} {group:>9} {r['p50_ms']:>8.3f} {r['p99_ms']:>8.3f} {r['events_per_s']:>10.0f}")

        big = directory / "big.sqlite3"
        build = build_big(big, n)
        size = big.stat().st_size
        print(f"journal of {n} events: {size / 1e6:.0f} MB, built in {build:.1f} s")

        t0 = time.perf_counter()
        j = Journal.open(big)                         # what the daemon does at start
        startup = time.perf_counter() - t0
        t0 = time.perf_counter()
        replayed = sum(1 for _ in j.current_shoe_events())
        replay = time.perf_counter() - t0
        assert j.report is not None
        print(f"  start-up: open + quick verification ({j.report.records} records from the last checkpoint "
              f"+ quick_check): {startup:.3f} s; replay of the current shoe ({replayed} events): {replay:.3f} s")
        t0 = time.perf_counter()
        report = j.verify(full=True)
        full = time.perf_counter() - t0
        j.close()
        assert report.ok, report.summary()
        print(f"  full verification (chain of {report.records} records + integrity_check): {full:.2f} s "
              f"({report.records / full:,.0f} records/s)")
        results.update(events=n, size_bytes=size, startup_s=startup, replay_s=replay, full_verify_s=full)
    return results


if __name__ == "__main__":
    main()
