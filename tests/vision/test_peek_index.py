"""The peek-index design read zero-shot (issue 15): its courts' suit and its merged small index.

font-peek (cardart.SYNTHETIC) prints a 5-7 px suit pip under a 10 px rank, close to the corner.
Its courts' suit rests on the two index pips alone, which the shipped classifier names right but
rarely above 0.99; and blurred, its rank's thin strokes need the faint threshold, at which the
narrow gap to the solid pip fills in: one blob, no suit, no index. Frames of own seeds
880200-880201 (the rules were set on 880100-880108), never the benchmark's.
"""

from __future__ import annotations

import numpy as np

from tests.vision.conftest import _require
from tests.vision.helpers import match


def test_a_rank_run_into_its_suit_pip_is_cut_at_the_waist():
    """split_merged: a 10-px "5" over a pip with a faint gap is cut there; one tall glyph with no
    waist (a "1", an "8" of even ink) is left whole."""
    from shoe_daemon.vision.index import Blob, split_merged

    ink = np.zeros((30, 20), np.float32)
    ink[4:14, 7:14] = 0.45        # the rank's thin strokes
    ink[14:16, 9:12] = 0.1        # blur's bridge
    ink[16:22, 8:14] = 0.95       # the solid pip
    binary = (ink > 0.05).astype(np.uint8)
    blob = Blob(7, 4, 7, 18, int(binary.sum()))
    rank, suit = split_merged(ink, binary, blob)
    assert suit is not None and rank.y == 4 and rank.y1 <= 15 and suit.y >= 14 and suit.y1 == 22, (rank, suit)
    stem = np.zeros((30, 20), np.float32)
    stem[4:22, 9:12] = 0.8
    b2 = Blob(9, 4, 3, 18, 54)
    assert split_merged(stem, (stem > 0.05).astype(np.uint8), b2) == (b2, None)


def test_a_peek_pip_card_whose_index_ran_together_is_read(recognizer):
    """Own seed 880100 frame 20: a blurred 5C whose two indices gave no rank glyph (at the usual
    threshold the 5 broke up, at the faint one it joined its pip) is read 5C from the cut index."""
    _require()
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    gen = FrameGenerator(design_faces("font-peek"), [design_back("font-peek")], "nominal", seed=880100)
    f = gen.frame(20)
    truth = next(t for t in f.face_up if t.code == "5C")
    r = match(recognizer.recognize(f.image, zones=parse_zones(f.zones)), truth)
    assert r is not None and r.card == "5C", (r and r.card, r and r.reason)
