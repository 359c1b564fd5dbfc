"""One coup: the cards on the layout and what the tableau wants next.

:class:`Coup` is a small mutable state machine with no I/O: ``add(card)`` puts a
card on the side the rules give it (P, B, P, B, then the third-card rule) and
updates both totals and ``next_side`` (``None`` once the coup is complete).
It has no notion of shoes, alerts or closing; :mod:`shoe_daemon.game.engine`
builds the table's dealing procedure on top of it.

The third-card decisions come from :mod:`shoe_daemon.game.tableau` (written
down once, there) and are precomputed at import into two flat tables, so that a
card costs a couple of tuple lookups.

Read-only outputs, built from a coup by the engine:

* :class:`CoupSnapshot` -- the layout after a card (shoe, coup, cards, totals,
  next side, complete/settled/held/voided, last hand, burn cards due);
* :class:`CoupResult` -- the settled coup (winner, totals, natural, pairs).
"""

from __future__ import annotations

from enum import StrEnum

from shoe_daemon.game.cards import ALL_CODES, Card, parse_card
from shoe_daemon.game.frozen import record
from shoe_daemon.game.tableau import Side, banco_draws, punto_draws

__all__ = [
    "MAX_CARDS",
    "Coup",
    "CoupComplete",
    "CoupResult",
    "CoupSnapshot",
    "Winner",
    "coup_result",
    "play_coup",
]

PUNTO = Side.PUNTO
BANCO = Side.BANCO
MAX_CARDS = 6

# Card value by the id of the interned Card (parse_card always returns the same
# 52 objects, which live as long as the process, so their ids are stable keys).
_VALUE_BY_ID = {id(parse_card(code)): parse_card(code).value for code in ALL_CODES}

# The side of cards 2, 3 and 4 (after 1, 2, 3 cards): P B P B.
_OPENING = (PUNTO, BANCO, PUNTO, BANCO)


def side_at(index: int, punto_cards: int) -> Side:
    """The side of the card at ``index`` (dealing order) of a coup whose Punto has ``punto_cards``:
    P B P B, then Punto's third card if it has one, then Banco's."""
    if index < 4:
        return _OPENING[index]
    if index == 4 and punto_cards == 3:
        return PUNTO
    return BANCO


def _after_four(pt: int, bt: int) -> Side | None:
    if pt >= 8 or bt >= 8:
        return None  # a natural on either side ends the coup
    if punto_draws(pt):
        return PUNTO
    return BANCO if banco_draws(bt, None) else None


# (punto two-card total * 10 + banco two-card total) -> next side after four cards.
_AFTER_FOUR = tuple(_after_four(pt, bt) for pt in range(10) for bt in range(10))
# (banco two-card total * 10 + value of Punto's third card) -> BANCO if Banco draws.
_AFTER_PUNTO_THIRD = tuple(
    BANCO if bt < 8 and banco_draws(bt, v) else None for bt in range(10) for v in range(10)
)


class CoupComplete(ValueError):
    """A card was added to a coup that needs no more cards."""


class Winner(StrEnum):
    PUNTO = "punto"
    BANCO = "banco"
    TIE = "tie"


class Coup:
    """The cards of one coup and the tableau's verdict; mutable, deterministic.

    Attributes (read them, do not assign): ``punto`` and ``banco`` (tuples of
    :class:`Card` in dealing order), ``punto_total``, ``banco_total``,
    ``next_side`` (:class:`Side` or ``None`` when complete), ``count``.
    """

    __slots__ = ("punto", "banco", "punto_total", "banco_total", "next_side", "count")

    def __init__(self, cards=()):
        self.punto: tuple[Card, ...] = ()
        self.banco: tuple[Card, ...] = ()
        self.punto_total = 0
        self.banco_total = 0
        self.next_side: Side | None = PUNTO
        self.count = 0
        for card in cards:
            self.add(card)

    def add(self, card: Card) -> Side:
        """Put ``card`` where the rules want it; returns that side.

        Raises :class:`CoupComplete` if the coup needs no more cards.
        """
        side = self.next_side
        if side is None:
            raise CoupComplete(f"the coup is complete ({self.count} cards); {card} is one too many")
        v = _VALUE_BY_ID.get(id(card))
        if v is None:
            v = card.value
        if side is PUNTO:
            self.punto += (card,)
            self.punto_total = (self.punto_total + v) % 10
        else:
            self.banco += (card,)
            self.banco_total = (self.banco_total + v) % 10
        n = self.count = self.count + 1
        if n < 4:
            self.next_side = _OPENING[n]
        elif n == 4:
            self.next_side = _AFTER_FOUR[self.punto_total * 10 + self.banco_total]
        elif n == 5 and side is PUNTO:
            # Banco's two-card total is still banco_total; v is Punto's third card.
            self.next_side = _AFTER_PUNTO_THIRD[self.banco_total * 10 + v]
        else:
            self.next_side = None
        return side

    def reset(self, cards=()) -> list[Card]:
        """Replay ``cards`` (dealing order) from an empty layout; returns those the coup had no room for."""
        self.punto = self.banco = ()
        self.punto_total = self.banco_total = self.count = 0
        self.next_side = PUNTO
        surplus = []
        for card in cards:
            if self.next_side is None:
                surplus.append(card)
            else:
                self.add(card)
        return surplus

    @property
    def complete(self) -> bool:
        return self.next_side is None

    @property
    def natural(self) -> bool:
        """Either side has 8 or 9 on its first two cards (the coup then has exactly four)."""
        return self.count == 4 and (self.punto_total >= 8 or self.banco_total >= 8)

    def cards(self) -> tuple[Card, ...]:
        """All cards in dealing order: P1 B1 P2 B2 [P3] [B3] (Punto's third always precedes Banco's)."""
        p, b = self.punto, self.banco
        out = []
        for i in range(2):
            if len(p) > i:
                out.append(p[i])
            if len(b) > i:
                out.append(b[i])
        return tuple(out) + p[2:] + b[2:]

    def side_of(self, index: int) -> Side:
        """The side of the card at ``index`` (dealing order)."""
        return side_at(index, len(self.punto))


@record
class CoupSnapshot:
    """The layout after a card: what a display draws and the croupier announces."""

    shoe: int
    coup: int
    coup_id: str
    punto: tuple[Card, ...]
    banco: tuple[Card, ...]
    punto_total: int
    banco_total: int
    next_side: Side | None
    complete: bool
    settled: bool
    held: bool
    voided: bool
    last_hand: bool
    burn_due: int


@record
class CoupResult:
    """A settled coup. ``revision`` is 0, or n after the coup was re-settled n times
    (a correction or a push-back changed it); a later result supersedes an earlier
    one with the same ``coup_id``."""

    shoe: int
    coup: int
    coup_id: str
    punto: tuple[Card, ...]
    banco: tuple[Card, ...]
    punto_total: int
    banco_total: int
    winner: Winner
    natural: bool
    natural_total: int | None
    punto_pair: bool
    banco_pair: bool
    cards: int
    last_hand: bool
    revision: int


def coup_result(
    coup: Coup, shoe: int = 1, number: int = 1, *, last_hand: bool = False, revision: int = 0
) -> CoupResult:
    """The result of a complete coup."""
    if coup.next_side is not None:
        raise ValueError(f"the coup is not complete: a card is due to {coup.next_side.value}")
    p, b = coup.punto, coup.banco
    pt, bt = coup.punto_total, coup.banco_total
    winner = Winner.PUNTO if pt > bt else Winner.BANCO if bt > pt else Winner.TIE
    natural = coup.count == 4 and (pt >= 8 or bt >= 8)
    return CoupResult.make(
        shoe, number, f"{shoe}-{number}", p, b, pt, bt, winner, natural,
        max(pt, bt) if natural else None,
        p[0].rank == p[1].rank, b[0].rank == b[1].rank,
        coup.count, last_hand, revision,
    )


def play_coup(cards) -> tuple[CoupResult, int]:
    """Deal a coup from the front of ``cards`` (Card objects or codes).

    Returns the result and how many cards it used. Raises ValueError if the
    cards run out before the coup is complete.
    """
    coup = Coup()
    for card in cards:
        coup.add(card if isinstance(card, Card) else parse_card(card))
        if coup.next_side is None:
            return coup_result(coup), coup.count
    raise ValueError(f"the cards ran out after {coup.count}; a card is due to {coup.next_side.value}")
