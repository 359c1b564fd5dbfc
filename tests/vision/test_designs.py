"""Registry designs no model was trained on (assets/LICENSES.md): four-colour pips and jumbo courts."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision.conftest import _require
from tests.vision.helpers import match


def _upright(face):
    from shoe_daemon.vision import index

    a = face[:, :, 3:4].astype(np.float32) / 255
    bgr = (face[:, :, :3] * a + 255 * (1 - a)).astype(np.uint8)
    h, w = bgr.shape[:2]
    card = index.rectify(bgr, np.float32([[0, 0], [w, 0], [w, h], [0, h]]))
    white = index.white_balance(card)
    return index.ink_map(card, white), card, white


@pytest.mark.parametrize("design", ["kennard-4colour", "kennard-4colour-jumbo"])
def test_pips_in_a_colour_ink_are_no_picture(design):
    """Blue diamonds and green clubs are coloured like a court's picture, but they are pips."""
    _require()
    from shoe_daemon.vision import pips
    from shoe_daemon.vision.cardart import design_faces

    faces = design_faces(design)
    for code in ("9C", "9D", "7C", "TD", "3D"):
        r = pips.read_pips(*_upright(faces[code]))
        assert r.kind != "picture", (code, r.reason)
        if design == "kennard-4colour":      # standard index: the count is read
            assert r.kind == "pips" and r.count == (10 if code[0] == "T" else int(code[0])), (code, r.reason)
    for code in ("JD", "QC", "KH"):
        assert pips.read_pips(*_upright(faces[code])).kind == "picture", code


def test_jumbo_courts_give_their_value_never_a_wrong_court(recognizer):
    """A jumbo index's J/Q/K is out of the glyph models' experience: value 0, never another court."""
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    gen = FrameGenerator(design_faces("kennard-jumbo"), [design_back("kennard-jumbo")], "nominal", seed=31)
    seen = 0
    for i in range(4):
        f = gen.frame(i, codes=["QH", "JH", "QS", "KD", "JC", "QD"])
        res = recognizer.recognize(f.image, zones=parse_zones(f.zones))
        for t in f.face_up[:6]:
            r = match(res, t)
            if r is None:
                continue
            seen += 1
            assert r.card in (None, t.code) and r.value in (None, 0), (t.code, r.card, r.value, r.reason)
    assert seen >= 6
