"""The third-card rule as pure functions of the cards on the layout.

Every other part (coup engine, emulated shoe, odds) asks these functions,
so the tableau is written down exactly once.
"""

from __future__ import annotations

from enum import StrEnum


class Side(StrEnum):
    PUNTO = "punto"
    BANCO = "banco"


# Banco's total (0-7) -> the values of Punto's third card on which Banco draws.
BANCO_DRAWS_ON = {
    0: frozenset(range(10)),
    1: frozenset(range(10)),
    2: frozenset(range(10)),
    3: frozenset(range(10)) - {8},
    4: frozenset(range(2, 8)),
    5: frozenset(range(4, 8)),
    6: frozenset({6, 7}),
    7: frozenset(),
}


def punto_draws(punto_total: int) -> bool:
    """Punto draws a third card on 0-5 and stands on 6-7 (naturals never reach here)."""
    return punto_total <= 5


def banco_draws(banco_total: int, punto_third_value: int | None) -> bool:
    """Banco's rule: on 0-5 if Punto stood, else the tableau row for Banco's total."""
    if punto_third_value is None:
        return banco_total <= 5
    return punto_third_value in BANCO_DRAWS_ON.get(banco_total, frozenset())


def next_side(punto_values: list[int], banco_values: list[int]) -> Side | None:
    """Which side the next card goes to, or None when the coup is complete.

    Takes the card values (0-9) dealt so far to each side, in order.
    """
    np, nb = len(punto_values), len(banco_values)
    # The first four cards alternate P, B, P, B.
    if np + nb < 4:
        return Side.PUNTO if np == nb else Side.BANCO
    pt = sum(punto_values[:2]) % 10
    bt = sum(banco_values[:2]) % 10
    if pt >= 8 or bt >= 8:
        return None  # a natural ends the coup
    if np == 2 and punto_draws(pt):
        return Side.PUNTO
    if nb == 2:
        third = punto_values[2] if np == 3 else None
        if banco_draws(bt, third):
            return Side.BANCO
    return None
