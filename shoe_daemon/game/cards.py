"""Card identities: the one parser every source and command uses.

A card code is a rank ``A 2-9 T J Q K`` followed by a suit ``S H D C``
(``TH`` is the ten of hearts). Baccarat only cares about the value:
A=1, 2-9 face value, T J Q K = 0, and a hand's total is the sum mod 10.
"""

from __future__ import annotations

from dataclasses import dataclass

RANKS = "A23456789TJQK"
SUITS = "SHDC"
RANK_VALUES = {r: (i + 1 if i < 9 else 0) for i, r in enumerate(RANKS)}
# Every identity in canonical order (rank-major), used for compositions.
ALL_CODES = tuple(r + s for r in RANKS for s in SUITS)


class CardCodeError(ValueError):
    """A token that is not one of the 52 card codes."""

    def __init__(self, token: str, reason: str, position: int | None = None):
        self.token = token
        self.reason = reason
        self.position = position
        where = f" at position {position}" if position is not None else ""
        super().__init__(f"bad card code {token!r}{where}: {reason}")


@dataclass(frozen=True, slots=True)
class Card:
    rank: str
    suit: str

    @property
    def code(self) -> str:
        return self.rank + self.suit

    @property
    def value(self) -> int:
        return RANK_VALUES[self.rank]

    def __str__(self) -> str:
        return self.code


# The 52 cards are interned: parse_card returns the same object for a code.
_CARDS = {code: Card(code[0], code[1]) for code in ALL_CODES}


def parse_card(token: str, position: int | None = None) -> Card:
    """Parse one card code; accepts lower case and ``10`` for ``T``."""
    if not isinstance(token, str):
        raise CardCodeError(repr(token), "not a string", position)
    text = token.strip().upper()
    if text.startswith("10") and len(text) == 3:
        text = "T" + text[2]
    card = _CARDS.get(text)
    if card is not None:
        return card
    if len(text) != 2:
        raise CardCodeError(token, "a card code is two characters, rank then suit (e.g. 9H, TS)", position)
    if text[0] not in RANKS:
        raise CardCodeError(token, f"unknown rank {text[0]!r}, expected one of {' '.join(RANKS)}", position)
    raise CardCodeError(token, f"unknown suit {text[1]!r}, expected one of {' '.join(SUITS)}", position)


def parse_cards(text: str) -> list[Card]:
    """Parse white-space separated card codes; positions in errors count from 1."""
    return [parse_card(tok, i) for i, tok in enumerate(text.split(), start=1)]


def hand_total(cards) -> int:
    """Baccarat total of a hand: sum of values mod 10."""
    return sum(c.value for c in cards) % 10
