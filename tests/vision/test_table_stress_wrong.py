"""Wrong answers seen on table-stress frames of held-out designs (own seeds, not the benchmark's):
each one is withheld now (``unknown`` or ``partial``), never read as another card or value."""

from __future__ import annotations

import numpy as np

from tests.vision.conftest import _require


def _result(recognizer, design, seed, frame, code):
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator
    from shoe_daemon.vision.zones import parse_zones
    from tests.vision.helpers import match

    gen = FrameGenerator(design_faces(design), [design_back(design)], "table-stress", seed=seed)
    f = gen.frame(frame)
    res = recognizer.recognize(f.image, zones=parse_zones(f.zones))
    return [match(res, t) for t in f.face_up if t.code == code]


def test_purple_ink_is_no_single_pip_ink():
    """A small court picture's red and blue, blurred together, are purple: not one ink (a blue
    four-colour pip is)."""
    from shoe_daemon.vision.pips import ONE_INK, one_ink

    white = np.array([255.0, 255.0, 255.0], np.float32)
    part = np.full((60, 60, 3), 255, np.uint8)
    purple, blue = part.copy(), part.copy()
    purple[20:40, 20:40] = (200, 40, 160)     # BGR: red and blue mixed
    blue[20:40, 20:40] = (200, 60, 30)
    assert one_ink(purple, white) < ONE_INK
    assert one_ink(blue, white) >= ONE_INK


def test_a_blurred_jumbo_court_is_no_ace(recognizer):
    """A jumbo-index KC's small court, motion-blurred to one purple blob, was "1 pip in a colour
    ink": an ace, which the corner read "A" matched (value 1, partial; seed 885000 frame 95)."""
    _require()
    read = _result(recognizer, "kennard-jumbo", 885000, 95, "KC")
    assert read, "the KCs are not in the frame"
    for r in read:
        assert r is None or (r.card in (None, "KC") and r.value in (None, 0)), (r.card, r.value, r.reason)


def test_streaks_are_smeared_a_glyph_is_not():
    """Motion blur leaves a glyph's edges running one way; a glyph's own run every way."""
    from shoe_daemon.vision.decision import SMEARED
    from shoe_daemon.vision.index import smear

    streaks = np.zeros((24, 16), np.float32)
    for k in range(-24, 16, 6):     # diagonal streaks, as a glyph smeared by diagonal motion
        for y in range(24):
            x = k + y
            if 0 <= x < 16:
                streaks[y, x] = 1.0
    glyph = np.zeros((24, 16), np.float32)
    glyph[2:22, 2:5] = 1.0          # a "K": a stem and two arms
    for i in range(10):
        glyph[11 - i, 5 + i] = glyph[11 + i, 5 + i] = 1.0
    assert smear(streaks) >= SMEARED > smear(glyph)


def test_a_smeared_court_index_names_no_court(recognizer):
    """A QS smeared by motion read K in both corners (0.95 and 1.0), the picture agreeing that it
    is a court: KS, "ok" (seed 884002 frame 2). Its value 0 still stands."""
    _require()
    read = _result(recognizer, "responsive", 884002, 2, "QS")
    assert read, "the QS is not in the frame"
    for r in read:
        assert r is None or (r.card in (None, "QS") and r.value in (None, 0)), (r.card, r.value, r.reason)


def test_clubs_run_together_are_no_picture(recognizer):
    """Blurred four-colour clubs merge into green columns taken for a court picture, and a stray
    glyph then names a court: a 9C read `partial` value 0 (a corner's "9" ignored against the
    "picture"; own seed 884000 frame 63), an 8C under motion blur likewise (frame 159). A picture
    all in one ink is no picture: no value now, or the right one."""
    _require()
    for frame, code in ((63, "9C"), (159, "8C")):
        read = _result(recognizer, "kennard-4colour", 884000, frame, code)
        assert read, f"the {code} is not in frame {frame}"
        for r in read:
            assert r is None or (r.card in (None, code) and r.value in (None, int(code[0]))), (frame, r.value, r.reason)


def test_a_picture_has_more_than_one_ink():
    """The rule itself: a centre whose ink core is one green is pips run together; green with the
    black outlines and red of a court's figure is a picture's."""
    from shoe_daemon.vision.pips import ONE_INK, picture_in_one_ink

    white = np.array([255.0, 255.0, 255.0], np.float32)
    part = np.full((60, 60, 3), 255, np.uint8)
    part[10:50, 10:30] = (30, 140, 20)         # BGR: green clubs run together
    region = (part.min(axis=2) < 128).astype(np.float32)
    assert picture_in_one_ink(region, part, white) >= ONE_INK
    court = part.copy()
    court[10:50, 30:40] = (20, 20, 20)         # black outlines
    court[10:50, 40:50] = (40, 30, 200)        # red robes
    region = (court.min(axis=2) < 128).astype(np.float32)
    assert picture_in_one_ink(region, court, white) < ONE_INK
