"""How long the recogniser takes a frame on this PC: the camera's time budget, checked where it runs.

A frame's time depends on the CPU as much as on the code: the same code and frames took 1.9 times
as long on one development host as on the next. So the budget (p95 <= 30 ms for a 1280x720 frame
with six cards) is checked on the table PC itself, by ``shoe-daemon camera speed``, on synthetic
frames of the casino's own deck; ``bench.camera``'s latency pass uses the same functions.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BUDGET_MS = 30.0       # p95 of a 1280x720 frame with six cards (issue 15)
WARM_FRAMES = 5        # read before timing: first calls allocate, and a card-reading process starts


@dataclass(frozen=True)
class Timing:
    """Per-frame wall and CPU times (ms) of a run of frames, and the cards found in each."""

    ms: list[float]
    cpu_ms: list[float]
    cards: list[int]
    workers: int

    def quantile(self, q: float, cpu: bool = False) -> float:
        return float(np.percentile(self.cpu_ms if cpu else self.ms, q))

    @property
    def p95(self) -> float:
        return self.quantile(95)

    def within_budget(self, budget_ms: float = BUDGET_MS) -> bool:
        return self.p95 <= budget_ms


def six_card_frames(faces: dict, backs: Sequence[np.ndarray], n: int, seed: int) -> list:
    """``n`` nominal 1280x720 frames of these faces, six cards in the boxes (a coup with both third
    cards) and up to one elsewhere: :class:`~shoe_daemon.vision.synth.Frame` objects."""
    from shoe_daemon.vision.synth import CONDITIONS, FrameGenerator, with_overrides

    cond = with_overrides(CONDITIONS["nominal"], third_p=1.0, others=(0, 1))
    gen = FrameGenerator(faces, list(backs), cond, seed=seed)
    return [gen.frame(i) for i in range(n)]


def time_frames(rec, frames: Sequence, *, warm: int = WARM_FRAMES, ready_timeout: float = 30.0) -> Timing:
    """Each frame read in turn by ``rec`` (a :class:`~shoe_daemon.vision.recognizer.Recognizer`),
    its wall time and the CPU time it cost (this process's, plus its card-reading process's)."""
    from shoe_daemon.vision.zones import parse_zones

    for f in frames[:warm]:
        rec.recognize(f.image)
    worker = rec.worker
    deadline = time.monotonic() + ready_timeout
    while worker is not None and not worker.available() and worker.failed is None and time.monotonic() < deadline:
        time.sleep(0.1)
    ms, cpu, cards = [], [], []
    for f in frames:
        zones = parse_zones(f.zones)
        t0, c0 = time.perf_counter(), time.process_time()
        result = rec.recognize(f.image, zones=zones)
        ms.append((time.perf_counter() - t0) * 1000.0)
        cpu.append((time.process_time() - c0) * 1000.0 + (worker.take_cpu_ms() if worker is not None else 0.0))
        cards.append(len(result.cards))
    return Timing(ms, cpu, cards, 1 if worker is not None and worker.available() else 0)


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


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
    small numpy products and a Python loop, the kinds of work a camera frame is. It tells how fast
    a host is, so that frame times taken on two hosts can be compared (a host twice as fast halves
    both)."""
    import cv2

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
        best: dict = {}
        for _ in range(repeat):
            for part in (find_cards, products, python_loop):
                t0 = time.perf_counter()
                part()
                best[part] = min(best.get(part, float("inf")), time.perf_counter() - t0)
    finally:
        cv2.setNumThreads(threads)
    return sum(best.values()) * 1000.0
