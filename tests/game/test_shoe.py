"""Shoe composition: counts by identity and by value, foreign cards, the read-only state."""

from __future__ import annotations

import dataclasses
import json

import pytest

from shoe_daemon.game.cards import ALL_CODES, Card, CardCodeError, parse_card
from shoe_daemon.game.shoe import Shoe, ShoeState, as_card, card_index


@pytest.mark.parametrize("decks", [4, 6, 8])
def test_full_shoe(decks):
    shoe = Shoe(decks)
    st = shoe.state(1)
    assert st.cards == st.remaining == 52 * decks
    # Value 0 is T J Q K: 16 cards a deck; every other value 4 a deck.
    assert st.remaining_by_value == (16 * decks,) + (4 * decks,) * 9
    assert list(st.remaining_by_code) == list(ALL_CODES)
    assert set(st.remaining_by_code.values()) == {decks}


@pytest.mark.parametrize("decks", [0, 1, 2, 5, 7, 9, "8", True, None])
def test_bad_decks(decks):
    with pytest.raises(ValueError, match="decks"):
        Shoe(decks)


def test_take_and_put_back():
    shoe = Shoe(4)
    i = card_index("7H")
    assert all(shoe.take(i) for _ in range(4))
    st = shoe.state(1)
    assert st.remaining_by_code["7H"] == 0 and st.remaining_by_value[7] == 4 * 4 - 4
    assert shoe.take(i) is False            # a fifth 7H: the shoe never held it
    assert shoe.seen(i) == 5
    st = shoe.state(1)
    assert st.remaining_by_code["7H"] == 0 and st.remaining_by_value[7] == 12 and st.remaining == 208 - 4
    shoe.put_back(i)                        # undoing the impossible one changes no count
    assert shoe.state(1).remaining == 208 - 4
    shoe.put_back(i)
    st = shoe.state(1)
    assert st.remaining_by_code["7H"] == 1 and st.remaining_by_value[7] == 13 and st.remaining == 205


def test_card_index_and_as_card():
    assert card_index("AS") == 0 and card_index(parse_card("KC")) == 51
    assert card_index(Card("9", "H")) == ALL_CODES.index("9H")   # a Card not from parse_card
    assert as_card(Card("9", "H")) is parse_card("9H")
    with pytest.raises(CardCodeError):
        as_card("1X")
    with pytest.raises(TypeError):
        as_card(9)


def test_state_is_frozen_and_json_ready():
    st = Shoe(6).state(3, coups=2, cut_card_out=True, burn_due=1, burn_card=parse_card("7D"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        st.remaining = 0  # type: ignore[misc]
    with pytest.raises(TypeError):
        st.remaining_by_code["AS"] = 0  # type: ignore[index]
    d = st.to_dict()
    assert list(d) == [f.name for f in dataclasses.fields(ShoeState)]
    assert d["burn_card"] == "7D" and isinstance(d["remaining_by_value"], list)
    assert json.loads(json.dumps(d)) == d
