"""The coup state machine and its result: naturals, winners, pairs, the seeds' examples."""

from __future__ import annotations

import dataclasses
import json

import pytest

from shoe_daemon.game.cards import parse_card
from shoe_daemon.game.coup import Coup, CoupComplete, CoupResult, Winner, coup_result, play_coup
from shoe_daemon.game.tableau import Side
from tests.game.dealing import coup_of


def cards(text):
    return [parse_card(c) for c in text.split()]


def result_of(text) -> CoupResult:
    result, used = play_coup(text.split())
    assert used == len(text.split())
    return result


def test_seed_example_8_8_9_on_banco():
    # P 2, B 8, P 2, B 8: Punto 4 draws 7 (-> 1); Banco 6 draws on Punto's 7: 8+8+9 = 25 -> 5.
    r = result_of("2H 8H 2S 8S 7C 9D")
    assert r.banco_total == 5 and r.punto_total == 1 and r.winner is Winner.BANCO
    assert [c.code for c in r.banco] == ["8H", "8S", "9D"]
    assert r.banco_pair is True and r.punto_pair is True and r.cards == 6


def test_dealing_order_p_b_p_b():
    coup = Coup()
    assert [coup.add(c) for c in cards("AS 2S 3S 4S")] == [Side.PUNTO, Side.BANCO, Side.PUNTO, Side.BANCO]
    assert [c.code for c in coup.punto] == ["AS", "3S"] and [c.code for c in coup.banco] == ["2S", "4S"]


@pytest.mark.parametrize("text,winner,natural_total", [
    ("8H 9S TH KS", Winner.BANCO, 9),    # natural 8 against natural 9
    ("9H 8S KH TS", Winner.PUNTO, 9),
    ("9H 9S TH KS", Winner.TIE, 9),      # 9 against 9
    ("8H 8S KH KS", Winner.TIE, 8),      # 8 against 8
    ("4H 2S 4S 5D", Winner.PUNTO, 8),    # natural 8 against 7: no third card for anyone
    ("2H 4S 3D 5D", Winner.BANCO, 9),    # Punto 5 would draw, but Banco's natural 9 ends the coup
    ("AH 6S 7D AC", Winner.PUNTO, 8),    # A+7 = 8 is a natural; Banco 7 gets no card
])
def test_naturals(text, winner, natural_total):
    r = result_of(text)
    assert r.natural is True and r.natural_total == natural_total and r.winner is winner
    assert r.cards == 4


def test_three_card_eight_is_not_a_natural():
    # Punto 3+0 draws 5 -> 8 on three cards; Banco 6+0 stands on Punto's 5.
    r = result_of("3H 6S TH KS 5D")
    assert r.punto_total == 8 and r.natural is False and r.natural_total is None
    assert r.winner is Winner.PUNTO


@pytest.mark.parametrize("text,pp,bp", [
    ("KH QS KS JH", True, False),   # Punto K K: a pair; Banco Q J: both worth 0, not a pair
    ("QH JS QD JD", True, True),
    ("TH JS KH TS", False, False),  # Punto T K, Banco J T
    ("AH 7S AD 7C", True, True),
    ("AH 7S 2D 7C", False, True),
])
def test_pairs_are_by_rank(text, pp, bp):
    cs = text.split()
    # Dealing order P B P B: Punto's pair is cards 1 and 3.
    result, _ = play_coup([*cs, "TD", "TC", "TD", "TC"])
    assert result.punto_pair is pp and result.banco_pair is bp


def test_coup_complete_refuses_a_card():
    coup = Coup(cards("8H 8S KH KS"))
    with pytest.raises(CoupComplete):
        coup.add(parse_card("AS"))


def test_cards_in_dealing_order_and_side_of():
    coup = Coup(cards("2H 3S 2S 3D 9C"))   # Punto 4 draws 9 (-> 3); Banco 6 stands on a third 9
    assert coup.complete and coup.count == 5
    assert [c.code for c in coup.cards()] == ["2H", "3S", "2S", "3D", "9C"]
    coup = Coup(cards("2H 3S 2S TD 7C 9D"))   # B 3 on Punto's 7: draws
    assert [c.code for c in coup.cards()] == ["2H", "3S", "2S", "TD", "7C", "9D"]
    assert [coup.side_of(i) for i in range(6)] == [Side.PUNTO, Side.BANCO] * 2 + [Side.PUNTO, Side.BANCO]
    coup = Coup(cards("3H 2S 3S TD 9D"))       # Punto stood on 6, Banco 2 draws
    assert coup.side_of(4) is Side.BANCO and len(coup.banco) == 3


def test_reset_returns_the_surplus():
    coup = Coup(cards("2H 3S 2S 3D 9C"))
    surplus = coup.reset(cards("8H 3S 2S 3D 9C"))  # Punto 8+2 = 0 draws the 9; Banco 6 stands
    assert coup.count == 5 and surplus == []
    surplus = coup.reset(cards("7H 3S 2S 3D 9C"))  # 7+2 = 9: a natural, the fifth card has no place
    assert coup.count == 4 and coup.natural and [c.code for c in surplus] == ["9C"]


def test_result_requires_a_complete_coup():
    with pytest.raises(ValueError, match="not complete"):
        coup_result(Coup(cards("AS 2S")))


def test_play_coup_runs_out():
    with pytest.raises(ValueError, match="ran out"):
        play_coup(["AS", "2S", "3S"])


def test_result_record_is_frozen_and_json_ready():
    r = result_of("2H 8H 2S 8S 7C 9D")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.winner = Winner.TIE  # type: ignore[misc]
    d = r.to_dict()
    assert list(d) == [f.name for f in dataclasses.fields(CoupResult)]
    assert d["punto"] == ["2H", "2S", "7C"] and d["winner"] == "banco" and d["coup_id"] == "1-1"
    assert json.loads(json.dumps(d)) == d


@pytest.mark.parametrize("pt", range(10))
@pytest.mark.parametrize("bt", range(10))
def test_winner_compares_totals(pt, bt):
    # Build complete coups whose totals are pt and bt by appending to standing hands.
    coup = Coup(coup_of(pt, bt, 0, 0))
    while not coup.complete:
        coup.add(coup_of(0, 0, 0, 0)[0])  # value 0 keeps the totals
    r = coup_result(coup)
    assert (r.punto_total, r.banco_total) == (pt, bt)
    assert r.winner is (Winner.PUNTO if pt > bt else Winner.BANCO if bt > pt else Winner.TIE)
