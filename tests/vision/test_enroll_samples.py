"""Enrolment's training cards show what the table shows its smallest cards: heavy blur, clipped
highlights, low JPEG quality, coloured felts, any angle (``enroll.sample_image``)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision.conftest import _require


@pytest.fixture(scope="module")
def kennard():
    _require()
    from shoe_daemon.vision.cardart import design_faces

    return design_faces("kennard")


def _samples(faces, table: bool, n: int = 40):
    from shoe_daemon.vision import enroll

    gen = enroll.frame_generator(faces, enroll._table_condition(), 5)
    rng = np.random.default_rng(7)
    codes = ["3D", "9S", "7S", "5S", "TD", "KS"]
    return [enroll.sample_image(gen, rng, faces[codes[i % len(codes)]], codes[i % len(codes)], table)
            for i in range(n)]


def _clipped(img, quad) -> float:
    """The share of the card's pixels at 255 in some channel (highlights clipped)."""
    import cv2

    mask = np.zeros(img.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 1)
    inside = img[mask > 0]
    return float((inside.max(axis=1) == 255).mean())


def test_table_samples_are_small_blurred_clipped_and_any_way_round(kennard):
    table = _samples(kennard, True)
    widths = [w for _img, _q, w, _p in table]
    assert min(widths) >= 60 and max(widths) <= 110, widths
    params = [p for *_x, p in table]
    heavy = [p for p in params if p.get("motion_blur", 0) >= 10 or p.get("defocus", 0) >= 3]
    assert len(heavy) >= 0.3 * len(table), params
    assert max(p.get("defocus", 0) for p in params) >= 3.0          # defocus to 4 px (the frames: 3)
    assert all(30 <= p["jpeg"] <= 60 for p in params)
    assert max(p["gain"] * max(p["wb"]) for p in params) > 1.6
    # Clipped paper: a good share of the card at 255 in some channel, on several cards.
    assert sum(_clipped(img, q) > 0.2 for img, q, _w, _p in table) >= 3
    # Any angle: the outline's top edge is not level.
    angles = [abs(np.degrees(np.arctan2(*(q[1] - q[0])[::-1]))) for _img, q, _w, _p in table]
    assert sum(10 < a < 170 for a in angles) >= 0.5 * len(table), angles
    # Felts of all three colours (the frame's background at a corner of the canvas).
    felts = {int(np.argmax(img[2, 2].astype(int))) for img, _q, _w, _p in table}
    assert felts == {0, 1, 2}, felts
