"""Settlement in exact decimals, and the table limits."""

from __future__ import annotations

import dataclasses
import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoe_daemon.game.settle import (
    Bet,
    BetError,
    BetKind,
    BetLimitError,
    Limit,
    Outcome,
    TableLimits,
    format_amount,
    parse_bets,
    settle,
)
from shoe_daemon.game.tableau import Side

D = Decimal

# Seed 001: Punto and Banco 5-300, Egalite 1-50; "a bet in any box as well as the total of
# all bets of one kind must be within the set range".
SEED_001 = TableLimits.from_config(
    {
        "punto": {"min": 5, "max": 300, "table_max": 300},
        "banco": {"min": 5, "max": 300, "table_max": 300},
        "egalite": {"min": 1, "max": 50, "table_max": 50},
    }
)
# Seed 004 (Helsinki): Punto and Banco 20-2000, Egalite 20-200 (no table total given).
SEED_004 = TableLimits.from_config(
    {"punto": {"min": 20, "max": 2000}, "banco": {"min": "20", "max": "2000"}, "tie": {"min": 20, "max": 200}}
)


def one(bet: Bet, winner) -> object:
    (settled,) = settle([bet], winner).bets
    return settled


# --------------------------------------------------------------------------- every branch


def test_seed_example_20_on_banco_returns_39():
    s = one(Bet(1, "banco", 20), "banco")
    assert (s.outcome, s.won, s.returned) == (Outcome.WIN, D(19), D(39))
    assert s.to_dict()["returned"] == "39" and s.to_dict()["won"] == "19"


def test_banco_win_takes_the_commission_off_the_win():
    s = one(Bet(2, "banco", 5), "banco")
    assert (s.won, s.returned) == (D("4.75"), D("9.75"))
    assert s.to_dict() == {
        "seat": 2, "kind": "banco", "amount": "5", "outcome": "win", "won": "4.75", "returned": "9.75", "net": "4.75",
    }


def test_punto_win_pays_even_money():
    s = one(Bet(3, "punto", 100), "punto")
    assert (s.outcome, s.won, s.returned, s.net) == (Outcome.WIN, D(100), D(200), D(100))


def test_tie_win_pays_eight_to_one():
    s = one(Bet(4, "tie", 10), "tie")
    assert (s.outcome, s.won, s.returned) == (Outcome.WIN, D(80), D(90))


@pytest.mark.parametrize("kind", ["punto", "banco"])
def test_punto_and_banco_push_on_a_tie(kind):
    s = one(Bet(5, kind, 25), "tie")
    assert (s.outcome, s.won, s.returned, s.net) == (Outcome.PUSH, D(0), D(25), D(0))


@pytest.mark.parametrize(
    ("kind", "winner"),
    [("punto", "banco"), ("banco", "punto"), ("tie", "punto"), ("tie", "banco")],
)
def test_losing_bets_lose(kind, winner):
    s = one(Bet(6, kind, 30), winner)
    assert (s.outcome, s.won, s.returned, s.net) == (Outcome.LOSE, D(0), D(0), D(-30))
    assert s.to_dict()["net"] == "-30"


def test_a_coup_with_bets_on_every_seat_and_totals():
    bets = [
        {"seat": 1, "kind": "banco", "amount": 20},
        {"seat": 2, "kind": "punto", "amount": "50"},
        {"seat": 3, "kind": "tie", "amount": "5"},
        {"seat": 4, "kind": "banco", "amount": D("7.5")},
        {"seat": 7, "kind": "punto", "amount": 10},
    ]
    s = settle(bets, "banco", SEED_001)
    assert [b.outcome for b in s.bets] == [Outcome.WIN, Outcome.LOSE, Outcome.LOSE, Outcome.WIN, Outcome.LOSE]
    assert s.bets[3].won == D("7.125") and s.bets[3].returned == D("14.625")
    assert s.staked == D("92.5")
    assert s.won == D("26.125")
    assert s.returned == D("53.625")  # 39 + 14.625
    assert s.net == D("-38.875")
    d = json.loads(json.dumps(s.to_dict()))
    assert d["winner"] == "banco"
    assert d["totals"] == {"staked": "92.5", "won": "26.125", "returned": "53.625", "net": "-38.875"}
    assert [b["seat"] for b in d["bets"]] == [1, 2, 3, 4, 7]


def test_winner_spellings():
    assert settle([], Side.BANCO).winner is BetKind.BANCO
    assert settle([], "Punto").winner is BetKind.PUNTO
    assert settle([], "egalite").winner is BetKind.TIE
    assert settle([], BetKind.TIE).to_dict()["totals"]["staked"] == "0"
    with pytest.raises(ValueError, match="unknown coup winner 'dragon'"):
        settle([], "dragon")


def test_results_are_frozen():
    s = settle([Bet(1, "punto", 5)], "punto")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.won = D(0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.bets[0].returned = D(0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Bet(1, "punto", 5).amount = D(6)


# --------------------------------------------------------------------------- bet validation


@pytest.mark.parametrize("seat", [0, 8, -1])
def test_seat_outside_1_to_7_is_rejected(seat):
    with pytest.raises(BetError, match=f"seat {seat}: no such seat, seats are 1-7"):
        Bet(seat, "punto", 5)


@pytest.mark.parametrize("amount", [0, -5, "0", "-0.01"])
def test_non_positive_amounts_are_rejected(amount):
    with pytest.raises(BetError, match="seat 2: banco bet .* is not a positive amount"):
        Bet(2, "banco", amount)


@pytest.mark.parametrize("amount", [5.0, "abc", "NaN", "Infinity", True, None])
def test_inexact_or_non_numeric_amounts_are_rejected(amount):
    with pytest.raises(BetError, match="seat 1"):
        Bet(1, "tie", amount)


def test_bad_kind_and_missing_fields():
    with pytest.raises(BetError, match="seat 3: unknown bet kind 'player'"):
        Bet(3, "player", 5)
    with pytest.raises(BetError, match="'amount' is missing"):
        parse_bets([{"seat": 1, "kind": "punto"}])
    assert parse_bets([Bet(1, "punto", 5), {"seat": 2, "kind": "TIE", "amount": "1"}])[1].kind is BetKind.TIE


# --------------------------------------------------------------------------- limits


def test_above_box_maximum_names_seat_kind_and_limit():
    with pytest.raises(BetLimitError) as e:
        SEED_001.check([Bet(3, "banco", 350)])
    assert "seat 3: banco bet 350 is above the table maximum 300" in str(e.value)
    (v,) = [v for v in e.value.violations if v.limit == "max"]
    assert (v.seat, v.kind, v.amount, v.bound) == (3, BetKind.BANCO, D(350), D(300))
    assert v.to_dict()["bound"] == "300"


def test_below_box_minimum():
    (v,) = SEED_001.validate([Bet(5, "punto", 4)])
    assert v.message == "seat 5: punto bet 4 is below the table minimum 5"
    (v,) = SEED_004.validate([Bet(1, "tie", 10)])
    assert v.message == "seat 1: tie bet 10 is below the table minimum 20"


def test_bets_of_one_kind_in_one_box_are_added_up():
    box, total = SEED_001.validate([Bet(2, "tie", 30), Bet(2, "tie", 30)])
    assert box.message == "seat 2: tie bet 60 is above the table maximum 50"
    assert total.message == "tie bets total 60 (seat 2) is above the table maximum 50 for all tie bets"
    assert SEED_001.validate([Bet(2, "tie", 30), Bet(2, "punto", 30)]) == ()


def test_table_total_of_one_kind():
    bets = [Bet(1, "banco", 200), Bet(4, "banco", 150), Bet(2, "punto", 300)]
    (v,) = SEED_001.validate(bets)
    assert v.seat is None and v.limit == "table_max" and v.amount == D(350)
    assert v.message == "banco bets total 350 (seats 1, 4) is above the table maximum 300 for all banco bets"
    # No table total configured: only the box limits.
    assert SEED_004.validate([Bet(s, "banco", 2000) for s in range(1, 8)]) == ()


def test_every_violation_is_reported_and_settle_checks_limits():
    bets = [Bet(1, "punto", 301), Bet(2, "tie", D("0.5")), Bet(3, "banco", 100)]
    with pytest.raises(BetLimitError) as e:
        settle(bets, "punto", SEED_001)
    assert [v.limit for v in e.value.violations] == ["max", "min", "table_max"]
    assert "seat 1: punto bet 301 is above the table maximum 300" in str(e.value)
    assert "seat 2: tie bet 0.5 is below the table minimum 1" in str(e.value)
    settle(bets, "punto")  # without limits: settled as given


def test_optional_minimum_chip():
    limits = TableLimits(Limit(5, 300), Limit(5, 300), Limit(1, 50), chip="2.5")
    (v,) = limits.validate([Bet(6, "banco", 11)])
    assert v.message == "seat 6: banco bet 11 is not a multiple of the smallest chip 2.5"
    assert limits.validate([Bet(6, "banco", "12.5")]) == ()


def test_limits_from_config_errors():
    good = {"punto": {"min": 5, "max": 300}, "banco": {"min": 5, "max": 300}, "tie": {"min": 1, "max": 50}}
    assert TableLimits.from_config(good).tie.table_max is None
    with pytest.raises(ValueError, match="missing the 'tie' section"):
        TableLimits.from_config({k: good[k] for k in ("punto", "banco")})
    with pytest.raises(ValueError, match="banco: limit max 3 is below min 5"):
        TableLimits.from_config({**good, "banco": {"min": 5, "max": 3}})
    with pytest.raises(ValueError, match="unknown table limit keys"):
        TableLimits.from_config({**good, "dragon": {}})
    with pytest.raises(ValueError, match="unknown keys"):
        TableLimits.from_config({**good, "punto": {"min": 5, "max": 300, "maxi": 1}})
    with pytest.raises(ValueError, match="floats are not exact"):
        Limit(5.5, 300)
    assert SEED_001.to_dict()["tie"] == {"min": "1", "max": "50", "table_max": "50"}


# --------------------------------------------------------------------------- properties

amounts = st.decimals(min_value=D("0.01"), max_value=D("1000000"), places=2, allow_nan=False, allow_infinity=False)
seats = st.integers(1, 7)


@given(seats, amounts)
def test_punto_win_returns_exactly_twice_the_stake(seat, amount):
    s = one(Bet(seat, "punto", amount), "punto")
    assert s.returned == 2 * amount and s.won == amount


@given(seats, amounts)
def test_banco_win_returns_exactly_stake_times_1_95(seat, amount):
    s = one(Bet(seat, "banco", amount), "banco")
    assert s.returned == amount * D("1.95")
    assert s.won == amount * 19 / 20  # exact at these magnitudes
    assert s.won + amount == s.returned


@given(seats, amounts)
def test_tie_win_returns_nine_times_the_stake(seat, amount):
    assert one(Bet(seat, "tie", amount), "tie").returned == 9 * amount


@settings(max_examples=60)
@given(
    st.lists(st.tuples(seats, st.sampled_from(list(BetKind)), amounts), max_size=14),
    st.sampled_from(list(BetKind)),
)
def test_settlement_conserves_money(raw, winner):
    bets = [Bet(*b) for b in raw]
    s = settle(bets, winner)
    assert s.staked == sum((b.amount for b in bets), D(0))
    assert s.returned == sum((b.returned for b in s.bets), D(0))
    assert s.net == s.returned - s.staked
    for b in s.bets:
        assert b.returned == (b.bet.amount + b.won if b.outcome is Outcome.WIN else b.bet.amount if b.outcome is Outcome.PUSH else 0)
        assert b.outcome is (Outcome.WIN if b.bet.kind is winner else Outcome.PUSH if winner is BetKind.TIE else Outcome.LOSE)
    d = s.to_dict()
    assert all(Decimal(x["returned"]) == b.returned for x, b in zip(d["bets"], s.bets, strict=True))


def test_huge_amounts_stay_exact():
    big = D("123456789012345678901234567890.01")
    s = one(Bet(1, "banco", big), "banco")
    assert s.to_dict()["returned"] == "240740738574074073857407407385.5195"


@pytest.mark.parametrize(
    ("value", "text"),
    [(D("39.00"), "39"), (D("4.750"), "4.75"), (D("1E+3"), "1000"), (D("-0"), "0"), (D("0.0000005"), "0.0000005")],
)
def test_format_amount(value, text):
    assert format_amount(value) == text
