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


def cpu_model() -> str:
    """The CPU's name as /proc/cpuinfo gives it (``model name``), or the machine's architecture."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def host_reference_ms(repeat: int = 9) -> float:
    """One fixed piece of work on one thread, in ms (each part's fastest of ``repeat`` runs, summed):
    a 1280x720 frame of felt and six white cards through the OpenCV calls that find cards, 1,000
    small numpy products and a Python loop, the kinds of work a camera frame is. Hosts differ by a
    factor of two in CPU speed (the same code's latency was 36 ms p95 on one session's host and
    23 ms on the next); this figure, printed beside a benchmark's timings, tells how fast the host
    was, so that timings taken on two hosts can be compared."""
    import time

    import cv2
    import numpy as np

    frame = np.full((720, 1280, 3), (40, 110, 30), np.uint8)
    for k in range(6):
        cv2.rectangle(frame, (120 + 180 * k, 250), (240 + 180 * k, 420), (235, 235, 235), -1)
    small = np.random.default_rng(1).random((24, 24), np.float32)

    def find_cards():
        grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        mask = cv2.threshold(cv2.GaussianBlur(grey, (5, 5), 0), 128, 255, cv2.THRESH_BINARY)[1]
        cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)

    def products():
        acc = small
        for _ in range(1000):
            acc = np.tanh(acc @ small)

    def python_loop():
        total = 0
        for k in range(100_000):
            total += k * k % 7

    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        best = {}
        for _ in range(repeat):
            for part in (find_cards, products, python_loop):
                t0 = time.perf_counter()
                part()
                best[part] = min(best.get(part, float("inf")), time.perf_counter() - t0)
    finally:
        cv2.setNumThreads(threads)
    return sum(best.values()) * 1000.0
