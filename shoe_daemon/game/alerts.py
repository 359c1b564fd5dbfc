"""Dealing errors and supervisor actions, as typed alerts.

An :class:`Alert` is what the rules engine raises when the cards disagree with
the rules or with the shoe (see docs/rules.md for when each kind is raised and
what the engine does next). It is a frozen record:

``id``        deterministic, ``"<shoe>-<coup>-<n>"``: ``n`` counts the alerts of the
              shoe from 1, ``coup`` is the coup concerned (0 before the first coup).
``kind``      :class:`AlertKind`.
``severity``  :class:`Severity`; ``error`` and ``critical`` alerts trigger the
              table's error policy (hold, void or continue), ``info`` and
              ``warning`` never change the game.
``shoe``, ``coup``  the shoe number and coup number.
``message``   one sentence for a supervisor's screen.
``evidence``  the facts, as JSON data (card codes as strings), read-only.
``t``         the caller's timestamp of the input that raised it (only recorded).
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType
from typing import Any

from shoe_daemon.game.frozen import jsonable, record

__all__ = ["Alert", "AlertKind", "Severity", "make_alert"]


class AlertKind(StrEnum):
    # Dealing errors.
    EXTRA_CARD = "extra_card"            # a card when the coup needs none
    MISSING_CARD = "missing_card"        # the coup closed while a card is due
    WRONG_SIDE = "wrong_side"            # the card landed where the tableau does not put it
    OUT_OF_ORDER = "out_of_order"        # the shoe's card counter skipped or stepped back
    IMPOSSIBLE_CARD = "impossible_card"  # more copies of a card than the shoe holds
    AFTER_LAST_HAND = "after_last_hand"  # a card after the shoe's last hand
    CARD_PUSHED_BACK = "card_pushed_back"  # the shoe saw a card go back in
    # Supervisor actions, recorded so that the alert stream is the coup's audit trail.
    CARD_CORRECTED = "card_corrected"
    COUP_VOIDED = "coup_voided"
    COUP_RESOLVED = "coup_resolved"


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"
    CRITICAL = "critical"

    @property
    def stops_play(self) -> bool:
        """True for the severities that trigger the error policy."""
        return self is Severity.ERROR or self is Severity.CRITICAL


@record
class Alert:
    id: str
    kind: AlertKind
    severity: Severity
    shoe: int
    coup: int
    message: str
    evidence: MappingProxyType
    t: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "severity": self.severity.value,
            "shoe": self.shoe,
            "coup": self.coup,
            "message": self.message,
            "evidence": jsonable(self.evidence),
            "t": self.t,
        }


def make_alert(
    shoe: int, coup: int, n: int, kind: AlertKind, severity: Severity, message: str,
    evidence: dict[str, Any], t: float,
) -> Alert:
    """An alert with the deterministic id ``"<shoe>-<coup>-<n>"``; evidence is copied as JSON data."""
    return Alert.make(
        f"{shoe}-{coup}-{n}", kind, severity, shoe, coup, message,
        MappingProxyType(jsonable(evidence)), float(t),
    )
