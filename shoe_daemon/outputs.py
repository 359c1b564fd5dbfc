"""What the core returns: instructions for the sinks, never decisions.

Sinks render these (MQTT, the journal's coup table, the shoe's lights, the
API's live stream); they do not decide game facts. ``Publish.encode()`` is
canonical JSON, so a replayed fixture yields the same bytes as the live run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


def canonical_json(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass(frozen=True, slots=True)
class Publish:
    """A message for the table's topic tree; ``topic`` is relative to the prefix."""

    topic: str
    payload: dict[str, Any]
    qos: int = 1
    retain: bool = False

    def encode(self) -> bytes:
        return canonical_json(self.payload)


@dataclass(frozen=True, slots=True)
class SetLights:
    """Dealer indicator state for the shoe (see sources.base.Lights)."""

    state: str


@dataclass(frozen=True, slots=True)
class RecordCoup:
    """A settled coup for the journal's recall table."""

    coup_id: str
    shoe: int
    coup: int
    result: dict[str, Any]
