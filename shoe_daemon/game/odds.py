"""Exact combinatorial analysis of the three bets for any shoe composition.

Convention (the one of the published tables): every ORDERED sequence of 6 cards
drawn without replacement from the shoe is counted once. The coup is played on
the first 4-6 cards of the sequence (P, B, P, B, then the third cards in the
order they are dealt); cards the coup does not use are counted all the same.
So ``banco + punto + tie == total == n (n-1) (n-2) (n-3) (n-4) (n-5)`` for a
shoe of ``n`` cards, and for a full 8-deck shoe the counts are the published
2,292,252,566,437,888 / 2,230,518,282,592,256 / 475,627,426,473,216.

How it is fast: the outcome of a 6-card *value* sequence does not depend on the
composition, and the number of card sequences that realise a value sequence is
``prod_v ff(c_v, k_v)`` (``ff`` the falling factorial, ``c_v`` the cards of
value ``v`` in the shoe, ``k_v`` how many times ``v`` occurs in the sequence),
which depends only on the multiset of the 6 values. So the 10**6 value
sequences are classified once (numpy, on first use) into the C(15, 6) = 5005
multisets with, for each, how many of its orderings give Banco / Punto / Tie.
An analysis is then a weighted sum over 5005 multisets, in exact integers.

The rules come from :mod:`shoe_daemon.game.tableau` (the only place the
tableau is written down): the per-(totals, 5th card, 6th card) outcome table
is built by playing :func:`~shoe_daemon.game.tableau.next_side`.

A shoe with fewer than 6 cards cannot be analysed under this convention (every
count would be 0): :func:`analyze` raises :class:`NotEnoughCardsError` (a
``ValueError``) naming the cards that are left.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations_with_replacement
from math import perm

import numpy as np

from shoe_daemon.game.cards import ALL_CODES, RANK_VALUES, RANKS, Card, parse_card
from shoe_daemon.game.tableau import Side, next_side

__all__ = [
    "BANCO_PAYS",
    "PUNTO_PAYS",
    "TIE_PAYS",
    "CARDS_PER_COUP",
    "Composition",
    "NotEnoughCardsError",
    "OddsResult",
    "analyze",
    "analyze_shoe",
    "composition_from_cards",
    "composition_from_ranks",
    "composition_from_values",
    "full_shoe",
    "remaining_after",
    "setup",
]

# Payouts (profit per unit staked on a win); Punto and Banco push on a tie.
PUNTO_PAYS = Fraction(1)
BANCO_PAYS = Fraction(19, 20)
TIE_PAYS = Fraction(8)

CARDS_PER_COUP = 6
VALUES = range(10)
# Cards of each value in one 52-card deck: 16 zero-valued (T J Q K), 4 of every other.
DECK_VALUE_COUNTS = tuple(4 * sum(1 for r in RANKS if RANK_VALUES[r] == v) for v in VALUES)

# Largest shoe for which every weight prod_v ff(c_v, k_v) <= n**6 fits in int64.
_INT64_SAFE_CARDS = 1448

BANCO, PUNTO, TIE = 0, 1, 2


class NotEnoughCardsError(ValueError):
    """The shoe has fewer than 6 cards: the 6-card-sequence analysis is undefined."""

    def __init__(self, counts: Sequence[int]):
        self.counts = tuple(counts)
        left = sum(self.counts)
        detail = ", ".join(f"{c} of value {v}" for v, c in enumerate(self.counts) if c) or "none"
        super().__init__(
            f"only {left} card{'s' if left != 1 else ''} left in the shoe ({detail}); "
            f"the analysis counts {CARDS_PER_COUP}-card sequences and needs at least {CARDS_PER_COUP} cards"
        )


# --------------------------------------------------------------------------- compositions


@dataclass(frozen=True, slots=True)
class Composition:
    """Cards left in the shoe per baccarat value: ``counts[v]`` cards of value ``v`` (0-9)."""

    counts: tuple[int, ...]

    def __post_init__(self):
        counts = tuple(self.counts)
        if len(counts) != 10:
            raise ValueError(f"a composition has 10 counts (values 0-9), got {len(counts)}")
        for v, c in enumerate(counts):
            if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
                raise TypeError(f"count of value {v} must be an integer, got {c!r}")
            if c < 0:
                raise ValueError(f"count of value {v} is negative ({c})")
        object.__setattr__(self, "counts", tuple(int(c) for c in counts))

    @property
    def cards(self) -> int:
        return sum(self.counts)

    def __str__(self) -> str:
        return ",".join(map(str, self.counts))


def _as_counts(composition) -> tuple[int, ...]:
    if isinstance(composition, Composition):
        return composition.counts
    if isinstance(composition, Mapping):
        return composition_from_values(composition).counts
    return Composition(tuple(composition)).counts


def composition_from_values(counts: Mapping[int, int] | Sequence[int]) -> Composition:
    """Per-value counts: a sequence of 10 ints, or a mapping value (0-9) -> count (missing = 0)."""
    if isinstance(counts, Mapping):
        out = [0] * 10
        for v, c in counts.items():
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 9:
                raise ValueError(f"card value must be an integer 0-9, got {v!r}")
            out[v] = c
        return Composition(tuple(out))
    return Composition(tuple(counts))


def composition_from_ranks(counts: Mapping[str, int]) -> Composition:
    """Per-rank counts, ranks ``A 2-9 T J Q K`` (``10`` means ``T``); missing ranks count 0."""
    out = [0] * 10
    seen: set[str] = set()
    for rank, c in counts.items():
        r = str(rank).strip().upper()
        r = "T" if r == "10" else r
        if r not in RANK_VALUES:
            raise ValueError(f"unknown rank {rank!r}, expected one of {' '.join(RANKS)}")
        if r in seen:
            raise ValueError(f"rank {r} given twice")
        seen.add(r)
        if isinstance(c, bool) or not isinstance(c, int):
            raise TypeError(f"count of rank {r} must be an integer, got {c!r}")
        if c < 0:
            raise ValueError(f"count of rank {r} is negative ({c})")
        out[RANK_VALUES[r]] += c
    return Composition(tuple(out))


def composition_from_cards(counts: Mapping[str | Card, int] | Iterable[str | Card]) -> Composition:
    """Per-identity counts: a mapping card code (``AS``, ``TH``...) -> count, or the cards themselves."""
    out = [0] * 10
    items = counts.items() if isinstance(counts, Mapping) else ((c, 1) for c in counts)
    for i, (card, c) in enumerate(items, start=1):
        card = card if isinstance(card, Card) else parse_card(card, i)
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise ValueError(f"count of card {card} must be a non-negative integer, got {c!r}")
        out[card.value] += c
    return Composition(tuple(out))


def full_shoe(decks: int) -> Composition:
    """A full shoe of ``decks`` 52-card decks (8 decks: 128 zero-valued cards and 32 of each other value)."""
    if isinstance(decks, bool) or not isinstance(decks, int) or decks < 1:
        raise ValueError(f"the number of decks must be a positive integer, got {decks!r}")
    return Composition(tuple(decks * c for c in DECK_VALUE_COUNTS))


def remaining_after(decks: int, dealt: Iterable[str | Card]) -> Composition:
    """The cards left in a full ``decks``-deck shoe once ``dealt`` (card codes or Cards) are out.

    Raises ``ValueError`` if a card identity is dealt more often than the shoe holds it.
    """
    full_shoe(decks)  # validates decks
    used = dict.fromkeys(ALL_CODES, 0)
    for i, card in enumerate(dealt, start=1):
        card = card if isinstance(card, Card) else parse_card(card, i)
        used[card.code] += 1
        if used[card.code] > decks:
            raise ValueError(
                f"card {card.code} dealt {used[card.code]} times (card {i} of the dealt cards), "
                f"but a {decks}-deck shoe holds only {decks}"
            )
    return composition_from_cards({code: decks - n for code, n in used.items()})


# --------------------------------------------------------------------------- the one-time table


@dataclass(frozen=True)
class _Table:
    ks: np.ndarray          # (5005, 10) int64: how many times each value occurs in the multiset
    outcomes: np.ndarray    # (5005, 3) int64: orderings giving banco, punto, tie
    ks_py: tuple            # the same, as Python tuples of (value, k) with k > 0
    outcomes_py: tuple      # (banco, punto, tie) per multiset, Python ints
    # The multiset's 6 values in order (6 arrays of 5005) and, for each, how many equal values come
    # before it: the weight prod_v ff(c_v, k_v) is then prod_i (c[values_i] - before_i).
    values: tuple = ()
    before: tuple = ()


def _coup_outcome(pt: int, bt: int, fifth: int, sixth: int) -> int:
    """Outcome of a coup from the two-card totals and the next two cards, played by the tableau."""
    punto, banco = [pt, 0], [bt, 0]
    rest = iter((fifth, sixth))
    while (side := next_side(punto, banco)) is not None:
        (punto if side is Side.PUNTO else banco).append(next(rest))
    p, b = sum(punto) % 10, sum(banco) % 10
    return BANCO if b > p else PUNTO if p > b else TIE


# A sorting network for 6 elements (12 compare-exchanges).
_SORT6 = ((0, 5), (1, 3), (2, 4), (1, 2), (3, 4), (0, 3), (2, 5), (0, 1), (2, 3), (4, 5), (1, 2), (3, 4))


def _build_table() -> _Table:
    """Classify the 10**6 value sequences into the 5005 multisets (uncached: see :func:`setup`).

    The coup depends on the first four cards only through the two totals, so
    positions 1/3 (Punto's pair) and 2/4 (Banco's pair) are enumerated as
    unordered pairs with multiplicity 2 (or 1 for a pair of equal values):
    55 * 55 * 10 * 10 = 302,500 rows stand for the 10**6 sequences.
    """
    # Small dtypes (values 0-9, keys below 10**6): the 302,500-row arrays are the process's memory peak.
    rules = np.empty((10, 10, 10, 10), dtype=np.int8)
    for pt in VALUES:
        for bt in VALUES:
            for e in VALUES:
                for f in VALUES:
                    rules[pt, bt, e, f] = _coup_outcome(pt, bt, e, f)
    multisets = np.array(list(combinations_with_replacement(VALUES, 6)), dtype=np.int64)  # sorted rows
    place = 10 ** np.arange(5, -1, -1, dtype=np.int64)
    index_of = np.full(10**6, -1, dtype=np.int32)  # sorted 6 digits as a number -> multiset index
    index_of[multisets @ place] = np.arange(len(multisets))
    ks = np.stack([(multisets == v).sum(axis=1) for v in VALUES], axis=1).astype(np.int64)

    pairs = np.array(list(combinations_with_replacement(VALUES, 2)), dtype=np.int8)  # 55 rows, a <= b
    mult = np.where(pairs[:, 0] == pairs[:, 1], 1, 2).astype(np.int8)
    n_pairs = len(pairs)
    grid = np.meshgrid(*(np.arange(n, dtype=np.int8) for n in (n_pairs, n_pairs, 10, 10)), indexing="ij")
    pi, bi, fifth, sixth = (g.ravel() for g in grid)
    totals = [pairs[i].sum(axis=1, dtype=np.int8) % 10 for i in (pi, bi)]
    outcome = rules[totals[0], totals[1], fifth, sixth]
    cols = [pairs[pi, 0], pairs[pi, 1], pairs[bi, 0], pairs[bi, 1], fifth, sixth]
    for i, j in _SORT6:
        cols[i], cols[j] = np.minimum(cols[i], cols[j]), np.maximum(cols[i], cols[j])
    key = cols[0].astype(np.int32)
    for col in cols[1:]:
        key = key * 10 + col
    counted = np.bincount(
        index_of[key] * 3 + outcome, weights=mult[pi] * mult[bi], minlength=3 * len(multisets)
    )  # float64, exact: every count is <= 720
    outcomes = np.rint(counted).astype(np.int64).reshape(-1, 3)

    ks_py = tuple(tuple((v, k) for v, k in enumerate(row) if k) for row in ks.tolist())
    outcomes_py = tuple(tuple(row) for row in outcomes.tolist())
    before = np.zeros_like(multisets)
    for i in range(1, CARDS_PER_COUP):
        before[:, i] = np.where(multisets[:, i] == multisets[:, i - 1], before[:, i - 1] + 1, 0)
    return _Table(ks=ks, outcomes=outcomes, ks_py=ks_py, outcomes_py=outcomes_py,
                  values=tuple(np.ascontiguousarray(multisets[:, i]) for i in range(CARDS_PER_COUP)),
                  before=tuple(np.ascontiguousarray(before[:, i]) for i in range(CARDS_PER_COUP)))


_table: _Table | None = None
_table_lock = threading.Lock()


def setup() -> None:
    """Build the per-multiset table now (else the first analysis does it; about 0.1 s, once per process)."""
    _get_table()


def _get_table() -> _Table:
    global _table
    if _table is None:
        with _table_lock:
            if _table is None:
                _table = _build_table()
    return _table


# --------------------------------------------------------------------------- the analysis


def _falling(c: int, k: int) -> int:
    return perm(c, k) if k <= c else 0


def _count_numpy(counts: tuple[int, ...], table: _Table) -> tuple[int, int, int]:
    # ff(c, k) = c (c-1) ... (c-k+1): one factor per card of the multiset, 0 when k > c (a factor
    # c - c comes first). Exact: each weight <= n**6 < 2**63. (5x faster than indexing a table of ff.)
    c = np.array(counts, dtype=np.int64)
    weights = c.take(table.values[0]) - table.before[0]
    for values, before in zip(table.values[1:], table.before[1:], strict=True):
        weights *= c.take(values) - before
    # weights * outcomes would overflow int64: split the weights in 32-bit halves.
    hi = (weights >> 32) @ table.outcomes
    lo = (weights & 0xFFFFFFFF) @ table.outcomes
    return tuple((int(h) << 32) + int(low) for h, low in zip(hi, lo, strict=True))


def _count_python(counts: tuple[int, ...], table: _Table) -> tuple[int, int, int]:
    ff = [[_falling(c, k) for k in range(7)] for c in counts]
    banco = punto = tie = 0
    for ks, (b, p, t) in zip(table.ks_py, table.outcomes_py, strict=True):
        w = 1
        for v, k in ks:
            w *= ff[v][k]
            if not w:
                break
        if w:
            banco += w * b
            punto += w * p
            tie += w * t
    return banco, punto, tie


def _edge(win: int, lose: int, total: int, pays: Fraction) -> Fraction:
    """House edge of a bet per unit staked: minus its expected value (a push counts 0)."""
    return Fraction(lose, total) - pays * Fraction(win, total)


def _fmt_fraction(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}" if x.denominator != 1 else str(x.numerator)


@dataclass(frozen=True, slots=True)
class OddsResult:
    """Exact counts of the 6-card sequences won by each side, for one composition.

    ``banco + punto + tie == total``. Probabilities and house edges are derived
    (``*_exact`` as :class:`~fractions.Fraction`, the others as floats). The
    house edge of a bet is minus its expected value per unit staked, ties
    included in the denominator (a pushed Punto/Banco bet counts as 0).
    """

    counts: tuple[int, ...]
    banco: int
    punto: int
    tie: int
    total: int

    @property
    def cards(self) -> int:
        return sum(self.counts)

    # Probabilities.
    @property
    def p_banco_exact(self) -> Fraction:
        return Fraction(self.banco, self.total)

    @property
    def p_punto_exact(self) -> Fraction:
        return Fraction(self.punto, self.total)

    @property
    def p_tie_exact(self) -> Fraction:
        return Fraction(self.tie, self.total)

    @property
    def p_banco(self) -> float:
        return self.banco / self.total

    @property
    def p_punto(self) -> float:
        return self.punto / self.total

    @property
    def p_tie(self) -> float:
        return self.tie / self.total

    # House edges.
    @property
    def edge_banco_exact(self) -> Fraction:
        return _edge(self.banco, self.punto, self.total, BANCO_PAYS)

    @property
    def edge_punto_exact(self) -> Fraction:
        return _edge(self.punto, self.banco, self.total, PUNTO_PAYS)

    @property
    def edge_tie_exact(self) -> Fraction:
        return _edge(self.tie, self.banco + self.punto, self.total, TIE_PAYS)

    @property
    def edge_banco(self) -> float:
        return float(self.edge_banco_exact)

    @property
    def edge_punto(self) -> float:
        return float(self.edge_punto_exact)

    @property
    def edge_tie(self) -> float:
        return float(self.edge_tie_exact)

    def edge_exact(self, kind: str, pays: Fraction | int | None = None) -> Fraction:
        """House edge of ``kind`` ("banco", "punto", "tie") for another payout (profit per unit)."""
        win, lose, default = {
            "banco": (self.banco, self.punto, BANCO_PAYS),
            "punto": (self.punto, self.banco, PUNTO_PAYS),
            "tie": (self.tie, self.banco + self.punto, TIE_PAYS),
        }[kind]
        return _edge(win, lose, self.total, default if pays is None else Fraction(pays))

    def to_dict(self) -> dict:
        """JSON-ready: counts as exact integers, probabilities/edges as floats, exact edges as "p/q"."""
        banco, punto, tie = self.edge_banco_exact, self.edge_punto_exact, self.edge_tie_exact  # once each
        return {
            "cards": self.cards,
            "composition": list(self.counts),
            "banco": self.banco,
            "punto": self.punto,
            "tie": self.tie,
            "total": self.total,
            "probability": {"banco": self.p_banco, "punto": self.p_punto, "tie": self.p_tie},
            "house_edge": {"banco": float(banco), "punto": float(punto), "tie": float(tie)},
            "house_edge_exact": {
                "banco": _fmt_fraction(banco),
                "punto": _fmt_fraction(punto),
                "tie": _fmt_fraction(tie),
            },
        }


def analyze(composition: Composition | Sequence[int] | Mapping[int, int]) -> OddsResult:
    """Exact Banco / Punto / Tie counts over all ordered 6-card sequences of the shoe.

    ``composition``: a :class:`Composition`, 10 counts for values 0-9, or a mapping
    value -> count. Raises :class:`NotEnoughCardsError` if fewer than 6 cards are left.
    """
    counts = _as_counts(composition)
    n = sum(counts)
    if n < CARDS_PER_COUP:
        raise NotEnoughCardsError(counts)
    table = _get_table()
    if n <= _INT64_SAFE_CARDS:
        banco, punto, tie = _count_numpy(counts, table)
    else:
        banco, punto, tie = _count_python(counts, table)
    total = perm(n, CARDS_PER_COUP)
    if banco + punto + tie != total:  # pragma: no cover - an internal invariant
        raise AssertionError(f"counts {banco}+{punto}+{tie} do not add up to {total}")
    return OddsResult(counts=counts, banco=banco, punto=punto, tie=tie, total=total)


def analyze_shoe(decks: int, dealt: Iterable[str | Card] = ()) -> OddsResult:
    """Analysis of a ``decks``-deck shoe once the ``dealt`` cards are out of it."""
    return analyze(remaining_after(decks, dealt))
