"""The input events every source produces and the journal stores.

An event is small, immutable and timestamped by its source (``t``, seconds
since the epoch as a float, taken where the bytes or the frame arrived). The
core never reads a clock: time comes in with the events. The journal stores
``Event.to_json()``; replay feeds ``Event.from_json()`` back to the core, so
both must round-trip exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from shoe_daemon.outputs import parse_json


class Kind(StrEnum):
    # Cards, from the shoe, the camera or a person.
    CARD = "card"                      # data: card, [side], [counter], [quality], [confidence], [user], [reason]
    CARD_UNREADABLE = "card_unreadable"  # data: [counter]
    CARD_PUSHED_BACK = "card_pushed_back"  # data: [card], [counter]
    CAMERA_CARD = "camera_card"        # data: card|None, value, status ok|unsure, confidence, zone, [reason]
    # Shoe state.
    CUT_CARD = "cut_card"
    SHOE_INSERTED = "shoe_inserted"
    SHOE_REMOVED = "shoe_removed"
    SHOE_EMPTY = "shoe_empty"
    TAMPER = "tamper"                  # data: what (e.g. "lid_open")
    BUTTON = "button"                  # data: button ("coup_confirm" | "burn" | "new_shoe")
    FAULT = "fault"                    # data: code, [text]
    # Links of the sources.
    LINK_UP = "link_up"                # data: [info]
    LINK_DOWN = "link_down"            # data: reason
    # People, through the API (data always carries user and reason).
    NEW_SHOE = "new_shoe"              # data: [decks]
    CLOSE_COUP = "close_coup"
    VOID_COUP = "void_coup"
    RESOLVE_COUP = "resolve_coup"      # release a held coup
    CORRECT_CARD = "correct_card"      # data: index, card
    CLEAR_ALERT = "clear_alert"        # data: alert_id
    ACK_ALERT = "ack_alert"            # data: alert_id
    BETS = "bets"                      # data: bets, coup_id, [limits] (stamped by Table.prepare)
    CONFIG_RELOAD = "config_reload"    # data: applied, restart_needed (audit only; the core ignores it)


@dataclass(frozen=True, slots=True)
class Event:
    t: float
    kind: Kind
    source: str                        # "shoe", "camera", "api", "emulator", ...
    data: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """Canonical JSON: the same event always gives the same bytes."""
        # json, not outputs.canonical_json: that writes NaN as null, and a journaled event must
        # replay to the event the core saw.
        return json.dumps(
            {"t": self.t, "kind": self.kind.value, "source": self.source, "data": self.data},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Event:
        obj = parse_json(text)
        return cls(t=float(obj["t"]), kind=Kind(obj["kind"]), source=str(obj["source"]), data=dict(obj["data"]))
