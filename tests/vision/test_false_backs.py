"""False cards from card backs (issue 15), on table-stress frames of own seeds (never the
benchmark's): each was a reported card where no face-up card lies, and fails without its rule.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision.conftest import card_width as _width
from tests.vision.conftest import own_frame as _frame

cv2 = pytest.importorskip("cv2")


def test_a_backs_inner_star_is_no_card_and_sets_no_card_size(recognizer):
    """A responsive back's white four-pointed star, inside its blue circle (own seed 889206, table
    stress, frame 13): its hull (the star's tips) was taken for a 66-px card, the frame's only one,
    so the frame's card size was 66 px and a 60-px piece of a 100-px 4D was reported `unknown`, a
    false card. Now nothing is found inside the back, and nothing is reported off a face."""
    from shoe_daemon.vision import detect
    from shoe_daemon.vision.zones import parse_zones

    f = _frame("responsive", 889206, 13)
    back = next(t for t in f.cards if t.code is None)
    found, _ = detect.find_cards(f.image)
    assert not any(np.linalg.norm(c.quad.mean(axis=0) - back.centre) < 0.3 * _width(back) for c in found)
    res = recognizer.recognize(f.image, zones=parse_zones(f.zones))
    for c in res.cards:
        centre = np.mean(c.quad, axis=0)
        assert any(np.linalg.norm(centre - t.centre) < 0.3 * _width(t) for t in f.face_up)


def test_a_white_shape_with_a_pattern_beyond_every_side_is_inside_something():
    """detect.inside_pattern on a drawn frame (green felt): a white quadrilateral inside a blue
    panel (a back's pattern) all round is; the same on the felt is not, nor with a dark hand over
    one side and a corner (a bitten card)."""
    from shoe_daemon.vision.detect import inside_pattern, whiteness

    felt = np.float32([40, 120, 30])
    frame = np.zeros((400, 400, 3), np.uint8)
    frame[:] = felt.astype(np.uint8)
    quad = np.float32([[150, 130], [250, 130], [250, 270], [150, 270]])

    def mask_of(img):
        return (whiteness(img) > 150).astype(np.uint8)

    on_felt = frame.copy()
    on_felt[130:271, 150:251] = 235
    assert not inside_pattern(on_felt, mask_of(on_felt), quad, felt)
    bitten = on_felt.copy()
    bitten[100:300, 240:300] = (60, 80, 120)                 # a hand over the right side
    bitten[240:300, 120:260] = (60, 80, 120)                 # ... and the bottom corner
    assert not inside_pattern(bitten, mask_of(bitten), quad, felt)
    in_back = frame.copy()
    in_back[90:311, 110:291] = (200, 90, 30)                # the back's blue
    in_back[130:271, 150:251] = 235
    assert inside_pattern(in_back, mask_of(in_back), quad, felt)


@pytest.mark.parametrize("seed, index", [(889710, 80), (889713, 74)])
def test_a_blurred_back_whose_pattern_reaches_every_side_is_no_card(recognizer, seed, index):
    """A small responsive back blurred by motion on an empty table (own seeds, table-empty): the blue
    arcs in its corners read as rank glyphs in both (no suit pip), its circle as solid ink on paper,
    so it was reported `unknown`: a false card. Its blue reaches every side; a face's paper margin
    shows along one side at least."""
    from shoe_daemon.vision.zones import parse_zones

    f = _frame("responsive", seed, index, condition="table-empty")
    assert recognizer.recognize(f.image, zones=parse_zones(f.zones)).cards == []


def test_a_paper_margin_along_one_side_is_enough_for_a_face():
    """presence.margin_on_a_side on drawn ink maps (160 x 224): paper with a hand's ink over three
    sides still shows a face's margin; a back's ink reaching all four sides does not."""
    from shoe_daemon.vision.presence import margin_on_a_side

    ink = np.zeros((224, 160), np.float32)
    ink[40:184, 30:130] = 0.8                       # a picture inside the margin
    assert margin_on_a_side(ink)
    ink[:, :40] = ink[:, 120:] = ink[170:, :] = 0.9   # a hand and a sleeve over three sides
    assert margin_on_a_side(ink)
    ink[:20, :] = 0.9                               # ... and the fourth: a back's pattern, all round
    assert not margin_on_a_side(ink)
