"""Benchmarks: `make bench` runs every module here that has a main(); each prints its figures."""

from pathlib import Path


def cpu_ticks() -> list[int] | None:
    """The machine's CPU time by kind (the ``cpu`` line of /proc/stat), to take differences of."""
    try:
        return [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return None


def steal_share(before: list[int] | None, after: list[int] | None) -> float | None:
    """The share of the machine's CPU time the hypervisor gave to other guests between two
    ``cpu_ticks()`` (steal: this VM's vCPUs were runnable and not run), or None."""
    if not before or not after or len(before) < 8:
        return None
    diff = [b - a for a, b in zip(before, after, strict=False)]
    total = sum(diff[:8])
    return diff[7] / total if total > 0 else None
