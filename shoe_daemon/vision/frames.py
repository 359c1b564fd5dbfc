"""Camera frames: ``open_frames(source)`` yields :class:`Frame` objects (BGR images) from

* a camera: a device index (``0``, ``"0"``) or path (``/dev/video0``), or a stream URL
  (``rtsp://...``, ``http://...``), through ``cv2.VideoCapture``;
* a folder of images (replayed in file-name order: ``frame-000.jpg``, ``frame-001.jpg``, ...);
* a video file, or a single image file.

A replay can be paced (``fps``) and looped (``loop``). An unreadable image in a folder is
skipped with a warning; a source that cannot be opened raises :class:`FrameSourceError`.
A live source that stops delivering ends the iteration (the caller reopens it).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}
VIDEO_SUFFIXES = {".mp4", ".avi", ".mkv", ".mov", ".m4v", ".webm", ".mjpeg", ".mjpg"}


class FrameSourceError(RuntimeError):
    """The camera, stream, folder or file could not be opened or read."""


@dataclass
class Frame:
    image: np.ndarray          # BGR uint8
    index: int                 # 0, 1, ... in this iteration
    t: float                   # time.monotonic() when read
    name: str | None = None    # the file's name, for a folder or an image


def read_image(path: str | os.PathLike[str]) -> np.ndarray:
    """Read an image file as BGR; raises FrameSourceError with the reason."""
    import cv2

    p = Path(path)
    if not p.exists():
        raise FrameSourceError(f"{path}: no such file")
    if p.is_dir():
        raise FrameSourceError(f"{path}: is a folder, not an image")
    try:
        data = np.fromfile(str(p), dtype=np.uint8)
    except OSError as exc:
        raise FrameSourceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    img = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if img is None:
        raise FrameSourceError(f"{path}: not an image OpenCV can decode")
    return img


def describe(source: str | int) -> str:
    """What kind of source this is: camera, stream, folder, video or image."""
    if isinstance(source, int) or (isinstance(source, str) and source.strip().isdigit()):
        return "camera"
    s = str(source)
    if "://" in s:
        return "stream"
    p = Path(s)
    if s.startswith("/dev/"):
        return "camera"
    if p.is_dir():
        return "folder"
    if p.suffix.lower() in IMAGE_SUFFIXES:
        return "image"
    return "video"


def open_frames(source: str | int, *, fps: float | None = None, loop: bool = False,
                limit: int | None = None) -> Iterator[Frame]:  # fmt: skip
    """Frames from ``source`` (see the module doc). ``fps`` paces a replay; ``limit`` stops early."""
    kind = describe(source)
    if kind == "folder":
        it = _folder(Path(str(source)), loop)
    elif kind == "image":
        it = _single(Path(str(source)), loop)
    else:
        it = _capture(source, kind, loop)
    period = 1.0 / fps if fps else 0.0
    next_t = time.monotonic()
    for i, (img, name) in enumerate(it):
        if limit is not None and i >= limit:
            return
        if period:
            delay = next_t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            next_t = max(next_t + period, time.monotonic() - period)
        yield Frame(img, i, time.monotonic(), name)


def _folder(path: Path, loop: bool) -> Iterator[tuple[np.ndarray, str]]:
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    if not files:
        raise FrameSourceError(f"{path}: no image files ({', '.join(sorted(IMAGE_SUFFIXES))})")
    while True:
        good = 0
        for f in files:
            try:
                img = read_image(f)
            except FrameSourceError as exc:
                log.warning("skipping %s", exc)
                continue
            good += 1
            yield img, f.name
        if not loop or not good:
            return


def _single(path: Path, loop: bool) -> Iterator[tuple[np.ndarray, str]]:
    img = read_image(path)
    while True:
        yield img, path.name
        if not loop:
            return


def _capture(source: str | int, kind: str, loop: bool) -> Iterator[tuple[np.ndarray, None]]:
    import cv2

    arg: str | int = int(source) if isinstance(source, str) and source.strip().isdigit() else source
    if kind == "video" and not Path(str(source)).exists():
        raise FrameSourceError(f"{source}: no such file")
    cap = cv2.VideoCapture(arg)
    try:
        if not cap.isOpened():
            raise FrameSourceError(f"{masked_source(source)}: cannot open the {kind}")
        while True:
            ok, img = cap.read()
            if not ok or img is None:
                if loop and kind == "video":
                    cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
                    ok, img = cap.read()
                    if not ok or img is None:
                        return
                else:
                    return
            if img.ndim == 2:
                img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
            yield img, None
    finally:
        cap.release()


def masked_source(source: str | int) -> str:
    """A source for messages, with any password in a URL masked."""
    s = str(source)
    if "://" in s and "@" in s:
        from shoe_daemon.config import _mask_url

        return _mask_url(s)
    return s
