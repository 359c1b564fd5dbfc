"""Overhead-camera card recognition (OpenCV): the fallback when the shoe cannot read a card.

Importing this package does not import OpenCV; the names below load their module on first use.

    from shoe_daemon.vision import Recognizer, CardFuser, open_frames

    recognizer = Recognizer(config)            # the daemon's Config, its camera section, or a dict
    result = recognizer.recognize(frame_bgr)   # -> FrameResult: .cards [CardResult], .elapsed_ms
    fuser = CardFuser()                        # decides each resting card from several frames
    for frame in open_frames(config.camera.source):
        for decided in fuser.update(recognizer.recognize(frame.image), frame.t):
            ...

See docs/camera.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "Recognizer": "shoe_daemon.vision.recognizer",
    "FrameResult": "shoe_daemon.vision.result",
    "CardResult": "shoe_daemon.vision.result",
    "Thresholds": "shoe_daemon.vision.decision",
    "CardFuser": "shoe_daemon.vision.fuser",
    "FusedCard": "shoe_daemon.vision.fuser",
    "open_frames": "shoe_daemon.vision.frames",
    "Frame": "shoe_daemon.vision.frames",
    "FrameSourceError": "shoe_daemon.vision.frames",
    "read_image": "shoe_daemon.vision.frames",
    "Zone": "shoe_daemon.vision.zones",
    "ZoneError": "shoe_daemon.vision.zones",
    "parse_zones": "shoe_daemon.vision.zones",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'shoe_daemon.vision' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
