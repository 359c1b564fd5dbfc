"""The enrolled deck's index corners' region (DeckModel.corner_box): fitted by enrolment to a small
(peek) index, kept standard for a standard or jumbo one; what the deck's features look at; how the
model file keeps it (an older file loads with the standard region, a damaged one is refused)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shoe_daemon.vision.deck import CORNER, CORNER_BOX, DeckModel, DeckModelError, corner_part, features
from tests.vision.conftest import _require
from tests.vision.test_deck_corner import DIM, _mlp


def _index_edges(faces, scale):
    """(right, bottom) edge in px of each face's index (rank and suit glyphs), both corners."""
    from shoe_daemon.vision import index
    from shoe_daemon.vision.enroll import clean_card

    out = []
    for face in faces.values():
        card, ink, white = clean_card(face)
        for c in (0, 2):
            r = index.read_corner(card, ink, white, c, features=False, scale=scale)
            if r.rank_box is not None and r.suit_box is not None:
                b = r.rank_box.union(r.suit_box)
                out.append((b.x1, b.y1))
    return np.array(out)


def test_enrolment_fits_the_corner_region_to_a_peek_index():
    """font-peek's index is a fifth of the standard region: the region fitted to it holds the index
    of (nearly) every face with a margin, and is far smaller; Kennard's standard and jumbo indices
    keep the standard region (their models' features are unchanged)."""
    _require()
    from shoe_daemon.vision import enroll, index
    from shoe_daemon.vision.cardart import design_faces

    peek = design_faces("font-peek")
    box = enroll.corner_box(peek, index.PEEK_SCALE)
    assert box[0] * box[1] < 0.3 * CORNER_BOX[0] * CORNER_BOX[1], box
    edges = _index_edges(peek, index.PEEK_SCALE)
    inside = (edges[:, 0] <= box[0] * index.CW) & (edges[:, 1] <= box[1] * index.CH)
    assert len(edges) == 104 and inside.mean() >= 0.95, (box, edges.max(axis=0))
    # A margin past the far edges: the detector's outline is off by a few pixels.
    assert box[1] * index.CH >= np.median(edges[:, 1]) + 4
    for design, scale in (("kennard", 1.0), ("kennard-jumbo", index.JUMBO_SCALE)):
        assert enroll.corner_box(design_faces(design), scale) == CORNER_BOX, design


def test_the_fitted_region_shows_the_peek_index_on_more_of_the_corner_maps():
    """At the standard region a peek index is a few cells of the 12 x 20 corner maps; at the fitted
    one, several times as many (what the deck and corner models learn from). Cards whose pips lie
    outside the standard region, so that it shows the index alone."""
    _require()
    from shoe_daemon.vision import enroll, index
    from shoe_daemon.vision.cardart import design_faces

    peek = design_faces("font-peek")
    box = enroll.corner_box(peek, index.PEEK_SCALE)
    cells = {}
    for name, b in (("standard", CORNER_BOX), ("fitted", box)):
        x = np.stack([features(*enroll.clean_card(peek[c]), b) for c in ("AS", "2S", "2H", "3C", "AD")])
        cells[name] = float((corner_part(x[:, 0], 0) > 0.3).sum(axis=1).mean())
    assert cells["fitted"] >= 3 * cells["standard"] and cells["standard"] > 0, cells


def test_the_model_reads_features_at_its_own_region():
    rng = np.random.default_rng(3)
    card = rng.integers(0, 256, (224, 160, 3), dtype=np.uint8)
    ink = rng.random((224, 160), dtype=np.float32)
    white = np.float32([230, 235, 240])
    box = (0.16, 0.15)
    model = DeckModel(_mlp(DIM), np.zeros((52, 2, DIM), np.float32), corner_box=box)
    assert np.array_equal(model.features(card, ink, white), features(card, ink, white, box))
    assert not np.array_equal(model.features(card, ink, white), features(card, ink, white))
    plain = DeckModel(_mlp(DIM), np.zeros((52, 2, DIM), np.float32))
    assert plain.corner_box == CORNER_BOX and np.array_equal(plain.features(card, ink, white),
                                                             features(card, ink, white))  # fmt: skip
    assert model.features(card, ink, white).shape == (2, DIM) and CORNER == (12, 20)


def test_the_model_file_keeps_the_region_and_older_files_load_with_the_standard_one():
    model = DeckModel(_mlp(DIM), np.zeros((52, 2, DIM), np.float32), corner_box=(0.1609, 0.1507))
    data = json.loads(json.dumps(model.to_json()))
    assert DeckModel.from_json(data).corner_box == (0.1609, 0.1507)
    old = {k: v for k, v in data.items() if k != "corner_box"}
    assert DeckModel.from_json(old).corner_box == CORNER_BOX


@pytest.mark.parametrize("box", [[0.9, 0.15], [0.16, 0.0], [0.16], [0.16, 0.15, 0.2], "0.16x0.15", [0.16, None],
                                 None, {"w": 0.16}])  # fmt: skip
def test_a_damaged_region_is_refused_in_one_line(box, tmp_path):
    from shoe_daemon.vision.deck import load_deck_model

    data = DeckModel(_mlp(DIM), np.zeros((52, 2, DIM), np.float32)).to_json()
    data["corner_box"] = box
    path = tmp_path / "deck.json"
    path.write_text(json.dumps(data))
    with pytest.raises(DeckModelError) as err:
        load_deck_model(path)
    msg = str(err.value)
    assert "damaged deck model" in msg and "corner_box" in msg and "\n" not in msg, msg
