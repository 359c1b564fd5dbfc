"""Empty felt, card backs, chips and hands are not cards."""

from __future__ import annotations

import numpy as np
import pytest

from shoe_daemon.vision.synth import CONDITIONS, with_overrides

EMPTY = with_overrides(CONDITIONS["nominal"], empty=True, chips=(0, 0), others=(0, 0), hand_p=0.0)


@pytest.mark.parametrize("name,overrides,hand", [
    ("felt", {}, False),
    ("backs", {"others": (4, 4), "backs_p": 1.0}, False),
    ("chips", {"chips": (10, 10)}, False),
    ("hands", {"chips": (2, 2)}, True),
    ("everything", {"others": (3, 3), "backs_p": 1.0, "chips": (6, 6)}, True),
])  # fmt: skip
def test_no_card_reported(generator, recognizer, name, overrides, hand):
    gen = generator(with_overrides(EMPTY, **overrides), seed=31)
    for i in range(3):
        f = gen.frame(i, hand=hand)
        res = recognizer.recognize(f.image)
        assert res.cards == [], f"{name} frame {i}: {[c.to_json() for c in res.cards]}"


def test_blank_and_flat_images(recognizer):
    for img in (np.zeros((720, 1280, 3), np.uint8), np.full((720, 1280, 3), 255, np.uint8),
                np.full((720, 1280, 3), (40, 120, 30), np.uint8)):  # fmt: skip
        assert recognizer.recognize(img).cards == []


def test_stress_empty_frames(generator, recognizer):
    gen = generator(with_overrides(CONDITIONS["stress"], empty=True, backs_p=1.0), seed=8)
    for i in range(3):
        assert recognizer.recognize(gen.frame(i).image).cards == []


@pytest.mark.parametrize("what", ["back", "blank card stock"])
def test_no_card_under_a_sleeve_without_a_face(faces, backs, recognizer, what):
    """A card back, or white card stock with nothing printed, half under the dealer's sleeve: its
    place is found as a card under a sleeve would be, but no face shows there, so no card."""
    from tests.vision.helpers import table_with_a_sleeve

    under = backs[0] if what == "back" else np.full_like(faces["2C"], 255)
    for sleeve in (((680, 340), (1400, 560), 170), ((690, 250), (1400, 80), 170)):
        img, _ = table_with_a_sleeve([faces[c] for c in ("2C", "5D", "9S")], under, sleeve)
        res = recognizer.recognize(img)
        assert sorted(c.card for c in res.cards) == ["2C", "5D", "9S"], [c.to_json() for c in res.cards]
