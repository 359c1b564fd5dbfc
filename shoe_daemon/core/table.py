"""The deterministic core of one table: journaled events in, outputs out.

``Table.handle(event)`` turns one input event into the outputs the sinks
render: MQTT messages (see docs/mqtt.md), the shoe's dealer lights, and coup
records for the journal's recall table. It never reads a clock (time comes with
the events) and never does I/O, so the same events always give the same
outputs, byte for byte: crash recovery replays the journal through a fresh
Table, and a fixture's check file is the Table's outputs. Feed it through
:class:`shoe_daemon.core.pipeline.Pipeline`, which stamps each event
(:meth:`Table.prepare`) and journals it before the core sees it.

The table only dispatches: each event kind has one handler here, and the work is
done by the parts it owns, each with one job:

* the rules engine (``shoe_daemon.game``): the coup, the tableau, the shoe;
* :class:`~shoe_daemon.core.presenter.Presenter`: topic payloads, ``seq``, retained state;
* :class:`~shoe_daemon.core.alerts.AlertBook`: raise, acknowledge, clear, carry alerts;
* :class:`~shoe_daemon.core.ledger.Ledger`: bets, settlements, recall records;
* :class:`~shoe_daemon.core.scoreboard.Scoreboard`: history, roads, statistics, odds;
* :class:`~shoe_daemon.core.readers.ReaderArbiter`: links, unread, waiting and offline cards;
* :class:`~shoe_daemon.core.camera.CameraCrossCheck`: the camera as stand-in and cross-check.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shoe_daemon.core.alerts import (
    ACTION_REJECTED,
    CAMERA_MISMATCH,
    CARD_UNREADABLE,
    FAULT,
    LINK_LOST,
    SHOE_EMPTY,
    SHOE_REMOVED,
    TAMPER,
    AlertBook,
)
from shoe_daemon.core.camera import CameraCrossCheck
from shoe_daemon.core.errors import REJECTIONS, Rejected
from shoe_daemon.core.events import UNSET, Event, Kind
from shoe_daemon.core.ledger import Ledger
from shoe_daemon.core.outputs import Lights, Outbox, Publish, SetLights
from shoe_daemon.core.presenter import Presenter
from shoe_daemon.core.readers import ReaderArbiter
from shoe_daemon.core.scoreboard import Scoreboard
from shoe_daemon.game.alerts import AlertKind
from shoe_daemon.game.cards import parse_card
from shoe_daemon.game.engine import DealingEngine, Step, TableRules
from shoe_daemon.game.settle import Limit, TableLimits, to_decimal

# Faults the MQTT publisher reports (source "mqtt"), see docs/mqtt.md.
BROKER_LOST = "broker_connection_lost"
BROKER_RESTORED = "broker_connection_restored"



def rules_from_config(table_cfg) -> TableRules:
    return TableRules(
        decks=table_cfg.decks,
        closing=table_cfg.closing,
        cut_card=table_cfg.cut_card,
        burn=table_cfg.burn,
        burn_count=table_cfg.burn_count if table_cfg.burn == "fixed" else 0,
        on_error=table_cfg.on_error,
    )


def limits_from_config(limits_cfg) -> TableLimits:
    """The settlement's limits from ``[table.limits]`` (``table_max``: all the boxes' bets of a kind)."""
    def one(b) -> Limit:
        # Limit wants a positive minimum; a configured 0 means "any positive amount".
        return Limit(b.min if b.min > 0 else to_decimal("1e-9"), b.max, b.table_max)

    return TableLimits(punto=one(limits_cfg.punto), banco=one(limits_cfg.banco), tie=one(limits_cfg.tie))


# Actions a person takes on the coup they saw: refused if another coup is current.
_COUP_ACTIONS = frozenset({Kind.VOID_COUP, Kind.RESOLVE_COUP, Kind.CORRECT_CARD})


class Table:
    def __init__(self, rules: TableRules, table_id: str, *, odds_alert_edge: float = 0.0,
                 limits: TableLimits | None = None):
        self.rules = rules
        self.table_id = table_id
        self.engine = DealingEngine(rules)
        self.presenter = Presenter(table_id)
        self.ledger = Ledger(limits)
        self.alerts = AlertBook(self.presenter, self.ledger)
        self.scoreboard = Scoreboard(self.presenter, self.alerts, odds_alert_edge=odds_alert_edge)
        self.readers = ReaderArbiter()
        self.camera = CameraCrossCheck(self.engine, self.readers, raise_alert=self._raise,
                                       deal=self._on_card, publish_coup=self._publish_coup)
        self.lights = Lights.OFF
        self.events = 0

    @classmethod
    def from_config(cls, config) -> Table:
        return cls(rules_from_config(config.table), config.table.id,
                   odds_alert_edge=config.table.odds_alert_edge, limits=limits_from_config(config.table.limits))

    # -- what readers see (the API, metrics, tests) ------------------------------------------------
    @property
    def seq(self) -> int:
        return self.presenter.seq

    @property
    def limits(self) -> TableLimits | None:
        return self.ledger.limits

    @limits.setter
    def limits(self, value: TableLimits | None) -> None:
        self.ledger.limits = value

    @property
    def active_alerts(self) -> dict[str, dict]:
        return self.alerts.active

    @property
    def past_alerts(self):
        return self.alerts.past

    @property
    def sources(self) -> dict[str, dict]:
        return self.readers.sources

    @property
    def history(self):
        return self.scoreboard.history

    @property
    def roads(self):
        return self.scoreboard.roads

    @property
    def bets(self) -> dict[str, dict]:
        return self.ledger.bets

    @property
    def settlements(self) -> dict[str, dict]:
        return self.ledger.settlements

    def betting_coup(self) -> str:
        """The coup bets go to: the one being dealt until it is complete, else the next one."""
        snap = self.engine.snapshot()
        if snap.complete or snap.voided:
            return f"{snap.shoe}-{snap.coup + 1}"
        return snap.coup_id

    def retained(self) -> list[Publish]:
        """The last message of every retained topic: what a (re)connect publishes (a fresh table
        publishes its first state for that)."""
        if not self.presenter.started:
            out = Outbox()
            self._publish_coup(out, 0.0)
            self.alerts.publish(out, 0.0)
            self.presenter.sources(out, 0.0, self.readers.sources)
            self.scoreboard.publish_history(out, 0.0)
            self.scoreboard.publish_roads(out, 0.0, self.engine.snapshot().shoe)
        return self.presenter.retained()

    def last_payload(self, topic: str) -> dict | None:
        """The last payload of a retained topic (None before the first); unlike retained() it never
        publishes."""
        return self.presenter.last_payload(topic)

    # -- inputs ------------------------------------------------------------------------------------
    def prepare(self, event: Event) -> Event:
        """The event as it goes into the journal: what the table decides by its state at that
        moment is stamped on, so that a replay decides the same way (the Pipeline calls this).

        A new shoe starts the journal's replay window, so it carries the alerts still active
        (error states persist until cleared, across shoes and restarts), the message seq reached
        and the shoe's number. A shoe's new-shoe button becomes a NEW_SHOE event for that.
        """
        if event.kind is Kind.BUTTON and event.payload.button == "new_shoe":
            event = Event(event.t, Kind.NEW_SHOE, event.source, {**event.data})
        if event.kind is Kind.CARD and event.source == "api" and event.payload.shoe_link is UNSET:
            # The link state decides whether a typed-in card is taken.
            event = event.with_data(shoe_link=self.readers.link())
        if event.kind is Kind.BETS and event.payload.limits is None and self.limits is not None:
            event = event.with_data(limits=self.limits.to_dict())
        if event.kind is Kind.NEW_SHOE and "carried_alerts" not in event.data:
            extra = {"carried_alerts": list(self.alerts.active.values()), "message_seq": self.presenter.seq,
                     "shoe_number": self.engine.next_shoe_number()}
            # ... and the last coups (they run across shoes) and the sources' state, as last published.
            for topic in ("history", "sources"):
                payload = self.presenter.last_payload(topic)
                if payload is not None:
                    extra[f"carried_{topic}"] = payload
            event = event.with_data(**extra)
        return event

    def handle(self, event: Event, out: Outbox | None = None) -> list:
        """One (prepared, journaled) event in, its outputs out, in the order the sinks must render
        them. ``out``: an Outbox that hands each output on as it is made."""
        self.events += 1
        if out is None:
            out = Outbox()
        handler = _HANDLERS.get(event.kind)
        if handler is not None:
            handler(self, event, out)
        self._update_lights(out)
        return out.items

    # -- cards -------------------------------------------------------------------------------------
    def _on_card(self, event: Event, out: Outbox) -> None:
        p = event.payload
        if event.source == "shoe" and self._reconcile(event, out):
            return  # the resend of a card already dealt from the camera while the link was down
        try:
            card = parse_card(p.card if p.card is not UNSET else "")
        except REJECTIONS as exc:
            self._raise(out, event, FAULT, "warning", f"{event.source}: {exc}", {"data": event.data})
            return
        readers = self.readers
        link = p.shoe_link if p.shoe_link is not UNSET else readers.link()
        if event.source == "api" and not readers.blocked and link == "up":
            # A card typed in by a person only stands in for one the shoe could not read or report.
            self._raise(out, event, ACTION_REJECTED, "info", "manual card refused: no card is awaited "
                        "(no unreadable card is pending and the shoe link is up)", {"data": dict(event.data)})
            return
        if readers.blocked:
            if readers.may_fill(event.source):
                slot = readers.fill()
                for alert_id in [slot["alert_id"], *slot.get("more_alerts", ())]:
                    self.alerts.clear(out, alert_id, event.t, by=_user(event))
                self._deal(event, card, out, filled=slot)
                while (waiting := readers.next_waiting()) is not None:
                    self._deal(waiting, parse_card(waiting.payload.card), out)
            else:
                readers.waiting.append(event)  # keeps dealing order: after the unread card
                self._publish_coup(out, event.t)
            return
        self._deal(event, card, out)

    def _deal(self, event: Event, card, out: Outbox, filled: dict | None = None) -> None:
        p = event.payload
        counter = p.counter
        if filled is not None and counter is None:
            counter = filled.get("counter")
        try:
            step = self.engine.deal(card, side=p.side, counter=counter if isinstance(counter, int) else None,
                                    source=event.source, t=event.t)
        except REJECTIONS as exc:
            self._raise(out, event, FAULT, "warning", f"card rejected: {exc}", {"data": event.data})
            return
        extra = p.shown()
        if filled is not None:
            extra["fills_unreadable"] = filled.get("counter")
        self._render(step, event, out, extra)
        if event.source == "shoe":
            if step.record is not None:
                self.camera.after_shoe_card(step.record, step.snapshot, out, event)
        else:
            self.readers.dealt_offline(step.record, event.source)

    def _on_unreadable(self, event: Event, out: Outbox) -> None:
        if self._reconcile(event, out):
            return
        snap = self.engine.snapshot()
        expected = snap.next_side.value if snap.next_side is not None else None
        alert = self._raise(
            out, event, CARD_UNREADABLE, "error",
            "the shoe could not read a card: take it from the camera or enter it by hand",
            {"counter": event.payload.counter, "expected_side": expected, "coup": snap.coup_id},
        )
        self.readers.add_unread(alert["id"], event.payload.counter)
        self._publish_coup(out, event.t)
        self.camera.fill_unread(event, out)

    def _on_camera_card(self, event: Event, out: Outbox) -> None:
        self.camera.on_camera_card(event, out)

    def _reconcile(self, event: Event, out: Outbox) -> bool:
        """A shoe event after a reconnect: True when it was the resend of a card dealt without it
        (confirmed, or the coup corrected: the shoe's reading stands)."""
        resend, dealt = self.readers.take_resend(event)
        if not resend:
            return False
        shoe_card = event.payload.card if event.kind is Kind.CARD and event.payload.card is not UNSET else None
        if shoe_card is None or shoe_card == dealt["card"]:
            return True  # confirmed (or the shoe could not read it either)
        snap = self.engine.snapshot()
        if snap.coup_id == dealt["coup_id"] and dealt["index"] is not None:
            self._engine_action(event, out, lambda: self.engine.correct_card(
                dealt["index"], shoe_card, f"shoe reading after reconnect (was {dealt['card']})", t=event.t))
        else:
            self._raise(out, event, CAMERA_MISMATCH, "warning",
                        f"after reconnecting, the shoe reports {shoe_card} where {dealt['card']} was dealt "
                        f"without it in coup {dealt['coup_id']}, now closed: check that coup",
                        {"coup": dealt["coup_id"], "index": dealt["index"], "dealt": dealt["card"],
                         "shoe": shoe_card})
        return True

    def _on_pushed_back(self, event: Event, out: Outbox) -> None:
        p = event.payload
        self._engine_action(event, out, lambda: self.engine.push_back(p.card or None, counter=p.counter, t=event.t))

    # -- the shoe's own signals --------------------------------------------------------------------
    def _on_cut_card(self, event: Event, out: Outbox) -> None:
        self._engine_action(event, out, lambda: self.engine.cut_card(t=event.t))

    def _on_button(self, event: Event, out: Outbox) -> None:
        button = event.payload.button
        if button == "coup_confirm":
            self._engine_action(event, out, lambda: self.engine.close_coup(t=event.t))
        elif button == "new_shoe":
            self._on_new_shoe(event, out)
        # "burn": the burn cards themselves arrive as cards; the engine's burn policy places them.

    def _on_link(self, event: Event, out: Outbox) -> None:
        self.readers.link_changed(event)
        key = f"{event.source}:{LINK_LOST}"
        if event.kind is Kind.LINK_UP:
            self.alerts.clear_key(out, key, event.t, by=event.source, reason="link restored")
        elif not self.alerts.has_key(key):
            # The shoe is the table's reader; without the camera the table still deals.
            severity = "warning" if event.source == "camera" else "error"
            self._raise(out, event, LINK_LOST, severity, f"{event.source} link lost: {event.payload.reason}",
                        dict(event.data), key=key)
        self.presenter.sources(out, event.t, self.readers.sources)

    def _on_tamper(self, event: Event, out: Outbox) -> None:
        p = event.payload
        # The end of a tamper (lid closed) is recorded, but only a supervisor clears the alarm.
        severity = "critical" if p.active else "info"
        self._raise(out, event, TAMPER, severity, f"{event.source}: {str(p.what).replace('_', ' ')}",
                    dict(event.data))

    def _on_fault(self, event: Event, out: Outbox) -> None:
        p = event.payload
        severity = p.severity if p.severity in ("info", "warning", "error", "critical") else "warning"
        if event.source == "mqtt" and p.code in (BROKER_LOST, BROKER_RESTORED):
            self._on_broker(event, out, severity)
            return
        # One alert per fault of a source while it lasts: a repeat counts, a clear ends it.
        key = f"{event.source}:{FAULT}:{p.code}"
        if not p.active:
            self.alerts.clear_key(out, key, event.t, by=event.source, reason=f"cleared by the {event.source}")
            return
        if self.alerts.has_key(key):
            self.alerts.repeat(out, key, event.t, times=p.count)
            return
        text = p.text or p.reason
        if p.name:  # a named fault (PROTOCOL.md 7.2): its text says what it is
            message = f"{event.source} fault: {text}" if text else \
                f"{event.source} fault {p.name.replace('_', ' ').lower()} ({p.code})"
        else:
            message = f"{event.source} fault {p.code}" + (f": {text}" if text else "")
        self._raise(out, event, FAULT, severity, message, dict(event.data), key=key if severity != "info" else None)
        if severity in ("error", "critical") and event.source == "shoe":
            # A fault of the card reader that stops the dealing (a jam, a dead sensor, events lost
            # on the link): the error policy applies as for a dealing error; with "hold" nothing
            # settles until a supervisor resolves it.
            self._render(self.engine.hold(message, t=event.t), event, out, {})

    def _on_broker(self, event: Event, out: Outbox, severity: str) -> None:
        """The broker connection is a link like the shoe's: its loss stays active (one at a time)
        until the connection is back; "restored" is news, not a standing alert."""
        p = event.payload
        key = f"mqtt:{LINK_LOST}"
        if p.code == BROKER_RESTORED:
            severity, key = "info", None
            self.alerts.clear_key(out, f"mqtt:{LINK_LOST}", event.t, by=event.source,
                                  reason="broker connection restored")
        elif self.alerts.has_key(key):
            return
        text = p.text or p.reason
        self._raise(out, event, FAULT, severity, f"{event.source} fault {p.code}" + (f": {text}" if text else ""),
                    dict(event.data), key=key)

    def _on_shoe_presence(self, event: Event, out: Outbox) -> None:
        self.readers.presence(event)
        if event.kind is Kind.SHOE_REMOVED:
            self._raise(out, event, SHOE_REMOVED, "warning", "the shoe was removed from its cradle", {})
        elif event.kind is Kind.SHOE_EMPTY:
            self._raise(out, event, SHOE_EMPTY, "info", "the shoe reports it is empty", {})
        self.presenter.sources(out, event.t, self.readers.sources)

    # -- people --------------------------------------------------------------------------------------
    def _on_new_shoe(self, event: Event, out: Outbox) -> None:
        p = event.payload
        if p.message_seq is not None:
            self.presenter.continue_from(p.message_seq)
        self.scoreboard.new_shoe(p.carried_history)
        self.readers.new_shoe()
        if p.carried_sources is not None and isinstance(p.carried_sources.get("sources"), dict):
            # The links and the shoe's presence run across shoes too: a replay that starts here
            # merges later link events into what was known, as the live run did.
            self.readers.sources = {k: dict(v) for k, v in p.carried_sources["sources"].items()}
            self.presenter.carry("sources", p.carried_sources)
        self.alerts.carry(p.carried_alerts)
        # A replay starts at this shoe with a fresh engine (shoe 1): number the shoe as the live
        # run did, or its coup ids would collide with shoe 1's (a no-op live).
        self._engine_action(event, out, lambda: self.engine.new_shoe(p.decks, t=event.t, number=p.shoe_number))
        self.alerts.publish(out, event.t)
        self.scoreboard.publish_roads(out, event.t, self.engine.snapshot().shoe)
        self._publish_odds(out, event)

    def _on_close(self, event: Event, out: Outbox) -> None:
        self._engine_action(event, out, lambda: self.engine.close_coup(t=event.t))

    def _on_void(self, event: Event, out: Outbox) -> None:
        p = event.payload
        self._engine_action(event, out, lambda: self.engine.void_coup(p.why, by=p.user, t=event.t))

    def _on_correct(self, event: Event, out: Outbox) -> None:
        p = event.payload
        self._engine_action(event, out, lambda: self.engine.correct_card(
            p.index, p.card, p.why, by=p.user, t=event.t))

    def _on_resolve(self, event: Event, out: Outbox) -> None:
        p = event.payload
        self._engine_action(event, out, lambda: self.engine.resolve(p.why, by=p.user, t=event.t))

    def _on_clear(self, event: Event, out: Outbox) -> None:
        alert_id = event.payload.alert_id
        if alert_id not in self.alerts.active:
            self._raise(out, event, ACTION_REJECTED, "info", f"no active alert {alert_id!r} to clear",
                        {"data": event.data})
            return
        self.alerts.clear(out, alert_id, event.t, by=_user(event), reason=event.payload.why)

    def _on_ack(self, event: Event, out: Outbox) -> None:
        self.alerts.acknowledge(out, event.payload.alert_id, event.t, by=_user(event))

    def _on_bets(self, event: Event, out: Outbox) -> None:
        """The bets of every box for one coup (replacing any earlier ones), checked against the limits."""
        p = event.payload
        target = self.betting_coup()
        coup_id = p.coup_id or target
        try:
            if self.engine.shoe_state().shoe_over:
                raise Rejected("the shoe is over: a new shoe is due")
            if coup_id != target:
                raise Rejected(f"bets are open for coup {target}, not {coup_id}")
            self.ledger.place(coup_id, p.bets or [], p.limits, by=_user(event), t=event.t, reason=p.why)
        except REJECTIONS as exc:
            self._raise(out, event, ACTION_REJECTED, "info", f"bets rejected: {exc}", {"data": dict(event.data)})

    # -- rendering -----------------------------------------------------------------------------------
    def _engine_action(self, event: Event, out: Outbox, action: Callable[[], Step]) -> None:
        try:
            expected = event.payload.coup_id if event.kind in _COUP_ACTIONS else None
            if expected is not None and expected != self.engine.snapshot().coup_id:
                # A person acted on the coup they saw: never on one that opened since.
                raise Rejected(f"the current coup is {self.engine.snapshot().coup_id}, not {expected}")
            step = action()
        except REJECTIONS as exc:
            self._raise(out, event, ACTION_REJECTED, "info", f"{event.kind.value} rejected: {exc}",
                        {"data": dict(event.data)})
            return
        self._render(step, event, out, {})

    def _render(self, step: Step, event: Event, out: Outbox, extra: dict) -> None:
        t = event.t
        if step.record is not None:
            card = step.record.to_dict()
            card["shoe_seq"] = card.pop("seq")  # the card's place in the shoe; `seq` is the message's
            card["value"] = step.record.card.value
            card.update(extra)
            self.presenter.card(out, t, card)
            self.ledger.note(card["shoe"], card["coup"], "cards", card)
            if step.record.index is not None:
                self.ledger.note_source(f"{card['shoe']}-{card['coup']}", step.record.index, card["source"],
                                        card.get("confidence"))
        withdrawn = None
        for alert in step.alerts:
            if alert.kind is AlertKind.CARD_CORRECTED:   # the corrected card is the corrector's
                self.ledger.corrected(f"{alert.shoe}-{alert.coup}", alert.evidence["index"], event.source)
            self.alerts.add(out, alert.to_dict(), t)
            if alert.evidence.get("result_withdrawn"):
                withdrawn = f"{alert.shoe}-{alert.coup}"
        if withdrawn is not None and (step.result is None or step.result.coup_id != withdrawn):
            self.scoreboard.withdraw(out, t, withdrawn, step.snapshot.shoe)
        if step.result is not None:
            result = step.result.to_dict()
            self.scoreboard.settled(out, t, result)
            out.append(self.ledger.coup_record(result))
            self.scoreboard.update_roads(out, t, result, step.snapshot.shoe)
            self._publish_odds(out, event)
        self._publish_coup(out, t, step.snapshot)

    def _publish_coup(self, out: Outbox, t: float, snapshot=None) -> None:
        snap = (snapshot or self.engine.snapshot()).to_dict()
        self.presenter.coup(out, t, snap, self.readers.awaiting(), self.ledger.sources_by_side(snap),
                            self.engine.shoe_state().to_dict())

    def _publish_odds(self, out: Outbox, event: Event) -> None:
        self.scoreboard.publish_odds(
            out, event.t, self.engine.shoe_state(),
            lambda kind, severity, message, evidence, key=None: self._raise(
                out, event, kind, severity, message, evidence, key=key))

    def _raise(self, out: Outbox, event: Event, kind: str, severity: str, message: str, evidence: dict,
               key: str | None = None) -> dict:
        snap = self.engine.snapshot()
        return self.alerts.raise_alert(out, t=event.t, source=event.source, shoe=snap.shoe, coup=snap.coup,
                                       kind=kind, severity=severity, message=message, evidence=evidence, key=key)

    def _update_lights(self, out: Outbox) -> None:
        snap = self.engine.snapshot()
        if snap.held or self.readers.blocked or self.alerts.stops_play():
            state = Lights.ERROR
        elif snap.next_side is not None:
            state = snap.next_side.value
        elif snap.complete:
            state = Lights.COMPLETE
        else:
            state = Lights.OFF
        if state != self.lights:
            self.lights = state
            out.append(SetLights(state))


def _user(event: Event) -> Any:
    """Who acted: the person named in the event, else its source."""
    user = event.data.get("user", UNSET)
    return event.source if user is UNSET else user


_HANDLERS = {
    Kind.CARD: Table._on_card,
    Kind.CARD_UNREADABLE: Table._on_unreadable,
    Kind.CAMERA_CARD: Table._on_camera_card,
    Kind.CARD_PUSHED_BACK: Table._on_pushed_back,
    Kind.CUT_CARD: Table._on_cut_card,
    Kind.BUTTON: Table._on_button,
    Kind.NEW_SHOE: Table._on_new_shoe,
    Kind.CLOSE_COUP: Table._on_close,
    Kind.VOID_COUP: Table._on_void,
    Kind.CORRECT_CARD: Table._on_correct,
    Kind.CLEAR_ALERT: Table._on_clear,
    Kind.ACK_ALERT: Table._on_ack,
    Kind.RESOLVE_COUP: Table._on_resolve,
    Kind.BETS: Table._on_bets,
    Kind.LINK_UP: Table._on_link,
    Kind.LINK_DOWN: Table._on_link,
    Kind.TAMPER: Table._on_tamper,
    Kind.FAULT: Table._on_fault,
    Kind.SHOE_INSERTED: Table._on_shoe_presence,
    Kind.SHOE_REMOVED: Table._on_shoe_presence,
    Kind.SHOE_EMPTY: Table._on_shoe_presence,
}
