"""A court's suit from the symbols in its picture's corners (issue 15, zero-shot designs).

A four-colour deck's courts have no pips and blue or green ink, which says nothing of the suit:
before this rule their suit rested on the two index pips alone (one piece of evidence: the two
corners show one glyph) and they gave their value, never their card.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision.conftest import _require
from tests.vision.helpers import court_tally, match, read_codes

COURTS = ["KC", "QD", "JC", "KD", "QC", "JD"]


def test_a_four_colour_court_reads_by_its_picture_suit_symbols(recognizer):
    """Kennard's four-colour KC, QD, JC...: read exactly (before: value 0 only), none wrongly."""
    _require()
    read = read_codes(recognizer, "kennard-4colour", 5160, 4, COURTS)
    found, wrong, right = court_tally(read)
    assert not wrong and len(found) >= 12 and right >= 0.75 * len(found), (right, len(found), wrong)


@pytest.mark.parametrize("cast", [(1.2, 1.0, 0.75), (0.75, 1.2, 0.75)], ids=["blue", "green"])
def test_a_two_colour_court_under_a_colour_cast_keeps_its_suit(recognizer, cast):
    """Black spades and red hearts under a strong blue or green cast: never a four-colour club or
    diamond (nor any other wrong card); the cast is the light's, not the ink's."""
    _require()
    codes = ["KS", "QH", "JS", "KH", "QS", "JH"]
    read = read_codes(recognizer, "kennard", 5161, 3, codes, cast)
    found = [(code, r) for code, r in read if r is not None]
    assert found and all(r.card in (None, code) for code, r in found), [(c, r.card) for c, r in found]
    assert sum(r.card == code for code, r in found) >= len(found) // 2, [(c, r.reason) for c, r in found]


def test_picture_suit_symbols_count_only_in_both_halves_and_alike():
    from shoe_daemon.vision.evidence import court_suit

    club, club_doubt, spade = [0.0, 0.0, 0.0, 0.98, 0.02], [0.0, 0.0, 0.0, 0.7, 0.3], [0.97, 0.0, 0.0, 0.01, 0.02]
    sp = np.array([club, club, spade, club_doubt])
    assert court_suit([(0, False)], sp) is None                        # one half only
    assert court_suit([(0, False), (2, True)], sp) is None             # a club and a spade
    assert court_suit([(0, False), (3, True)], sp) is None             # the other half's is no sure pip
    got = court_suit([(0, False), (1, True), (3, True)], sp)            # the doubtful one left out
    assert got is not None and int(got.argmax()) == 3 and got[3] > 0.99


def test_picture_suit_symbols_are_found_beside_the_figure_not_in_the_index():
    _require()
    from shoe_daemon.vision import pips
    from shoe_daemon.vision.cardart import design_faces
    from tests.vision.test_designs import _upright

    for design in ("kennard-4colour", "cardsjs", "responsive"):
        faces = design_faces(design)
        for code in ("KC", "QD", "JS"):
            ink, _card, _white = _upright(faces[code])
            blobs = pips.picture_suit_blobs(ink)
            halves = {(b.y + b.y1) / 2 > 0.5 * ink.shape[0] for b in blobs}
            assert halves == {False, True}, (design, code, blobs)
            # never the index column
            assert all(0.16 * ink.shape[1] <= (b.x + b.x1) / 2 <= 0.84 * ink.shape[1] for b in blobs), (design, code)


def test_a_pip_card_taken_for_a_picture_lends_no_court_its_pips(recognizer):
    """A hand over a four-colour 9C's centre passes it for a picture (its value then reads 0, a
    fault of before); its clubs, one a half in the picture's corners, are no court's symbols: the
    clubs alike all over the centre say pips. (Before that check it read QC, 0.999.)"""
    _require()
    from shoe_daemon.vision import index, pips
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    gen = FrameGenerator(design_faces("kennard-4colour"), [design_back("kennard-4colour")], "nominal", seed=880100)
    f = gen.frame(39)
    truth = next(t for t in f.face_up if t.code == "9C")
    r = match(recognizer.recognize(f.image, zones=parse_zones(f.zones)), truth)
    assert r is None or r.card in (None, "9C"), (r.card, r.reason)
    card = index.rectify(f.image, np.float32(truth.quad))
    ink = index.ink_map(card, index.white_balance(card))
    assert pips.picture_suit_blobs(ink) == []
