"""Timing of the exact odds analysis: one-time table build, full 8-deck shoe, partial shoes.

Run from the repository root: ``.venv/bin/python -m bench odds``.
"""

from __future__ import annotations

import random
import statistics
import time

FULL_RUNS = 51
PARTIAL_SHOES = 500
SEED = 20240601


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def main() -> None:
    t0 = time.perf_counter()
    from shoe_daemon.game import odds

    t_import = time.perf_counter() - t0

    # One-time cost: the first build in this process (cold), then rebuilds (warm).
    t0 = time.perf_counter()
    odds.setup()
    t_first = time.perf_counter() - t0
    rebuilds = []
    for _ in range(5):
        t0 = time.perf_counter()
        odds._build_table()
        rebuilds.append(time.perf_counter() - t0)
    print(f"import shoe_daemon.game.odds (numpy included): {_ms(t_import)}")
    print(f"one-time setup (5005-multiset table), first build: {_ms(t_first)}; "
          f"rebuild median of 5: {_ms(statistics.median(rebuilds))}")

    full = odds.full_shoe(8)
    times = []
    for _ in range(FULL_RUNS):
        t0 = time.perf_counter()
        result = odds.analyze(full)
        times.append(time.perf_counter() - t0)
    assert (result.banco, result.punto, result.tie) == (
        2_292_252_566_437_888, 2_230_518_282_592_256, 475_627_426_473_216
    )
    print(f"full 8-deck analysis, median of {FULL_RUNS}: {_ms(statistics.median(times))} "
          f"(min {_ms(min(times))}, max {_ms(max(times))})")

    # Random partial shoes: an 8-deck shoe with 0-410 random cards dealt.
    rng = random.Random(SEED)
    cards = [v for v, c in enumerate(full.counts) for _ in range(c)]
    shoes = []
    for _ in range(PARTIAL_SHOES):
        left = rng.sample(cards, rng.randint(6, len(cards)))
        shoes.append(odds.Composition(tuple(left.count(v) for v in range(10))))
    times = []
    for shoe in shoes:
        t0 = time.perf_counter()
        odds.analyze(shoe)
        times.append(time.perf_counter() - t0)
    q = statistics.quantiles(times, n=100)
    print(f"partial-shoe analysis, median over {PARTIAL_SHOES} random shoes (6-416 cards): "
          f"{_ms(statistics.median(times))} (p99 {_ms(q[98])}, max {_ms(max(times))})")

    # The pure-Python path (used above 1448 cards, where int64 could overflow).
    table = odds._get_table()
    times = []
    for _ in range(11):
        t0 = time.perf_counter()
        odds._count_python(full.counts, table)
        times.append(time.perf_counter() - t0)
    print(f"full 8-deck analysis, pure-Python exact path, median of 11: {_ms(statistics.median(times))}")


if __name__ == "__main__":
    main()
