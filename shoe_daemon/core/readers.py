"""The reader arbiter: who may supply the next card, and what is waiting for whom.

The shoe is the table's reader. When it cannot read a card, that card is
*unread*: the camera or a person fills it, and cards the shoe read after it
*wait* behind it so the coup keeps its dealing order. While the shoe's link is
down, cards dealt from the camera or by hand are kept as *offline* cards: when
the shoe reconnects and resends what it saw, each resend is matched with the
stand-in that was dealt for it (the shoe's reading stands).

It also keeps each source's state as the ``sources`` topic shows it (link up or
down and since when, the shoe's presence in its cradle).
"""

from __future__ import annotations

from typing import Any

from shoe_daemon.core.events import Event, Kind

# Sources whose card fills a card the shoe could not read.
FALLBACK_SOURCES = frozenset({"camera", "api", "manual"})


class ReaderArbiter:
    def __init__(self) -> None:
        self.sources: dict[str, dict] = {}    # source -> {link, since, info|reason, shoe}
        self.unread: list[dict] = []          # cards no reader could read yet, oldest first
        self.waiting: list[Event] = []        # shoe cards dealt after an unread one, in order
        self.offline: list[dict] = []         # cards dealt without the shoe while its link was down
        self.resends_due = 0                  # shoe events still to come as resends after a link-up

    # -- links ----------------------------------------------------------------------------------
    def link(self, source: str = "shoe") -> str | None:
        return self.sources.get(source, {}).get("link")

    def link_changed(self, event: Event) -> None:
        """A LINK_UP or LINK_DOWN, merged into what else is known of the source (its presence stays)."""
        up = event.kind is Kind.LINK_UP
        state = {k: v for k, v in self.sources.get(event.source, {}).items() if k not in ("info", "reason")}
        state.update({"link": "up" if up else "down", "since": event.t})
        if up:
            state["info"] = event.data
        else:
            state["reason"] = event.payload.reason
        self.sources[event.source] = state
        if up and event.source == "shoe":
            self._shoe_back(event)

    def presence(self, event: Event) -> None:
        state = self.sources[event.source] = dict(self.sources.get(event.source, {}))
        state["shoe"] = event.kind.value.removeprefix("shoe_")

    # -- unread and waiting cards ------------------------------------------------------------------
    @property
    def blocked(self) -> bool:
        """A card is awaited from the camera or a person: the dealing stops until it comes."""
        return bool(self.unread)

    def awaiting(self) -> dict:
        return {"unreadable": len(self.unread), "queued_cards": len(self.waiting)}

    def add_unread(self, alert_id: str, counter: Any, *, shoe_may_fill: bool = False) -> None:
        slot: dict[str, Any] = {"alert_id": alert_id, "counter": counter}
        if shoe_may_fill:
            slot["shoe_may_fill"] = True
        self.unread.append(slot)

    def also_awaits(self, alert_id: str) -> None:
        """One more alert cleared when the oldest unread card is filled."""
        self.unread[0].setdefault("more_alerts", []).append(alert_id)

    def may_fill(self, source: str) -> bool:
        """Whether a card from ``source`` fills the oldest unread card (else it waits behind it).
        A card the camera could not read while the link was down: the shoe's own reading (resent
        after the reconnect) fills it as well as a person would."""
        return source in FALLBACK_SOURCES or bool(self.unread[0].get("shoe_may_fill"))

    def fill(self) -> dict:
        return self.unread.pop(0)

    def next_waiting(self) -> Event | None:
        if self.waiting and not self.unread:
            return self.waiting.pop(0)
        return None

    def new_shoe(self) -> None:
        self.unread.clear()
        self.waiting.clear()

    # -- cards dealt while the shoe's link was down ----------------------------------------------
    def dealt_offline(self, record, source: str) -> None:
        """A card dealt from the camera or by hand: kept while the shoe's link is down."""
        if source != "shoe" and self.link() == "down" and record is not None:
            self.offline.append({"coup_id": f"{record.shoe}-{record.coup}", "index": record.index,
                                 "card": record.card.code})

    def _shoe_back(self, event: Event) -> None:
        missed = event.payload.missed or 0
        if event.payload.driver == "protocol" and missed > 0 and self.offline:
            self.resends_due = int(missed)
        else:
            self.offline.clear()  # nothing will be resent: the stand-in readings are final

    def take_resend(self, event: Event) -> tuple[bool, dict | None]:
        """A shoe event after a reconnect: (it is a resend, the stand-in dealt for it or None)."""
        if not self.offline or self.resends_due <= 0 or event.payload.lseq is None:
            return False, None
        self.resends_due -= 1
        is_card = event.kind in (Kind.CARD, Kind.CARD_UNREADABLE)
        stand_in = self.offline.pop(0) if is_card else None
        if self.resends_due == 0:
            self.offline.clear()  # the resends are over: what is left had no shoe reading
        return stand_in is not None, stand_in
