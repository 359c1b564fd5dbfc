"""The shoe's composition: which cards are still in it.

:class:`Shoe` counts, for a shoe of 4, 6 or 8 decks, how many copies of each of
the 52 identities and of each value 0-9 are left, and how many cards went to
coups (``dealt``), to the burn (``burned``) or aside (``discarded``: extra
cards, cards after the last hand). A card seen more often than the shoe holds
(a foreign or duplicated card) is counted but never drives a count below zero:
``take`` reports it and the engine raises ``impossible_card``.

The identity of a card is its index in :data:`~shoe_daemon.game.cards.ALL_CODES`;
:func:`card_index` maps a card (or a code) to it. Pure bookkeeping: no I/O, no
policy. Cut card, burn procedure and last hand are the engine's business; it
passes them to :meth:`Shoe.state` for the read-only :class:`ShoeState`.
"""

from __future__ import annotations

from types import MappingProxyType

from shoe_daemon.game.cards import ALL_CODES, Card, parse_card
from shoe_daemon.game.frozen import record

__all__ = ["DECKS", "Shoe", "ShoeState", "card_index", "as_card", "CARD_VALUES"]

DECKS = (4, 6, 8)
CARDS = tuple(parse_card(code) for code in ALL_CODES)
CARD_VALUES = tuple(c.value for c in CARDS)
# id of the interned Card -> identity index (see coup._VALUE_BY_ID for why ids are safe keys).
INDEX_BY_ID = {id(c): i for i, c in enumerate(CARDS)}


def as_card(card: Card | str) -> Card:
    """The interned :class:`Card` for a Card or a code; CardCodeError for a bad code."""
    if id(card) in INDEX_BY_ID:
        return card
    if isinstance(card, Card):
        return parse_card(card.code)
    if isinstance(card, str):
        return parse_card(card)
    raise TypeError(f"expected a Card or a card code, got {type(card).__name__}")


def card_index(card: Card | str) -> int:
    """Identity index 0-51 (rank-major, as ALL_CODES)."""
    i = INDEX_BY_ID.get(id(card))
    return i if i is not None else INDEX_BY_ID[id(as_card(card))]


def check_decks(decks, what: str = "decks") -> int:
    if isinstance(decks, bool) or not isinstance(decks, int) or decks not in DECKS:
        raise ValueError(f"{what} must be one of {', '.join(map(str, DECKS))}, got {decks!r}")
    return decks


@record
class ShoeState:
    """The shoe, read-only: composition, counts, cut card and burn."""

    shoe: int
    decks: int
    cards: int                      # 52 * decks
    dealt: int                      # cards drawn into coups (voided coups included)
    burned: int
    discarded: int                  # drawn but in no coup: extra cards, cards after the last hand
    remaining: int
    coups: int                      # coups opened in this shoe
    cut_card_out: bool
    last_hand: bool                 # the coup in progress, or the next one, is the last hand
    shoe_over: bool                 # the last hand is over: a new shoe is due
    burn_due: int                   # burn cards still expected before the first coup
    burn_card: Card | None          # the turned card of the first_card_value burn
    remaining_by_value: tuple[int, ...]         # index = value 0-9
    remaining_by_code: MappingProxyType         # code -> copies left, in ALL_CODES order


class Shoe:
    """Composition of one shoe; mutable. ``counts[i]`` may go negative when card i
    was seen more often than the shoe holds; ``remaining`` clamps at zero."""

    __slots__ = ("decks", "counts", "value_counts", "dealt", "burned", "discarded", "_by_code", "_by_code_view")

    def __init__(self, decks: int = 8):
        self.decks = check_decks(decks)
        self.counts = [decks] * 52
        # code -> copies left (clamped at 0), kept up to date by take/put_back; state() hands out a
        # read-only copy, made again only after a change (it was a 52-entry comprehension per call).
        self._by_code = dict.fromkeys(ALL_CODES, decks)
        self._by_code_view: MappingProxyType | None = None
        self.value_counts = [0] * 10
        for v in CARD_VALUES:
            self.value_counts[v] += decks
        self.dealt = 0
        self.burned = 0
        self.discarded = 0

    def take(self, index: int) -> bool:
        """One copy of identity ``index`` left the shoe; False if the shoe held no more of it."""
        c = self.counts[index] = self.counts[index] - 1
        if c >= 0:
            self.value_counts[CARD_VALUES[index]] -= 1
            self._by_code[ALL_CODES[index]] = c
            self._by_code_view = None
            return True
        return False

    def put_back(self, index: int) -> None:
        """Undo one ``take`` of identity ``index``."""
        c = self.counts[index] = self.counts[index] + 1
        if c > 0:
            self.value_counts[CARD_VALUES[index]] += 1
            self._by_code[ALL_CODES[index]] = c
            self._by_code_view = None

    def seen(self, index: int) -> int:
        """Copies of identity ``index`` drawn so far."""
        return self.decks - self.counts[index]

    @property
    def remaining(self) -> int:
        return sum(self.value_counts)

    def state(
        self, shoe: int, *, coups: int = 0, cut_card_out: bool = False, last_hand: bool = False,
        shoe_over: bool = False, burn_due: int = 0, burn_card: Card | None = None,
    ) -> ShoeState:
        by_code = self._by_code_view
        if by_code is None:
            by_code = self._by_code_view = MappingProxyType(dict(self._by_code))
        return ShoeState.make(
            shoe, self.decks, 52 * self.decks, self.dealt, self.burned, self.discarded,
            self.remaining, coups, cut_card_out, last_hand, shoe_over, burn_due, burn_card,
            tuple(self.value_counts), by_code,
        )
