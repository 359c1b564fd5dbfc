"""The presenter: the table's topic payloads, their ``seq``, and the retained state.

Every message the table publishes goes through :meth:`Presenter.publish`, which
stamps the common fields (``schema``, ``seq``, ``table_id``, ``type``, ``t``)
and remembers the last message of each retained topic, so that a reconnect (or
a display joining late) gets the whole state. ``seq`` counts the table's
messages; it only ever increases, across shoes and restarts (a new shoe carries
it in the journal), so a display can drop a message it has seen.

The ``coup``/``shoe``/``alerts``/... methods shape one topic's payload each
(docs/mqtt.md is their contract).
"""

from __future__ import annotations

from typing import Any

from shoe_daemon.core.outputs import Outbox, Publish

SCHEMA = 1


class Presenter:
    def __init__(self, table_id: str):
        self.table_id = table_id
        self.seq = 0                           # the last message's seq
        self._retained: dict[str, Publish] = {}

    # -- the one way out -----------------------------------------------------------------------
    def publish(self, out: Outbox, topic: str, kind: str, body: dict, t: float, *, retain: bool = False) -> None:
        self.seq += 1
        payload = {**body, "schema": SCHEMA, "seq": self.seq, "table_id": self.table_id, "type": kind, "t": t}
        msg = Publish(topic, payload, qos=1, retain=retain)
        if retain:
            self._retained[topic] = msg
        out.append(msg)

    def continue_from(self, seq: int) -> None:
        """Number the next message after ``seq`` (a replay that starts at a later shoe)."""
        if seq > self.seq:
            self.seq = seq

    def carry(self, topic: str, payload: dict) -> None:
        """Take over a retained topic's last payload as it was published (a shoe's carried history)."""
        self._retained[topic] = Publish(topic, dict(payload), qos=1, retain=True)

    # -- reading back --------------------------------------------------------------------------
    @property
    def started(self) -> bool:
        """True once any retained topic has been published."""
        return bool(self._retained)

    def retained(self) -> list[Publish]:
        """The last message of every retained topic, in publication (seq) order: a display drops a
        message whose seq is below one it has seen."""
        return sorted(self._retained.values(), key=lambda msg: msg.payload["seq"])

    def last_payload(self, topic: str) -> dict | None:
        msg = self._retained.get(topic)
        return msg.payload if msg is not None else None

    # -- the topics --------------------------------------------------------------------------
    def card(self, out: Outbox, t: float, card: dict) -> None:
        self.publish(out, "coup/card", "card", card, t)

    def result(self, out: Outbox, t: float, result: dict) -> None:
        self.publish(out, "coup/result", "result", result, t)

    def coup(self, out: Outbox, t: float, snapshot: dict, awaiting: dict, card_sources: dict,
             shoe: dict) -> None:
        """``coup/current`` (with the totals announced) and ``shoe``, after every change. ``snapshot``
        is a fresh dict (the engine's snapshot as a dict): it becomes the payload."""
        snap = snapshot
        snap["announce"] = f"Punto {snap['punto_total']}, Banco {snap['banco_total']}"
        snap["awaiting"] = awaiting
        snap["card_sources"] = card_sources
        self.publish(out, "coup/current", "coup", snap, t, retain=True)
        self.publish(out, "shoe", "shoe", shoe, t, retain=True)

    def alert(self, out: Outbox, t: float, action: str, alert: dict) -> None:
        self.publish(out, "alerts/event", "alert", {"action": action, "alert": alert}, t)

    def alerts(self, out: Outbox, t: float, active: list[dict]) -> None:
        self.publish(out, "alerts/active", "alerts", {"alerts": active}, t, retain=True)

    def sources(self, out: Outbox, t: float, sources: dict) -> None:
        self.publish(out, "sources", "sources", {"sources": dict(sorted(sources.items()))}, t, retain=True)

    def history(self, out: Outbox, t: float, coups: list[dict]) -> None:
        self.publish(out, "history", "history", {"coups": coups}, t, retain=True)

    def roads(self, out: Outbox, t: float, shoe: int, roads: dict, stats: dict) -> None:
        self.publish(out, "roads", "roads", {"shoe": shoe, **roads}, t, retain=True)
        self.publish(out, "stats", "stats", {"shoe": shoe, **stats}, t, retain=True)

    def odds(self, out: Outbox, t: float, body: dict[str, Any]) -> None:
        self.publish(out, "odds", "odds", body, t, retain=True)
