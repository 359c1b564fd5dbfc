"""The camera in the core: stand-in for the shoe, and cross-check when both see a card.

Mixed into :class:`shoe_daemon.table.Table`. The camera source reports each card
that came to rest in a zone as a ``camera_card`` event (card code or null, value,
status ``ok``/``unsure``, confidence, zone). The core places it by zone and by its
order in that zone, so it can tell which card of the coup the camera saw:

* a card the shoe could not read, or any card while the shoe's link is down: the
  camera's reading is dealt (source ``camera``, with its confidence); an unsure
  reading never is: it raises ``manual_entry_needed`` and waits for a person;
* when the shoe read the card too, the shoe's reading stands: a camera reading
  that disagrees raises ``camera_mismatch``, and a card the camera sees in the
  other zone raises ``wrong_side``;
* cards dealt from the camera (or by hand) while the link was down are matched
  with the shoe's own readings when it reconnects and resends them: the same card
  is confirmed, a different one corrects the coup (the shoe stands).
"""

from __future__ import annotations

from shoe_daemon.events import Event, Kind

SIDES = ("punto", "banco")
MANUAL_ENTRY = "manual_entry_needed"
CAMERA_MISMATCH = "camera_mismatch"
WRONG_SIDE = "wrong_side"


def finished(snap) -> bool:
    """The snapshot's coup takes no more cards: the next card opens the next coup."""
    return snap.complete or snap.voided or snap.settled


def next_coup_id(snap) -> str:
    return snap.coup_id if not finished(snap) else f"{snap.shoe}-{snap.coup + 1}"


def zone_side(zone) -> str | None:
    """The layout side a camera zone stands for (zones named punto / banco; others ignored)."""
    name = str(zone or "").strip().lower()
    return name if name in SIDES else None


class CameraCrossCheck:
    def _init_camera(self) -> None:
        self.cam_obs: dict[str, dict[str, list[dict]]] = {}  # coup id -> side -> readings in order
        self._offline: list[dict] = []    # cards dealt without the shoe while its link was down
        self._resends_due = 0             # shoe events still to come as resends after a link-up

    # -- inputs ----------------------------------------------------------------------------
    def _on_camera_card(self, event: Event, out: list) -> None:
        side = zone_side(event.data.get("zone"))
        if side is None:
            return  # a card outside the Punto and Banco boxes
        snap = self.engine.snapshot()
        coup_id, dealt = self._camera_coup(snap, side)
        readings = self.cam_obs.setdefault(coup_id, {"punto": [], "banco": []})[side]
        position = len(readings)
        ok = event.data.get("status") == "ok" and bool(event.data.get("card"))
        reading = {"card": event.data.get("card") if ok else None, "value": event.data.get("value"),
                   "confidence": event.data.get("confidence"), "t": event.t, "checked": False}
        readings.append(reading)
        self._trim_camera()
        if position < dealt:
            self._camera_compare(coup_id, side, position, out, event)
            return
        expected = snap.next_side.value if snap.next_side is not None else ("punto" if finished(snap) else None)
        # An unread card is the one the tableau wants next: a reading in the other box is a later
        # card the shoe did read (queued behind it). With the link down the camera is the only
        # reader, so a card in the wrong box is dealt there and the engine flags it.
        awaited = position == dealt and coup_id == next_coup_id(snap) and (
            (self._unread and side == expected) or (not self._unread and self._shoe_link() == "down"))
        if not awaited:
            return  # ahead of the shoe: checked when the shoe's reading comes
        if ok:
            reading["checked"] = True
            data = {"card": reading["card"], "side": side, "confidence": reading["confidence"],
                    "reason": "camera stands in for the shoe"}
            self._on_card(Event(event.t, Kind.CARD, "camera", data), out)
        else:
            self._manual_entry(event, out, side, reading)

    def _camera_coup(self, snap, side: str) -> tuple[str, int]:
        """The coup a reading in ``side`` belongs to, and how many cards the engine has there."""
        cards = len(snap.punto if side == "punto" else snap.banco)
        seen = len(self.cam_obs.get(snap.coup_id, {}).get(side, ()))
        if finished(snap) and (seen >= cards or snap.voided):
            return f"{snap.shoe}-{snap.coup + 1}", 0  # the first cards of the next coup
        return snap.coup_id, cards

    def _manual_entry(self, event: Event, out: list, side: str, reading: dict) -> None:
        alert = self._raise(
            out, event, MANUAL_ENTRY, "error",
            f"the camera could not read the card on {side}: enter it by hand",
            {"side": side, "value": reading["value"], "confidence": reading["confidence"],
             "reason": event.data.get("reason", "")},
        )
        if self._unread:
            self._unread[0].setdefault("more_alerts", []).append(alert["id"])
        else:  # the link is down: a person fills this card through the API
            self._unread.append({"alert_id": alert["id"], "counter": None, "shoe_may_fill": True})
        self._publish_state(out, event.t)

    # -- cross-check -------------------------------------------------------------------------
    def _camera_after_shoe_card(self, record, snapshot, out: list, event: Event) -> None:
        """The shoe dealt ``record``: compare it with the camera's reading of that place."""
        if record.side is None:
            return
        side = record.side.value
        position = len(snapshot.punto if side == "punto" else snapshot.banco) - 1
        other = "banco" if side == "punto" else "punto"
        for reading in self.cam_obs.get(snapshot.coup_id, {}).get(other, []):
            if not reading["checked"] and reading["card"] == record.card.code:
                # The camera already saw this card land in the other box.
                reading["checked"] = True
                self._raise(out, event, WRONG_SIDE, "error",
                            f"the camera sees {record.card.code} in the {other} box; the tableau puts it on {side}",
                            {"coup": snapshot.coup_id, "zone": other, "camera": record.card.code,
                             "shoe": record.card.code, "tableau_side": side, "confidence": reading["confidence"]})
                return
        self._camera_compare(snapshot.coup_id, side, position, out, event)

    def _camera_compare(self, coup_id: str, side: str, position: int, out: list, event: Event) -> None:
        snap = self.engine.snapshot()
        readings = self.cam_obs.get(coup_id, {}).get(side, [])
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

    def _trim_camera(self, keep: int = 4) -> None:
        while len(self.cam_obs) > keep:
            del self.cam_obs[next(iter(self.cam_obs))]

    # -- the link ------------------------------------------------------------------------------
    def _shoe_link(self) -> str | None:
        return self.sources.get("shoe", {}).get("link")

    def _note_offline_deal(self, record, event: Event) -> None:
        """A card dealt from the camera or by hand while the shoe's link is down."""
        if event.source != "shoe" and self._shoe_link() == "down" and record is not None:
            self._offline.append({"coup_id": f"{record.shoe}-{record.coup}", "index": record.index,
                                  "card": record.card.code})

    def _camera_link_up(self, event: Event) -> None:
        missed = event.data.get("missed") or 0
        if event.data.get("driver") == "protocol" and missed > 0 and self._offline:
            self._resends_due = int(missed)
        else:
            self._offline.clear()  # nothing will be resent: the stand-in readings are final

    def _reconcile(self, event: Event, out: list) -> bool:
        """A shoe event after a reconnect: True when it was the resend of a card dealt without it."""
        if not self._offline or self._resends_due <= 0 or "lseq" not in event.data:
            return False
        self._resends_due -= 1
        is_card = event.kind in (Kind.CARD, Kind.CARD_UNREADABLE)
        stand_in = self._offline.pop(0) if is_card else None
        if self._resends_due == 0:
            self._offline.clear()  # the resends are over: what is left had no shoe reading
        if stand_in is None:
            return False
        shoe_card = event.data.get("card") if event.kind is Kind.CARD else None
        if shoe_card is None or shoe_card == stand_in["card"]:
            return True  # confirmed (or the shoe could not read it either)
        snap = self.engine.snapshot()
        if snap.coup_id == stand_in["coup_id"] and stand_in["index"] is not None:
            self._engine_action(event, out, lambda: self.engine.correct_card(
                stand_in["index"], shoe_card, f"shoe reading after reconnect (was {stand_in['card']})",
                t=event.t))
        else:
            self._raise(out, event, CAMERA_MISMATCH, "warning",
                        f"after reconnecting, the shoe reports {shoe_card} where {stand_in['card']} was dealt "
                        f"without it in coup {stand_in['coup_id']}, now closed: check that coup",
                        {"coup": stand_in["coup_id"], "index": stand_in["index"], "dealt": stand_in["card"],
                         "shoe": shoe_card})
        return True

    def _camera_fill_unread(self, event: Event, out: list) -> None:
        """A card the shoe could not read: the camera may have seen it already."""
        snap = self.engine.snapshot()
        if snap.next_side is None and not finished(snap):
            return
        side = snap.next_side.value if snap.next_side is not None else "punto"
        coup_id = next_coup_id(snap)
        dealt = 0 if finished(snap) else len(snap.punto if side == "punto" else snap.banco)
        readings = self.cam_obs.get(coup_id, {}).get(side, [])
        if dealt >= len(readings) or readings[dealt]["checked"]:
            return
        reading = readings[dealt]
        reading["checked"] = True
        if reading["card"] is not None:
            data = {"card": reading["card"], "side": side, "confidence": reading["confidence"],
                    "reason": "camera stands in for the shoe"}
            self._on_card(Event(event.t, Kind.CARD, "camera", data), out)
        else:
            self._manual_entry(event, out, side, reading)
