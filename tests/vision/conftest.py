"""Shared fixtures of the camera tests: the vendored cardsJS art and seeded frames.

OpenCV (the ``camera`` extra) and rsvg-convert (librsvg2-bin, scripts/system-deps.sh) are
required: a missing one fails these tests with a pointer, never skips them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _require() -> None:
    try:
        import cv2  # noqa: F401
    except ImportError:
        pytest.fail("OpenCV missing: pip install -e '.[camera]' (the Makefile's EXTRAS must include camera)",
                    pytrace=False)  # fmt: skip
    if shutil.which("rsvg-convert") is None:
        pytest.fail("rsvg-convert missing: run scripts/system-deps.sh (Debian package librsvg2-bin)", pytrace=False)


def own_frame(design: str, seed: int, frame: int, condition: str = "table-stress"):
    """Frame ``frame`` of a registry design (its faces and its back) under ``condition``, from an
    own seed (880000-889999, never the benchmark's)."""
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator

    _require()
    return FrameGenerator(design_faces(design), [design_back(design)], condition, seed=seed).frame(frame)


def card_width(card) -> float:
    """A generated card's width in the frame (its quadrilateral's first side), px."""
    import numpy as np

    return float(np.linalg.norm(card.quad[1] - card.quad[0]))


@pytest.fixture(scope="session")
def faces():
    _require()
    from shoe_daemon.vision.cardart import cardsjs_faces

    return cardsjs_faces()


@pytest.fixture(scope="session")
def backs():
    _require()
    from shoe_daemon.vision.cardart import cardsjs_backs

    return cardsjs_backs()


@pytest.fixture(scope="session")
def recognizer():
    _require()
    from shoe_daemon.vision.recognizer import Recognizer

    return Recognizer({})


@pytest.fixture(scope="session")
def generator(faces, backs):
    """``generator(condition="nominal", seed=1) -> FrameGenerator`` (cached)."""
    from shoe_daemon.vision.synth import FrameGenerator

    made = {}

    def make(condition="nominal", seed=1):
        key = (condition if isinstance(condition, str) else repr(condition), seed)
        if key not in made:
            made[key] = FrameGenerator(faces, backs, condition, seed=seed)
        return made[key]

    return make
