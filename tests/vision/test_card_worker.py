"""The card-reading process (``[camera.recognizer] workers = 1``, vision.cardpool): the same answers
as reading in one process, started lazily, and every way it can fail read in the caller's process."""

from __future__ import annotations

import os
import signal
import time

import pytest

from bench._camera_ab import canon  # a FrameResult as exactly comparable values (bit for bit)
from shoe_daemon.vision.cardpool import CardWorker
from shoe_daemon.vision.recognizer import Recognizer
from shoe_daemon.vision.zones import parse_zones


def ready(rec: Recognizer) -> CardWorker:
    worker = rec.worker
    for _ in range(600):
        if worker.available():
            return worker
        assert worker.failed is None, worker.failed
        time.sleep(0.1)
    raise AssertionError("the card-reading process did not start within a minute")


@pytest.fixture
def pooled():
    rec = Recognizer({"recognizer": {"workers": 1}})
    yield rec
    rec.close()


def frames(generator, condition="nominal", seed=880011, n=3):
    gen = generator(condition, seed=seed)
    return [gen.frame(i) for i in range(n)]


def test_same_readings_with_the_process(generator, recognizer, pooled):
    worker = ready(pooled)
    handed = []     # cards handed to it during detection (the first pass's), per frame
    add = worker.add
    worker.add = lambda frame, cand: handed.append(cand) or add(frame, cand)
    checked = 0
    for cond in ("nominal", "hand", "table-stress"):
        for f in frames(generator, cond):
            zones = parse_zones(f.zones)
            want = recognizer.recognize(f.image, zones=zones)
            got = pooled.recognize(f.image, zones=zones)
            assert canon(got) == canon(want), f"{cond}: {[c.to_json() for c in got.cards]}"
            checked += len(want.cards) + len(want.rejected)
    assert checked > 20
    assert worker.frames >= 6 and worker.failed is None     # it read part of the frames
    assert len(handed) >= 2 * 9                             # two of every three first-pass cards
    assert worker.take_cpu_ms() > 0 and worker.take_cpu_ms() == 0   # its CPU time, counted once


def test_the_first_pass_cards_are_given_early(generator):
    """detect.find_cards' ``early``: each first-pass card as it is found, then None, before the
    later passes; every card given is one of the answer's (the same object) unless dropped later."""
    from shoe_daemon.vision import detect

    calls, later = [], []
    dim = detect._dim_cards

    def spy(*a, **k):       # the dim-card pass comes after the first
        later.append(len(calls))
        return dim(*a, **k)

    detect._dim_cards = spy
    try:
        f = frames(generator, seed=880016, n=1)[0]
        cands, _ = detect.find_cards(f.image, calls.append)
    finally:
        detect._dim_cards = dim
    assert calls[-1] is None and calls.count(None) == 1
    assert later == [len(calls)]                            # all of it before the later passes
    given = calls[:-1]
    assert len(given) >= 4 and all(any(g is c for c in cands) for g in given)
    assert [c for c in cands if any(c is g for g in given)] == given  # in detection order


def test_a_card_given_early_then_dropped(generator, recognizer, pooled):
    """A first-pass card the worker read but detection dropped later (inside another card): the
    other cards' readings are the frame's without it, probabilities bit for bit."""
    from shoe_daemon.vision import detect
    from shoe_daemon.vision.recognizer import _Early

    worker = ready(pooled)
    checked = 0
    for cond, seed in (("nominal", 880017), ("table-stress", 884021)):
        for f in frames(generator, cond, seed=seed, n=2):
            early = _Early(worker, f.image, [])
            cands, _ = detect.find_cards(f.image, early)
            assert len(early.given) >= 2
            kept = [c for c in cands if c is not early.given[0]]       # as if it were dropped
            want = recognizer._read_cards(f.image, kept, [])[0]
            got = pooled._read_split(f.image, kept, [], early.given)
            assert canon(got) == canon(want)
            checked += len(kept)
    assert checked >= 10 and worker.failed is None


def test_lazy_start_and_close(generator, recognizer):
    rec = Recognizer({}, workers=1)
    assert rec.worker.pid is None                          # nothing started before a frame
    f = frames(generator)[0]
    want = recognizer.recognize(f.image)
    assert canon(rec.recognize(f.image)) == canon(want)     # read here while it starts
    worker = ready(rec)
    pid = worker.pid
    assert pid is not None and os.path.exists(f"/proc/{pid}")
    assert canon(rec.recognize(f.image)) == canon(want)
    assert worker.frames == 1
    rec.close()
    assert not worker._proc.is_alive() and worker.failed == "closed"
    assert canon(rec.recognize(f.image)) == canon(want)     # and after, here again
    assert worker.frames == 1


def test_a_killed_process_is_read_around(generator, recognizer, pooled):
    worker = ready(pooled)
    fs = frames(generator, seed=880012)
    os.kill(worker.pid, signal.SIGKILL)
    worker._proc.join(5)
    for f in fs:
        assert canon(pooled.recognize(f.image)) == canon(recognizer.recognize(f.image))
    assert worker.failed.startswith("could not be sent a frame")
    assert worker.frames == 0


def test_death_during_a_frame(generator, recognizer, pooled):
    from shoe_daemon.vision.detect import find_cards

    worker = ready(pooled)
    f = frames(generator, seed=880015)[0]
    cands, _ = find_cards(f.image)
    assert worker.submit(f.image, cands[1::2], [])
    os.kill(worker.pid, signal.SIGKILL)
    assert worker.result() is None                          # the caller reads these cards itself
    assert worker.failed.startswith("died")
    assert canon(pooled.recognize(f.image)) == canon(recognizer.recognize(f.image))


def test_a_hung_process_times_out(generator, recognizer, pooled):
    worker = ready(pooled)
    worker.timeout = 0.5
    f = frames(generator, seed=880013)[0]
    proc = worker._proc
    os.kill(worker.pid, signal.SIGSTOP)
    t0 = time.monotonic()
    got = pooled.recognize(f.image)
    assert canon(got) == canon(recognizer.recognize(f.image))
    assert "no answer within 0.5 s" in worker.failed
    assert time.monotonic() - t0 < 10
    assert not proc.is_alive()                              # stopped, then killed: not left behind


def test_a_process_that_fails_a_frame(generator, recognizer):
    rec = Recognizer({}, workers=1)
    rec._worker = CardWorker((None, None, rec.thresholds))   # no models: it fails every frame
    try:
        ready(rec)
        f = frames(generator, seed=880014)[0]
        assert canon(rec.recognize(f.image)) == canon(recognizer.recognize(f.image))
        assert rec.worker.failed.startswith("failed a frame: AttributeError")
    finally:
        rec.close()


def test_workers_setting():
    from shoe_daemon.config import CameraRecognizerConfig

    assert Recognizer({}).worker is None
    assert Recognizer({"recognizer": {"workers": 0}}).worker is None
    with pytest.raises(ValueError, match="0 or 1"):
        Recognizer({"recognizer": {"workers": 2}})
    assert CameraRecognizerConfig(workers=1).workers == 1
    with pytest.raises(ValueError):
        CameraRecognizerConfig(workers=3)


def test_a_share_without_glyphs_is_read_as_part_of_its_frame(recognizer, pooled):
    """When none of a frame's cards gives a glyph of a kind at first, that kind's probabilities are
    worked out in float64, else float32: a share of the cards read apart follows its frame's."""
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.detect import find_cards
    from shoe_daemon.vision.synth import FrameGenerator

    f = FrameGenerator(design_faces("responsive"), [design_back("responsive")], "stress", seed=884021).frame(3)
    cands, _ = find_cards(f.image)
    assert recognizer._read_cards(f.image, cands, [])[1] == (True, True)
    assert recognizer._read_cards(f.image, cands[1::2], [])[1] == (True, False)   # the worker's share
    ready(pooled)
    want = recognizer.recognize(f.image)
    assert canon(pooled.recognize(f.image)) == canon(want)
    assert pooled.worker.frames == 1


def test_a_frame_cut_short_is_not_taken_for_the_next(generator, recognizer, pooled, monkeypatch):
    """An error in the caller after the process was handed a frame's cards (here: in detection's
    later passes) loses that frame alone: its answer is not taken for the next frame's."""
    from shoe_daemon.vision import detect

    worker = ready(pooled)
    fs = frames(generator, seed=880018, n=2)
    real = detect._dim_cards

    def broken(*a, **k):
        raise RuntimeError("broken")

    monkeypatch.setattr(detect, "_dim_cards", broken)
    with pytest.raises(RuntimeError):
        pooled.recognize(fs[0].image)
    monkeypatch.setattr(detect, "_dim_cards", real)
    assert canon(pooled.recognize(fs[1].image)) == canon(recognizer.recognize(fs[1].image))
    assert worker.failed is None and worker.frames == 2


def test_a_process_that_dies_before_reading_its_models_does_not_block(recognizer, monkeypatch):
    """The models (~400 KB) are more than a pipe holds: handed as the process's arguments, a child
    that died before reading them blocked the caller's start for ever. Here the "interpreter" exits
    at once: the start returns, the worker is given up, and the models' shared block is gone."""
    import multiprocessing.spawn
    import threading
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()       # the tracker is started by the real interpreter
    monkeypatch.setattr(multiprocessing.spawn, "get_executable", lambda: os.fsencode("/bin/true"))
    worker = CardWorker((recognizer.models, recognizer.deck, recognizer.thresholds))
    start = threading.Thread(target=worker.available, daemon=True)
    start.start()
    start.join(30)
    assert not start.is_alive(), "starting the card-reading process blocked"
    block = worker._models.name
    assert os.path.exists(f"/dev/shm/{block}")
    for _ in range(300):
        if not worker.available() and worker.failed is not None:
            break
        time.sleep(0.1)
    assert worker.failed is not None and "start" in worker.failed
    assert not os.path.exists(f"/dev/shm/{block}")


def test_a_process_that_cannot_be_started_leaves_the_cards_here(generator, recognizer, monkeypatch):
    """Starting the process raised (fork refused: out of processes or memory): no frame fails for it."""
    import errno
    import multiprocessing.context

    def refused(self):
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.context.SpawnProcess, "start", refused)
    rec = Recognizer({}, workers=1)
    f = frames(generator, seed=880013)[0]
    assert canon(rec.recognize(f.image)) == canon(recognizer.recognize(f.image))
    assert rec.worker.failed is not None and "could not be started" in rec.worker.failed
    assert canon(rec.recognize(f.image)) == canon(recognizer.recognize(f.image))
    rec.close()
