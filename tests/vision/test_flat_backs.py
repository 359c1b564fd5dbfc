"""A card back blurred to one flat colour is no face-up card (issue 15, "no false card"), on a
table-stress frame of an own seed (never the benchmark's): it failed before its rule."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision.conftest import _require

cv2 = pytest.importorskip("cv2")


def test_a_flat_blurred_back_with_two_glyph_like_corners_is_no_card(recognizer):
    """A font-peek back, blurred to a flat light blue (own seed 889202, table stress, frame 50):
    its border lines gave two corners reading "T" with a suit pip, so it was reported `unknown`
    though its inner area holds no ink at all. The face-up cards of the frame are still found."""
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator

    _require()
    f = FrameGenerator(design_faces("font-peek"), [design_back("font-peek")], "table-stress", seed=889202).frame(50)
    res = recognizer.recognize(f.image)
    back = np.array([434.0, 501.0])
    assert not any(np.linalg.norm(np.asarray(r.centre) - back) < 30 for r in res.cards)
    for code in ("AD", "QH"):
        t = next(t for t in f.cards if t.code == code)
        assert any(np.linalg.norm(np.asarray(r.centre) - np.mean(t.quad, axis=0)) < 20 for r in res.cards)


def test_two_alike_corners_without_the_centre_need_pip_ink(recognizer):
    """The rule itself, in `_decide`'s face gate: two whole index corners reading alike, the centre
    neither pips nor a picture, give `unknown` with pip-sized ink in the inner area and "not sure"
    (the face test's to decide) without any."""
    from shoe_daemon.vision.decision import NOT_SURE
    from shoe_daemon.vision.pips import PipReading
    from shoe_daemon.vision.result import CardResult
    from tests.vision.test_peek_index import _decision

    spade = [[0.96, 0, 0, 0.02, 0.02], [0.95, 0, 0, 0.04, 0.01]]
    unclear = PipReading("unclear", reason="blobs that are no pips")
    with_pips = np.zeros((224, 160), np.float32)
    with_pips[60:80, 70:90] = 1.0
    with_pips[140:160, 70:90] = 1.0
    flat = _decision(recognizer, spade, ranks=(9, 9), pip=unclear)
    assert isinstance(flat, str) and flat.startswith(NOT_SURE), flat
    inked = _decision(recognizer, spade, ranks=(9, 9), pip=unclear, ink=with_pips)
    assert isinstance(inked, CardResult) and inked.status == "unknown", inked
    court = _decision(recognizer, spade, ranks=(12, 12))      # a picture: the rule is not asked
    assert isinstance(court, CardResult) and court.card == "KS", court
