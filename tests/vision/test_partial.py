"""A face card whose suit pips are washed out (glare): the value (0) is sure, the card is not."""

from __future__ import annotations

import numpy as np

from shoe_daemon.vision.synth import CONDITIONS, FrameGenerator, with_overrides


def _wash_suits(face: np.ndarray) -> np.ndarray:
    """Paint paper over the suit pip under the rank, in both index corners (cardsJS layout)."""
    out = face.copy()
    h, w = out.shape[:2]
    y0, y1, x0, x1 = int(0.148 * h), int(0.26 * h), int(0.015 * w), int(0.135 * w)
    for sl in ((slice(y0, y1), slice(x0, x1)), (slice(h - y1, h - y0), slice(w - x1, w - x0))):
        region = out[sl]
        region[..., :3] = 250
    return out


def test_face_card_with_suit_hidden_is_partial_value_zero(faces, backs, recognizer):
    cond = with_overrides(CONDITIONS["nominal"], card_width=(150.0, 170.0), motion_blur=(0.0, 0.5),
                          defocus=(0.0, 0.3), glare_p=0.0)  # fmt: skip
    gen = FrameGenerator(faces, backs, cond, seed=3)
    rng = np.random.default_rng(5)
    seen = 0
    for code in ("KH", "QS", "JD"):
        img, _ = gen.card_patch(rng, _wash_suits(faces[code]), code=code)
        res = recognizer.recognize(img)
        assert len(res.cards) == 1, [c.to_json() for c in res.cards]
        c = res.cards[0]
        assert c.card in (None, code)
        if c.status == "partial":
            assert c.card is None and c.value == 0 and c.reason
            seen += 1
    assert seen >= 2
