"""Replay benchmark: the full 8-deck fixture through the whole pipeline at --speed max.

    .venv/bin/python -m bench replay

The pipeline is the daemon's own: a pty read through pyserial by the serial source,
the protocol driver, the journal (a temporary SQLite file, synchronous=normal), the
core and the sinks (messages captured, no broker), in lock-step with the replay.
Target: <= 1 s for fixtures/clean-8-decks.shoelog.gz (about 1100 records, 496 events,
1820 messages). The check is verified on every run.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from shoe_daemon.recording.check import check_path, read_check
from shoe_daemon.recording.formats import read_fixture
from shoe_daemon.recording.replay import replay

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "clean-8-decks.shoelog.gz"
TARGET = 1.0
RUNS = 3


def main() -> None:
    fixture = read_fixture(FIXTURE)
    expected = read_check(check_path(FIXTURE))
    times = []
    for _ in range(RUNS):
        result = replay(fixture)
        if result.lines != expected:
            raise SystemExit(f"{FIXTURE.name}: the replay does not match its check file (run its --check)")
        times.append(result.elapsed)
    best = min(times)
    records = len(fixture.records)
    print(f"replay {FIXTURE.name}: {records} records ({fixture.duration:.0f} s recorded), {result.events} events, "
          f"{len(result.lines)} messages")
    print(f"  --speed max, whole pipeline: best {best:.3f} s, median {statistics.median(times):.3f} s "
          f"of {RUNS} (target <= {TARGET:.1f} s: {'ok' if best <= TARGET else 'MISSED'}); "
          f"{result.events / best:,.0f} events/s, {fixture.duration / best:,.0f}x real time")


if __name__ == "__main__":
    main()
