"""bench.camera_rest: a resting layout's fused decisions scored against the layout's truth."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cv2")

from bench.camera_rest import RestTally, run_case, score_layout  # noqa: E402
from shoe_daemon.vision.fuser import FusedCard  # noqa: E402
from shoe_daemon.vision.synth import TrueCard  # noqa: E402
from tests.vision.conftest import _require  # noqa: E402


def _card(code, x):
    quad = np.array([[x, 100], [x + 100, 100], [x + 100, 250], [x, 250]], dtype=float)
    return TrueCard(code=code, quad=quad, zone="punto")


def _decided(status, card, value, x, dx=3.0):
    quad = [[x + dx, 100], [x + 100 + dx, 100], [x + 100 + dx, 250], [x + dx, 250]]
    return FusedCard(1, "punto", status, card, value, 0.99, 12, quad)


def test_each_decision_is_scored_once_and_a_decision_on_no_card_is_false():
    truth = [_card("9H", 0), _card("KS", 200), _card("5D", 400), _card("2C", 600), _card(None, 800)]
    decided = [
        _decided("ok", "9H", 9, 0),            # right
        _decided("ok", "QS", 0, 200),          # wrong card, right value: still a wrong card
        _decided("unsure", None, 4, 400),      # wrong value
        _decided("unsure", None, None, 0, 8),  # the 9H again: its track was lost and found
        _decided("unsure", None, 3, 800),      # on the face-down card: false, with a value
        _decided("unsure", None, None, 1000),  # on the felt: false, no value
    ]  # the 2C: not decided
    t = RestTally()
    score_layout(truth, decided, t)
    assert (t.layouts, t.cards) == (1, 4)
    assert (t.ok_right, t.ok_wrong, t.unsure_value_wrong, t.twice) == (1, 1, 1, 1)
    assert (t.false_value, t.false_none, t.not_decided) == (1, 1, 1)
    assert t.unsure == t.unsure_value_right == 0


def test_a_resting_nominal_layout_is_decided_card_by_card():
    """One layout, 16 frames, through the real recogniser and fuser: every card decided, none false."""
    _require()
    t = run_case("nominal", "kennard", "shipped", 1, 881234)
    assert t.cards >= 4
    assert t.false_value == t.false_none == t.twice == t.ok_wrong == 0
    assert t.ok_right + t.unsure + t.unsure_value_right >= t.cards - 1
