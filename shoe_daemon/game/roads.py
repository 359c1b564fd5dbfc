"""The scoreboard roads of a shoe: Bead Plate, Big Road and the three derived roads.

Pure and deterministic (no I/O, no clock). See docs/roads.md for the rules as
implemented, with drawings, and the sources they were checked against.

:class:`Roads` is fed one coup at a time (``add``) and keeps every road up to
date at a constant cost per coup; :func:`roads_dict` computes the same JSON
data from a whole list in one batch (a separate code path: the tests check
that both always agree).

Coordinates are 0-based everywhere: ``col`` counts from the left, ``row`` from
the top, and a road has ``ROWS`` (6) rows.

* **Bead Plate**: one cell per coup, ties included, column-major (coup ``i``
  at ``col = i // 6``, ``row = i % 6``).
* **Big Road**: Banco / Punto wins only. A *logical column* is a streak of one
  winner; a new one starts when the winner changes. Ties are counted on the
  cell of the previous win (ties before the first win go to the first cell), and
  a tie coup's pairs are marked on that same cell. A streak is drawn down its
  column and, when the cell below is off the grid or taken, turns right along
  its row (the dragon tail); see :class:`_Grid`.
* **Derived roads** (Big Eye Boy k=1, Small Road k=2, Cockroach Pig k=3): one
  red/blue mark per Big Road cell from the point where the comparison exists,
  computed from the *logical* column lengths (never the drawn positions); see
  :func:`derived_mark`. Each is drawn like the Big Road (a colour is a winner).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BANCO",
    "BLUE",
    "DERIVED_ROADS",
    "PUNTO",
    "RED",
    "ROWS",
    "TIE",
    "BigRoadCell",
    "CoupOutcome",
    "Roads",
    "TokenError",
    "derived_mark",
    "outcome",
    "parse_tokens",
    "roads_dict",
]

ROWS = 6
BANCO = "banco"
PUNTO = "punto"
TIE = "tie"
RED = "red"
BLUE = "blue"
# (name, k): each derived road compares a Big Road column with the one k columns to its left.
DERIVED_ROADS = (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3))

_WINNERS = {
    "banco": BANCO, "banker": BANCO, "b": BANCO,
    "punto": PUNTO, "player": PUNTO, "p": PUNTO,
    "tie": TIE, "egalite": TIE, "t": TIE,
}


# --------------------------------------------------------------------------- input


@dataclass(frozen=True, slots=True)
class CoupOutcome:
    """What the roads need of a coup. ``natural`` is None when unknown."""

    winner: str  # BANCO, PUNTO or TIE
    banco_pair: bool = False
    punto_pair: bool = False
    natural: bool | None = None


def _winner(value: Any) -> str:
    # Accepts "banco"/"punto"/"tie" (and the Winner / Side enums, which are str), any case.
    w = _WINNERS.get(str(value).strip().lower()) if isinstance(value, str) else None
    if w is None:
        raise ValueError(f"unknown coup winner {value!r}, expected banco, punto or tie")
    return w


def outcome(
    winner: Any, banco_pair: bool = False, punto_pair: bool = False, natural: bool | None = None
) -> CoupOutcome:
    """A validated :class:`CoupOutcome` (winner "banco" | "punto" | "tie")."""
    return CoupOutcome(_winner(winner), bool(banco_pair), bool(punto_pair), None if natural is None else bool(natural))


def _as_outcome(item: Any) -> CoupOutcome:
    """A CoupOutcome from a CoupOutcome, a winner string, a mapping or a result record
    (anything with ``winner``, ``banco_pair``, ``punto_pair`` and optionally ``natural``,
    e.g. :class:`shoe_daemon.game.coup.CoupResult`)."""
    if isinstance(item, CoupOutcome):
        return item
    if isinstance(item, str):
        return outcome(item)
    if isinstance(item, Mapping):
        return outcome(item["winner"], item.get("banco_pair", False), item.get("punto_pair", False),
                       item.get("natural"))
    if not hasattr(item, "winner"):
        raise ValueError(f"unknown coup winner {item!r}, expected banco, punto or tie")
    return outcome(item.winner, getattr(item, "banco_pair", False), getattr(item, "punto_pair", False),
                   getattr(item, "natural", None))


class TokenError(ValueError):
    """A bad token in a ``B Pp T Bbp`` list; ``position`` counts tokens from 1."""

    def __init__(self, token: str, position: int, reason: str):
        self.token = token
        self.position = position
        self.reason = reason
        super().__init__(f"bad token {token!r} at position {position}: {reason}")


_TOKEN_HELP = "expected B, P or T, optionally followed by b (Banco pair) and/or p (Punto pair), e.g. B Pp T Bbp"


def parse_tokens(text: str) -> list[CoupOutcome]:
    """Parse white-space separated coup tokens: ``B``/``P``/``T`` then optional ``b`` and/or ``p``."""
    out = []
    for i, tok in enumerate(text.split(), start=1):
        head, pairs = tok[0], tok[1:]
        if head not in "BPT":
            raise TokenError(tok, i, _TOKEN_HELP)
        if len(pairs) > 2 or any(c not in "bp" for c in pairs) or len(set(pairs)) != len(pairs):
            raise TokenError(tok, i, _TOKEN_HELP)
        out.append(outcome(head, "b" in pairs, "p" in pairs))
    return out


# --------------------------------------------------------------------------- the rules


def derived_mark(lengths: list[int], k: int, col: int, depth: int) -> str | None:
    """The mark a derived road with cycle ``k`` makes for the Big Road cell at logical
    column ``col`` (0-based), ``depth`` (1-based: 1 for the first cell of the column).

    ``lengths`` are the logical column lengths; only the columns left of ``col`` are read.

    * first cell of a column: compare the two columns before it, ``col-1`` and ``col-1-k``:
      same length -> red, different -> blue;
    * a cell below (depth n >= 2): look at column ``col-k`` of length p: n <= p (it has a
      cell at row n) -> red; n == p + 1 (it ended just above) -> blue; n > p + 1 -> red.

    None when the compared columns do not exist (before the road's starting cell).
    """
    if depth == 1:
        if col - 1 - k < 0:
            return None
        return RED if lengths[col - 1] == lengths[col - 1 - k] else BLUE
    if col - k < 0:
        return None
    return BLUE if depth == lengths[col - k] + 1 else RED


class _Grid:
    """Big-Road-style placement on a grid of ``rows`` rows, unbounded to the right.

    * A new logical column starts at the top of the drawn column right of the previous
      logical column's start (further right if that top cell is taken by a tail along row 0).
    * A streak goes down while the cell below is on the grid and free; otherwise it turns
      right (the dragon tail) and stays in that row, one column to the right per cell.
      A streak that meets an earlier tail therefore turns right on the row above it.
    """

    __slots__ = ("rows", "taken", "start", "col", "row", "tail", "width")

    def __init__(self, rows: int = ROWS):
        self.rows = rows
        self.taken: set[tuple[int, int]] = set()
        self.start = -1  # drawn column where the current logical column starts
        self.col = self.row = -1
        self.tail = False
        self.width = 0

    def _put(self, col: int, row: int) -> tuple[int, int]:
        self.taken.add((col, row))
        self.col, self.row = col, row
        if col >= self.width:
            self.width = col + 1
        return col, row

    def new_column(self) -> tuple[int, int]:
        c = self.start + 1
        while (c, 0) in self.taken:
            c += 1
        self.start = c
        self.tail = False
        return self._put(c, 0)

    def extend(self) -> tuple[int, int]:
        c, r = self.col, self.row
        if not self.tail and r + 1 < self.rows and (c, r + 1) not in self.taken:
            return self._put(c, r + 1)
        self.tail = True
        c += 1
        while (c, r) in self.taken:  # not reachable with the rules above; kept as a guard
            c += 1
        return self._put(c, r)


# --------------------------------------------------------------------------- roads


class BigRoadCell:
    """One Big Road cell (mutable only while it is the last cell: ties are added to it)."""

    __slots__ = ("col", "row", "winner", "ties", "banco_pair", "punto_pair", "logical_col", "logical_row", "coup")

    def __init__(self, col, row, winner, ties, banco_pair, punto_pair, logical_col, logical_row, coup):
        self.col = col
        self.row = row
        self.winner = winner
        self.ties = ties
        self.banco_pair = banco_pair
        self.punto_pair = punto_pair
        self.logical_col = logical_col
        self.logical_row = logical_row
        self.coup = coup

    def to_dict(self) -> dict[str, Any]:
        return {
            "col": self.col,
            "row": self.row,
            "winner": self.winner,
            "ties": self.ties,
            "banco_pair": self.banco_pair,
            "punto_pair": self.punto_pair,
            "logical_col": self.logical_col,
            "logical_row": self.logical_row,
            "coup": self.coup,
        }


class _DerivedRoad:
    __slots__ = ("name", "k", "marks", "cells", "grid")

    def __init__(self, name: str, k: int, rows: int):
        self.name = name
        self.k = k
        self.marks: list[str] = []
        self.cells: list[tuple[int, int, str]] = []
        self.grid = _Grid(rows)

    def add(self, color: str) -> None:
        if self.marks and self.marks[-1] == color:
            col, row = self.grid.extend()
        else:
            col, row = self.grid.new_column()
        self.marks.append(color)
        self.cells.append((col, row, color))

    def to_dict(self) -> dict[str, Any]:
        return _derived_dict(self.k, self.marks, self.cells, self.grid)


def _derived_dict(k, marks, cells, grid) -> dict[str, Any]:
    return {
        "k": k,
        "rows": grid.rows,
        "width": grid.width,
        "marks": list(marks),
        "cells": [{"col": c, "row": r, "color": color} for c, r, color in cells],
    }


def _bead_dict(coups: list[CoupOutcome], rows: int) -> dict[str, Any]:
    return {
        "rows": rows,
        "width": -(-len(coups) // rows),
        "cells": [
            {
                "col": i // rows,
                "row": i % rows,
                "winner": o.winner,
                "banco_pair": o.banco_pair,
                "punto_pair": o.punto_pair,
                "natural": o.natural,
            }
            for i, o in enumerate(coups)
        ],
    }


class Roads:
    """All the roads of one shoe, updated one coup at a time.

    >>> r = Roads()
    >>> for w in ("banco", "banco", "punto", "tie", "punto", "banco"):
    ...     r.add(w)
    >>> [(c.col, c.row, c.winner, c.ties) for c in r.big_road]
    [(0, 0, 'banco', 0), (0, 1, 'banco', 0), (1, 0, 'punto', 1), (1, 1, 'punto', 0), (2, 0, 'banco', 0)]
    >>> r.big_eye_boy, r.ask("banco")["big_eye_boy"]
    (['red', 'red'], 'red')
    """

    __slots__ = (
        "rows", "coups", "big_road", "lengths", "winners", "grid", "derived",
        "pending_ties", "_pending_bp", "_pending_pp",
        "_counts", "_naturals", "_natural_known", "_banco_pairs", "_punto_pairs", "_longest",
    )

    def __init__(self, coups: Iterable[Any] = (), rows: int = ROWS):
        if rows < 1:
            raise ValueError(f"a road needs at least one row, got {rows}")
        self.rows = rows
        self.coups: list[CoupOutcome] = []
        self.big_road: list[BigRoadCell] = []
        self.lengths: list[int] = []   # logical column lengths
        self.winners: list[str] = []   # logical column winners
        self.grid = _Grid(rows)
        self.derived = tuple(_DerivedRoad(name, k, rows) for name, k in DERIVED_ROADS)
        self.pending_ties = 0          # ties seen before the first Banco/Punto win
        self._pending_bp = self._pending_pp = False
        self._counts = {BANCO: 0, PUNTO: 0, TIE: 0}
        self._naturals = 0
        self._natural_known = False
        self._banco_pairs = self._punto_pairs = 0
        self._longest = {BANCO: 0, PUNTO: 0}
        for item in coups:
            self.add(item)

    # ------------------------------------------------------------------ feeding

    def add(self, winner: Any, banco_pair: bool = False, punto_pair: bool = False,
            natural: bool | None = None) -> None:
        """Add one coup: ``winner`` is "banco" | "punto" | "tie" (or a CoupOutcome, a
        mapping, or a result record such as ``CoupResult``, whose fields are then used)."""
        if isinstance(winner, str):
            o = outcome(winner, banco_pair, punto_pair, natural)
        else:
            o = _as_outcome(winner)
        self.coups.append(o)
        w, bp, pp = o.winner, o.banco_pair, o.punto_pair
        self._counts[w] += 1
        self._banco_pairs += bp
        self._punto_pairs += pp
        if o.natural is not None:
            self._natural_known = True
            self._naturals += o.natural

        if w == TIE:
            if self.big_road:
                cell = self.big_road[-1]
                cell.ties += 1
                cell.banco_pair = cell.banco_pair or bp
                cell.punto_pair = cell.punto_pair or pp
            else:
                self.pending_ties += 1
                self._pending_bp = self._pending_bp or bp
                self._pending_pp = self._pending_pp or pp
            return

        lengths = self.lengths
        if lengths and self.winners[-1] == w:
            lengths[-1] += 1
            col, row = self.grid.extend()
        else:
            lengths.append(1)
            self.winners.append(w)
            col, row = self.grid.new_column()
        n = len(lengths) - 1
        depth = lengths[n]
        if depth > self._longest[w]:
            self._longest[w] = depth
        cell = BigRoadCell(col, row, w, 0, bp, pp, n, depth - 1, len(self.coups))
        if not self.big_road and self.pending_ties:
            cell.ties = self.pending_ties
            cell.banco_pair = bp or self._pending_bp
            cell.punto_pair = pp or self._pending_pp
            self.pending_ties = 0
            self._pending_bp = self._pending_pp = False
        self.big_road.append(cell)
        for road in self.derived:
            mark = derived_mark(lengths, road.k, n, depth)
            if mark is not None:
                road.add(mark)

    def extend(self, coups: Iterable[Any]) -> None:
        for item in coups:
            self.add(item)

    # ------------------------------------------------------------------ reading

    @property
    def big_eye_boy(self) -> list[str]:
        return self.derived[0].marks

    @property
    def small_road(self) -> list[str]:
        return self.derived[1].marks

    @property
    def cockroach_pig(self) -> list[str]:
        return self.derived[2].marks

    def ask(self, winner: Any) -> dict[str, str | None]:
        """What each derived road would add if the next coup were a ``winner`` win
        ("banco" or "punto"): "red", "blue" or None (no mark)."""
        w = _winner(winner)
        if w == TIE:
            raise ValueError("a tie adds nothing to the roads; ask banco or punto")
        lengths = self.lengths
        if not lengths:
            return {name: None for name, _ in DERIVED_ROADS}
        if self.winners[-1] == w:
            col, depth = len(lengths) - 1, lengths[-1] + 1
        else:
            col, depth = len(lengths), 1
        return {road.name: derived_mark(lengths, road.k, col, depth) for road in self.derived}

    def stats(self) -> dict[str, Any]:
        return _stats(
            self._counts, self._naturals if self._natural_known else None,
            self._banco_pairs, self._punto_pairs, self._longest,
            (self.winners[-1], self.lengths[-1]) if self.lengths else None,
            len(self.lengths),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON data of every road (format: docs/roads.md)."""
        out: dict[str, Any] = {
            "coups": len(self.coups),
            "bead_plate": _bead_dict(self.coups, self.rows),
            "big_road": {
                "rows": self.rows,
                "width": self.grid.width,
                "pending_ties": self.pending_ties,
                "columns": [{"winner": w, "length": n} for w, n in zip(self.winners, self.lengths, strict=True)],
                "cells": [c.to_dict() for c in self.big_road],
            },
        }
        for road in self.derived:
            out[road.name] = road.to_dict()
        out["ask_banco"] = self.ask(BANCO)
        out["ask_punto"] = self.ask(PUNTO)
        out["stats"] = self.stats()
        return out


def _stats(counts, naturals, banco_pairs, punto_pairs, longest, current, columns) -> dict[str, Any]:
    return {
        "coups": counts[BANCO] + counts[PUNTO] + counts[TIE],
        "banco": counts[BANCO],
        "punto": counts[PUNTO],
        "tie": counts[TIE],
        "naturals": naturals,
        "banco_pairs": banco_pairs,
        "punto_pairs": punto_pairs,
        "longest_banco_streak": longest[BANCO],
        "longest_punto_streak": longest[PUNTO],
        "current_streak": (
            {"winner": current[0], "length": current[1]} if current else {"winner": None, "length": 0}
        ),
        "big_road_columns": columns,
    }


# --------------------------------------------------------------------------- batch


def roads_dict(coups: Iterable[Any], rows: int = ROWS) -> dict[str, Any]:
    """The same data as ``Roads(coups).to_dict()``, computed from the whole list at once.

    A separate code path on purpose: the logical columns, ties and derived marks are
    worked out from the finished list (the marks of a column only read the columns
    to its left, which are complete by then).
    """
    if rows < 1:
        raise ValueError(f"a road needs at least one row, got {rows}")
    seq = [_as_outcome(c) for c in coups]
    wins = [i for i, o in enumerate(seq) if o.winner != TIE]

    # Logical columns: runs of equal winners among the wins.
    winners: list[str] = []
    lengths: list[int] = []
    place: list[tuple[int, int]] = []  # per win: (logical col, 0-based row in it)
    for i in wins:
        w = seq[i].winner
        if winners and winners[-1] == w:
            lengths[-1] += 1
        else:
            winners.append(w)
            lengths.append(1)
        place.append((len(lengths) - 1, lengths[-1] - 1))

    # Ties: each goes to the last win before it, or to the first win when none is before it.
    ties = [0] * len(wins)
    bp = [seq[i].banco_pair for i in wins]
    pp = [seq[i].punto_pair for i in wins]
    pending = 0
    j = -1  # index in wins of the last win so far
    for o in seq:
        if o.winner != TIE:
            j += 1
            continue
        target = j if j >= 0 else (0 if wins else None)
        if target is None:
            pending += 1
            continue
        ties[target] += 1
        bp[target] = bp[target] or o.banco_pair
        pp[target] = pp[target] or o.punto_pair

    grid = _Grid(rows)
    cells = []
    for idx, (i, (lc, lr)) in enumerate(zip(wins, place, strict=True)):
        col, row = grid.new_column() if lr == 0 else grid.extend()
        cells.append({
            "col": col, "row": row, "winner": seq[i].winner, "ties": ties[idx],
            "banco_pair": bp[idx], "punto_pair": pp[idx],
            "logical_col": lc, "logical_row": lr, "coup": i + 1,
        })

    out: dict[str, Any] = {
        "coups": len(seq),
        "bead_plate": _bead_dict(seq, rows),
        "big_road": {
            "rows": rows,
            "width": grid.width,
            "pending_ties": pending,
            "columns": [{"winner": w, "length": n} for w, n in zip(winners, lengths, strict=True)],
            "cells": cells,
        },
    }
    for name, k in DERIVED_ROADS:
        marks = [
            m for lc, lr in place
            if (m := derived_mark(lengths, k, lc, lr + 1)) is not None
        ]
        dgrid = _Grid(rows)
        dcells = []
        for idx, color in enumerate(marks):
            col, row = dgrid.new_column() if idx == 0 or marks[idx - 1] != color else dgrid.extend()
            dcells.append((col, row, color))
        out[name] = _derived_dict(k, marks, dcells, dgrid)

    for key, w in (("ask_banco", BANCO), ("ask_punto", PUNTO)):
        if not lengths:
            out[key] = {name: None for name, _ in DERIVED_ROADS}
        else:
            col, depth = (len(lengths) - 1, lengths[-1] + 1) if winners[-1] == w else (len(lengths), 1)
            out[key] = {name: derived_mark(lengths, k, col, depth) for name, k in DERIVED_ROADS}

    counts = {BANCO: 0, PUNTO: 0, TIE: 0}
    for o in seq:
        counts[o.winner] += 1
    known = [o.natural for o in seq if o.natural is not None]
    longest = {
        side: max((n for w, n in zip(winners, lengths, strict=True) if w == side), default=0)
        for side in (BANCO, PUNTO)
    }
    out["stats"] = _stats(
        counts, sum(known) if known else None,
        sum(o.banco_pair for o in seq), sum(o.punto_pair for o in seq), longest,
        (winners[-1], lengths[-1]) if lengths else None, len(lengths),
    )
    return out
