"""Every cell of the third-card rule, against a table written out here from the seeds.

The table below is copied by hand from seed 001 (English) and checked against
seeds 000 (Russian) and 004 (Finnish); it is not computed from the code under
test. Each cell is checked three ways: ``tableau.banco_draws``, the coup state
machine (``Coup``) and the dealing engine.
"""

from __future__ import annotations

import pytest

from shoe_daemon.game.coup import Coup
from shoe_daemon.game.engine import DealingEngine
from shoe_daemon.game.tableau import BANCO_DRAWS_ON, Side, banco_draws, next_side, punto_draws
from tests.game.dealing import coup_of

# Banco's total on two cards (rows) x the value of Punto's third card (columns),
# and the last column for "Punto stood on two cards". D = Banco draws, S = stands.
#   seed 001: 3 -> draws on 0-1-2-3-4-5-6-7-9, stands on 8; 4 -> 2-7; 5 -> 4-7; 6 -> 6-7;
#   7 -> always stands; 0-2 -> always draws; Punto stood -> draws on 5 or less.
SEED_TABLEAU = """
          0 1 2 3 4 5 6 7 8 9  stood
banco 0   D D D D D D D D D D  D
banco 1   D D D D D D D D D D  D
banco 2   D D D D D D D D D D  D
banco 3   D D D D D D D D S D  D
banco 4   S S D D D D D D S S  D
banco 5   S S S S D D D D S S  D
banco 6   S S S S S S D D S S  S
banco 7   S S S S S S S S S S  S
"""

# Seed 001: Punto draws on 0-5 and stands on 6-7 (8-9 are naturals).
SEED_PUNTO = {0: "D", 1: "D", 2: "D", 3: "D", 4: "D", 5: "D", 6: "S", 7: "S"}


def _cells() -> dict[tuple[int, int | None], bool]:
    lines = [ln.split() for ln in SEED_TABLEAU.strip().splitlines()]
    header = lines[0]
    cells = {}
    for row in lines[1:]:
        assert row[0] == "banco"
        bt = int(row[1])
        for col, mark in zip(header, row[2:], strict=True):
            cells[(bt, None if col == "stood" else int(col))] = mark == "D"
    return cells


CELLS = _cells()


def test_the_table_is_complete():
    assert len(CELLS) == 8 * 11
    assert {bt for bt, _ in CELLS} == set(range(8))


@pytest.mark.parametrize("bt,third", sorted(CELLS, key=lambda k: (k[0], -1 if k[1] is None else k[1])))
def test_banco_draws_function(bt, third):
    assert banco_draws(bt, third) is CELLS[(bt, third)]


def test_banco_draws_on_table_matches():
    for bt in range(8):
        assert BANCO_DRAWS_ON[bt] == {v for v in range(10) if CELLS[(bt, v)]}


@pytest.mark.parametrize("pt", range(8))
def test_punto_draws_function(pt):
    assert punto_draws(pt) is (SEED_PUNTO[pt] == "D")


def _punto_two(pt):
    """Two values with total pt that do not make a natural."""
    return (pt, 0)


@pytest.mark.parametrize("bt", range(8))
@pytest.mark.parametrize("third", [*range(10), None])
def test_every_cell_through_the_coup_and_the_engine(bt, third):
    draws = CELLS[(bt, third)]
    punto_totals = range(6) if third is not None else (6, 7)
    for pt in punto_totals:
        p1, p2 = _punto_two(pt)
        b1, b2 = bt, 0
        cards = coup_of(p1, b1, p2, b2)
        if third is not None:
            cards += coup_of(third, 0, 0, 0)[:1]  # Punto's third card
        # The coup state machine alone.
        coup = Coup(cards)
        assert coup.next_side is (Side.BANCO if draws else None), (pt, bt, third)
        # The engine: the snapshot after the last card announces Banco's draw, or the result.
        engine = DealingEngine()
        for card in cards:
            step = engine.deal(card)
        assert step.snapshot.next_side is (Side.BANCO if draws else None)
        assert (step.result is None) is draws
        if draws:
            step = engine.deal(coup_of(4, 0, 0, 0)[0])
            assert step.result is not None and len(step.result.banco) == 3
        assert len(step.result.punto) == (3 if third is not None else 2)


@pytest.mark.parametrize("pt", range(10))
@pytest.mark.parametrize("bt", [0, 3, 7])
def test_punto_on_two_cards(pt, bt):
    coup = Coup(coup_of(pt, bt, 0, 0))
    if pt >= 8:
        assert coup.complete and coup.natural
    elif SEED_PUNTO[pt] == "D":
        assert coup.next_side is Side.PUNTO
    else:
        assert coup.next_side is (Side.BANCO if bt <= 5 else None)


@pytest.mark.parametrize("pt", range(10))
@pytest.mark.parametrize("bt", range(10))
def test_naturals_end_the_coup(pt, bt):
    coup = Coup(coup_of(pt, bt, 0, 0))
    if pt >= 8 or bt >= 8:
        assert coup.next_side is None and coup.natural and coup.count == 4
    else:
        assert not coup.natural


def test_next_side_opening_and_draws():
    assert next_side([], []) is Side.PUNTO
    assert next_side([1], []) is Side.BANCO
    assert next_side([1], [2]) is Side.PUNTO
    assert next_side([1, 2], [2]) is Side.BANCO
    assert next_side([1, 2], [2, 2]) is Side.PUNTO       # Punto 3 draws
    assert next_side([1, 2, 8], [2, 1]) is None          # Banco 3, Punto's third 8: stands
    assert next_side([1, 2, 9], [2, 1]) is Side.BANCO    # Banco 3, third 9: draws
    assert next_side([3, 3], [2, 2]) is Side.BANCO       # Punto stood on 6, Banco 4 draws
    assert next_side([3, 3], [3, 3]) is None             # both on 6
    assert next_side([4, 4], [0, 1]) is None             # natural 8
