"""The alert book: every alert the table raises, the active ones until cleared.

An alert of severity ``warning`` and above stays active until it is cleared:
by a supervisor, or by the table itself when its cause goes away (a link that
comes back clears its ``link_lost``). Active alerts are carried into the next
shoe (a new shoe journals them), so error states survive shoes and restarts.
An ``info`` alert is news: published once, never active.

Alerts with a ``key`` stand for a condition (a link down, an odds advantage):
at most one per key is active, and the cause going away clears it by key.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from shoe_daemon.core.ledger import Ledger
from shoe_daemon.core.outputs import Outbox
from shoe_daemon.core.presenter import Presenter

PAST_ALERTS = 200     # cleared alerts kept for the API

# Table-level alert kinds (the dealing errors come from the engine's AlertKind).
LINK_LOST = "link_lost"
TAMPER = "tamper"
FAULT = "fault"
CARD_UNREADABLE = "card_unreadable"
SHOE_REMOVED = "shoe_removed"
SHOE_EMPTY = "shoe_empty"
ACTION_REJECTED = "action_rejected"
ODDS_ADVANTAGE = "odds_advantage"
MANUAL_ENTRY = "manual_entry_needed"
CAMERA_MISMATCH = "camera_mismatch"
WRONG_SIDE = "wrong_side"
COUP_VOIDED = "coup_voided"

STOPS_PLAY = ("error", "critical")


class AlertBook:
    def __init__(self, presenter: Presenter, ledger: Ledger):
        self._presenter = presenter
        self._ledger = ledger
        self.active: dict[str, dict] = {}       # in the order raised
        self.past: deque[dict] = deque(maxlen=PAST_ALERTS)
        self._raised = 0                        # numbers the table's own alerts ("x<n>" ids)

    def raise_alert(self, out: Outbox, *, t: float, source: str, shoe: int, coup: int, kind: str,
                    severity: str, message: str, evidence: dict, key: str | None = None) -> dict:
        """A table-level alert (the engine numbers its own): returns it as published."""
        self._raised += 1
        alert: dict[str, Any] = {
            "id": f"{shoe}-{coup}-x{self._raised}", "kind": kind, "severity": severity,
            "shoe": shoe, "coup": coup, "message": message, "evidence": evidence,
            "source": source, "t": t,
        }
        if key:
            alert["key"] = key
        self.add(out, alert, t)
        return alert

    def add(self, out: Outbox, alert: dict, t: float) -> None:
        """Record, activate and publish an alert (the engine's, or one raised here)."""
        self._ledger.note(alert["shoe"], alert["coup"], "alerts", alert)
        standing = alert["severity"] != "info"
        if standing:
            self.active[alert["id"]] = alert
        self._presenter.alert(out, t, "raised", alert)
        if standing:
            self.publish(out, t)
        if alert["kind"] == COUP_VOIDED:
            out.append(self._ledger.void_record(alert))

    def clear(self, out: Outbox, alert_id: str, t: float, *, by: Any, reason: str = "") -> bool:
        alert = self.active.pop(alert_id, None)
        if alert is None:
            return False
        alert = {**alert, "cleared": {"by": by, "t": t, "reason": reason}}
        self.past.append(alert)
        self._presenter.alert(out, t, "cleared", alert)
        self.publish(out, t)
        return True

    def clear_key(self, out: Outbox, key: str, t: float, *, by: Any, reason: str) -> None:
        for alert_id in self.ids_with_key(key):
            self.clear(out, alert_id, t, by=by, reason=reason)

    def acknowledge(self, out: Outbox, alert_id: Any, t: float, *, by: Any) -> bool:
        alert = self.active.get(alert_id)
        if alert is None:
            return False
        # A new dict: messages already published keep the alert as it was then.
        alert = {**alert, "acknowledged": {"by": by, "t": t}}
        self.active[alert["id"]] = alert
        self._presenter.alert(out, t, "acknowledged", alert)
        self.publish(out, t)
        return True

    def repeat(self, out: Outbox, key: str, t: float, *, times: int = 1) -> None:
        """The condition behind an active alert happened again: one alert with a count, not a new
        alert each time. The active list is republished when the count reaches 2, 4, 8, ... (a
        stream of repeats costs a message per doubling, and memory stays flat)."""
        for alert_id in self.ids_with_key(key):
            alert = self.active[alert_id]
            before = alert.get("count", 1)
            after = before + max(1, times)
            self.active[alert_id] = {**alert, "count": after, "last_t": t}
            if after.bit_length() > before.bit_length():
                self.publish(out, t)

    def ids_with_key(self, key: str) -> list[str]:
        return [alert_id for alert_id, alert in self.active.items() if alert.get("key") == key]

    def has_key(self, key: str) -> bool:
        return any(alert.get("key") == key for alert in self.active.values())

    def carry(self, alerts: list[dict]) -> None:
        """A new shoe starts with the alerts still active when it was journaled."""
        self.active = {a["id"]: dict(a) for a in alerts}

    def stops_play(self) -> bool:
        """An active error stops the dealing (a lost link does not: another reader stands in)."""
        return any(a["severity"] in STOPS_PLAY and a["kind"] != LINK_LOST for a in self.active.values())

    def publish(self, out: Outbox, t: float) -> None:
        self._presenter.alerts(out, t, list(self.active.values()))
