"""The camera in the core: stand-in for the shoe, and cross-check when both see a card.

The camera source reports each card that came to rest in a zone as a
``camera_card`` event (card code or null, value, status ``ok``/``unsure``,
confidence, zone). This component places it by zone and by its order in that
zone, so it can tell which card of the coup the camera saw:

* a card the shoe could not read, or any card while the shoe's link is down: the
  camera's reading is dealt (source ``camera``, with its confidence); an unsure
  reading never is: it raises ``manual_entry_needed`` and waits for a person;
* when the shoe read the card too, the shoe's reading stands: a camera reading
  that disagrees raises ``camera_mismatch``, and a card the camera sees in the
  other zone raises ``wrong_side``.

It works through the table's parts it is given (the engine to see the coup, the
reader arbiter, a way to raise alerts, to deal a card and to republish the
coup), never through the table's private state.
"""

from __future__ import annotations

from collections.abc import Callable

from shoe_daemon.core.alerts import CAMERA_MISMATCH, MANUAL_ENTRY, WRONG_SIDE
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Outbox
from shoe_daemon.core.readers import ReaderArbiter
from shoe_daemon.game.engine import DealingEngine

SIDES = ("punto", "banco")
KEEP_COUPS = 4       # coups whose camera readings are kept


def finished(snap) -> bool:
    """The snapshot's coup takes no more cards: the next card opens the next coup."""
    return snap.complete or snap.voided or snap.settled


def next_coup_id(snap) -> str:
    return snap.coup_id if not finished(snap) else f"{snap.shoe}-{snap.coup + 1}"


def zone_side(zone) -> str | None:
    """The layout side a camera zone stands for (zones named punto / banco; others ignored)."""
    name = str(zone or "").strip().lower()
    return name if name in SIDES else None


def stand_in(event: Event, side: str, reading: dict) -> Event:
    """The card event a camera reading becomes when it stands in for the shoe."""
    return Event(event.t, Kind.CARD, "camera", {"card": reading["card"], "side": side,
                                                "confidence": reading["confidence"],
                                                "reason": "camera stands in for the shoe"})


class CameraCrossCheck:
    def __init__(self, engine: DealingEngine, readers: ReaderArbiter, *,
                 raise_alert: Callable[..., dict], deal: Callable[[Event, Outbox], None],
                 publish_coup: Callable[[Outbox, float], None]):
        self._engine = engine
        self._readers = readers
        self._raise = raise_alert          # (out, event, kind, severity, message, evidence) -> alert
        self._deal = deal                  # a card event through the table, as any card
        self._publish_coup = publish_coup
        self.readings: dict[str, dict[str, list[dict]]] = {}  # coup id -> side -> readings in order

    # -- a camera reading --------------------------------------------------------------------------
    def on_camera_card(self, event: Event, out: Outbox) -> None:
        p = event.payload
        side = zone_side(p.zone)
        if side is None:
            return  # a card outside the Punto and Banco boxes
        snap = self._engine.snapshot()
        coup_id, dealt = self._coup_of(snap, side)
        readings = self.readings.setdefault(coup_id, {"punto": [], "banco": []})[side]
        position = len(readings)
        ok = p.status == "ok" and bool(p.card)
        reading = {"card": p.card if ok else None, "value": p.value, "confidence": p.confidence,
                   "t": event.t, "checked": False}
        readings.append(reading)
        while len(self.readings) > KEEP_COUPS:
            del self.readings[next(iter(self.readings))]
        if position < dealt:
            self._compare(coup_id, side, position, out, event)
            return
        expected = snap.next_side.value if snap.next_side is not None else ("punto" if finished(snap) else None)
        # An unread card is the one the tableau wants next: a reading in the other box is a later
        # card the shoe did read (queued behind it). With the link down the camera is the only
        # reader, so a card in the wrong box is dealt there and the engine flags it.
        readers = self._readers
        awaited = position == dealt and coup_id == next_coup_id(snap) and (
            (readers.blocked and side == expected) or (not readers.blocked and readers.link() == "down"))
        if not awaited:
            return  # ahead of the shoe: checked when the shoe's reading comes
        if ok:
            reading["checked"] = True
            self._deal(stand_in(event, side, reading), out)
        else:
            self._manual_entry(event, out, side, reading)

    def _coup_of(self, snap, side: str) -> tuple[str, int]:
        """The coup a reading in ``side`` belongs to, and how many cards the engine has there."""
        cards = len(snap.punto if side == "punto" else snap.banco)
        seen = len(self.readings.get(snap.coup_id, {}).get(side, ()))
        if finished(snap) and (seen >= cards or snap.voided):
            return f"{snap.shoe}-{snap.coup + 1}", 0  # the first cards of the next coup
        return snap.coup_id, cards

    def _manual_entry(self, event: Event, out: Outbox, side: str, reading: dict) -> None:
        alert = self._raise(
            out, event, MANUAL_ENTRY, "error",
            f"the camera could not read the card on {side}: enter it by hand",
            {"side": side, "value": reading["value"], "confidence": reading["confidence"],
             "reason": event.payload.reason},  # the camera's, or the shoe's for its unread card
        )
        if self._readers.blocked:
            self._readers.also_awaits(alert["id"])
        else:  # the link is down: a person fills this card through the API
            self._readers.add_unread(alert["id"], None, shoe_may_fill=True)
        self._publish_coup(out, event.t)

    # -- the cross-check ---------------------------------------------------------------------------
    def after_shoe_card(self, record, snapshot, out: Outbox, event: Event) -> None:
        """The shoe dealt ``record``: compare it with the camera's reading of that place."""
        if record.side is None:
            return
        side = record.side.value
        position = len(snapshot.punto if side == "punto" else snapshot.banco) - 1
        other = "banco" if side == "punto" else "punto"
        for reading in self.readings.get(snapshot.coup_id, {}).get(other, []):
            if not reading["checked"] and reading["card"] == record.card.code:
                # The camera already saw this card land in the other box.
                reading["checked"] = True
                self._raise(out, event, WRONG_SIDE, "error",
                            f"the camera sees {record.card.code} in the {other} box; the tableau puts it on {side}",
                            {"coup": snapshot.coup_id, "zone": other, "camera": record.card.code,
                             "shoe": record.card.code, "tableau_side": side, "confidence": reading["confidence"]})
                return
        self._compare(snapshot.coup_id, side, position, out, event)

    def _compare(self, coup_id: str, side: str, position: int, out: Outbox, event: Event) -> None:
        snap = self._engine.snapshot()
        readings = self.readings.get(coup_id, {}).get(side, [])
        if snap.coup_id != coup_id or position >= len(readings):
            return
        reading = readings[position]
        if reading["checked"] or reading["card"] is None:
            return
        reading["checked"] = True
        cards = [c.code for c in (snap.punto if side == "punto" else snap.banco)]
        if position >= len(cards) or cards[position] == reading["card"]:
            return
        other = "banco" if side == "punto" else "punto"
        other_cards = [c.code for c in (snap.banco if side == "punto" else snap.punto)]
        evidence = {"coup": coup_id, "zone": side, "position": position, "camera": reading["card"],
                    "shoe": cards[position], "confidence": reading["confidence"]}
        if reading["card"] in other_cards:
            self._raise(out, event, WRONG_SIDE, "error",
                        f"the camera sees {reading['card']} in the {side} box; the tableau puts it on {other}",
                        evidence)
        else:
            self._raise(out, event, CAMERA_MISMATCH, "warning",
                        f"the camera read {reading['card']} where the shoe read {cards[position]} "
                        f"({side}, card {position + 1}); the shoe's reading stands", evidence)

    def fill_unread(self, event: Event, out: Outbox) -> None:
        """A card the shoe could not read: the camera may have seen it already."""
        snap = self._engine.snapshot()
        if snap.next_side is None and not finished(snap):
            return
        side = snap.next_side.value if snap.next_side is not None else "punto"
        coup_id = next_coup_id(snap)
        dealt = 0 if finished(snap) else len(snap.punto if side == "punto" else snap.banco)
        readings = self.readings.get(coup_id, {}).get(side, [])
        if dealt >= len(readings) or readings[dealt]["checked"]:
            return
        reading = readings[dealt]
        reading["checked"] = True
        if reading["card"] is not None:
            self._deal(stand_in(event, side, reading), out)
        else:
            self._manual_entry(event, out, side, reading)
