"""Settlement of the bets of one coup, and the table limits, in exact decimals.

Amounts are :class:`decimal.Decimal` throughout (floats are refused: pass an
int, a string or a Decimal). Payouts (profit on a win, the stake comes back too):

* Punto 1:1;
* Banco 19:20, i.e. 0.95:1 (the 5% commission is taken off the win: a winning
  20 on Banco returns 39, stake included);
* Tie (Egalite) 8:1 (a winning 10 returns 90);
* on a tie, Punto and Banco bets are returned (push); losing bets lose.

Every result is a frozen dataclass with ``to_dict()``, amounts as strings
("39", "4.75") so that they stay exact in JSON.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Context, Decimal, Inexact, InvalidOperation
from enum import StrEnum

__all__ = [
    "PAYOUTS",
    "SEATS",
    "Bet",
    "BetError",
    "BetKind",
    "BetLimitError",
    "Limit",
    "LimitViolation",
    "Outcome",
    "SettledBet",
    "Settlement",
    "TableLimits",
    "format_amount",
    "parse_bets",
    "settle",
    "to_decimal",
]

SEATS = range(1, 8)  # boxes 1-7


class BetKind(StrEnum):
    PUNTO = "punto"
    BANCO = "banco"
    TIE = "tie"

    @classmethod
    def parse(cls, value: BetKind | str) -> BetKind:
        """``punto`` | ``banco`` | ``tie`` (also ``egalite``/``égalité``), any case; a Side works too."""
        if isinstance(value, cls):
            return value
        text = getattr(value, "value", value)
        if isinstance(text, str):
            text = text.strip().lower()
            text = _KIND_ALIASES.get(text, text)
            try:
                return cls(text)
            except ValueError:
                pass
        raise ValueError(f"unknown bet kind {value!r}, expected punto, banco or tie")


_KIND_ALIASES = {"egalite": "tie", "égalité": "tie"}

# Profit per unit staked on a win.
PAYOUTS = {BetKind.PUNTO: Decimal(1), BetKind.BANCO: Decimal("0.95"), BetKind.TIE: Decimal(8)}


class Outcome(StrEnum):
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"


class BetError(ValueError):
    """A bet that is not a bet: bad seat, kind or amount."""


def to_decimal(value: Decimal | int | str, what: str = "amount") -> Decimal:
    """An exact, finite Decimal from an int, a string or a Decimal (floats are refused)."""
    if isinstance(value, bool) or isinstance(value, float):
        raise BetError(f"{what} {value!r} must be an int, a string or a Decimal (floats are not exact)")
    if isinstance(value, Decimal):
        d = value
    elif isinstance(value, int):
        d = Decimal(value)
    elif isinstance(value, str):
        try:
            d = Decimal(value.strip())
        except InvalidOperation:
            raise BetError(f"{what} {value!r} is not a number") from None
    else:
        raise BetError(f"{what} {value!r} must be an int, a string or a Decimal")
    if not d.is_finite():
        raise BetError(f"{what} {value!r} is not a finite number")
    return d


def format_amount(d: Decimal) -> str:
    """Plain decimal notation without trailing zeros or exponent: "39", "4.75", "1000"."""
    if d == 0:
        return "0"
    return format(d.normalize(_exact_context(d)), "f")


def _exact_context(*values: Decimal) -> Context:
    """A context with enough digits for one operation on ``values``; it raises rather than round."""
    digits = sum(len(v.as_tuple().digits) + abs(v.as_tuple().exponent) for v in values)
    return Context(prec=max(28, digits + 10), traps=[Inexact, InvalidOperation])


def _mul(a: Decimal, b: Decimal) -> Decimal:
    return _exact_context(a, b).multiply(a, b)  # traps Inexact: never rounds


def _add(a: Decimal, b: Decimal) -> Decimal:
    return _exact_context(a, b).add(a, b)


def _sum(values: Iterable[Decimal]) -> Decimal:
    total = Decimal(0)
    for v in values:
        total = _add(total, v)
    return total


# --------------------------------------------------------------------------- bets


@dataclass(frozen=True, slots=True)
class Bet:
    """One bet in one box: ``seat`` 1-7, ``kind``, a positive ``amount``.

    Construction checks the seat, the kind and that the amount is a positive,
    finite number (:class:`BetError`, naming the seat); the table limits are
    checked by :meth:`TableLimits.check`.
    """

    seat: int
    kind: BetKind
    amount: Decimal

    def __post_init__(self):
        seat = self.seat
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise BetError(f"seat {seat!r} must be an integer 1-7")
        if seat not in SEATS:
            raise BetError(f"seat {seat}: no such seat, seats are {SEATS.start}-{SEATS.stop - 1}")
        try:
            kind = BetKind.parse(self.kind)
        except ValueError as e:
            raise BetError(f"seat {seat}: {e}") from None
        amount = to_decimal(self.amount, f"seat {seat}: {kind.value} bet")
        if amount <= 0:
            raise BetError(f"seat {seat}: {kind.value} bet {format_amount(amount)} is not a positive amount")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "amount", amount)

    @classmethod
    def from_dict(cls, data: Mapping) -> Bet:
        try:
            return cls(seat=data["seat"], kind=data["kind"], amount=data["amount"])
        except KeyError as e:
            raise BetError(f"a bet needs seat, kind and amount; {e.args[0]!r} is missing from {dict(data)!r}") from None

    def to_dict(self) -> dict:
        return {"seat": self.seat, "kind": self.kind.value, "amount": format_amount(self.amount)}


def parse_bets(items: Iterable[Mapping | Bet]) -> tuple[Bet, ...]:
    """Bets from dicts ``{"seat": 3, "kind": "banco", "amount": "20"}`` (or Bets)."""
    return tuple(b if isinstance(b, Bet) else Bet.from_dict(b) for b in items)


# --------------------------------------------------------------------------- limits


@dataclass(frozen=True, slots=True)
class Limit:
    """Limits of one kind of bet: ``min``/``max`` per box, ``table_max`` for all such bets (None: no cap)."""

    min: Decimal
    max: Decimal
    table_max: Decimal | None = None

    def __post_init__(self):
        lo = to_decimal(self.min, "limit min")
        hi = to_decimal(self.max, "limit max")
        top = None if self.table_max is None else to_decimal(self.table_max, "limit table_max")
        if lo <= 0:
            raise ValueError(f"limit min {format_amount(lo)} must be positive")
        if hi < lo:
            raise ValueError(f"limit max {format_amount(hi)} is below min {format_amount(lo)}")
        if top is not None and top < hi:
            raise ValueError(f"limit table_max {format_amount(top)} is below the box max {format_amount(hi)}")
        object.__setattr__(self, "min", lo)
        object.__setattr__(self, "max", hi)
        object.__setattr__(self, "table_max", top)

    def to_dict(self) -> dict:
        return {
            "min": format_amount(self.min),
            "max": format_amount(self.max),
            "table_max": None if self.table_max is None else format_amount(self.table_max),
        }


@dataclass(frozen=True, slots=True)
class LimitViolation:
    """One broken rule: ``limit`` is "min", "max", "table_max" or "chip"; ``seat`` None for a table total."""

    seat: int | None
    kind: BetKind
    amount: Decimal
    limit: str
    bound: Decimal
    message: str

    def to_dict(self) -> dict:
        return {
            "seat": self.seat,
            "kind": self.kind.value,
            "amount": format_amount(self.amount),
            "limit": self.limit,
            "bound": format_amount(self.bound),
            "message": self.message,
        }


class BetLimitError(ValueError):
    """Bets outside the table limits; ``violations`` lists every one, the message names them all."""

    def __init__(self, violations: Iterable[LimitViolation]):
        self.violations = tuple(violations)
        super().__init__("; ".join(v.message for v in self.violations))


@dataclass(frozen=True, slots=True)
class TableLimits:
    """The table's limits per kind of bet, and optionally the smallest chip (amounts must be multiples).

    From configuration with :meth:`from_config`, e.g. (seed 001)::

        {"punto": {"min": 5, "max": 300, "table_max": 300},
         "banco": {"min": 5, "max": 300, "table_max": 300},
         "tie":   {"min": 1, "max": 50,  "table_max": 50},
         "chip": 1}
    """

    punto: Limit
    banco: Limit
    tie: Limit
    chip: Decimal | None = None

    def __post_init__(self):
        if self.chip is not None:
            chip = to_decimal(self.chip, "chip")
            if chip <= 0:
                raise ValueError(f"chip {format_amount(chip)} must be positive")
            object.__setattr__(self, "chip", chip)

    @classmethod
    def from_config(cls, config: Mapping) -> TableLimits:
        """Limits from a mapping (TOML/JSON section); ``egalite`` is accepted for ``tie``."""
        known = {"punto", "banco", "tie", "egalite", "chip"}
        unknown = set(config) - known
        if unknown:
            raise ValueError(f"unknown table limit keys {sorted(unknown)}, expected {sorted(known)}")
        limits = {}
        for kind in BetKind:
            section = config.get(kind.value)
            if section is None and kind is BetKind.TIE:
                section = config.get("egalite")
            if section is None:
                raise ValueError(f"table limits: missing the {kind.value!r} section")
            extra = set(section) - {"min", "max", "table_max"}
            if extra:
                raise ValueError(f"table limits for {kind.value}: unknown keys {sorted(extra)}")
            try:
                limits[kind.value] = Limit(section["min"], section["max"], section.get("table_max"))
            except KeyError as e:
                raise ValueError(f"table limits for {kind.value}: missing {e.args[0]!r}") from None
            except ValueError as e:
                raise ValueError(f"table limits for {kind.value}: {e}") from None
        return cls(**limits, chip=config.get("chip"))

    def for_kind(self, kind: BetKind | str) -> Limit:
        return getattr(self, BetKind.parse(kind).value)

    def to_dict(self) -> dict:
        return {
            "punto": self.punto.to_dict(),
            "banco": self.banco.to_dict(),
            "tie": self.tie.to_dict(),
            "chip": None if self.chip is None else format_amount(self.chip),
        }

    def validate(self, bets: Iterable[Bet]) -> tuple[LimitViolation, ...]:
        """Every limit the bets break (empty if none).

        Bets of one kind in one box are added up before the box limits are checked.
        """
        boxes: dict[tuple[BetKind, int], Decimal] = defaultdict(Decimal)
        for bet in bets:
            boxes[bet.kind, bet.seat] = _add(boxes[bet.kind, bet.seat], bet.amount)
        out: list[LimitViolation] = []
        for (kind, seat), amount in sorted(boxes.items(), key=lambda kv: (kv[0][1], list(BetKind).index(kv[0][0]))):
            limit = self.for_kind(kind)
            a, k = format_amount(amount), kind.value
            if amount < limit.min:
                msg = f"seat {seat}: {k} bet {a} is below the table minimum {format_amount(limit.min)}"
                out.append(LimitViolation(seat, kind, amount, "min", limit.min, msg))
            if amount > limit.max:
                msg = f"seat {seat}: {k} bet {a} is above the table maximum {format_amount(limit.max)}"
                out.append(LimitViolation(seat, kind, amount, "max", limit.max, msg))
            if self.chip is not None and _exact_context(amount, self.chip).remainder(amount, self.chip) != 0:
                msg = f"seat {seat}: {k} bet {a} is not a multiple of the smallest chip {format_amount(self.chip)}"
                out.append(LimitViolation(seat, kind, amount, "chip", self.chip, msg))
        for kind in BetKind:
            limit = self.for_kind(kind)
            seats = sorted(seat for (k, seat) in boxes if k is kind)
            if limit.table_max is None or not seats:
                continue
            total = _sum(boxes[kind, s] for s in seats)
            if total > limit.table_max:
                msg = (
                    f"{kind.value} bets total {format_amount(total)} "
                    f"(seat{'s' if len(seats) > 1 else ''} {', '.join(map(str, seats))}) "
                    f"is above the table maximum {format_amount(limit.table_max)} for all {kind.value} bets"
                )
                out.append(LimitViolation(None, kind, total, "table_max", limit.table_max, msg))
        return tuple(out)

    def check(self, bets: Iterable[Bet]) -> None:
        """Raise :class:`BetLimitError` naming every broken limit."""
        violations = self.validate(bets)
        if violations:
            raise BetLimitError(violations)


# --------------------------------------------------------------------------- settlement


@dataclass(frozen=True, slots=True)
class SettledBet:
    """``won``: the profit paid (0 unless a win); ``returned``: what goes back to the player
    (stake + win, the stake on a push, 0 on a loss); ``net``: ``returned - stake``."""

    bet: Bet
    outcome: Outcome
    won: Decimal
    returned: Decimal

    @property
    def net(self) -> Decimal:
        return _add(self.returned, self.bet.amount.copy_negate())

    def to_dict(self) -> dict:
        return {
            **self.bet.to_dict(),
            "outcome": self.outcome.value,
            "won": format_amount(self.won),
            "returned": format_amount(self.returned),
            "net": format_amount(self.net),
        }


@dataclass(frozen=True, slots=True)
class Settlement:
    """The settled bets of one coup (in the order given) and the totals, player side."""

    winner: BetKind
    bets: tuple[SettledBet, ...]
    staked: Decimal
    won: Decimal
    returned: Decimal

    @property
    def net(self) -> Decimal:
        """What the players gained (negative: what the table won)."""
        return _add(self.returned, self.staked.copy_negate())

    def to_dict(self) -> dict:
        return {
            "winner": self.winner.value,
            "bets": [b.to_dict() for b in self.bets],
            "totals": {
                "staked": format_amount(self.staked),
                "won": format_amount(self.won),
                "returned": format_amount(self.returned),
                "net": format_amount(self.net),
            },
        }


def _settle_one(bet: Bet, winner: BetKind) -> SettledBet:
    if bet.kind is winner:
        won = _mul(bet.amount, PAYOUTS[bet.kind])
        return SettledBet(bet, Outcome.WIN, won, _add(bet.amount, won))
    if winner is BetKind.TIE:  # Punto and Banco bets are returned on a tie
        return SettledBet(bet, Outcome.PUSH, Decimal(0), bet.amount)
    return SettledBet(bet, Outcome.LOSE, Decimal(0), Decimal(0))


def settle(
    bets: Iterable[Bet | Mapping], winner: BetKind | str, limits: TableLimits | None = None
) -> Settlement:
    """Settle the bets of a coup won by ``winner`` ("punto", "banco" or "tie"; a Side works too).

    With ``limits``, the bets are checked first (:class:`BetLimitError`).
    """
    try:
        win = BetKind.parse(winner)
    except ValueError:
        raise ValueError(f"unknown coup winner {winner!r}, expected punto, banco or tie") from None
    placed = parse_bets(bets)
    if limits is not None:
        limits.check(placed)
    settled = tuple(_settle_one(b, win) for b in placed)
    return Settlement(
        winner=win,
        bets=settled,
        staked=_sum(b.amount for b in placed),
        won=_sum(s.won for s in settled),
        returned=_sum(s.returned for s in settled),
    )
