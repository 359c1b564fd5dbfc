"""Helpers shared by the rules-engine tests (not a test module).

Cards are chosen by baccarat value; the ranks for each value are cycled so that
the two first cards of a side are not a pair unless a test asks for one.
"""

from __future__ import annotations

from itertools import count

from shoe_daemon.game.cards import Card, parse_card

# Ranks by value, several per value 0 so that value-0 cards need not be pairs.
RANKS_BY_VALUE = {0: "TJQK", 1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9"}
_SUITS = "SHDC"
_n = count()


def card_of(value: int) -> Card:
    """A card of baccarat value ``value``, with a suit (and for 0, a rank) that varies per call."""
    i = next(_n)
    ranks = RANKS_BY_VALUE[value]
    return parse_card(ranks[i % len(ranks)] + _SUITS[i % 4])


def coup_of(p1, b1, p2, b2, *more) -> list[Card]:
    """Cards in dealing order from values: P1 B1 P2 B2 then the rest."""
    return [card_of(v) for v in (p1, b1, p2, b2, *more)]


def codes(cards) -> list[str]:
    return [c.code for c in cards]


def deal_all(engine, cards, **kwargs) -> list:
    """Deal every card; returns the Steps."""
    return [engine.deal(c, **kwargs) for c in cards]
