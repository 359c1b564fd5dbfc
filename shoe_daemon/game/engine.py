"""The dealing engine: one table's cards in, totals, results and alerts out.

Sans-I/O, clock-free and deterministic: no I/O, no clock, no randomness. A
timestamp ``t`` is passed in with each input and only recorded. Feeding the same
inputs to a fresh engine with the same :class:`TableRules` gives equal outputs,
so the daemon rebuilds its state after a restart by replaying its journal.

Entry point::

    engine = DealingEngine(TableRules(decks=8, closing="auto", on_error="hold"))
    step = engine.deal("9H", side=None, counter=None, source="shoe", t=0.0)
    step.snapshot.punto_total, step.snapshot.next_side   # announced after every card
    step.result                                            # CoupResult once settled
    step.alerts                                            # tuple of Alert

Inputs (each returns a :class:`Step`):

``deal(card, *, side=None, counter=None, source="shoe", t=0.0)``
    A card came out of the shoe. ``card`` is a :class:`Card` or a code. ``side``
    is where it was seen to land (a camera zone), if known; ``counter`` is the
    shoe's own card counter, if it has one.
``close_coup(*, t=0.0)``
    The dealer closes the coup (the ``confirm`` closing policy; harmless with ``auto``).
``cut_card(*, t=0.0)``
    The cut card came out.
``push_back(card=None, *, counter=None, t=0.0)``
    The shoe saw a card go back in.
``new_shoe(decks=None, *, t=0.0)``
    A fresh shoe: composition, burn, cut card and coup numbers start again.

Supervisor actions (each returns a :class:`Step`; :class:`EngineError`, with
no change of state, when the action does not apply):

``void_coup(reason="", *, by=UNSET, t=0.0)``, ``resolve(reason="", *, by=UNSET, t=0.0)``
(release a held coup), ``correct_card(index, card, reason="", *, by=UNSET, t=0.0)``
(``index`` is the 0-based position in the coup's dealing order), ``hold(reason="", *,
t=0.0)`` (a fault outside the cards: the error policy for the coup in progress or the
next). ``by`` names the person who acted: their action's alerts say so (``evidence.user``;
left :data:`~shoe_daemon.game.unset.UNSET`, nobody is named).

Read-only views: ``snapshot() -> CoupSnapshot``, ``shoe_state() -> ShoeState``,
``rules``.

A :class:`Step` has ``record`` (the :class:`CardRecord` of a card, else None),
``snapshot`` (the current coup after the input), ``result`` (a
:class:`CoupResult` when a coup was settled by this input, else None) and
``alerts``. All are frozen slotted dataclasses with ``to_dict()``.

The table's procedures (closing, cut card, burn, what happens after a dealing
error) are in :class:`TableRules` and explained in docs/rules.md.

Hot path: a card of a coup in progress costs one dict lookup, ``Coup.add``
(two table lookups), a composition decrement and three records built with
``make`` (see :mod:`shoe_daemon.game.frozen`); nothing is turned into a dict
until ``to_dict()`` is called.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from shoe_daemon.game import frozen
from shoe_daemon.game.alerts import Alert, AlertKind, Severity, make_alert
from shoe_daemon.game.cards import Card
from shoe_daemon.game.coup import Coup, CoupResult, CoupSnapshot, coup_result
from shoe_daemon.game.shoe import CARDS, INDEX_BY_ID, Shoe, ShoeState, as_card, check_decks
from shoe_daemon.game.tableau import Side
from shoe_daemon.game.unset import UNSET

__all__ = [
    "BurnPolicy",
    "CardRecord",
    "Closing",
    "CutCardPolicy",
    "DealingEngine",
    "EngineError",
    "ErrorPolicy",
    "Role",
    "Step",
    "TableRules",
]

PUNTO = Side.PUNTO
BANCO = Side.BANCO
_NO_ALERTS: tuple[Alert, ...] = ()


class Closing(StrEnum):
    AUTO = "auto"          # a complete coup settles at once; the next card opens the next coup
    CONFIRM = "confirm"    # the dealer closes each coup; it settles then


class CutCardPolicy(StrEnum):
    THIS_COUP_LAST = "this_coup_last"  # the coup in progress (or the next, between coups) is the last
    ONE_MORE = "one_more"              # one more coup after that one


class BurnPolicy(StrEnum):
    NONE = "none"
    FIXED = "fixed"                        # burn_count cards at the start of each shoe
    FIRST_CARD_VALUE = "first_card_value"  # turn the first card, burn its value (10 for 0) more


class ErrorPolicy(StrEnum):
    HOLD = "hold"          # the coup waits for a supervisor (resolve or void)
    VOID = "void"          # the coup is voided at once
    CONTINUE = "continue"  # alert only; the coup goes on by the tableau


class Role(StrEnum):
    COUP = "coup"    # dealt to punto or banco
    BURN = "burn"
    EXTRA = "extra"  # drawn but in no coup (extra card, card after the last hand)


class EngineError(ValueError):
    """A supervisor action or input that does not apply to the engine's state (nothing changed)."""


def _enum(cls, value, name: str):
    try:
        return cls(value)
    except ValueError:
        choices = ", ".join(m.value for m in cls)
        raise EngineError(f"{name} must be one of {choices}, got {value!r}") from None


@dataclass(frozen=True, slots=True)
class TableRules:
    """A table's procedures. Strings are accepted for the policies; bad values raise
    ValueError naming the field."""

    decks: int = 8
    closing: Closing = Closing.AUTO
    cut_card: CutCardPolicy = CutCardPolicy.THIS_COUP_LAST
    burn: BurnPolicy = BurnPolicy.NONE
    burn_count: int = 0
    on_error: ErrorPolicy = ErrorPolicy.HOLD

    def __post_init__(self):
        check_decks(self.decks)
        object.__setattr__(self, "closing", _enum(Closing, self.closing, "closing"))
        object.__setattr__(self, "cut_card", _enum(CutCardPolicy, self.cut_card, "cut_card"))
        object.__setattr__(self, "burn", _enum(BurnPolicy, self.burn, "burn"))
        object.__setattr__(self, "on_error", _enum(ErrorPolicy, self.on_error, "on_error"))
        n = self.burn_count
        if isinstance(n, bool) or not isinstance(n, int):
            raise ValueError(f"burn_count must be an int, got {n!r}")
        if self.burn is BurnPolicy.FIXED and not 1 <= n <= 52:
            raise ValueError(f"burn_count must be 1-52 with burn='fixed', got {n}")
        if self.burn is not BurnPolicy.FIXED and n != 0:
            raise ValueError(f"burn_count must be 0 unless burn='fixed' (burn={self.burn.value!r}), got {n}")

    def to_dict(self) -> dict:
        return {
            "decks": self.decks,
            "closing": self.closing.value,
            "cut_card": self.cut_card.value,
            "burn": self.burn.value,
            "burn_count": self.burn_count,
            "on_error": self.on_error.value,
        }


@frozen.record
class CardRecord:
    """One card out of the shoe and where it went; totals are after the card."""

    shoe: int
    coup: int                    # the coup it belongs to (or was extra to); 0 before the first coup
    seq: int                     # 1-based count of cards drawn from this shoe, burn included
    card: Card
    role: Role
    side: Side | None            # where the tableau put it (None unless role is coup)
    index: int | None            # 0-based position in the coup's dealing order
    punto_total: int
    banco_total: int
    next_side: Side | None
    counter: int | None          # the shoe's counter, as reported
    reported_side: Side | None   # where it was seen to land, as reported
    source: str
    t: float


@frozen.record
class Step:
    """What one input produced."""

    record: CardRecord | None
    snapshot: CoupSnapshot
    result: CoupResult | None
    alerts: tuple[Alert, ...]


class _TableCoup(Coup):
    """A coup plus the table's bookkeeping (internal)."""

    __slots__ = (
        "shoe", "number", "coup_id", "last_hand", "held", "voided", "settled", "closed",
        "close_requested", "settlements", "result", "extras",
    )

    def __init__(self, shoe: int, number: int, last_hand: bool):
        Coup.__init__(self)
        self.shoe = shoe
        self.number = number
        self.coup_id = f"{shoe}-{number}"
        self.last_hand = last_hand
        self.held = False
        self.voided = False
        self.settled = False
        self.closed = False           # settled or voided
        self.close_requested = False  # the dealer closed it while it was held
        self.settlements = 0
        self.result: CoupResult | None = None
        self.extras: list[Card] = []


def _codes(cards) -> list[str]:
    return [c.code for c in cards]


def _named(evidence: dict, by: Any) -> dict:
    """A person's action's evidence, naming the person last when one is named (even as null)."""
    if by is not UNSET:
        evidence["user"] = by
    return evidence


class DealingEngine:
    """One table's dealing procedure (see the module docstring for the API)."""

    __slots__ = (
        "_rules", "_auto", "_policy", "_shoe_no", "_shoe", "_coup", "_coups", "_seq", "_counter",
        "_n_alerts", "_cut", "_last_coup", "_burn_due", "_burn_turn", "_burn_card", "_undo", "_hold_next",
    )

    def __init__(self, rules: TableRules | None = None):
        if rules is None:
            rules = TableRules()
        if not isinstance(rules, TableRules):
            raise TypeError(f"rules must be a TableRules, got {type(rules).__name__}")
        self._rules = rules
        self._auto = rules.closing is Closing.AUTO
        self._policy = rules.on_error
        self._shoe_no = 0
        self._hold_next = False   # a fault between coups holds the next coup (policy 'hold')
        self._start_shoe(rules.decks)

    @property
    def rules(self) -> TableRules:
        return self._rules

    # ------------------------------------------------------------------ cards

    def deal(self, card, *, side=None, counter=None, source: str = "shoe", t: float = 0.0) -> Step:
        """A card came out of the shoe (see the module docstring)."""
        idx = INDEX_BY_ID.get(id(card))
        if idx is None:
            card = as_card(card)
            idx = INDEX_BY_ID[id(card)]
        if side is not None and side.__class__ is not Side:
            side = _enum(Side, side.lower() if isinstance(side, str) else side, "side")
        if counter is not None and counter.__class__ is not int:
            raise TypeError(f"counter must be an int, got {counter!r}")
        coup = self._coup
        alerts = result = None
        if coup is None or coup.closed or coup.next_side is None:
            got = self._before_card(card, idx, side, counter, source, t)
            if got.__class__ is Step:
                return got
            coup, alerts, result = got

        # A card for the coup in progress: the hot path.
        seq = self._seq = self._seq + 1
        prev = self._counter
        if counter is not None:
            if prev is not None and counter != prev + 1:
                alerts = self._add(alerts, self._out_of_order(coup.number, card, seq, counter, prev, t))
            self._counter = counter
        shoe = self._shoe
        if not shoe.take(idx):
            alerts = self._add(alerts, self._impossible(coup.number, card, idx, seq, source, t))
        index = coup.count
        placed = coup.add(card)
        shoe.dealt += 1
        if side is not None and side is not placed:
            alerts = self._add(alerts, self._wrong_side(coup.number, card, seq, index, placed.value, side, t))
        nxt = coup.next_side
        if alerts:
            self._apply_policy(coup, alerts, t)
            if coup.voided:
                nxt = None
        if nxt is None and self._auto and not coup.held and not coup.voided:
            result = self._settle(coup)
        self._undo = (Role.COUP, idx, prev, coup)
        rec = CardRecord.make(
            coup.shoe, coup.number, seq, card, Role.COUP, placed, index, coup.punto_total,
            coup.banco_total, nxt, counter, side, source, t,
        )
        return Step.make(rec, self._snap(coup), result, tuple(alerts) if alerts else _NO_ALERTS)

    def _before_card(self, card, idx, side, counter, source, t):
        """Slow path of deal(): no coup in progress. Returns a Step, or (coup, alerts, result)."""
        coup = self._coup
        if self._shoe_over():
            return self._deal_aside(card, idx, counter, source, t, AlertKind.AFTER_LAST_HAND, coup)
        if self._burn_due or self._burn_turn:
            return self._deal_burn(card, idx, side, counter, source, t)
        alerts = result = None
        if coup is not None and not coup.closed:
            # The coup is complete but not closed (confirm policy) or held: this card is extra.
            if self._policy is not ErrorPolicy.CONTINUE or coup.held:
                return self._deal_aside(card, idx, counter, source, t, AlertKind.EXTRA_CARD, coup)
            # continue: record the error, settle the coup as 'auto' would and deal on.
            alerts = [self._extra_alert(coup, card, self._seq + 1, "the coup was not closed; the card "
                                        "opens the next coup (error policy 'continue')", t)]
            result = self._settle(coup)
            if self._shoe_over():
                return self._deal_aside(card, idx, counter, source, t, AlertKind.AFTER_LAST_HAND, coup,
                                        alerts, result)
        self._coups += 1
        coup = self._coup = _TableCoup(self._shoe_no, self._coups, self._coups == self._last_coup)
        if self._hold_next:
            coup.held, self._hold_next = True, False
        return coup, alerts, result

    def _deal_burn(self, card, idx, side, counter, source, t) -> Step:
        seq = self._seq = self._seq + 1
        number = self._coups
        prev = self._counter
        alerts = self._counter_and_composition(number, card, idx, seq, counter, source, t)
        self._undo = (Role.BURN, idx, prev, (self._burn_due, self._burn_turn, self._burn_card))
        self._shoe.burned += 1
        if self._burn_turn:
            self._burn_turn = False
            self._burn_card = card
            self._burn_due = card.value or 10
        else:
            self._burn_due -= 1
        if side is not None:
            alerts = self._add(alerts, self._wrong_side(number, card, seq, None, "burn", side, t))
        rec = CardRecord.make(
            self._shoe_no, number, seq, card, Role.BURN, None, None, 0, 0, self._next_side_between(),
            counter, side, source, t,
        )
        return Step.make(rec, self.snapshot(), None, tuple(alerts) if alerts else _NO_ALERTS)

    def _deal_aside(self, card, idx, counter, source, t, kind, coup, alerts=None, result=None) -> Step:
        """A card that goes to no coup: extra, or after the last hand."""
        seq = self._seq = self._seq + 1
        number = coup.number if coup is not None else self._coups
        alerts = alerts or []
        prev = self._counter
        alerts += self._counter_and_composition(number, card, idx, seq, counter, source, t) or ()
        self._undo = (Role.EXTRA, idx, prev, coup)
        self._shoe.discarded += 1
        if kind is AlertKind.EXTRA_CARD:
            reason = ("the coup is held for a supervisor" if coup.held
                      else "the coup is complete and not closed")
            alerts.append(self._extra_alert(coup, card, seq, reason, t))
            coup.extras.append(card)
            self._apply_policy(coup, alerts, t)
        else:
            alerts.append(self._alert(
                number, AlertKind.AFTER_LAST_HAND, Severity.ERROR,
                f"{card.code} was dealt after the last hand (coup {self._last_coup}) of shoe "
                f"{self._shoe_no}: the shoe is over and a new shoe is due.",
                {"card": card.code, "seq": seq, "last_hand": self._last_coup}, t))
        pt = coup.punto_total if coup is not None else 0
        bt = coup.banco_total if coup is not None else 0
        rec = CardRecord.make(
            self._shoe_no, number, seq, card, Role.EXTRA, None, None, pt, bt,
            coup.next_side if coup is not None and not coup.closed else None,
            counter, None, source, t,
        )
        return Step.make(rec, self.snapshot(), result, tuple(alerts))

    def _counter_and_composition(self, number, card, idx, seq, counter, source, t):
        """Counter and composition checks of a card outside a coup; returns alerts or None."""
        alerts = None
        prev = self._counter
        if counter is not None:
            if prev is not None and counter != prev + 1:
                alerts = [self._out_of_order(number, card, seq, counter, prev, t)]
            self._counter = counter
        if not self._shoe.take(idx):
            alerts = self._add(alerts, self._impossible(number, card, idx, seq, source, t))
        return alerts

    # ------------------------------------------------------------- the coup

    def close_coup(self, *, t: float = 0.0) -> Step:
        """The dealer closes the coup: settles a complete coup, ``missing_card`` if a card is due."""
        coup = self._coup
        if coup is None or coup.closed or coup.count == 0:
            return self._step()
        if coup.next_side is None:
            if coup.held:
                coup.close_requested = True
                return self._step()
            return self._step(result=self._settle(coup))
        alerts = [self._alert(
            coup.number, AlertKind.MISSING_CARD, Severity.ERROR,
            f"Coup {coup.number} was closed with a card still due to {coup.next_side.value} "
            f"({coup.count} cards dealt).",
            {"due": coup.next_side.value, "cards": coup.count, **self._layout(coup)}, t)]
        self._apply_policy(coup, alerts, t)
        return self._step(alerts=alerts)

    def cut_card(self, *, t: float = 0.0) -> Step:
        """The cut card came out: fixes the last hand by the cut-card policy (once per shoe)."""
        if not self._cut:
            self._cut = True
            coup = self._coup
            in_progress = coup is not None and not coup.closed
            current = coup.number if in_progress else self._coups + 1
            if self._rules.cut_card is CutCardPolicy.ONE_MORE:
                current += 1
            self._last_coup = current
            if in_progress and coup.number == current:
                coup.last_hand = True
        return self._step()

    def push_back(self, card=None, *, counter=None, t: float = 0.0) -> Step:
        """A card went back into the shoe; the last card drawn is taken back if it can be."""
        reported = as_card(card) if card is not None else None
        undo = self._undo
        self._undo = None
        coup = self._coup
        evidence = {"card": reported.code if reported else None, "counter": counter}
        reason = None
        withdrawn = False
        if undo is None:
            reason = "no card was drawn since the last push-back, void, correction or new shoe"
        else:
            role, idx, prev_counter, where = undo
            last = CARDS[idx]
            evidence["last_card"] = last.code
            if reported is not None and reported is not last:
                reason = f"the last card drawn was {last.code}, not {reported.code}"
                self._undo = undo
        if reason is not None:
            severity = Severity.ERROR
            message = f"A card was pushed back into the shoe but could not be taken back: {reason}."
            evidence.update(taken_back=None, reason=reason)
        else:
            self._shoe.put_back(idx)
            self._seq -= 1
            self._counter = prev_counter
            if role is Role.COUP:
                withdrawn = where.settled
                self._shoe.dealt -= 1
                from_side = where.side_of(where.count - 1).value
                where.reset(where.cards()[:-1])
                if withdrawn:
                    where.settled = where.closed = False
                    where.result = None
                coup = where
            elif role is Role.BURN:
                from_side = "burn"
                self._shoe.burned -= 1
                self._burn_due, self._burn_turn, self._burn_card = where
            else:
                from_side = "extra"
                self._shoe.discarded -= 1
                if where is not None and where.extras and where.extras[-1] is last:
                    where.extras.pop()
            evidence.update(taken_back=last.code, taken_back_from=from_side, result_withdrawn=withdrawn)
            severity = Severity.ERROR if withdrawn else Severity.WARNING
            where_text = f"coup {coup.number}" if role is Role.COUP else from_side
            message = f"{last.code} was pushed back into the shoe and taken back out of {where_text}."
            if withdrawn:
                message += " Its result is withdrawn."
        number = coup.number if coup is not None else self._coups
        alerts = [self._alert(number, AlertKind.CARD_PUSHED_BACK, severity, message, evidence, t)]
        self._apply_policy(coup, alerts, t)
        return self._step(alerts=alerts)

    # ------------------------------------------------------------ supervisor

    def void_coup(self, reason: str = "", *, by: Any = UNSET, t: float = 0.0) -> Step:
        """Void the current coup (even a settled one: its result is withdrawn); ``by``: who did."""
        coup = self._coup
        if coup is None:
            raise EngineError(f"shoe {self._shoe_no} has no coup to void")
        if coup.voided:
            raise EngineError(f"coup {coup.coup_id} is already void")
        alerts = []
        self._void(coup, reason, alerts, t, by)
        self._undo = None
        return self._step(alerts=alerts)

    def hold(self, reason: str = "", *, t: float = 0.0) -> Step:
        """A fault outside the cards (a shoe fault, events lost on the link) stops the game by the
        error policy: ``hold`` holds the coup in progress, or the next one to open, until a
        supervisor resolves it (nothing settles meanwhile); ``void`` voids the coup in progress;
        ``continue`` changes nothing. The caller raises the alert that says why."""
        coup = self._coup
        in_progress = coup is not None and not coup.closed and not coup.voided
        alerts: list = []
        if self._policy is ErrorPolicy.HOLD:
            if in_progress:
                coup.held = True
            else:
                self._hold_next = True
        elif self._policy is ErrorPolicy.VOID and in_progress and coup.count:
            self._void(coup, f"error policy 'void' after {reason}" if reason else "error policy 'void'",
                       alerts, t)
        return self._step(alerts=alerts)

    @property
    def hold_pending(self) -> bool:
        """A hold waits for the next coup to open."""
        return self._hold_next

    def resolve(self, reason: str = "", *, by: Any = UNSET, t: float = 0.0) -> Step:
        """Release a held coup: it goes on by the tableau and settles when complete; ``by``: who did."""
        coup = self._coup
        if (coup is None or not coup.held) and self._hold_next:
            # The hold waited for a coup that has not opened: release it before it does.
            self._hold_next = False
            number = self._coups + 1
            return self._step(alerts=[self._alert(
                number, AlertKind.COUP_RESOLVED, Severity.INFO,
                f"Coup {number} released by the supervisor before it opened" + (f": {reason}." if reason else "."),
                _named({"reason": reason}, by), t)])
        if coup is None or not coup.held:
            raise EngineError("no coup is held")
        coup.held = False
        alerts = [self._alert(
            coup.number, AlertKind.COUP_RESOLVED, Severity.INFO,
            f"Coup {coup.number} released by the supervisor" + (f": {reason}." if reason else "."),
            _named({"reason": reason, **self._layout(coup)}, by), t)]
        result = None
        if coup.next_side is None and (self._auto or coup.close_requested):
            result = self._settle(coup)
        return self._step(result=result, alerts=alerts)

    def correct_card(self, index: int, card, reason: str = "", *, by: Any = UNSET,
                     t: float = 0.0) -> Step:
        """Replace the card at ``index`` (0-based, dealing order) of the current coup.

        The coup is replayed through the tableau with the corrected card: sides and
        totals follow; cards it no longer has room for become extra cards; a settled
        coup is re-settled (result ``revision`` + 1) or, if it now needs a card,
        reopened. The original reading stays in the ``card_corrected`` alert. ``by``: who
        corrected it (named in that alert and in a void the correction's errors bring).
        """
        coup = self._coup
        if coup is None or coup.voided:
            raise EngineError("there is no coup to correct (none yet, or it is void)")
        cards = list(coup.cards())
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(cards):
            raise EngineError(f"coup {coup.coup_id} has {len(cards)} cards; no card at index {index!r}")
        try:
            new = as_card(card)
        except TypeError as exc:  # a missing card code is an input the engine refuses, like a bad one
            raise EngineError(str(exc)) from None
        old = cards[index]
        if new is old:
            raise EngineError(f"card {index} of coup {coup.coup_id} is already {new.code}")
        shoe = self._shoe
        old_side = coup.side_of(index).value
        shoe.put_back(INDEX_BY_ID[id(old)])
        alerts = []
        correction = self._alert(
            coup.number, AlertKind.CARD_CORRECTED, Severity.INFO,
            f"Card {index + 1} of coup {coup.number} corrected from {old.code} to {new.code}"
            + (f": {reason}." if reason else "."),
            _named({"index": index, "original": old.code, "corrected": new.code, "side": old_side,
                    "reason": reason, "before": self._layout(coup)}, by), t)
        alerts.append(correction)
        new_idx = INDEX_BY_ID[id(new)]
        if not shoe.take(new_idx):
            alerts.append(self._impossible(coup.number, new, new_idx, None, "correction", t))
        cards[index] = new
        was_settled = coup.settled
        surplus = coup.reset(cards)
        for extra in surplus:
            shoe.dealt -= 1
            shoe.discarded += 1
            coup.extras.append(extra)
            alerts.append(self._extra_alert(coup, extra, None, "the corrected coup has no room for it", t))
        if was_settled:
            coup.settled = coup.closed = False
            coup.result = None
        self._apply_policy(coup, alerts, t, by)
        result = None
        if (coup.next_side is None and not coup.held and not coup.voided
                and (self._auto or was_settled or coup.close_requested)):
            result = self._settle(coup)
        self._undo = None
        return self._step(result=result, alerts=alerts)

    # ------------------------------------------------------------------ shoe

    def next_shoe_number(self) -> int:
        """The number :meth:`new_shoe` gives the next shoe (a shoe nothing was drawn from is
        replaced and keeps its number)."""
        untouched = self._seq == 0 and self._coup is None
        return self._shoe_no if untouched else self._shoe_no + 1

    def new_shoe(self, decks: int | None = None, *, t: float = 0.0, number: int | None = None) -> Step:
        """Start a fresh shoe (``decks`` defaults to the rules').

        ``number``: the number the new shoe takes instead of the next one (a journal replay that
        starts at a later shoe numbers it as the live run did).

        A complete coup that was not closed is settled first; a coup still waiting
        for a card is voided with ``missing_card``; a held coup must be resolved or
        voided first (EngineError).
        """
        try:
            decks = self._rules.decks if decks is None else check_decks(decks)
        except ValueError as exc:
            raise EngineError(str(exc)) from None
        if number is not None:
            self._shoe_no += number - self.next_shoe_number()
        coup = self._coup
        result = None
        alerts = []
        if coup is not None and not coup.closed and coup.count:
            if coup.held:
                raise EngineError(f"coup {coup.coup_id} is held for a supervisor: resolve or void it first")
            if coup.next_side is None:
                result = self._settle(coup)
            else:
                alerts.append(self._alert(
                    coup.number, AlertKind.MISSING_CARD, Severity.ERROR,
                    f"A new shoe started while coup {coup.number} waited for a card to "
                    f"{coup.next_side.value}; the coup is void.",
                    {"due": coup.next_side.value, "cards": coup.count, **self._layout(coup)}, t))
                self._void(coup, "new shoe", alerts, t)
        if self._seq == 0 and coup is None:
            self._shoe_no -= 1  # a shoe nothing was drawn from is replaced, not counted
        self._start_shoe(decks)
        return self._step(result=result, alerts=alerts)

    def _start_shoe(self, decks: int) -> None:
        self._shoe_no += 1
        self._shoe = Shoe(decks)
        self._coup: _TableCoup | None = None
        self._coups = 0
        self._seq = 0
        self._counter: int | None = None
        self._n_alerts = 0
        self._cut = False
        self._last_coup: int | None = None
        self._burn_card: Card | None = None
        self._burn_turn = self._rules.burn is BurnPolicy.FIRST_CARD_VALUE
        self._burn_due = self._rules.burn_count if self._rules.burn is BurnPolicy.FIXED else 0
        self._undo = None

    # ----------------------------------------------------------------- views

    def snapshot(self) -> CoupSnapshot:
        """The current coup (the latest of the shoe, possibly settled), or an empty next coup."""
        coup = self._coup
        if coup is not None:
            return self._snap(coup)
        n = self._coups + 1
        return CoupSnapshot.make(
            self._shoe_no, n, f"{self._shoe_no}-{n}", (), (), 0, 0, self._next_side_between(),
            False, False, False, False, n == self._last_coup, self._burn_due + self._burn_turn,
        )

    def shoe_state(self) -> ShoeState:
        coup = self._coup
        over = self._shoe_over()
        in_progress = coup is not None and not coup.closed
        upcoming = coup.number if in_progress else self._coups + 1
        return self._shoe.state(
            self._shoe_no, coups=self._coups, cut_card_out=self._cut,
            last_hand=self._last_coup is not None and not over and upcoming == self._last_coup,
            shoe_over=over, burn_due=self._burn_due + self._burn_turn, burn_card=self._burn_card,
        )

    # -------------------------------------------------------------- internals

    def _snap(self, coup: _TableCoup) -> CoupSnapshot:
        return CoupSnapshot.make(
            coup.shoe, coup.number, coup.coup_id, coup.punto, coup.banco, coup.punto_total,
            coup.banco_total, None if coup.voided else coup.next_side, coup.next_side is None,
            coup.settled, coup.held, coup.voided, coup.last_hand, 0,
        )

    def _step(self, *, result=None, alerts=None) -> Step:
        return Step.make(None, self.snapshot(), result, tuple(alerts) if alerts else _NO_ALERTS)

    def _next_side_between(self):
        if self._burn_due or self._burn_turn or self._shoe_over():
            return None
        return PUNTO

    def _shoe_over(self) -> bool:
        coup = self._coup
        return coup is not None and coup.closed and coup.number == self._last_coup

    def _settle(self, coup: _TableCoup) -> CoupResult:
        result = coup_result(coup, coup.shoe, coup.number, last_hand=coup.last_hand,
                             revision=coup.settlements)
        coup.settlements += 1
        coup.settled = coup.closed = True
        coup.result = result
        return result

    def _void(self, coup: _TableCoup, reason: str, alerts: list, t, by: Any = UNSET) -> None:
        withdrawn = coup.settled
        coup.voided = coup.closed = True
        coup.held = coup.settled = False
        coup.result = None
        alerts.append(self._alert(
            coup.number, AlertKind.COUP_VOIDED, Severity.INFO,
            f"Coup {coup.number} is void" + (f": {reason}." if reason else ".")
            + (" Its result is withdrawn." if withdrawn else ""),
            _named({"reason": reason, "result_withdrawn": withdrawn, **self._layout(coup)}, by), t))

    def _apply_policy(self, coup, alerts: list, t, by: Any = UNSET) -> None:
        """The error policy, for the coup in progress, after error or critical alerts (``by``: the
        person whose action brought them, named in the void)."""
        if coup is None or coup.closed:
            return
        errors = [a.id for a in alerts if a.severity.stops_play]
        if not errors:
            return
        if self._policy is ErrorPolicy.HOLD:
            coup.held = True
        elif self._policy is ErrorPolicy.VOID:
            self._void(coup, f"error policy 'void' after {', '.join(errors)}", alerts, t, by)

    @staticmethod
    def _add(alerts, alert):
        if alerts is None:
            return [alert]
        alerts.append(alert)
        return alerts

    @staticmethod
    def _layout(coup) -> dict:
        return {"punto": _codes(coup.punto), "banco": _codes(coup.banco),
                "punto_total": coup.punto_total, "banco_total": coup.banco_total}

    def _alert(self, coup: int, kind, severity, message, evidence, t) -> Alert:
        self._n_alerts += 1
        return make_alert(self._shoe_no, coup, self._n_alerts, kind, severity, message, evidence, t)

    def _extra_alert(self, coup, card, seq, reason, t) -> Alert:
        return self._alert(
            coup.number, AlertKind.EXTRA_CARD, Severity.ERROR,
            f"Extra card {card.code}: coup {coup.number} needs no more cards ({reason}).",
            {"card": card.code, "seq": seq, "reason": reason, "cards": coup.count, **self._layout(coup)}, t)

    def _out_of_order(self, coup, card, seq, counter, prev, t) -> Alert:
        expected = prev + 1
        if counter > expected:
            problem = "gap"
            message = (f"The shoe's counter jumped from {prev} to {counter} at {card.code}: "
                       f"{counter - expected} card(s) not reported.")
        else:
            problem = "step_back"
            message = (f"The shoe's counter went back from {prev} to {counter} at {card.code}: "
                       "a card reported twice or out of order.")
        return self._alert(coup, AlertKind.OUT_OF_ORDER, Severity.ERROR, message, {
            "card": card.code, "seq": seq, "counter": counter, "previous": prev,
            "expected": expected, "problem": problem, "difference": counter - expected}, t)

    def _impossible(self, coup, card, idx, seq, source, t) -> Alert:
        decks = self._shoe.decks
        seen = self._shoe.seen(idx)
        return self._alert(
            coup, AlertKind.IMPOSSIBLE_CARD, Severity.CRITICAL,
            f"{card.code} seen {seen} times but a shoe of {decks} decks holds {decks}: "
            "a foreign or duplicated card.",
            {"card": card.code, "seq": seq, "seen": seen, "shoe_holds": decks, "source": source}, t)

    def _wrong_side(self, coup, card, seq, index, expected, reported, t) -> Alert:
        return self._alert(
            coup, AlertKind.WRONG_SIDE, Severity.ERROR,
            f"{card.code} landed on {reported.value} but the tableau gives it to {expected}.",
            {"card": card.code, "seq": seq, "index": index, "expected": expected,
             "reported": reported.value}, t)
