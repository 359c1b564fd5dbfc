"""A/B of the camera's recogniser: another commit's code and the working tree's, in one process.

On a shared, loaded machine timings minutes apart differ by a quarter, so two codes are compared
only side by side: both are imported into one process (the other commit's ``shoe_daemon`` taken
with ``git archive`` into a temporary folder, as ``shoe_daemon_base``) and read the same frames
in turn, frame by frame.

    python -m bench._camera_ab same --base 736f3d7 --seed 880000 --frames 20 [--workers]
    python -m bench._camera_ab speed --base 736f3d7 --seed 880000 --frames 300 [--workers [--base-workers]] [--enrolled]

``same``: every reading, status, confidence, probability, rejection and deck reading of both
codes compared exactly, on frames of own seeds (nominal, hand, stress, table stress, empty and
table empty; cardsJS and responsive with the shipped model, kennard-jumbo and font-peek enrolled
from $SHOE_DAEMON_CACHE/bench-camera). ``--workers``: the working tree's recogniser also reads
with a card-reading process (``workers = 1``), compared too. ``speed``: the latency pass's kind
of frame (nominal, six cards in the boxes), both codes alternating, wall and CPU per frame
(with ``--workers`` the worker's CPU is added; ``--base-workers``: the base code's too, with its
own card-reading process). Not part of ``make bench`` (it needs git).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CASES = [("cardsjs", "shipped"), ("responsive", "shipped"), ("kennard-jumbo", "enrolled"), ("font-peek", "enrolled")]
CONDS = ["nominal", "hand", "stress", "table-stress", "empty", "table-empty"]


def base_package(rev: str, into: Path):
    """``shoe_daemon`` of commit ``rev``, importable as ``shoe_daemon_base``."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "shoe_daemon"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar, check=True)
    (into / "shoe_daemon").rename(into / "shoe_daemon_base")
    for f in (into / "shoe_daemon_base").rglob("*.py"):
        f.write_text(re.sub(r"\bshoe_daemon\b(?=\.| import|$)", "shoe_daemon_base", f.read_text(), flags=re.M))
    sys.path.insert(0, str(into))
    return importlib.import_module("shoe_daemon_base.vision.recognizer")


def canon(x):
    """A FrameResult (of either code) as plain, exactly comparable values."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return (type(x).__name__, tuple((f.name, canon(getattr(x, f.name))) for f in dataclasses.fields(x)
                                        if f.name != "elapsed_ms"))  # fmt: skip
    if isinstance(x, np.ndarray):
        return (str(x.dtype), x.shape, x.tobytes())
    if isinstance(x, list | tuple):
        return tuple(canon(v) for v in x)
    if isinstance(x, float | np.floating):
        return float(x).hex()
    return x


def recognisers(base, deck: str, model: str, workers: bool, base_workers: bool = False):
    from bench.camera import _models, enrolled_path
    from shoe_daemon.vision.recognizer import Recognizer

    path = _models()["shipped"] if model == "shipped" else str(enrolled_path(deck))
    new = {"new": Recognizer({}, model_path=path)}
    if workers:
        new["new, workers 1"] = Recognizer({}, model_path=path, workers=1)
        new["new, workers 1"].worker.available()
    return base.Recognizer({}, model_path=path, **({"workers": 1} if base_workers else {})), new


def _ready(rec) -> None:
    """Wait (up to a minute) for a recogniser's card-reading process to be ready."""
    if rec.worker is None:
        return
    for _ in range(600):
        if rec.worker.available():
            return
        time.sleep(0.1)
    raise SystemExit(f"the card-reading process did not start: {rec.worker.failed}")


def same(base, args) -> int:
    from bench.camera import _decks
    from shoe_daemon.vision.cardart import design_back
    from shoe_daemon.vision.synth import FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    decks, backs = _decks()
    frames = diffs = 0
    for ci, cond in enumerate(CONDS):
        for di, (deck, model) in enumerate(CASES):
            b, news = recognisers(base, deck, model, args.workers)
            for r in news.values():
                _ready(r)
            gen = FrameGenerator(decks[deck], backs if deck == "cardsjs" else [design_back(deck)], cond,
                                 seed=args.seed + 10 * ci + di)  # fmt: skip
            for i in range(args.frames):
                f = gen.frame(i)
                zones = parse_zones(f.zones)
                want = canon(b.recognize(f.image, zones=zones))
                for name, r in news.items():
                    got = canon(r.recognize(f.image, zones=zones))
                    frames += 1
                    if got != want:
                        diffs += 1
                        print(f"DIFFERENT: {cond} {deck} seed {args.seed + 10 * ci + di} frame {i} ({name})")
            for r in news.values():
                r.close()
            print(f"{cond:12s} {deck:14s} {model:8s} {args.frames} frames compared", flush=True)
    print(f"{frames} frame readings compared with the base code's: {diffs} different")
    return 1 if diffs else 0


def speed(base, args) -> int:
    from bench.camera import _decks
    from shoe_daemon.vision.synth import CONDITIONS, FrameGenerator, with_overrides
    from shoe_daemon.vision.zones import parse_zones

    deck, model = ("kennard-jumbo", "enrolled") if args.enrolled else ("cardsjs", "shipped")
    decks, backs = _decks()
    cond = with_overrides(CONDITIONS["nominal"], third_p=1.0, others=(0, 1))   # as bench.camera's latency pass
    gen = FrameGenerator(decks[deck], backs, cond, seed=args.seed)
    frames = [gen.frame(i) for i in range(args.frames)]
    b, news = recognisers(base, deck, model, args.workers, args.base_workers)
    name, new = list(news.items())[-1]
    _ready(new)
    _ready(b)
    for f in frames[:5]:
        b.recognize(f.image)
        new.recognize(f.image)
    wall = {"base": [], name: []}
    cpu = {"base": [], name: []}
    path = []   # with --workers: the frame's critical path in CPU time (see below)
    own = [0.0]
    if args.workers:
        read = new._read_cards

        def timed(*a, **k):     # the caller's own share of the cards, in CPU time
            c = time.process_time()
            try:
                return read(*a, **k)
            finally:
                own[0] += (time.process_time() - c) * 1000

        new._read_cards = timed
    for k, f in enumerate(frames):
        zones = parse_zones(f.zones)
        order = [("base", b), (name, new)] if k % 2 == 0 else [(name, new), ("base", b)]
        for key, rec in order:
            worker = getattr(rec, "_worker", None)
            t0, c0 = time.perf_counter(), time.process_time()
            rec.recognize(f.image, zones=zones)
            wall[key].append((time.perf_counter() - t0) * 1000)
            mine = (time.process_time() - c0) * 1000
            extra = worker.cpu_ms if worker is not None and worker.failed is None else 0.0
            cpu[key].append(mine + extra)
            if worker is not None:
                # With two free cores the worker's share runs beside the caller's: the frame takes
                # the caller's CPU time, plus what the worker took beyond the caller's own share.
                path.append(mine + max(0.0, extra - own[0]))
                worker.cpu_ms, own[0] = 0.0, 0.0
    failed = new.worker.failed if new.worker is not None else None
    new.close()
    b.close()
    print(f"{deck} ({model} model), {len(frames)} latency-pass frames, seed {args.seed}, codes alternating:")
    for key in wall:
        w, c = np.percentile(wall[key], [50, 95]), np.percentile(cpu[key], [50, 95])
        print(f"  {key:16s} wall p50 {w[0]:5.1f} p95 {w[1]:5.1f} ms   CPU p50 {c[0]:5.1f} p95 {c[1]:5.1f} ms")
    if path:
        q = np.percentile(path, [50, 95])
        print(f"  {name:16s} critical path (CPU; an estimate of the wall time with two free cores) "
              f"p50 {q[0]:5.1f} p95 {q[1]:5.1f} ms; worker failed: {failed}")
    return 0


class _Clock:
    """Stands in for the card-reading process while detection runs (recognizer._Early's worker):
    takes every card, noting the caller's CPU time (ms since ``t0``) when each came and when the
    first pass ended."""

    failed = None

    def __init__(self):
        self.t0, self.came, self.ended = time.process_time(), [], None

    def _now(self) -> float:
        return (time.process_time() - self.t0) * 1000

    def begin(self, frame, zones) -> bool:
        return True

    def add(self, frame, cand) -> bool:
        self.came.append(self._now())
        return True

    def end(self) -> bool:
        self.ended = self._now()
        return True


def path(args) -> int:
    """Each latency-pass frame's critical path with two free cores, in CPU time, by the working
    tree's code for both ways of sharing a frame's cards with the card-reading process: every
    second card after detection (session 8), and the first pass's cards handed during detection
    (recognizer._Early). Every piece is timed in this process (the worker's cards too, by the same
    code) and laid on two timelines; the pipe and the copy to shared memory are left out."""
    from bench.camera import _decks, _models, enrolled_path
    from shoe_daemon.vision.recognizer import CardBatch, Recognizer, _Early
    from shoe_daemon.vision.synth import CONDITIONS, FrameGenerator, with_overrides
    from shoe_daemon.vision.zones import parse_zones

    deck = "kennard-jumbo" if args.enrolled else "cardsjs"
    decks, backs = _decks()
    cond = with_overrides(CONDITIONS["nominal"], third_p=1.0, others=(0, 1))
    gen = FrameGenerator(decks[deck], backs, cond, seed=args.seed)
    rec = Recognizer({}, model_path=str(enrolled_path(deck)) if args.enrolled else _models()["shipped"])

    def cpu(fn, *a):
        c = time.process_time()
        out = fn(*a)
        return out, (time.process_time() - c) * 1000

    rows = []
    for i in range(args.frames + 5):
        f = gen.frame(i)
        zones = parse_zones(f.zones)
        clock = _Clock()
        early = _Early(clock, f.image, zones)
        seen = {}

        def split(frame, cands, zones, given, seen=seen, clock=clock):
            seen["det"] = clock._now()      # detection and the recogniser's size check
            seen["cands"], seen["given"] = cands, given
            return rec._read_cards(frame, cands, zones)[0]

        rec._read_split = split
        orig = rec._early
        rec._early = lambda frame, zones, early=early: early
        rec.recognize(f.image, zones=zones)
        rec._early = orig
        cands, given, det = seen["cands"], seen["given"], seen["det"]
        # Session 8: detection, then every second card there while the others are read here.
        _, mine = cpu(rec._read_cards, f.image, cands[0::2], zones)
        _, theirs = cpu(rec._read_cards, f.image, cands[1::2], zones)
        old = det + max(mine, theirs) if len(cands) >= 2 else det + mine + theirs
        # Handed during detection: the worker reads each card once it came and it is free.
        batch, t = CardBatch(rec), 0.0
        for cand, came in zip(given, clock.came, strict=True):
            _, w = cpu(batch.add, f.image, cand)
            t = max(t, came) + w
        _, fin = cpu(batch.finish, zones)
        t = max(t, clock.ended or 0.0) + fin if given else 0.0
        handed = {id(g) for g in given}
        _, own = cpu(rec._read_cards, f.image, [c for c in cands if id(c) not in handed], zones)
        new = max(det + own, t)
        _, alone = cpu(rec._read_cards, f.image, cands, zones)
        if i >= 5:
            rows.append((det + alone, old, new))
    q = np.percentile(np.array(rows), [50, 95], axis=0)
    print(f"{deck}, {args.frames} latency-pass frames, seed {args.seed}: critical path (CPU ms, two free cores)")
    for k, label in enumerate(("one process", "workers 1: every second card after detection",
                               "workers 1: first-pass cards during detection")):  # fmt: skip
        print(f"  {label:46s} p50 {q[0][k]:5.1f} p95 {q[1][k]:5.1f} ms")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench._camera_ab", description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("same", "speed", "path"))
    ap.add_argument("--base", required=True, help="the commit to compare with (e.g. main)")
    ap.add_argument("--seed", type=int, default=880000)
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--workers", action="store_true", help="the new code with a card-reading process")
    ap.add_argument("--enrolled", action="store_true", help="speed: kennard-jumbo enrolled, not cardsJS")
    ap.add_argument("--base-workers", action="store_true", help="speed: the base code with its card-reading process too")
    args = ap.parse_args(argv)
    if args.mode == "path":
        return path(args)
    with tempfile.TemporaryDirectory(prefix="camera-ab-") as tmp:
        base = base_package(args.base, Path(tmp))
        return same(base, args) if args.mode == "same" else speed(base, args)


if __name__ == "__main__":
    raise SystemExit(main())
