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


def _decide(agree, generic, deck_card="7S", p_deck=0.97, match=0.2, pips=7):
    from shoe_daemon.vision.pips import PipReading
    from shoe_daemon.vision.quad import Candidate
    from shoe_daemon.vision.recognizer import Recognizer, _with_generic_guess

    deck = DeckModel(mlp=None, centroids=None, min_p=0.99, min_match=0.5, agree=agree)
    rec = Recognizer({}, deck=deck)
    probs = np.zeros(52)
    dr = DeckReading(deck_card, p_deck, 7, p_deck, match, probs)
    dr = _with_generic_guess(dr, generic)
    pip = PipReading("pips", pips)
    return rec._decide_deck(Candidate(QUAD, 0.95, 0.9, 1.4), pip, generic, dr, None)


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
    assert choose_agreement(right) == (0.9, 0.95)            # nothing wrong seen: the lowest floors, a step up
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
