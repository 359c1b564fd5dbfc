"""The deterministic core of one table: journaled events in, outputs out.

``Table.handle(event)`` turns one input event into the outputs the sinks
render: MQTT messages (see docs/mqtt.md), the shoe's dealer lights, and coup
records for the journal's recall table. It never reads a clock (time comes with
the events) and never does I/O, so the same events always give the same
outputs, byte for byte: crash recovery replays the journal through a fresh
Table, and a fixture's check file is the Table's outputs.

The rules themselves live in ``shoe_daemon.game``; this module adds what a
table needs around them: the topic payloads and their ``seq``, source and link
state, table-level alerts (link loss, tamper, faults, unreadable cards), the
alert list a supervisor clears, and unreadable cards waiting for the camera or
a person.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from shoe_daemon.events import Event, Kind
from shoe_daemon.game.alerts import AlertKind
from shoe_daemon.game.cards import CardCodeError, parse_card
from shoe_daemon.game.coup import side_at
from shoe_daemon.game.engine import DealingEngine, EngineError, Step, TableRules
from shoe_daemon.game.odds import NotEnoughCardsError, analyze
from shoe_daemon.game.roads import Roads
from shoe_daemon.game.settle import Limit, TableLimits, format_amount, parse_bets, settle, to_decimal
from shoe_daemon.outputs import Publish, RecordCoup, SetLights
from shoe_daemon.sources.base import Lights
from shoe_daemon.table_camera import CameraCrossCheck

SCHEMA = 1
HISTORY = 20          # coups kept in the retained `history` topic
PAST_ALERTS = 200     # cleared alerts kept for the API

# Table-level alert kinds (the dealing errors come from the engine's AlertKind).
LINK_LOST = "link_lost"
TAMPER = "tamper"
FAULT = "fault"
CARD_UNREADABLE = "card_unreadable"
SHOE_REMOVED = "shoe_removed"
SHOE_EMPTY = "shoe_empty"
ACTION_REJECTED = "action_rejected"
# Faults the MQTT publisher reports (source "mqtt"), see docs/mqtt.md.
BROKER_LOST = "broker_connection_lost"
BROKER_RESTORED = "broker_connection_restored"
ODDS_ADVANTAGE = "odds_advantage"

KEPT_SETTLEMENTS = 200  # bets and settlements kept in memory (the journal's recall keeps them all)
RECALL_COUPS = 4        # coups whose cards and alerts are kept for their recall entry


def _trim(d: dict, n: int) -> None:
    while len(d) > n:
        del d[next(iter(d))]


# Sources whose card fills a card the shoe could not read.
FALLBACK_SOURCES = frozenset({"camera", "api", "manual"})


def _card_source(source: str, confidence: Any = None) -> dict:
    """One entry of coup/current's ``card_sources``: who produced the card (and the camera's confidence)."""
    entry: dict[str, Any] = {"source": source}
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool):
        entry["confidence"] = confidence
    return entry


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
    """The settlement's limits from ``[table.limits]`` (``total_max``: all the boxes' bets of a kind)."""
    def one(b) -> Limit:
        # Limit wants a positive minimum; a configured 0 means "any positive amount".
        return Limit(b.min if b.min > 0 else to_decimal("1e-9"), b.max, b.total_max)

    return TableLimits(punto=one(limits_cfg.punto), banco=one(limits_cfg.banco), tie=one(limits_cfg.tie))


class Table(CameraCrossCheck):
    def __init__(self, rules: TableRules, table_id: str, *, odds_alert_edge: float = 0.0):
        self.rules = rules
        # Player advantage (fraction of the stake) beyond which live odds alert the pit.
        self.odds_alert_edge = odds_alert_edge
        self.shoe_results: dict[str, dict] = {}   # this shoe's latest result per coup id
        self.roads = Roads()
        self._init_camera()
        self.table_id = table_id
        self.engine = DealingEngine(rules)
        self.seq = 0                       # per-table message counter, in every payload
        self.history: deque[dict] = deque(maxlen=HISTORY)
        self.active_alerts: dict[str, dict] = {}
        self.past_alerts: deque[dict] = deque(maxlen=PAST_ALERTS)
        self.sources: dict[str, dict] = {}
        self.lights = Lights.OFF
        self._n_alerts = 0
        self._unread: list[dict] = []      # cards the shoe could not read, oldest first
        self._waiting: list[Event] = []    # shoe cards dealt after an unread one, in order
        self._retained: dict[str, Publish] = {}
        self.events = 0
        # Bets (the dealer's console, BETS events) and what the journal keeps for a coup's recall.
        self.limits: TableLimits | None = None   # BETS are checked against these (the service sets them)
        self.bets: dict[str, dict] = {}          # coup id -> the bets accepted for it
        self.settlements: dict[str, dict] = {}   # coup id -> its settlement (the last KEPT_SETTLEMENTS)
        self._recall: dict[str, dict] = {}       # coup id -> its cards and alerts (the last RECALL_COUPS)
        self._card_sources: dict[str, list[dict]] = {}  # coup id -> each card's source, dealing order

    @classmethod
    def from_config(cls, config) -> Table:
        return cls(rules_from_config(config.table), config.table.id,
                   odds_alert_edge=config.table.odds_alert_edge)

    # ------------------------------------------------------------------ inputs

    def prepare(self, event: Event) -> Event:
        """The event as it goes into the journal.

        A new shoe starts the journal's replay window, so it carries the alerts
        still active: error states persist until cleared, across shoes and
        restarts. A shoe's new-shoe button becomes a NEW_SHOE event for that.
        """
        if event.kind is Kind.BUTTON and event.data.get("button") == "new_shoe":
            event = Event(event.t, Kind.NEW_SHOE, event.source, {**event.data})
        if event.kind is Kind.CARD and event.source == "api" and "shoe_link" not in event.data:
            # The link state decides whether a typed-in card is taken; it goes into the journal with
            # the card, so a replay that starts at a later new shoe decides the same way.
            link = self.sources.get("shoe", {}).get("link")
            event = Event(event.t, event.kind, event.source, {**event.data, "shoe_link": link})
        if event.kind is Kind.BETS and "limits" not in event.data and self.limits is not None:
            # The limits in force go into the journal with the bets: a replay checks the same ones.
            event = Event(event.t, event.kind, event.source, {**event.data, "limits": self.limits.to_dict()})
        if event.kind is Kind.NEW_SHOE and "carried_alerts" not in event.data:
            carried = list(self.active_alerts.values())
            # ... and the message seq reached: a replay from this shoe numbers its messages as the
            # live run did, so seq goes on increasing after a restart (displays drop a lower one).
            extra = {"carried_alerts": carried, "message_seq": self.seq, "shoe_number": self._next_shoe_number()}
            if "history" in self._retained:
                # ... and the last coups (they run across shoes), as last published.
                extra["carried_history"] = self._retained["history"].payload
            event = Event(event.t, event.kind, event.source, {**event.data, **extra})
        return event

    def _next_shoe_number(self) -> int:
        """The number DealingEngine.new_shoe gives the next shoe (a shoe nothing was drawn from is
        replaced and keeps its number)."""
        engine = self.engine
        untouched = engine._seq == 0 and engine._coup is None
        return engine._shoe_no if untouched else engine._shoe_no + 1

    def handle(self, event: Event, out: list | None = None) -> list:
        """One event in, its outputs out (in the order the sinks must render them).

        ``out``: the list the outputs are appended to, one by one as they are made (default a new
        one). The service passes one that renders each output as it is appended, so that a card's
        message leaves before the core computes the coup's result, roads and odds: an output is
        never changed once appended (a later state is a new dict), so it is the same either way.
        """
        self.events += 1
        if out is None:
            out = []
        handler = _HANDLERS.get(event.kind)
        if handler is not None:
            handler(self, event, out)
        self._update_lights(out)
        return out

    def retained(self) -> list[Publish]:
        """The last message of every retained topic: what a (re)connect publishes."""
        if not self._retained:
            out: list = []
            self._publish_state(out, 0.0)
            self._publish_alerts(out, 0.0)
            self._publish_sources(out, 0.0)
            self._publish(out, "history", "history", {"coups": list(self.history)}, 0.0, retain=True)
            self._publish_roads(out, 0.0)
        # In publication (seq) order: a display drops a message whose seq is below one it has seen.
        return sorted(self._retained.values(), key=lambda msg: msg.payload["seq"])

    def last_payload(self, topic: str) -> dict | None:
        """The last payload of a retained topic (None before the first), for readers such as the API;
        unlike retained() it never publishes."""
        msg = self._retained.get(topic)
        return msg.payload if msg is not None else None

    # ------------------------------------------------------------------ handlers

    def _on_card(self, event: Event, out: list) -> None:
        data = event.data
        if event.source == "shoe" and self._reconcile(event, out):
            return  # the resend of a card already dealt from the camera while the link was down
        try:
            card = parse_card(data.get("card", ""))
        except CardCodeError as exc:
            self._raise(out, event, FAULT, "warning", f"{event.source}: {exc}", {"data": data})
            return
        link = data["shoe_link"] if "shoe_link" in data else self.sources.get("shoe", {}).get("link")
        if event.source == "api" and not self._unread and link == "up":
            # A card typed in by a person only stands in for one the shoe could not read or report.
            self._raise(out, event, ACTION_REJECTED, "info", "manual card refused: no card is awaited "
                        "(no unreadable card is pending and the shoe link is up)", {"data": dict(data)})
            return
        if self._unread:
            # A card the camera could not read while the link was down: the shoe's own
            # reading (resent after the reconnect) fills it as well as a person would.
            if event.source in FALLBACK_SOURCES or self._unread[0].get("shoe_may_fill"):
                slot = self._unread.pop(0)
                for alert_id in [slot["alert_id"], *slot.get("more_alerts", ())]:
                    self._clear(out, alert_id, event.t, by=data.get("user", event.source))
                self._deal(event, card, out, filled=slot)
                self._release_waiting(out)
            else:
                self._waiting.append(event)  # keeps dealing order: after the unread card
                self._publish_state(out, event.t)
            return
        self._deal(event, card, out)

    def _deal(self, event: Event, card, out: list, filled: dict | None = None) -> None:
        data = event.data
        counter = data.get("counter")
        if filled is not None and counter is None:
            counter = filled.get("counter")
        try:
            step = self.engine.deal(
                card, side=data.get("side"), counter=counter if isinstance(counter, int) else None,
                source=event.source, t=event.t,
            )
        except (ValueError, TypeError) as exc:
            self._raise(out, event, FAULT, "warning", f"card rejected: {exc}", {"data": data})
            return
        extra = {}
        for key in ("quality", "confidence", "user", "reason"):
            if key in data:
                extra[key] = data[key]
        if filled is not None:
            extra["fills_unreadable"] = filled.get("counter")
        self._render_step(step, event, out, extra)
        if event.source == "shoe":
            if step.record is not None:
                self._camera_after_shoe_card(step.record, step.snapshot, out, event)
        else:
            self._note_offline_deal(step.record, event)

    def _release_waiting(self, out: list) -> None:
        while self._waiting and not self._unread:
            event = self._waiting.pop(0)
            self._deal(event, parse_card(event.data["card"]), out)

    def _on_unreadable(self, event: Event, out: list) -> None:
        if self._reconcile(event, out):
            return
        snap = self.engine.snapshot()
        expected = snap.next_side.value if snap.next_side is not None else None
        alert = self._raise(
            out, event, CARD_UNREADABLE, "error",
            "the shoe could not read a card: take it from the camera or enter it by hand",
            {"counter": event.data.get("counter"), "expected_side": expected, "coup": snap.coup_id},
        )
        self._unread.append({"alert_id": alert["id"], "counter": event.data.get("counter")})
        self._publish_state(out, event.t)
        self._camera_fill_unread(event, out)

    def _on_pushed_back(self, event: Event, out: list) -> None:
        card = event.data.get("card")
        counter = event.data.get("counter")
        self._engine_action(event, out, lambda: self.engine.push_back(
            card or None, counter=counter if isinstance(counter, int) else None, t=event.t))

    def _on_cut_card(self, event: Event, out: list) -> None:
        self._engine_action(event, out, lambda: self.engine.cut_card(t=event.t))

    def _on_button(self, event: Event, out: list) -> None:
        button = event.data.get("button")
        if button == "coup_confirm":
            self._engine_action(event, out, lambda: self.engine.close_coup(t=event.t))
        elif button == "new_shoe":
            self._on_new_shoe(event, out)
        # "burn": the burn cards themselves arrive as cards; the engine's burn policy places them.

    def _on_new_shoe(self, event: Event, out: list) -> None:
        base = event.data.get("message_seq")
        if isinstance(base, int) and base > self.seq:
            self.seq = base
        wanted = event.data.get("shoe_number")
        if isinstance(wanted, int):
            # A replay starts at this shoe with a fresh engine (shoe 1): number the shoe as the live
            # run did, or its coup ids would collide with shoe 1's. (A no-op live. DealingEngine has
            # no public way to set the number: game/engine.py should grow one.)
            self.engine._shoe_no += wanted - self._next_shoe_number()
        history = event.data.get("carried_history")
        if isinstance(history, dict) and isinstance(history.get("coups"), list):
            self.history = deque((dict(c) for c in history["coups"]), maxlen=HISTORY)
            self._retained["history"] = Publish("history", dict(history), qos=1, retain=True)
        decks = event.data.get("decks")
        self.shoe_results.clear()
        self.roads = Roads()
        self._unread.clear()
        self._waiting.clear()
        self.active_alerts = {a["id"]: dict(a) for a in event.data.get("carried_alerts", [])}
        self._engine_action(event, out, lambda: self.engine.new_shoe(decks, t=event.t))
        self._publish_alerts(out, event.t)
        self._publish_roads(out, event.t)
        self._publish_odds(out, event)

    def _on_close(self, event: Event, out: list) -> None:
        self._engine_action(event, out, lambda: self.engine.close_coup(t=event.t))

    def _on_void(self, event: Event, out: list) -> None:
        self._engine_action(event, out, lambda: self.engine.void_coup(self._why(event), t=event.t))

    def _on_correct(self, event: Event, out: list) -> None:
        d = event.data
        self._engine_action(event, out, lambda: self.engine.correct_card(
            d.get("index"), d.get("card"), self._why(event), t=event.t))

    def _on_resolve(self, event: Event, out: list) -> None:
        self._engine_action(event, out, lambda: self.engine.resolve(self._why(event), t=event.t))

    def _on_clear(self, event: Event, out: list) -> None:
        alert_id = event.data.get("alert_id")
        if alert_id not in self.active_alerts:
            self._raise(out, event, ACTION_REJECTED, "info", f"no active alert {alert_id!r} to clear",
                        {"data": event.data})
            return
        self._clear(out, alert_id, event.t, by=event.data.get("user", event.source), reason=self._why(event))

    def _on_ack(self, event: Event, out: list) -> None:
        alert = self.active_alerts.get(event.data.get("alert_id"))
        if alert is None:
            return
        # A new dict: messages already published keep the alert as it was then.
        alert = {**alert, "acknowledged": {"by": event.data.get("user", event.source), "t": event.t}}
        self.active_alerts[alert["id"]] = alert
        self._publish(out, "alerts/event", "alert", {"action": "acknowledged", "alert": alert}, event.t)
        self._publish_alerts(out, event.t)

    def _on_link(self, event: Event, out: list) -> None:
        up = event.kind is Kind.LINK_UP
        # Merged into what else is known of the source (its shoe presence stays).
        state = {k: v for k, v in self.sources.get(event.source, {}).items() if k not in ("info", "reason")}
        state.update({"link": "up" if up else "down", "since": event.t})
        if up:
            state["info"] = event.data
        else:
            state["reason"] = event.data.get("reason")
        self.sources[event.source] = state
        if up and event.source == "shoe":
            self._camera_link_up(event)
        key = f"{event.source}:{LINK_LOST}"
        if up:
            for alert_id, alert in list(self.active_alerts.items()):
                if alert.get("key") == key:
                    self._clear(out, alert_id, event.t, by=event.source, reason="link restored")
        elif not any(a.get("key") == key for a in self.active_alerts.values()):
            # The shoe is the table's reader; without the camera the table still deals.
            severity = "warning" if event.source == "camera" else "error"
            self._raise(out, event, LINK_LOST, severity, f"{event.source} link lost: {event.data.get('reason')}",
                        dict(event.data), key=key)
        self._publish_sources(out, event.t)

    def _on_tamper(self, event: Event, out: list) -> None:
        what = str(event.data.get("what", "tamper"))
        # The end of a tamper (lid closed) is recorded, but only a supervisor clears the alarm.
        severity = "critical" if event.data.get("active", True) else "info"
        self._raise(out, event, TAMPER, severity, f"{event.source}: {what.replace('_', ' ')}", dict(event.data))

    def _on_fault(self, event: Event, out: list) -> None:
        severity = event.data.get("severity", "warning")
        if severity not in ("info", "warning", "error", "critical"):
            severity = "warning"
        key = None
        code = event.data.get("code")
        if event.source == "mqtt" and code in (BROKER_LOST, BROKER_RESTORED):
            # The broker connection is a link like the shoe's: its loss stays active (one at a
            # time) until the connection is back; "restored" is news, not a standing alert.
            key = f"mqtt:{LINK_LOST}"
            if code == BROKER_RESTORED:
                severity, key = "info", None
                for alert_id, alert in list(self.active_alerts.items()):
                    if alert.get("key") == f"mqtt:{LINK_LOST}":
                        self._clear(out, alert_id, event.t, by=event.source, reason="broker connection restored")
            elif any(a.get("key") == key for a in self.active_alerts.values()):
                return
        text = event.data.get("text") or event.data.get("reason")
        self._raise(out, event, FAULT, severity, f"{event.source} fault {code}"
                    + (f": {text}" if text else ""), dict(event.data), key=key)

    def _on_shoe_presence(self, event: Event, out: list) -> None:
        state = self.sources[event.source] = dict(self.sources.get(event.source, {}))
        state["shoe"] = event.kind.value.removeprefix("shoe_")
        if event.kind is Kind.SHOE_REMOVED:
            self._raise(out, event, SHOE_REMOVED, "warning", "the shoe was removed from its cradle", {})
        elif event.kind is Kind.SHOE_EMPTY:
            self._raise(out, event, SHOE_EMPTY, "info", "the shoe reports it is empty", {})
        self._publish_sources(out, event.t)

    # ------------------------------------------------------------------ rendering

    def _engine_action(self, event: Event, out: list, action) -> None:
        try:
            expected = event.data.get("coup_id") if event.kind in _COUP_ACTIONS else None
            if expected is not None and expected != self.engine.snapshot().coup_id:
                # A person acted on the coup they saw: never on one that opened since.
                raise EngineError(f"the current coup is {self.engine.snapshot().coup_id}, not {expected}")
            step = action()
        except (EngineError, ValueError, TypeError) as exc:
            self._raise(out, event, ACTION_REJECTED, "info", f"{event.kind.value} rejected: {exc}",
                        {"data": dict(event.data)})
            return
        self._render_step(step, event, out, {})

    def _render_step(self, step: Step, event: Event, out: list, extra: dict) -> None:
        t = event.t
        if step.record is not None:
            card = step.record.to_dict()
            card["shoe_seq"] = card.pop("seq")  # the card's place in the shoe; `seq` is the message's
            card["value"] = step.record.card.value
            card.update(extra)
            self._publish(out, "coup/card", "card", card, t)
            self._note(card["shoe"], card["coup"], "cards", card)
            if step.record.index is not None:
                # A card at ``index`` replaces whatever a push-back left from there on.
                sources = self._card_sources.setdefault(f"{card['shoe']}-{card['coup']}", [])
                sources[step.record.index:] = [_card_source(card["source"], card.get("confidence"))]
                _trim(self._card_sources, RECALL_COUPS)
        withdrawn = None
        for alert in step.alerts:
            if alert.kind is AlertKind.CARD_CORRECTED:   # the corrected card is the corrector's
                sources = self._card_sources.get(f"{alert.shoe}-{alert.coup}", [])
                if alert.evidence["index"] < len(sources):
                    sources[alert.evidence["index"]] = _card_source(event.source)
            self._add_alert(out, alert.to_dict(), t)
            if alert.evidence.get("result_withdrawn"):
                withdrawn = f"{alert.shoe}-{alert.coup}"
        if withdrawn is not None and (step.result is None or step.result.coup_id != withdrawn):
            self._withdraw(withdrawn, out, event)
        if step.result is not None:
            result = step.result.to_dict()
            self._add_to_history(result)
            self._publish(out, "coup/result", "result", result, t)
            self._publish(out, "history", "history", {"coups": list(self.history)}, t, retain=True)
            out.append(RecordCoup(step.result.coup_id, step.result.shoe, step.result.coup, self._coup_record(result)))
            self._publish_scoreboard(out, event, result)
        self._publish_state(out, t, step.snapshot)

    def _withdraw(self, coup_id: str, out: list, event: Event) -> None:
        """A settled coup was voided (or its last card pushed back): it leaves the history and the roads."""
        kept = [r for r in self.history if r["coup_id"] != coup_id]
        self.history.clear()
        self.history.extend(kept)
        self.shoe_results.pop(coup_id, None)
        self.roads = Roads(sorted(self.shoe_results.values(), key=lambda r: r["coup"]))
        self._publish(out, "history", "history", {"coups": list(self.history)}, event.t, retain=True)
        self._publish_roads(out, event.t)

    def _add_to_history(self, result: dict) -> None:
        """A re-settled coup (``revision`` > 0) replaces its earlier result."""
        for i, old in enumerate(self.history):
            if old["coup_id"] == result["coup_id"]:
                self.history[i] = result
                break
        else:
            self.history.append(result)

    def _publish_scoreboard(self, out: list, event: Event, result: dict) -> None:
        """Roads, statistics and the live odds of the remaining shoe, after every coup."""
        t = event.t
        revised = result["coup_id"] in self.shoe_results
        self.shoe_results[result["coup_id"]] = result
        if revised:  # rebuild: a correction may change any later cell
            self.roads = Roads(self.shoe_results[k] for k in sorted(
                self.shoe_results, key=lambda cid: self.shoe_results[cid]["coup"]))
        else:
            self.roads.add(result["winner"], result["banco_pair"], result["punto_pair"], result["natural"])
        self._publish_roads(out, t)
        self._publish_odds(out, event)

    def _publish_roads(self, out: list, t: float) -> None:
        roads = self.roads.to_dict()
        stats = roads.pop("stats", None) or self.roads.stats()
        self._publish(out, "roads", "roads", {"shoe": self.engine.shoe_state().shoe, **roads}, t, retain=True)
        self._publish(out, "stats", "stats", {"shoe": self.engine.shoe_state().shoe, **stats}, t, retain=True)

    def _publish_odds(self, out: list, event: Event) -> None:
        shoe = self.engine.shoe_state()
        body: dict[str, Any] = {"shoe": shoe.shoe, "after_coup": shoe.coups}
        try:
            odds = analyze(list(shoe.remaining_by_value))
        except NotEnoughCardsError as exc:
            body.update({"available": False, "reason": str(exc)})
            self._publish(out, "odds", "odds", body, event.t, retain=True)
            return
        analysis = odds.to_dict()
        body.update({"available": True, **analysis})
        self._publish(out, "odds", "odds", body, event.t, retain=True)
        edges = analysis["house_edge"]
        for bet in ("banco", "punto", "tie"):
            advantage = -edges[bet]
            key = f"odds:{bet}"
            active = any(a.get("key") == key for a in self.active_alerts.values())
            if advantage > self.odds_alert_edge and not active:
                self._raise(out, event, ODDS_ADVANTAGE, "warning",
                            f"the remaining shoe favours the player on {bet}: "
                            f"expectation +{advantage:.4%} of the stake",
                            {"bet": bet, "player_advantage": advantage, "threshold": self.odds_alert_edge,
                             "remaining": shoe.remaining, "composition": list(shoe.remaining_by_value)},
                            key=key)

    def _publish_state(self, out: list, t: float, snapshot=None) -> None:
        snap = (snapshot or self.engine.snapshot()).to_dict()
        snap["announce"] = f"Punto {snap['punto_total']}, Banco {snap['banco_total']}"
        snap["awaiting"] = {"unreadable": len(self._unread), "queued_cards": len(self._waiting)}
        snap["card_sources"] = self._sources_by_side(snap)
        self._publish(out, "coup/current", "coup", snap, t, retain=True)
        self._publish(out, "shoe", "shoe", self.engine.shoe_state().to_dict(), t, retain=True)

    def _sources_by_side(self, snap: dict) -> dict:
        """Each card's source, parallel to the snapshot's ``punto`` and ``banco``."""
        by_side: dict[str, list[dict]] = {"punto": [], "banco": []}
        sources = self._card_sources.get(snap["coup_id"], [])
        # After a push-back, entries past the coup's cards are stale.
        n_punto = len(snap["punto"])
        for index, entry in enumerate(sources[:n_punto + len(snap["banco"])]):
            by_side[side_at(index, n_punto).value].append(entry)
        return by_side

    def _publish_alerts(self, out: list, t: float) -> None:
        # In the order raised (ids sort as text, "1-10-1" before "1-2-1").
        self._publish(out, "alerts/active", "alerts", {"alerts": list(self.active_alerts.values())}, t, retain=True)

    def _publish_sources(self, out: list, t: float) -> None:
        self._publish(out, "sources", "sources", {"sources": dict(sorted(self.sources.items()))}, t, retain=True)

    def _publish(self, out: list, topic: str, kind: str, body: dict, t: float, *, retain: bool = False) -> None:
        self.seq += 1
        payload = {**body, "schema": SCHEMA, "seq": self.seq, "table_id": self.table_id, "type": kind, "t": t}
        msg = Publish(topic, payload, qos=1, retain=retain)
        if retain:
            self._retained[topic] = msg
        out.append(msg)

    # ------------------------------------------------------------------ alerts

    def _raise(self, out, event: Event, kind: str, severity: str, message: str, evidence: dict,
               key: str | None = None) -> dict:
        self._n_alerts += 1
        snap = self.engine.snapshot()
        alert: dict[str, Any] = {
            "id": f"{snap.shoe}-{snap.coup}-x{self._n_alerts}", "kind": kind, "severity": severity,
            "shoe": snap.shoe, "coup": snap.coup, "message": message, "evidence": evidence,
            "source": event.source, "t": event.t,
        }
        if key:
            alert["key"] = key
        self._add_alert(out, alert, event.t)
        return alert

    def _add_alert(self, out: list, alert: dict, t: float) -> None:
        self._note(alert["shoe"], alert["coup"], "alerts", alert)
        if alert["severity"] != "info":
            self.active_alerts[alert["id"]] = alert
        self._publish(out, "alerts/event", "alert", {"action": "raised", "alert": alert}, t)
        if alert["severity"] != "info":
            self._publish_alerts(out, t)
        if alert["kind"] == "coup_voided":
            self._record_void(out, alert)

    def _clear(self, out: list, alert_id: str, t: float, *, by: str, reason: str = "") -> None:
        alert = self.active_alerts.pop(alert_id, None)
        if alert is None:
            return
        alert = {**alert, "cleared": {"by": by, "t": t, "reason": reason}}
        self.past_alerts.append(alert)
        self._publish(out, "alerts/event", "alert", {"action": "cleared", "alert": alert}, t)
        self._publish_alerts(out, t)

    @staticmethod
    def _why(event: Event) -> str:
        return str(event.data.get("reason", ""))

    # ------------------------------------------------------------------ bets, settlement, recall

    def betting_coup(self) -> str:
        """The coup bets go to: the one being dealt until it is complete, else the next one."""
        snap = self.engine.snapshot()
        if snap.complete or snap.voided:
            return f"{snap.shoe}-{snap.coup + 1}"
        return snap.coup_id

    def _on_bets(self, event: Event, out: list) -> None:
        """The bets of every box for one coup (replacing any earlier ones), checked against the limits."""
        data = event.data
        target = self.betting_coup()
        coup_id = data.get("coup_id") or target
        try:
            if self.engine.shoe_state().shoe_over:
                raise ValueError("the shoe is over: a new shoe is due")
            if coup_id != target:
                raise ValueError(f"bets are open for coup {target}, not {coup_id}")
            bets = parse_bets(data.get("bets") or [])
            limits = data.get("limits")
            limits = TableLimits.from_config(limits) if isinstance(limits, dict) else self.limits
            if limits is not None:
                limits.check(bets)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:  # BetError, BetLimitError too
            self._raise(out, event, ACTION_REJECTED, "info", f"bets rejected: {exc}", {"data": dict(data)})
            return
        self.bets[coup_id] = {"coup_id": coup_id, "bets": [b.to_dict() for b in bets],
                              "by": data.get("user", event.source), "t": event.t, "reason": self._why(event)}
        _trim(self.bets, KEPT_SETTLEMENTS)

    def _settlement(self, coup_id: str, result: dict | None) -> dict | None:
        """Settle the bets of ``coup_id`` (None when it has none); ``result`` None: the coup is void."""
        placed = self.bets.get(coup_id)
        if placed is None:
            return None
        bets = parse_bets(placed["bets"])
        head = {"coup_id": coup_id, "placed": {k: placed[k] for k in ("by", "t", "reason")}}
        if result is None:  # a void coup: every stake goes back
            staked = format_amount(sum((b.amount for b in bets), to_decimal(0)))
            body = {"status": "void", "revision": None, "winner": None,
                    "bets": [{**b.to_dict(), "outcome": "void", "won": "0", "returned": b.to_dict()["amount"],
                              "net": "0"} for b in bets],
                    "totals": {"staked": staked, "won": "0", "returned": staked, "net": "0"}}
        else:
            body = {"status": "settled", "revision": result["revision"], **settle(bets, result["winner"]).to_dict()}
        self.settlements[coup_id] = settlement = {**head, **body}
        _trim(self.settlements, KEPT_SETTLEMENTS)
        return settlement

    def _note(self, shoe: int, coup: int, what: str, item: dict) -> None:
        """Keep a card record or an alert with its coup, for the coup's recall entry."""
        key = f"{shoe}-{coup}"
        log = self._recall.get(key)
        if log is None:
            log = self._recall[key] = {"cards": [], "alerts": []}
            _trim(self._recall, RECALL_COUPS)
        log[what].append(item)

    def _recall_of(self, coup_id: str) -> dict:
        log = self._recall.get(coup_id, {"cards": [], "alerts": []})
        return {"dealt": list(log["cards"]), "sources": sorted({c["source"] for c in log["cards"]}),
                "alerts": list(log["alerts"])}

    def _coup_record(self, result: dict) -> dict:
        """The journal's recall entry of a settled coup: the result, its cards with their sources,
        its alerts and the settlement of its bets."""
        record = {**result, **self._recall_of(result["coup_id"])}
        settlement = self._settlement(result["coup_id"], result)
        if settlement is not None:
            record["settlement"] = settlement
        return record

    def _record_void(self, out: list, alert: dict) -> None:
        """A void coup is recalled too (a settled one that is voided loses its result)."""
        coup_id = f"{alert['shoe']}-{alert['coup']}"
        ev = alert.get("evidence") or {}
        record = {"coup_id": coup_id, "shoe": alert["shoe"], "coup": alert["coup"], "voided": True,
                  "reason": ev.get("reason", ""), "result_withdrawn": ev.get("result_withdrawn", False),
                  **{k: ev.get(k) for k in ("punto", "banco", "punto_total", "banco_total")},
                  **self._recall_of(coup_id)}
        settlement = self._settlement(coup_id, None)
        if settlement is not None:
            record["settlement"] = settlement
        out.append(RecordCoup(coup_id, alert["shoe"], alert["coup"], record))

    # ------------------------------------------------------------------ lights

    def _update_lights(self, out: list) -> None:
        snap = self.engine.snapshot()
        stop = snap.held or self._unread or any(
            a["severity"] in ("error", "critical") and a["kind"] != LINK_LOST for a in self.active_alerts.values()
        )
        if stop:
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


_COUP_ACTIONS = frozenset({Kind.VOID_COUP, Kind.RESOLVE_COUP, Kind.CORRECT_CARD})

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
