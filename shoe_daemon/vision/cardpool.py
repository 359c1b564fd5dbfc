"""A second process that reads part of each frame's cards while the caller reads the rest.

Reading a card (rectify it, its index corners, its centre, the classifiers, an enrolled deck's
features) is ~3 ms of many small numpy and OpenCV steps that hold the GIL: two threads of one
process read a frame's cards slower than one. Two processes do not share a GIL: with
``[camera.recognizer] workers = 1`` a :class:`CardWorker` process reads part of a frame's cards
while the recogniser reads the others, and a table PC's second core, idle while the camera
reads, shortens the frame. Detection hands it cards of its first pass (the first two, then
every second) as they are found (:meth:`begin`, :meth:`add`; each is read at once) and ends its share when that
pass is over (:meth:`end`: the worker classifies and decides them), so the worker reads while
the caller still detects (the later passes: cards split from a hand, dim cards, corners); the
caller reads the rest. A frame whose first pass found no card gives it every second card after
detection (:meth:`submit`). The answers are the same either way: each card's outcome rests on
its own pixels (:meth:`Recognizer._read_cards`).

The worker is started lazily, on the first frame with two cards or more, and is not waited for:
until it says it is ready (about a second: imports and the models) every card is read in the
caller's process. A frame goes to it through one block of shared memory of a frame's size (only
the parts its cards' warps read, :func:`~shoe_daemon.vision.index.warp_box`, are copied), with a
short message per card on a pipe, one frame at a time: its memory is one frame and the models. A
frame's messages never outgrow the pipe's buffer, so a worker that stops reading cannot block the
caller.
Whenever it is absent, has died, fails or does not answer within
:data:`TIMEOUT` seconds, the cards it was given are read in the caller's process and it is not
used again (stopped if it still runs): no frame is lost. :meth:`CardWorker.close` (or the
recogniser's ``close``, or the interpreter's exit) stops it; it also exits when the caller's end
of the pipe closes.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import time
import weakref
from multiprocessing import shared_memory
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

TIMEOUT = 2.0       # s: a worker that has not answered a frame by then is taken for dead


class CardWorker:
    """The caller's end of one card-reading process. ``state`` = (glyph models, deck model or None,
    thresholds), as the worker's recogniser is to read with (pickled once, at start)."""

    def __init__(self, state: tuple[Any, Any, Any], timeout: float = TIMEOUT):
        self._state = state
        self.timeout = timeout
        self._proc = None
        self._conn = None
        self._ready = False
        self._pending = False
        self.failed: str | None = None      # why it is not used any more
        self.cpu_ms = 0.0                   # the worker's CPU time for the last frame it read
        self.frames = 0                     # frames it read part of
        self._finalizer = None
        self._shm: shared_memory.SharedMemory | None = None     # the frame, for the worker
        self._models: shared_memory.SharedMemory | None = None  # the pickled models, until it has read them
        self._view: np.ndarray | None = None                    # ... as an array, while a frame is sent

    def available(self) -> bool:
        """Ready for a frame's cards? Starts the worker on the first call; never waits for it."""
        if self.failed is not None:
            return False
        if self._proc is None:
            self._start()
            return False
        if not self._ready:
            try:
                if self._conn.poll():
                    msg = self._conn.recv()
                    if msg != "ready":
                        return self._fail(f"did not start: {msg}")
                    self._ready = True
                    # It has read the models: their block is given back now, not with the process.
                    self._finalizer.detach()
                    _free(self._models)
                    self._models = None
                    self._finalizer = weakref.finalize(self, _stop, self._proc, self._conn, None)
                elif not self._proc.is_alive():
                    return self._fail(f"exited on start (code {self._proc.exitcode})")
            except (EOFError, OSError) as exc:
                return self._fail(f"lost on start ({type(exc).__name__})")
        return self._ready

    def _start(self) -> None:
        # "spawn": the caller may run threads (the daemon does), and a fork of a process with
        # threads may inherit a lock held by one of them.
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        # The models (~400 KB pickled) go in shared memory, not in the process's arguments: spawn
        # writes those into a pipe whose reading end it holds itself until they are written, so a
        # child that dies before reading them (a broken interpreter, the OOM killer) would block
        # this call, and the camera, forever.
        state = pickle.dumps(self._state)
        models = shared_memory.SharedMemory(create=True, size=len(state))
        models.buf[: len(state)] = state
        proc = ctx.Process(target=serve, args=(child, models.name, len(state)), name="shoe-daemon-cards",
                           daemon=True)  # fmt: skip
        self._proc, self._conn = proc, parent
        self._models = models
        self._finalizer = weakref.finalize(self, _stop, proc, parent, None, models)
        try:
            proc.start()
        except Exception as exc:  # noqa: BLE001 (no process, no worker: the caller reads every card)
            self._fail(f"could not be started ({type(exc).__name__}: {exc})")
        finally:
            child.close()

    def submit(self, frame: np.ndarray, cands: list, zones: list) -> bool:
        """Hand the worker ``cands`` (read from ``frame``); False if it could not take them."""
        return self.begin(frame, zones) and all(self.add(frame, c) for c in cands) and self.end()

    def begin(self, frame: np.ndarray, zones: list) -> bool:
        """A new frame: its cards follow (:meth:`add`), then :meth:`end`; False if it could not be sent."""
        if self._pending:       # a frame whose reading was cut short (an error in the caller)
            self.result()
        if self.failed is not None:
            return False
        try:
            if self._shm is None or self._shm.size < frame.nbytes:
                self._release()
                self._shm = shared_memory.SharedMemory(create=True, size=frame.nbytes)
                self._finalizer = weakref.finalize(self, _stop, self._proc, self._conn, self._shm)
            self._view = np.ndarray(frame.shape, np.uint8, buffer=self._shm.buf)
            return self._send(("frame", self._shm.name, frame.shape, zones))
        except (OSError, ValueError) as exc:
            return self._fail(f"could not be sent a frame ({type(exc).__name__}: {exc})")

    def add(self, frame: np.ndarray, cand) -> bool:
        """One card of the frame begun: the worker starts reading it at once."""
        from shoe_daemon.vision.index import warp_box

        if self._view is None:      # no frame begun, or the worker failed
            return False
        x0, y0, x1, y1 = warp_box(frame.shape, cand.quad)
        self._view[y0:y1, x0:x1] = frame[y0:y1, x0:x1]
        return self._send(("card", cand))

    def end(self) -> bool:
        """The frame's last card was added: the worker finishes them (:meth:`result` gives them)."""
        self._view = None
        if not self._send(("end",)):
            return False
        self._pending = True
        return True

    def _send(self, msg) -> bool:
        if self.failed is not None:
            return False
        try:
            self._conn.send(msg)
        except (OSError, ValueError, pickle.PicklingError) as exc:
            return self._fail(f"could not be sent a frame ({type(exc).__name__}: {exc})")
        return True

    def result(self) -> list | None:
        """What ``Recognizer._read_cards`` gives for the cards last submitted, or None when the worker
        failed them (then they are the caller's to read)."""
        self._pending = False
        try:
            if not self._conn.poll(self.timeout):
                self._fail(f"no answer within {self.timeout:g} s")
                return None
            kind, payload, cpu_ms = self._conn.recv()
        except (EOFError, OSError) as exc:
            self._fail(f"died ({type(exc).__name__})")
            return None
        if kind != "ok":
            self._fail(f"failed a frame: {payload}")
            return None
        self.cpu_ms = cpu_ms
        self.frames += 1
        return payload

    def take_cpu_ms(self) -> float:
        """The worker's CPU time for the frame it last read, counted once: a frame whose cards were
        all read in this process then adds nothing."""
        spent, self.cpu_ms = self.cpu_ms, 0.0
        return spent

    def _fail(self, why: str) -> bool:
        log.warning("camera: the card-reading process %s; cards are read in this process", why)
        self.failed = why
        self.close()
        return False

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        """Stop the worker (if it runs): asked to, then terminated if it does not go within a second."""
        self._view = None
        if self._finalizer is not None:
            self._finalizer()
        self._shm = None
        if self.failed is None:
            self.failed = "closed"

    def _release(self) -> None:
        """Give back the frame's shared memory (a larger frame needs a larger block)."""
        if self._shm is not None:
            self._finalizer.detach()
            _free(self._shm)
            self._shm = None


def _free(shm) -> None:
    shm.close()
    try:
        shm.unlink()
    except FileNotFoundError:
        pass


def _stop(proc, conn, shm, models=None) -> None:
    for block in (shm, models):
        if block is not None:
            _free(block)
    try:
        os.set_blocking(conn.fileno(), False)     # a stopped worker's full pipe must not block this
        conn.send(None)
    except (OSError, ValueError):
        pass
    if proc.pid is not None:    # it was started
        proc.join(1.0)
        if proc.is_alive():
            proc.terminate()
            proc.join(1.0)
        if proc.is_alive():     # stopped (SIGSTOP), or deaf to SIGTERM
            proc.kill()
            proc.join(1.0)
    conn.close()


def serve(conn, models: str, size: int) -> None:
    """The worker process: reads the cards of each frame it is sent, until told to stop (None) or
    its caller's end of the pipe closes."""
    import cv2

    from shoe_daemon.vision.recognizer import CardBatch, Recognizer

    try:
        # The caller's block (it gives it back once told "ready"; a spawned process shares its
        # caller's resource tracker, which takes a second notice of the block as the same one).
        block = shared_memory.SharedMemory(name=models)
        try:
            glyphs, deck, thresholds = pickle.loads(block.buf[:size])
        finally:
            block.close()
        reader = Recognizer.reader(glyphs, deck, thresholds)
        cv2.setNumThreads(1)        # as the caller does while it reads a frame
        conn.send("ready")
    except Exception as exc:  # noqa: BLE001 (told to the caller, which reads the cards itself)
        conn.send(f"{type(exc).__name__}: {exc}")
        return
    shm = frame = batch = error = None
    c0 = 0.0
    try:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            if msg is None:
                return
            try:
                if msg[0] == "frame":
                    c0 = time.process_time()
                    _kind, name, shape, zones = msg
                    batch, error = None, None
                    if shm is None or shm.name != name:
                        frame = None
                        if shm is not None:
                            shm.close()
                        # The caller's block, which the caller alone gives back. A spawned process
                        # shares its caller's resource tracker, which takes a second notice of the
                        # block as the same one.
                        shm = shared_memory.SharedMemory(name=name)
                    frame = np.ndarray(shape, np.uint8, buffer=shm.buf)
                    batch = CardBatch(reader)
                elif msg[0] == "card" and error is None:
                    batch.add(frame, msg[1])     # at once: the caller is still finding the others
            except Exception as exc:  # noqa: BLE001
                error = f"{type(exc).__name__}: {exc}"
            if msg[0] != "end":
                continue
            try:
                reply = ("error", error) if error is not None else ("ok", batch.finish(zones))
            except Exception as exc:  # noqa: BLE001
                reply = ("error", f"{type(exc).__name__}: {exc}")
            batch = None
            try:
                conn.send((*reply, (time.process_time() - c0) * 1000.0))
            except (OSError, ValueError):
                return
    finally:
        frame = batch = None
        if shm is not None:
            shm.close()
