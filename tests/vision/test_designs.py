"""Registry designs no model was trained on (assets/LICENSES.md): four-colour pips and jumbo courts."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision.conftest import _require
from tests.vision.helpers import match


def _upright(face):
    from shoe_daemon.vision import index

    a = face[:, :, 3:4].astype(np.float32) / 255
    bgr = (face[:, :, :3] * a + 255 * (1 - a)).astype(np.uint8)
    h, w = bgr.shape[:2]
    card = index.rectify(bgr, np.float32([[0, 0], [w, 0], [w, h], [0, h]]))
    white = index.white_balance(card)
    return index.ink_map(card, white), card, white


@pytest.mark.parametrize("design", ["kennard-4colour", "kennard-4colour-jumbo"])
def test_pips_in_a_colour_ink_are_no_picture(design):
    """Blue diamonds and green clubs are coloured like a court's picture, but they are pips."""
    _require()
    from shoe_daemon.vision import pips
    from shoe_daemon.vision.cardart import design_faces

    faces = design_faces(design)
    for code in ("9C", "9D", "7C", "TD", "3D"):
        r = pips.read_pips(*_upright(faces[code]))
        assert r.kind != "picture", (code, r.reason)
        if design == "kennard-4colour":      # standard index: the count is read
            assert r.kind == "pips" and r.count == (10 if code[0] == "T" else int(code[0])), (code, r.reason)
    for code in ("JD", "QC", "KH"):
        assert pips.read_pips(*_upright(faces[code])).kind == "picture", code


def test_jumbo_courts_give_their_value_never_a_wrong_court(recognizer):
    """A jumbo index's J/Q/K is out of the glyph models' experience: value 0, never another court."""
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    gen = FrameGenerator(design_faces("kennard-jumbo"), [design_back("kennard-jumbo")], "nominal", seed=31)
    seen = 0
    for i in range(4):
        f = gen.frame(i, codes=["QH", "JH", "QS", "KD", "JC", "QD"])
        res = recognizer.recognize(f.image, zones=parse_zones(f.zones))
        for t in f.face_up[:6]:
            r = match(res, t)
            if r is None:
                continue
            seen += 1
            assert r.card in (None, t.code) and r.value in (None, 0), (t.code, r.card, r.value, r.reason)
    assert seen >= 6


def _corners(card, ink, white, scale):
    from shoe_daemon.vision import index

    return [index.read_corner(card, ink, white, c, features=False, scale=scale) for c in (0, 2)]


def test_a_jumbo_index_is_found_whole_at_the_jumbo_scale():
    """A jumbo index's strokes are longer than the standard scale's "long line" and its suit lies
    below the standard region; at the jumbo scale the whole rank glyph and the suit are found."""
    _require()
    from shoe_daemon.vision import index
    from shoe_daemon.vision.cardart import design_faces

    faces = design_faces("kennard-jumbo")
    for code in ("TH", "AC", "7S", "QD"):
        ink, card, white = _upright(faces[code])
        standard = _corners(card, ink, white, 1.0)
        # Standard: the 10's strokes and the A's height go as lines or too tall, the Q in pieces,
        # the 7's bar as a line (its stem and suit are found).
        assert any(r.suit_box is None or r.rank_box.h < 35 or r.rank_box.y > 10 for r in standard), code
        for r in _corners(card, ink, white, index.JUMBO_SCALE):
            assert r.rank_box is not None and r.suit_box is not None, (code, r.reason)
            assert r.rank_box.h >= 38 and r.suit_box.y >= r.rank_box.y1, (code, r.rank_box, r.suit_box)


def test_a_pip_beside_a_large_index_is_not_joined_to_its_rank():
    """Beside a jumbo rank the centre's first pip lies within the glyph's line: it is no "10"."""
    from shoe_daemon.vision.index import JUMBO_SCALE, Blob, find_index

    nine, pip, suit = Blob(9, 8, 27, 46, 465), Blob(44, 20, 14, 16, 150), Blob(7, 61, 31, 33, 549)
    rank, found_suit, _ = find_index([nine, pip, suit], 80, 112, scale=JUMBO_SCALE)
    assert rank == nine and found_suit == suit
    # The two digits of a jumbo "10" (same top and baseline, close) still join.
    one, zero = Blob(9, 8, 8, 46, 200), Blob(21, 8, 20, 46, 400)
    rank, _, _ = find_index([one, zero, suit], 80, 112, scale=JUMBO_SCALE)
    assert (rank.x, rank.x1) == (9, 41)


def test_a_jumbo_index_reaching_among_the_pips_is_no_pip():
    """The centre is counted without the index's own glyphs (found in the corners)."""
    _require()
    from shoe_daemon.vision import index, pips
    from shoe_daemon.vision.cardart import design_faces

    faces = design_faces("kennard-jumbo")
    for code in ("9C", "7D", "5H", "3C"):
        ink, card, white = _upright(faces[code])
        assert pips.read_pips(ink, card, white).kind == "unclear", code
        boxes = []
        for c, r in zip((0, 2), _corners(card, ink, white, index.JUMBO_SCALE), strict=True):
            for b in (r.rank_box, r.suit_box):
                boxes.append(b if c == 0 else index.Blob(index.CW - b.x1, index.CH - b.y1, b.w, b.h, b.area))
        got = pips.read_pips(ink, card, white, tuple(boxes))
        assert (got.kind, got.count) == ("pips", int(code[0])), (code, got.reason)


def _read_frames(recognizer, design, seed, frames, codes=None):
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    gen = FrameGenerator(design_faces(design), [design_back(design)], "nominal", seed=seed)
    out = []
    for i in range(frames):
        f = gen.frame(i, codes=codes) if codes else gen.frame(i)
        res = recognizer.recognize(f.image, zones=parse_zones(f.zones))
        out += [(t.code, match(res, t)) for t in f.face_up]
    return out


@pytest.mark.parametrize("design, seed, frames", [
    ("kennard-jumbo", 5150, 5),     # Kennard's jumbo-index deck
    ("font-peek", 5152, 4),         # a small index close to the corner, in a font no model was trained on
])
def test_an_unseen_index_style_is_read_zero_shot(recognizer, design, seed, frames):
    """Jumbo and peek indices, never trained on: most cards read exactly, none wrongly."""
    _require()
    read = _read_frames(recognizer, design, seed, frames)
    wrong = [(code, r.card) for code, r in read if r is not None and r.card not in (None, code)]
    right = sum(r is not None and r.card == code for code, r in read)
    assert not wrong and right >= 0.7 * len(read), (right, len(read), wrong)


def test_blue_and_green_ink_is_no_black_suit(recognizer):
    """A four-colour deck's blue diamonds and green clubs: their ink's colour is neither red nor
    black, and says nothing of the suit (before, blue ink counted as black: no blue diamond pip
    card was read). Its pip cards are read by their pips (its courts: tests/vision/test_court_suit.py)."""
    _require()
    from shoe_daemon.game.cards import RANK_VALUES

    read = _read_frames(recognizer, "kennard-4colour", 5151, 4, codes=["9D", "7D", "5C", "8C", "3D", "JD"])
    found = [(code, r) for code, r in read if r is not None]
    assert all(r.card in (None, code) and r.value in (None, RANK_VALUES[code[0]])
               for code, r in found), [(c, r.card) for c, r in found]  # fmt: skip
    pip_cards = [(code, r) for code, r in found if code[0] not in "JQK"]
    assert sum(r.card == code for code, r in pip_cards) >= 0.75 * len(pip_cards), [(c, r.reason) for c, r in pip_cards]


def test_black_ink_under_a_colour_cast_is_no_club_hint():
    """A black K of spades blurred into the felt under stress reads slightly green (redness
    -0.15, green above blue): taken as a four-colour deck's green, it read KC. It is not."""
    _require()
    from shoe_daemon.vision import enroll
    from shoe_daemon.vision.cardart import design_faces
    from shoe_daemon.vision.recognizer import Recognizer

    gen = enroll.frame_generator(design_faces("responsive"), enroll.frame_conditions()[1][1], 202)
    f = gen.frame(24)
    truth = next(t for t in f.face_up if t.code == "KS")
    r = match(Recognizer({}).recognize(f.image), truth)
    assert r is None or r.card in (None, "KS"), (r.card, r.reason)


def test_enrolment_measures_the_deck_index_scale():
    """The scale the deck's own faces are read best at: the recogniser reads its corners there first."""
    _require()
    from shoe_daemon.vision import enroll, index
    from shoe_daemon.vision.cardart import design_faces

    assert enroll.index_scale(design_faces("kennard-jumbo")) == index.JUMBO_SCALE
    assert enroll.index_scale(design_faces("kennard")) == 1.0
    assert enroll.index_scale(design_faces("font-peek")) == index.PEEK_SCALE


def test_a_small_court_picture_in_pieces_is_a_picture():
    """A jumbo-index deck's court picture is small: blurred, it breaks into pieces (none large) or
    leaves the middle mostly paper. Its pieces span a picture and fill the middle third: a picture;
    the same deck's pip cards never are."""
    _require()
    from shoe_daemon.vision import index, pips
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator

    gen = FrameGenerator(design_faces("kennard-jumbo"), [design_back("kennard-jumbo")], "nominal", seed=5154)
    kinds = {"court": [], "pips": []}
    for i in range(8):
        f = gen.frame(i, codes=["KD", "JS", "QC", "9H", "7D", "JH"])
        for t in f.face_up[:6]:
            card = index.rectify(f.image, np.float32(t.quad))
            white = index.white_balance(card)
            ink = index.ink_map(card, white)
            kinds["court" if t.code[0] in "JQK" else "pips"].append(pips.read_pips(ink, card, white).kind)
    assert "picture" not in kinds["pips"], kinds
    # (Before the rule: 25 of these 32 courts; after: 30. Two more read as one coloured "pip", an
    # ace, which their J/Q/K index then contradicts: no answer.)
    assert kinds["court"].count("picture") >= 0.85 * len(kinds["court"]), kinds


def test_a_court_picture_in_several_inks_is_no_coloured_pip():
    """Pieces of a blurred court picture (gold and blue) may pass for one or two pips; pips in a
    colour ink are counted only when that ink is one (a four-colour deck's blue or green)."""
    _require()
    from shoe_daemon.vision import index, pips
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator

    as_pips = courts = 0
    for seed in (5153, 5155):
        gen = FrameGenerator(design_faces("kennard-jumbo"), [design_back("kennard-jumbo")], "nominal", seed=seed)
        for i in range(8):
            f = gen.frame(i, codes=["KD", "JS", "QC", "QS", "KH", "JH"])
            for t in f.face_up[:6]:
                card = index.rectify(f.image, np.float32(t.quad))
                white = index.white_balance(card)
                courts += 1
                as_pips += pips.read_pips(index.ink_map(card, white), card, white).kind == "pips"
    # Before the rule: 9 of these 96 courts counted as pips (their index then vetoed them).
    assert courts == 96 and as_pips <= 2, (as_pips, courts)


def test_an_enrolled_deck_gives_a_small_card_value_only_when_as_sure_as_a_card():
    """With the generic reader unsure (a face-up card, nothing read), the deck model's value of a
    small card (under deck.SMALL_WIDTH px) needs the small-card threshold, like its card."""
    _require()
    from types import SimpleNamespace

    from shoe_daemon.vision.deck import SMALL_FLOOR, DeckModel, DeckReading
    from shoe_daemon.vision.enrolled import decide
    from shoe_daemon.vision.pips import PipReading
    from shoe_daemon.vision.recognizer import CardResult

    deck = DeckModel(mlp=None, centroids=None, min_p=0.95, min_match=0.3)
    unread = CardResult(None, None, "unknown", 0.0, [], None, "a face-up card, not read")
    dr = DeckReading("5C", 0.6, 0, 0.983, 0.9, np.zeros(52))
    for width, given in ((70.0, None), (150.0, 0)):
        cand = SimpleNamespace(quad=np.float32([[0, 0], [width, 0], [width, 1.4 * width], [0, 1.4 * width]]))
        got = decide(deck, cand, PipReading("unclear"), unread, dr, [])
        assert got.value == given and got.card is None, (width, got)
    assert SMALL_FLOOR > 0.983


def test_a_card_back_over_a_corner_is_no_coloured_picture():
    """Another card's (blue) back over a 5C's corner is a large coloured blob from the card's edge:
    no picture (before, its value read 0; frame 4 of the benchmark's en-stress-font-peek run)."""
    _require()
    from shoe_daemon.vision import index, pips
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator

    gen = FrameGenerator(design_faces("font-peek"), [design_back("font-peek")], "table-stress", seed=20250642)
    f = gen.frame(4)
    truth = next(t for t in f.face_up if t.code == "5C")
    card = index.rectify(f.image, np.float32(truth.quad))
    white = index.white_balance(card)
    assert pips.read_pips(index.ink_map(card, white), card, white).kind != "picture"


def _centre_kinds(faces, backs, condition, seed, frames, codes):
    """read_pips' kind of every face-up card of ``codes`` on ``frames`` frames: {code: [kind]}."""
    from shoe_daemon.vision import index, pips
    from shoe_daemon.vision.synth import FrameGenerator

    gen = FrameGenerator(faces, backs, condition, seed=seed)
    kinds: dict[str, list[str]] = {}
    for i in range(frames):
        f = gen.frame(i, codes=codes)
        for t in f.face_up[: len(codes)]:
            card = index.rectify(f.image, np.float32(t.quad))
            white = index.white_balance(card)
            kinds.setdefault(t.code, []).append(pips.read_pips(index.ink_map(card, white), card, white).kind)
    return kinds


def test_a_court_picture_on_a_coloured_ground_is_a_picture():
    """The held-out font deck's QD, QS and JH print small figures (none large, a third of the middle
    in ink) on a pale gold ground: read "colour but no picture" and withheld (own seed 884500
    nominal, 24 of 1,589 cards), until the ground counted as filling the middle. A four-colour
    jumbo deck's coloured pips that do not count (the rule's reason: its 9C read value 0) still
    leave the middle mostly paper: never a picture, blurred or not."""
    _require()
    from shoe_daemon.vision import cardart
    from shoe_daemon.vision.train import TEST_FONT

    courts = _centre_kinds(cardart.font_deck(*TEST_FONT), cardart.cardsjs_backs(), "nominal", 884700, 3,
                           ["QD", "QS", "JH", "QD", "QS", "JH"])  # fmt: skip
    assert all(k == "picture" for v in courts.values() for k in v), courts
    faces, back = cardart.design_faces("kennard-4colour-jumbo"), cardart.design_back("kennard-4colour-jumbo")
    for condition in ("nominal", "stress"):
        pip_cards = _centre_kinds(faces, [back], condition, 884701, 4, ["9C", "8D", "6C", "9D", "7C", "6D"])
        assert not any(k == "picture" for v in pip_cards.values() for k in v), (condition, pip_cards)
