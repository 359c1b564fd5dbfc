"""An enrolled deck and the generic reader naming the same card (DeckModel.agree): when it is taken,
how enrolment sets its floors, and how the model file keeps them."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from shoe_daemon.game.cards import RANKS, SUITS
from shoe_daemon.vision.deck import DeckModel, DeckModelError, DeckReading
from shoe_daemon.vision.enroll import choose_agreement

QUAD = np.float32([[100, 100], [240, 100], [240, 296], [100, 296]])


def _generic(code: str, p_rank: float, p_suit: float, status: str = "unknown"):
    from shoe_daemon.vision.recognizer import CardResult

    rank = np.full(13, (1 - p_rank) / 12)
    rank[RANKS.index(code[0])] = p_rank
    suit = np.full(4, (1 - p_suit) / 3)
    suit[SUITS.index(code[1])] = p_suit
    return CardResult(None, None, status, 0.5, QUAD.tolist(), None, "unsure", rank, suit)


def _decide(agree, generic, deck_card="7S", p_deck=0.97, match=0.2, pips=7, corner=None):
    from shoe_daemon.vision.enrolled import decide, with_generic_guess
    from shoe_daemon.vision.pips import PipReading
    from shoe_daemon.vision.quad import Candidate

    deck = DeckModel(mlp=None, centroids=None, min_p=0.99, min_match=0.5, agree=agree)
    probs = np.zeros(52)
    dr = DeckReading(deck_card, p_deck, 7, p_deck, match, probs)
    dr = with_generic_guess(dr, generic, corner)
    pip = PipReading("pips", pips)
    return decide(deck, Candidate(QUAD, 0.95, 0.9, 1.4), pip, generic, dr, None)


def test_two_readers_naming_one_card_give_it_whatever_the_likeness():
    res = _decide((0.9, 0.95), _generic("7S", 0.99, 0.95))
    assert res.status == "ok" and res.card == "7S", res
    assert "agree" in res.reason
    assert res.confidence == pytest.approx(min(0.99 * 0.95, 0.97))


@pytest.mark.parametrize("case", ["no floors", "generic unsure", "deck unsure", "other card", "centre says 6"])
def test_no_agreement_no_card(case):
    kw = {"agree": (0.9, 0.95), "generic": _generic("7S", 0.99, 0.95)}
    if case == "no floors":
        kw["agree"] = None              # a model enrolled before: the likeness gate alone
    elif case == "generic unsure":
        kw["generic"] = _generic("7S", 0.99, 0.85)
    elif case == "deck unsure":
        kw["p_deck"] = 0.93
    elif case == "other card":
        kw["deck_card"] = "7C"
    elif case == "centre says 6":
        kw["pips"] = 6
    res = _decide(**kw)
    assert isinstance(res, str) or res.card is None, res


def test_enrolment_sets_the_floors_above_every_wrong_agreement_then_a_step_stricter():
    right = [(0.99, 0.999, True)] * 20 + [(0.93, 0.97, True)] * 5
    assert choose_agreement(right) == (0.9, 0.7)             # nothing wrong seen: the lowest floors, a step up
    wrong = right + [(0.92, 0.97, False)]
    a, b = choose_agreement(wrong)
    assert (a, b) == (0.9, 0.99)                             # deck >= 0.98 shuts it out; a step up each
    assert not (0.92 >= a and 0.97 >= b)                     # the wrong agreement is not let through
    assert (0.99 >= a and 0.999 >= b)                        # the sure right ones are
    assert choose_agreement([(0.99, 0.9999, False)]) is None  # nothing right to keep: the route stays off
    assert choose_agreement([]) is None


def test_the_model_file_keeps_its_floors_and_older_files_have_none():
    from shoe_daemon.vision.deck import COLOUR, CORNER, GRID
    from shoe_daemon.vision.model import MLP

    dim = GRID[0] * GRID[1] + 2 * CORNER[0] * CORNER[1] + 3 * COLOUR[0] * COLOUR[1]
    mlp = MLP(tuple(str(i) for i in range(52)), np.zeros(dim, np.float32), np.ones(dim, np.float32),
              np.zeros((dim, 4), np.float32), np.zeros(4, np.float32), np.zeros((4, 52), np.float32),
              np.zeros(52, np.float32))  # fmt: skip
    model = DeckModel(mlp, np.zeros((52, 2, dim), np.float32), agree=(0.9, 0.98))
    data = json.loads(json.dumps(model.to_json()))
    assert DeckModel.from_json(data).agree == (0.9, 0.98)
    data.pop("agree")
    assert DeckModel.from_json(data).agree is None
    with pytest.raises(DeckModelError, match="agree"):
        DeckModel.from_json({**data, "agree": [0.9]})
    assert replace(model, agree=None).to_json()["agree"] is None


def _corner_rows(*corners):
    """(corners, slots, rp, sp) of index corners given as (rank, p_rank, not-a-glyph, suit, p_suit) or None."""
    from types import SimpleNamespace

    corner_objs, slots, rp, sp = [], {"rank": [], "suit": []}, [], []
    for c in corners:
        corner_objs.append(SimpleNamespace(clutter=0.0, red=float("nan")))
        if c is None:
            slots["rank"].append(None)
            slots["suit"].append(None)
            continue
        rank, p_rank, reject, suit, p_suit = c
        row = np.full(14, (1 - p_rank - reject) / 12)
        row[RANKS.index(rank)], row[13] = p_rank, reject
        slots["rank"].append(len(rp))
        rp.append(row)
        srow = np.full(5, (1 - p_suit - 0.01) / 3)
        srow[SUITS.index(suit)], srow[4] = p_suit, 0.01
        slots["suit"].append(len(sp))
        sp.append(srow)
    return corner_objs, slots, np.array(rp), np.array(sp)


def test_a_whole_clear_index_is_the_generic_guess_when_the_centre_is_hidden():
    """A card under a sleeve: one corner's index clear, the centre and the other corner hidden, the
    deck sure of the same card but its likeness low (the sleeve is no part of the face)."""
    from shoe_daemon.vision.evidence import clear_corner_guess

    unread = "not sure it is a face-up card (no index the centre confirms; rank glyphs in 1 corners)"
    guess = clear_corner_guess(*_corner_rows(("7", 0.98, 0.01, "S", 0.97), None), reject=0.5)
    assert guess is not None and guess[0] == "7S" and guess[1] == pytest.approx(0.98 / 0.99 * 0.97 / 0.99)
    res = _decide((0.9, 0.95), unread, p_deck=0.97, match=0.1, corner=guess)
    assert res.status == "ok" and res.card == "7S" and "agree" in res.reason, res
    # Without the corner's guess the low likeness leaves the deck out: nothing is read.
    assert isinstance(_decide((0.9, 0.95), unread, p_deck=0.97, match=0.1), str)
    # The corner naming another card, or the centre showing another count: no card.
    other = clear_corner_guess(*_corner_rows(("7", 0.98, 0.01, "C", 0.97), None), reject=0.5)
    assert isinstance(_decide((0.9, 0.95), unread, p_deck=0.97, match=0.1, corner=other), str)
    assert isinstance(_decide((0.9, 0.95), unread, p_deck=0.97, match=0.1, corner=guess, pips=6), str)


@pytest.mark.parametrize("case", ["no clear glyph", "other corner other rank", "other corner other suit", "no suit"])
def test_no_clear_index_no_corner_guess(case):
    from shoe_daemon.vision.evidence import clear_corner_guess

    first, second = ("7", 0.98, 0.01, "S", 0.97), None
    if case == "no clear glyph":
        first = ("7", 0.7, 0.25, "S", 0.97)         # a glyph, but not clearly one
    elif case == "other corner other rank":
        second = ("T", 0.6, 0.3, "S", 0.9)          # half refused, still read, and another rank
    elif case == "other corner other suit":
        second = ("7", 0.9, 0.05, "C", 0.8)
    corners, slots, rp, sp = _corner_rows(first, second)
    if case == "no suit":
        slots["suit"][0] = None
    assert clear_corner_guess(corners, slots, rp, sp, reject=0.5) is None


def test_a_deck_half_sure_counts_when_the_generic_reader_is_sure_and_nothing_wrong_was_seen():
    """A peek index: the deck model names the right card at 0.5-0.95, the generic reader (its centre
    confirming the rank) at 0.97-0.98. Calibration with no wrong agreement lets the deck's floor
    down to 0.7; one wrong agreement of a half-sure deck puts it back above."""
    right = [(0.98, 0.72, True)] * 10 + [(0.99, 0.999, True)] * 20
    assert choose_agreement(right) == (0.9, 0.7)
    res = _decide((0.9, 0.7), _generic("7S", 0.99, 0.985), p_deck=0.72)
    assert res.status == "ok" and res.card == "7S", res
    a, b = choose_agreement(right + [(0.985, 0.75, False)])
    assert b > 0.75 and (a, b) == (0.9, 0.9)


def _peek_index(red: float):
    """(corners, slots, rp, sp) of one clear peek index, a 9 surely and its 5-7 px suit pip read
    spades 0.72, diamonds 0.27 (own seed 889309 frame 91, font-peek nominal: a 9D under a sleeve),
    its ink's redness ``red``; the other corner hidden."""
    from types import SimpleNamespace

    rank = np.full(14, 0.0)
    rank[RANKS.index("9")] = 1.0
    suit = np.array([0.705, 0.0, 0.27, 0.013, 0.012])    # S H D C, not a pip
    corners = [SimpleNamespace(clutter=0.0, red=red), SimpleNamespace(clutter=0.0, red=float("nan"))]
    return corners, {"rank": [0, None], "suit": [0, None]}, rank[None], suit[None]


def test_a_clear_index_guess_takes_the_ink_colour_as_a_whole_card_does():
    """The suit a peek index's tiny pip alone names gives way to its red ink, as in Recognizer._decide."""
    from shoe_daemon.vision.evidence import clear_corner_guess

    red = clear_corner_guess(*_peek_index(0.60), reject=0.5)
    assert red[0] == "9D" and red[1] > 0.9 and red[2] == 0
    black = clear_corner_guess(*_peek_index(0.0), reject=0.5)
    assert black[0] == "9S" and black[1] > 0.7
    # Ink of another colour (a four-colour deck's blue or green) or not measured tells nothing.
    for other in (-0.5, float("nan")):
        guess = clear_corner_guess(*_peek_index(other), reject=0.5)
        assert guess[0] == "9S" and guess[1] == pytest.approx(0.705 / 0.988)


def test_a_red_clear_index_and_the_corner_model_agree_on_the_card():
    """The deck's corner model reads the 9D's index 9D (0.98): with the ink's colour the generic
    guess is 9D too and the two agree (before, its 9S left the card unread)."""
    from shoe_daemon.vision.enrolled import decide, with_generic_guess
    from shoe_daemon.vision.evidence import clear_corner_guess
    from shoe_daemon.vision.pips import PipReading
    from shoe_daemon.vision.quad import Candidate

    deck = DeckModel(mlp=None, centroids=None, min_p=0.995, min_match=0.4, agree=(0.9, 0.7), corner_agree=(0.85, 0.8))
    dr = DeckReading("9C", 0.55, 9, 0.55, 0.12, np.zeros(52))
    unread = "not sure it is a face-up card (no index the centre confirms; rank glyphs in 1 corners)"
    guess = clear_corner_guess(*_peek_index(0.60), reject=0.5)
    dr = with_generic_guess(dr, unread, guess, ("9D", 0.983))
    pip = PipReading("unclear", 0, "a large blob in one ink (pips run together?)")
    res = decide(deck, Candidate(QUAD, 0.95, 0.9, 1.4), pip, unread, dr, None)
    assert not isinstance(res, str) and res.status == "ok" and res.card == "9D", res
    assert "one clear index" in res.reason
