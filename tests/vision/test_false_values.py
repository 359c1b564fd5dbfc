"""False cards that carry a value (issue 15), on own seeds (never the benchmark's): a value given
where no card lies is a guess. Each test fails without its rule."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision.conftest import card_width as _width
from tests.vision.conftest import own_frame as _frame

cv2 = pytest.importorskip("cv2")


def _false(result, frame) -> list:
    """The reported cards on no face-up card of the frame (the benchmark's match: within 0.3 widths)."""
    return [r for r in result.cards
            if not any(np.hypot(*(np.asarray(r.centre) - t.centre)) < 0.3 * _width(t) for t in frame.face_up)]


def test_pair_sized_outline_with_a_corner_against_its_centre_gives_no_value(recognizer):
    """A TS with the KS half over it (own seed 889904, responsive, table stress, frame 58): one
    133-px outline round both, 1.35x the frame's other cards; its corners read T and Q, the T
    ignored against the KS's picture: `partial` value 0 where no card lies. Now no value."""
    from shoe_daemon.vision.zones import parse_zones

    f = _frame("responsive", 889904, 58)
    res = recognizer.recognize(f.image, zones=parse_zones(f.zones))
    assert all(r.value is None and r.card is None for r in _false(res, f))


def test_pair_sized_no_value_only_for_partial_readings_with_a_corner_against_the_centre():
    """The rule itself: a `partial` reading with a corner ignored against the centre loses its
    value; one whose corners named two courts under a picture (a KD read K and Q, own seed 889944
    frame 103), an `ok` one, or a rejection stays as it was."""
    from shoe_daemon.vision.decision import CORNER_AGAINST_CENTRE
    from shoe_daemon.vision.recognizer import _pair_sized_no_value
    from shoe_daemon.vision.result import CardResult

    def res(status, reason):
        return CardResult(None, 0, status, 0.99, [[0, 0], [1, 0], [1, 1], [0, 1]], None, reason)

    out = _pair_sized_no_value(res("partial", f"value 0 sure, exact rank not; one index corner read T, {CORNER_AGAINST_CENTRE}"))
    assert (out.status, out.value) == ("unknown", None)
    for kept in (res("partial", "value 0 sure, exact rank not; the two index corners read K and Q"),
                 res("ok", f"one index corner read T, {CORNER_AGAINST_CENTRE}")):
        assert _pair_sized_no_value(kept) is kept
    assert _pair_sized_no_value("no readable index") == "no readable index"
