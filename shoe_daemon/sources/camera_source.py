"""The overhead camera as a card source: frames -> recognizer -> fuser -> events.

One thread reads frames (a camera, a stream, or a folder / video file for
fixtures), recognises the face-up cards, and lets the fuser decide each card
once it has rested for a few frames. Each decided card becomes a
``camera_card`` event with its zone; the core decides what it means (see
shoe_daemon/table_camera.py). OpenCV is imported here, lazily: a table with no
camera never loads it.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from shoe_daemon.core.events import Event, Kind

if TYPE_CHECKING:
    from shoe_daemon.config import CameraConfig

log = logging.getLogger(__name__)

SOURCE = "camera"


class CameraReader:
    """Frames in, ``camera_card`` events out: the recogniser and the fuser, with no thread.

    The camera source runs one on its thread; ``replay`` and the fixture maker run one
    on recorded frames, so a replayed camera session goes through the same code.
    """

    def __init__(self, cfg: CameraConfig, *, recognizer=None, fuser=None):
        from shoe_daemon.vision import CardFuser, Recognizer

        self.recognizer = recognizer or Recognizer(cfg)
        # [camera] fuser = {settle_frames, min_votes, max_frames, ...}: how long a card must rest.
        self.fuser = fuser or CardFuser(**cfg.fuser.options())
        self.recent_ms: collections.deque[float] = collections.deque(maxlen=256)   # recognition times
        self.decided = {"ok": 0, "unsure": 0}

    @staticmethod
    def link_up(t: float, source) -> Event:
        return Event(t, Kind.LINK_UP, SOURCE, {"driver": "camera", "source": str(source)})

    def read(self, image, t_frame: float, clock: Callable[[], float] | None = None) -> list[Event]:
        """The cards this frame decides (each once), as events at ``clock()`` (else ``t_frame``)."""
        result = self.recognizer.recognize(image)
        self.recent_ms.append(result.elapsed_ms)
        decided = self.fuser.update(result, t_frame)
        if not decided:
            return []
        now = clock() if clock is not None else t_frame
        events = [card_event(card, now) for card in decided]
        for e in events:
            self.decided[e.data["status"]] += 1
        return events


def card_event(card, now: float) -> Event:
    """The ``camera_card`` event of a card the fuser decided (``unsure`` never carries a card)."""
    status = "ok" if card.status == "ok" and card.card else "unsure"
    data = {"card": card.card if status == "ok" else None, "value": card.value, "status": status,
            "confidence": round(float(card.confidence), 4), "zone": card.zone,
            "frames": card.frames, "track": card.track}
    if card.reason:
        data["reason"] = card.reason
    return Event(now, Kind.CAMERA_CARD, SOURCE, data)


class CameraSource:
    def __init__(self, camera_cfg: CameraConfig, on_events: Callable[[list[Event]], None], *,
                 clock: Callable[[], float] = time.time, recognizer=None, fuser=None,
                 reconnect_min: float = 1.0, reconnect_max: float = 30.0):
        self.cfg = camera_cfg
        self._on_events = on_events
        self._clock = clock
        self._recognizer = recognizer
        self._fuser = fuser
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected = False
        self.frames = 0
        self.cards = 0
        self.reconnects = 0              # times the camera was lost and reopened
        self.finished = False            # a folder or file source has no more frames
        self.last_error: str | None = None
        self.last_progress = time.monotonic()
        self._reader: CameraReader | None = None
        self._frame_times: collections.deque[float] = collections.deque(maxlen=64)   # monotonic

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="camera", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._reader is not None:
            self._reader.recognizer.close()     # its card-reading process, if one was started

    def _run(self) -> None:
        from shoe_daemon.vision import FrameSourceError, open_frames
        from shoe_daemon.vision.frames import describe

        reader = self._reader = CameraReader(self.cfg, recognizer=self._recognizer, fuser=self._fuser)
        ever_up = False
        source = self.cfg.source
        fps = self.cfg.fps
        live = describe(source) in ("camera", "stream")
        backoff = self.reconnect_min
        while not self._stop.is_set():
            try:
                for frame in open_frames(source, fps=fps):
                    if self._stop.is_set():
                        return
                    self.last_progress = time.monotonic()
                    self._frame_times.append(self.last_progress)
                    if not self.connected:
                        self.connected = True
                        if ever_up:
                            self.reconnects += 1
                        ever_up = True
                        backoff = self.reconnect_min
                        self._emit([reader.link_up(self._clock(), source)])
                    self.frames += 1
                    events = reader.read(frame.image, frame.t, self._clock)
                    if events:
                        self.cards += len(events)
                        self._emit(events)
            except FrameSourceError as exc:
                self._lost(str(exc))
            except Exception as exc:  # noqa: BLE001 - a camera fault must not kill the daemon
                log.exception("camera source failed")
                self._lost(f"{type(exc).__name__}: {exc}")
            if not live:
                self.finished = True  # a recorded folder or file: done
                return
            self._lost("no more frames")
            self._stop.wait(backoff)
            backoff = min(backoff * 2, self.reconnect_max)

    def stats(self) -> dict:
        """The camera's figures for /status and /metrics (read from any thread)."""
        from shoe_daemon.vision.frames import masked_source

        times = list(self._frame_times)
        span = times[-1] - times[0] if len(times) > 1 else 0.0
        reader = self._reader
        recent = sorted(reader.recent_ms) if reader is not None else []

        def pct(q: float) -> float | None:
            return round(recent[min(len(recent) - 1, int(q * len(recent)))], 2) if recent else None

        return {
            "source": masked_source(self.cfg.source), "connected": self.connected,
            "finished": self.finished,
            "frames": self.frames, "fps": round((len(times) - 1) / span, 2) if span > 0 else None,
            "cards": dict(reader.decided) if reader is not None else {"ok": 0, "unsure": 0},
            "recognize_ms_p50": pct(0.5), "recognize_ms_p95": pct(0.95),
            "reconnects": self.reconnects, "last_error": self.last_error,
            "idle_s": round(time.monotonic() - self.last_progress, 3),
        }

    def _lost(self, reason: str) -> None:
        from shoe_daemon.vision.frames import masked_source

        if reason != self.last_error:
            log.warning("camera %s: %s", masked_source(self.cfg.source), reason)
        self.last_error = reason
        if self.connected:
            self.connected = False
            self._emit([Event(self._clock(), Kind.LINK_DOWN, SOURCE, {"reason": reason})])

    def _emit(self, events: list[Event]) -> None:
        self._on_events(events)
