"""The enrolled deck's corner model (DeckModel.corner_mlp): one clear index read by the generic
reader and by the deck's model of that index alone, agreeing (DeckModel.corner_agree) on a card
whose centre and other corner lie under a sleeve or a hand; how enrolment trains it and sets its
floors, and how the model file keeps it (an older file without it reads as before)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shoe_daemon.game.cards import ALL_CODES
from shoe_daemon.vision.deck import COLOUR, CORNER, GRID, DeckModel, DeckModelError, DeckReading, corner_part
from shoe_daemon.vision.enroll import AGREE_CORNER, choose_agreement
from shoe_daemon.vision.model import MLP

QUAD = np.float32([[100, 100], [240, 100], [240, 296], [100, 296]])
DIM = GRID[0] * GRID[1] + 2 * CORNER[0] * CORNER[1] + 3 * COLOUR[0] * COLOUR[1]
UNREAD = "not sure it is a face-up card (no index the centre confirms; rank glyphs in 1 corners)"


def _mlp(dim: int, sure_of: str | None = None) -> MLP:
    """A 52-way MLP whose output does not depend on its input: ``sure_of`` at ~0.99, else uniform."""
    b2 = np.zeros(52, np.float32)
    if sure_of is not None:
        b2[ALL_CODES.index(sure_of)] = 9.0
    return MLP(tuple(ALL_CODES), np.zeros(dim, np.float32), np.ones(dim, np.float32),
               np.zeros((dim, 4), np.float32), np.zeros(4, np.float32), np.zeros((4, 52), np.float32), b2)  # fmt: skip


def _decide(corner_agree=(0.9, 0.95), guess=("7S", 0.97, 0), deck_corner=("7S", 0.98), deck_card="7C",
            p_deck=0.6, match=0.1, pip=("unclear", None)):  # fmt: skip
    from shoe_daemon.vision.enrolled import decide, with_generic_guess
    from shoe_daemon.vision.pips import PipReading
    from shoe_daemon.vision.quad import Candidate

    deck = DeckModel(mlp=None, centroids=None, min_p=0.99, min_match=0.5, corner_agree=corner_agree)
    dr = DeckReading(deck_card, p_deck, 7, p_deck, match, np.zeros(52))
    dr = with_generic_guess(dr, UNREAD, guess, deck_corner)
    return decide(deck, Candidate(QUAD, 0.95, 0.9, 1.4), PipReading(*pip), UNREAD, dr, None)


def test_one_clear_index_read_alike_by_both_readers_is_the_card():
    """A 7S under a sleeve: its top-left index clear, the whole-face model unsure (it reads the
    sleeve too) and naming another suit; the generic reader and the corner model both read 7S."""
    res = _decide()
    assert res.status == "ok" and res.card == "7S" and res.value == 7, res
    assert "one clear index" in res.reason and res.confidence == pytest.approx(0.97)


@pytest.mark.parametrize("case", ["older model", "corner model another card", "corner model unsure",
                                  "generic unsure", "no corner model", "deck sure of another", "centre says 6"])  # fmt: skip
def test_no_corner_agreement_no_card(case):
    kw = {}
    if case == "older model":
        kw["corner_agree"] = None        # enrolled before the corner model: read as before
    elif case == "corner model another card":
        kw["deck_corner"] = ("7C", 0.99)
    elif case == "corner model unsure":
        kw["deck_corner"] = ("7S", 0.9)
    elif case == "generic unsure":
        kw["guess"] = ("7S", 0.85, 0)
    elif case == "no corner model":
        kw["deck_corner"] = None
    elif case == "deck sure of another":
        kw.update(p_deck=0.999, match=0.8)     # the whole face, like this deck's 7C, sure of it
    elif case == "centre says 6":
        kw["pip"] = ("pips", 6)
    res = _decide(**kw)
    assert isinstance(res, str) or res.card != "7S", res


def _unsure_7s(status="unknown"):
    """The generic reader's reading of a 7S whose index it read, but not its centre (a sleeve over
    the pips): 7S its best guess at 0.9 x 0.97."""
    from shoe_daemon.vision.recognizer import CardResult

    rank, suit = np.full(13, 0.01), np.full(4, 0.01)
    rank[6], suit[0] = 0.9, 0.97
    return CardResult(None, None, status, 0.5, QUAD.tolist(), None, "unsure: centre: broken or merged pips", rank, suit)


@pytest.mark.parametrize("case", ["generic sure", "corner names another card", "no clear corner"])
def test_the_corner_reading_joins_a_generic_reading_only_when_unsure_and_of_the_same_card(case):
    """A generic reading of the whole card is the guess; the clear corner's reading plays a part
    only where the generic reader was unsure and that corner names its guess."""
    from dataclasses import replace

    from shoe_daemon.vision.enrolled import with_generic_guess

    generic, corner = _unsure_7s(), ("7S", 0.97, 0)
    if case == "generic sure":
        generic = replace(generic, card="7S", value=7, status="ok")
    elif case == "corner names another card":
        corner = ("7C", 0.97, 0)
    else:
        corner = None
    dr = with_generic_guess(DeckReading("7C", 0.6, 7, 0.6, 0.1, np.zeros(52)), generic, corner, ("7S", 0.99))
    assert dr.generic == "7S" and dr.corner is None


def test_an_unsure_generic_reading_whose_clear_index_both_readers_name_is_the_card():
    """A 7S under the sleeve's edge: its centre's pips broken (the generic reader unsure, its guess
    7S), its top-left index clear; the corner model reads that index 7S too: the card. Without the
    corner model's reading beside the generic guess it stayed unknown (own seed 880100, kennard)."""
    from shoe_daemon.vision.enrolled import decide, with_generic_guess
    from shoe_daemon.vision.pips import PipReading
    from shoe_daemon.vision.quad import Candidate

    deck = DeckModel(mlp=None, centroids=None, min_p=0.99, min_match=0.5, corner_agree=(0.8, 0.9))
    generic = _unsure_7s()
    dr = with_generic_guess(DeckReading("7C", 0.6, 7, 0.6, 0.1, np.zeros(52)), generic, ("7S", 0.97, 0), ("7S", 0.99))
    res = decide(deck, Candidate(QUAD, 0.95, 0.9, 1.4), PipReading("unclear", None), generic, dr, None)
    assert res.status == "ok" and res.card == "7S" and "one clear index" in res.reason, res
    # The centre's pip count still vetoes: 5 pips seen, not a 7.
    res = decide(deck, Candidate(QUAD, 0.95, 0.9, 1.4), PipReading("pips", 5), generic, dr, None)
    assert res.card != "7S", res


def test_the_corner_model_reads_the_corner_named():
    feats = np.zeros((2, DIM), np.float32)
    corner_part(feats[:1], 1)[:] = 1.0                 # the bottom-right corner's ink
    assert corner_part(feats[:1], 0).sum() == 0 and corner_part(feats[:1], 1).shape == (1, CORNER[0] * CORNER[1])
    mlp = _mlp(CORNER[0] * CORNER[1])
    mlp.w1[:, 0] = 1.0                                 # hidden unit 0: the corner's total ink
    mlp.w2[0, ALL_CODES.index("QH")] = 1.0
    model = DeckModel(_mlp(DIM), np.zeros((52, 2, DIM), np.float32), corner_mlp=mlp)
    assert model.read_corner(feats, 1)[0] == "QH" and model.read_corner(feats, 1)[1] > 0.99
    assert model.read_corner(feats, 0)[1] < 0.1        # the empty corner: uniform
    assert DeckModel(_mlp(DIM), np.zeros((52, 2, DIM), np.float32)).read_corner(feats, 0) is None


def test_the_model_file_keeps_the_corner_model_and_older_files_load_without_it():
    model = DeckModel(_mlp(DIM), np.zeros((52, 2, DIM), np.float32), corner_mlp=_mlp(CORNER[0] * CORNER[1], "QH"),
                      corner_agree=(0.95, 0.99))  # fmt: skip
    data = json.loads(json.dumps(model.to_json()))
    back = DeckModel.from_json(data)
    assert back.corner_agree == (0.95, 0.99)
    assert back.read_corner(np.zeros((2, DIM), np.float32), 0)[0] == "QH"
    old = {k: v for k, v in data.items() if k not in ("corner_mlp", "corner_agree")}
    loaded = DeckModel.from_json(old)
    assert loaded.corner_mlp is None and loaded.corner_agree is None
    with pytest.raises(DeckModelError, match="corner_agree"):
        DeckModel.from_json({**old, "corner_agree": [0.9, 0.99]})        # floors without a model
    with pytest.raises(DeckModelError, match="corner model"):
        DeckModel.from_json({**data, "corner_mlp": _mlp(DIM).to_json()})  # the whole face's shape


def test_enrolment_sets_the_corner_floors_above_every_wrong_agreement():
    right = [(0.97, 0.99, True)] * 20 + [(0.92, 0.85, True)] * 5
    assert choose_agreement(right, AGREE_CORNER) == (0.9, 0.8)      # the lowest floors, a step up
    a, b = choose_agreement(right + [(0.96, 0.93, False)], AGREE_CORNER)
    assert not (0.96 >= a and 0.93 >= b) and (0.97 >= a and 0.99 >= b)
    assert min(AGREE_CORNER) >= 0.7
    # One wrong agreement with the corner model at 0.75 lifts its floor above it.
    a, b = choose_agreement(right + [(0.97, 0.75, False)], AGREE_CORNER)
    assert b > 0.75 and 0.97 >= a and 0.99 >= b


def test_enrolment_trains_a_corner_model_on_each_corner():
    """Rows whose top-left corner shows one pattern per card: the corner model learns it from
    both corners' samples (the bottom-right corner shows it too) and reads held-out ones."""
    from shoe_daemon.vision.enroll import QUICK, train_corner_model

    rng = np.random.default_rng(5)
    protos = rng.random((52, CORNER[0] * CORNER[1])).astype(np.float32)
    n = 52 * 8
    y1 = np.arange(n) % 52
    x = rng.normal(0, 0.05, (2 * n, DIM)).astype(np.float32)
    for k in (0, 1):
        corner_part(x[0::2], k)[:] += protos[y1]
    y = np.repeat(y1, 2)
    held = np.repeat(np.arange(n) % 7 == 0, 2)
    mlp, acc = train_corner_model(x, y, held, QUICK)
    assert acc > 0.95 and mlp.w1.shape[0] == CORNER[0] * CORNER[1]


def test_calibration_sees_frames_with_a_hand_for_the_corner_floors(faces):
    """The corner floors are set on cards half under a sleeve, which the conditions' own hands
    show too rarely (kennard, font-peek: no floors set): calibration adds frames with a hand over a
    card, of each condition; the frames that set the deck's own thresholds are the same as before."""
    from shoe_daemon.vision.enroll import calibration_runs, frame_conditions, frame_generator

    runs = calibration_runs(faces, 6, 1)
    assert [(n, hand) for _g, n, hand in runs] == [(2, False)] * 3 + [(1, True)] * 3
    for gen, _n, hand in runs[3:]:
        f = gen.frame(0, hand=hand or None)
        assert f.params["hand"] and any(c.occluded_corner is not None for c in f.face_up)
    assert [g.condition.name for g, _n, _h in runs[3:]] == [c.name for _n, c in frame_conditions()]
    gen = runs[0][0]
    assert np.array_equal(gen.frame(1, hand=None).image, frame_generator(faces, frame_conditions()[0][1], 101).frame(1).image)


def test_the_corner_model_learns_to_read_an_index_beside_a_sleeve():
    """The corner box holds the index and the corner of the centre's pips; a sleeve across the
    card hides the pips. Trained on whole corners alone (a jumbo index: none sleeved), the model
    leans on the pips and misreads a sleeved corner; with half its corners sleeved again
    (enroll.sleeve_over), it reads the index, and sleeved maps keep that index as it was."""
    from shoe_daemon.vision.deck import CORNER_BOX
    from shoe_daemon.vision.enroll import QUICK, SLEEVE_CLEAR, sleeve_over, train_corner_model

    yy, xx = np.mgrid[0:CORNER[1], 0:CORNER[0]]
    index = (((xx + 0.5) / CORNER[0] * CORNER_BOX[0] < SLEEVE_CLEAR[0])
             & ((yy + 0.5) / CORNER[1] * CORNER_BOX[1] < SLEEVE_CLEAR[1])).ravel()  # fmt: skip
    rng = np.random.default_rng(7)
    # Each card: a faint index of its own, and beyond it bold ink of its own, edged like a sleeve
    # (a sleeve's edge across the pips looks like some card's pips).
    faint = rng.random((52, index.size)).astype(np.float32) * index * 0.5
    bold = sleeve_over(np.zeros((52, index.size), np.float32), rng)

    def rows(n, seed):
        r = np.random.default_rng(seed)
        y1 = np.arange(n) % 52
        x = r.normal(0, 0.08, (2 * n, DIM)).astype(np.float32)
        for k in (0, 1):
            corner_part(x[0::2], k)[:] += faint[y1] + bold[y1]
        return x, np.repeat(y1, 2)

    x, y = rows(52 * 12, 1)
    held = np.repeat(np.arange(len(y) // 2) % 7 == 0, 2)
    test_x, test_y = rows(52 * 4, 2)
    maps = corner_part(test_x[0::2], 0)
    sleeved = sleeve_over(maps, np.random.default_rng(3))
    changed = sleeved != maps
    assert not changed[:, index].any() and changed.any(axis=1).mean() > 0.3
    assert (sleeved[changed] > 0.1).all() and (sleeved[changed] < 1.1).all()
    right = {}
    for scale in (1.0, 2.0):      # a standard index: sleeved samples; a jumbo index: none
        mlp, _acc = train_corner_model(x, y, held, QUICK, scale)
        hidden = changed.any(axis=1)      # the maps a sleeve reaches into
        right[scale] = float((mlp.proba(sleeved[hidden]).argmax(axis=1) == test_y[0::2][hidden]).mean())
    assert right[1.0] > 0.6 and right[1.0] > right[2.0] + 0.1, right


def _card_with_indices(top_left_bgr, bottom_right_bgr) -> np.ndarray:
    """A white 160 x 224 rectified card with a small peek-sized index blob in each index corner."""
    import cv2

    card = np.full((224, 160, 3), 245, np.uint8)
    cv2.rectangle(card, (4, 4), (11, 22), top_left_bgr, -1)
    cv2.rectangle(card, (148, 201), (155, 219), bottom_right_bgr, -1)
    return card


def test_index_maps_show_a_peek_index_close_up_with_its_red():
    """A peek index is 4 x 6 cells of the corner box's ink map, which knows no red (font-peek's
    corner model read 2D as 2S): the close-up maps give it more cells, and its red ink apart."""
    from shoe_daemon.vision import index
    from shoe_daemon.vision.deck import INDEX_INPUTS, features, index_maps

    card = _card_with_indices((40, 30, 200), (30, 30, 30))      # red top left, black bottom right
    white = index.white_balance(card)
    ink = index.ink_map(card, white)
    maps = index_maps(card, ink, white)
    assert maps.shape == (2, INDEX_INPUTS)
    area = CORNER[0] * CORNER[1]
    tl_ink, tl_red, br_ink, br_red = maps[0, :area], maps[0, area:], maps[1, :area], maps[1, area:]
    assert tl_red.max() > 0.5 and br_red.max() < 0.05             # red told from black
    assert (tl_ink > 0.3).sum() > 2 * (corner_part(features(card, ink, white)[:1], 0) > 0.3).sum()
    # The bottom-right corner is read turned half round, as the top left of the card turned.
    turned = np.ascontiguousarray(card[::-1, ::-1])
    assert np.allclose(index_maps(turned, np.ascontiguousarray(ink[::-1, ::-1]), white)[0], maps[1], atol=1e-5)
    assert np.allclose(br_ink, tl_ink, atol=0.15)                 # the same blob, turned


def test_a_peek_decks_corner_model_reads_the_index_close_up_too():
    """A corner model as wide as a corner map and its index maps reads the rectified card's index
    maps beside the corner (without the card: no reading); the file keeps it; the older width reads
    as before."""
    from shoe_daemon.vision import index
    from shoe_daemon.vision.deck import CORNER_INPUTS, INDEX_INPUTS

    card = _card_with_indices((40, 30, 200), (30, 30, 30))
    white = index.white_balance(card)
    rectified = (card, index.ink_map(card, white), white)
    mlp = _mlp(CORNER_INPUTS + INDEX_INPUTS)
    mlp.w1[CORNER_INPUTS + CORNER_INPUTS:, 0] = 1.0     # hidden unit 0: the index's red ink
    mlp.w2[0, ALL_CODES.index("2D")] = 5.0
    model = DeckModel(_mlp(DIM), np.zeros((52, 2, DIM), np.float32), corner_mlp=mlp, corner_agree=(0.9, 0.8))
    feats = np.zeros((2, DIM), np.float32)
    assert model.corner_reads_index() and model.read_corner(feats, 0) is None
    assert model.read_corner(feats, 0, rectified)[0] == "2D"      # the red index
    assert model.read_corner(feats, 1, rectified)[1] < 0.1        # the black one: uniform
    back = DeckModel.from_json(json.loads(json.dumps(model.to_json())))
    assert back.corner_reads_index() and back.read_corner(feats, 0, rectified)[0] == "2D"
    older = DeckModel(_mlp(DIM), np.zeros((52, 2, DIM), np.float32), corner_mlp=_mlp(CORNER_INPUTS, "QH"))
    assert not older.corner_reads_index() and older.read_corner(feats, 0)[0] == "QH"


def test_enrolment_gives_a_peek_decks_corner_model_the_index_close_up():
    """Cards told apart by their index maps alone (the corner maps are noise): the corner model
    trained with them reads held-out cards; the sleeve over half the training corners never
    reaches them (the index lies inside SLEEVE_CLEAR)."""
    from shoe_daemon.vision.deck import CORNER_INPUTS, INDEX_BOX, INDEX_INPUTS
    from shoe_daemon.vision.enroll import QUICK, SLEEVE_CLEAR, train_corner_model

    assert INDEX_BOX[0] <= SLEEVE_CLEAR[0] and INDEX_BOX[1] <= SLEEVE_CLEAR[1]
    rng = np.random.default_rng(11)
    protos = rng.random((52, INDEX_INPUTS)).astype(np.float32)
    n = 52 * 8
    y1 = np.arange(n) % 52
    x = rng.normal(0, 0.05, (2 * n, DIM)).astype(np.float32)
    maps = np.stack([protos[y1], protos[y1]], axis=1) + rng.normal(0, 0.05, (n, 2, INDEX_INPUTS)).astype(np.float32)
    held = np.repeat(np.arange(n) % 7 == 0, 2)
    mlp, acc = train_corner_model(x, np.repeat(y1, 2), held, QUICK, 0.6, maps)
    assert mlp.w1.shape[0] == CORNER_INPUTS + INDEX_INPUTS and acc > 0.95
    plain, plain_acc = train_corner_model(x, np.repeat(y1, 2), held, QUICK, 0.6)
    assert plain.w1.shape[0] == CORNER_INPUTS and plain_acc < 0.2


@pytest.fixture(scope="module")
def peek():
    from shoe_daemon.vision.cardart import design_faces

    return design_faces("font-peek")


def _rectified(face: np.ndarray, height: float = 1.0):
    """A face rectified from an outline that covers ``height`` of it (a card under a sleeve: its
    hidden end set at a card's proportions, a fifth short)."""
    from shoe_daemon.vision import index

    a = face[:, :, 3:4] / 255.0
    bgr = (face[:, :, :3] * a + 255 * (1 - a)).astype(np.uint8)
    h, w = bgr.shape[:2]
    card = index.rectify(bgr, np.float32([[0, 0], [w, 0], [w, height * h], [0, height * h]]))
    white = index.white_balance(card)
    return card, index.ink_map(card, white), white


@pytest.mark.parametrize("code", ["2D", "TS", "8S"])
def test_the_index_close_up_is_framed_by_the_index_the_generic_reader_found(peek, code):
    """An outline fitted a fifth short stretches the index: framed by where the generic reader
    found it (rank and suit, at the deck's scale), the close-up maps are those of the well fitted
    card; a fixed part of the corner is not (font-peek's TS under a sleeve, its outline 20 % short,
    read TC by the corner model; own seed 880650, frame 98)."""
    from shoe_daemon.vision.deck import index_maps
    from shoe_daemon.vision.enroll import index_boxes

    whole, short = _rectified(peek[code]), _rectified(peek[code], 0.8)
    boxes = [index_boxes(*r, 0.6) for r in (whole, short)]
    assert all(b[0] is not None for b in boxes)
    framed = [index_maps(*r, b)[0] for r, b in zip((whole, short), boxes, strict=True)]
    fixed = [index_maps(*r)[0] for r in (whole, short)]
    assert np.corrcoef(*framed)[0, 1] > 0.9 and np.corrcoef(*fixed)[0, 1] < 0.7


def test_enrolment_samples_give_a_peek_deck_its_index_close_ups(peek):
    from shoe_daemon.vision.deck import INDEX_INPUTS
    from shoe_daemon.vision.enroll import training_samples

    x, y, maps = training_samples(peek, 1, 5, scale=0.6)
    assert maps.shape == (52, 2, INDEX_INPUTS) and len(x) == len(y) == 104
    assert (maps.reshape(52, 2, 2, -1)[:, :, 1].max(axis=(1, 2)) > 0.3).sum() >= 20      # red indices: H, D
    assert training_samples(peek, 1, 5)[2] is None          # a deck read at the standard or jumbo scale


def test_the_corner_routes_generic_floor_steps_from_0_8_to_0_85():
    """Under a sleeve the generic reader reads a clear index 0.83-0.89 sure where the corner model
    is 0.99-1.0 (font-peek's calibration; own seed 880655 frame 62: a 6S at 0.89, a TC at 0.85):
    with no wrong agreement its floor is 0.85, not 0.9; a wrong one still lifts it above."""
    from shoe_daemon.vision.enroll import AGREE_CORNER_GENERIC

    right = [(0.97, 0.99, True)] * 20 + [(0.89, 1.0, True), (0.86, 1.0, True)]
    assert choose_agreement(right, AGREE_CORNER, AGREE_CORNER_GENERIC) == (0.85, 0.8)
    assert choose_agreement(right, AGREE_CORNER) == (0.9, 0.8)          # the whole-face route's steps
    a, b = choose_agreement(right + [(0.88, 0.99, False)], AGREE_CORNER, AGREE_CORNER_GENERIC)
    assert not (0.88 >= a and 0.99 >= b) and 0.97 >= a and 0.99 >= b
    assert min(AGREE_CORNER_GENERIC) == 0.8
