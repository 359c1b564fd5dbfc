"""Card codes and values, as the seeds give them (/work/shared/seeds)."""

from __future__ import annotations

import pytest

from shoe_daemon.game.cards import (
    ALL_CODES,
    RANKS,
    SUITS,
    Card,
    CardCodeError,
    hand_total,
    parse_card,
    parse_cards,
)

# Seeds 000/001/004: A = 1, 2-9 face value, 10 J Q K = 0.
SEED_VALUES = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
               "T": 0, "J": 0, "Q": 0, "K": 0}


def test_52_distinct_codes():
    assert len(ALL_CODES) == 52 == len(set(ALL_CODES))
    assert {c[0] for c in ALL_CODES} == set(RANKS) and {c[1] for c in ALL_CODES} == set(SUITS)


@pytest.mark.parametrize("code", ALL_CODES)
def test_every_code_parses_to_its_value(code):
    card = parse_card(code)
    assert card.code == code
    assert card.value == SEED_VALUES[code[0]]
    assert parse_card(code) is card  # interned


@pytest.mark.parametrize("token,code", [("9h", "9H"), ("10S", "TS"), ("10d", "TD"), (" ac ", "AC")])
def test_lenient_spellings(token, code):
    assert parse_card(token).code == code


@pytest.mark.parametrize("token", ["", "9", "9X", "1H", "ZZ", "10", "9HH", "AS9"])
def test_bad_codes(token):
    with pytest.raises(CardCodeError) as info:
        parse_card(token, 7)
    assert info.value.token == token and info.value.position == 7
    assert "position 7" in str(info.value)


def test_parse_cards_positions_count_from_one():
    assert [c.code for c in parse_cards("AS  9h\n10C")] == ["AS", "9H", "TC"]
    with pytest.raises(CardCodeError) as info:
        parse_cards("AS 9H XX KD")
    assert info.value.position == 3 and info.value.token == "XX"


def _hand(*codes):
    return [parse_card(c) for c in codes]


def test_seed_examples():
    # Seed 000 and 001: 8+8+9 = 25 -> 5.  Seed 004: 8+7 = 5 and A+10+10 = 1.  Seed 000: 22 and 12 count 2.
    assert hand_total(_hand("8H", "8S", "9C")) == 5
    assert hand_total(_hand("8D", "7C")) == 5
    assert hand_total(_hand("AS", "TH", "KD")) == 1
    assert hand_total(_hand("9S", "3H")) == 2


def test_card_is_frozen():
    with pytest.raises(AttributeError):
        parse_card("AS").rank = "K"
    assert Card("A", "S") == parse_card("AS")
