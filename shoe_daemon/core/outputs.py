"""What the core returns: instructions for the sinks, never decisions.

Sinks render these (MQTT, the journal's coup table, the shoe's lights, the
API's live stream); they do not decide game facts. ``Publish.encode()`` is
canonical JSON, so a replayed fixture yields the same bytes as the live run.
The core puts its outputs in an :class:`Outbox`, which hands each to the sinks
as it is made (a dealt card's message leaves before the coup's result is
computed).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

try:  # about 10x faster; optional: the bytes are the same without it
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency
    _orjson = None


def _json_canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def canonical_json(obj: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: always the bytes of ``json.dumps(obj, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)``, so a replay gives the same bytes with or without
    orjson. orjson writes strings, ints and almost every float as json does; it writes floats below
    1e-4 otherwise (``1e-5`` as ``0.00001``, ``2.5e-07`` as ``2.5e-7``), and such output always holds
    ``e-`` or ``0.0000``: then (and for what orjson refuses: non-str keys, ints past 64 bits) json
    writes it. (NaN and infinities, which no payload holds, are the exception: json writes them as
    invalid JSON, orjson as null.)"""
    if _orjson is not None:
        try:
            out = _orjson.dumps(obj, option=_orjson.OPT_SORT_KEYS)
        except (TypeError, _orjson.JSONEncodeError):
            return _json_canonical(obj)
        if b"e-" not in out and b"0.0000" not in out:
            return out
    return _json_canonical(obj)


_LONG_DIGITS = re.compile(r"\d{19}")


def parse_json(text: str | bytes) -> Any:
    """``json.loads(text)``, by orjson when it can: the same values. orjson refuses NaN and
    infinities, and reads an integer past 64 bits as a float: json parses what it refuses, and any
    text with a run of 19 digits (no 64-bit trouble below that)."""
    if _orjson is not None and not _LONG_DIGITS.search(text if isinstance(text, str) else text.decode()):
        try:
            return _orjson.loads(text)
        except _orjson.JSONDecodeError:
            pass
    return json.loads(text)


@dataclass(frozen=True, slots=True)
class Publish:
    """A message for the table's topic tree; ``topic`` is relative to the prefix."""

    topic: str
    payload: dict[str, Any]
    qos: int = 1
    retain: bool = False

    def encode(self) -> bytes:
        return canonical_json(self.payload)


class Lights:
    """Dealer indicator states the core asks the shoe to show (drivers map them to their wire)."""

    OFF = "off"
    PUNTO = "punto"          # next card to Punto
    BANCO = "banco"          # next card to Banco
    COMPLETE = "complete"    # coup complete: wait
    ERROR = "error"          # dealing error: stop dealing

    ALL = (OFF, PUNTO, BANCO, COMPLETE, ERROR)


@dataclass(frozen=True, slots=True)
class SetLights:
    """Dealer indicator state for the shoe (one of :class:`Lights`)."""

    state: str


@dataclass(frozen=True, slots=True)
class RecordCoup:
    """A settled coup for the journal's recall table."""

    coup_id: str
    shoe: int
    coup: int
    result: dict[str, Any]


Output = Publish | SetLights | RecordCoup


class Outbox:
    """The outputs of one event, in the order the sinks must render them.

    ``emit`` (optional) receives each output the moment the core adds it. An output is never
    changed once added (a later state is a new dict), so rendering early gives the same bytes.
    """

    __slots__ = ("items", "_emit")

    def __init__(self, emit=None):
        self.items: list[Output] = []
        self._emit = emit

    def append(self, out: Output) -> None:
        self.items.append(out)
        if self._emit is not None:
            self._emit(out)

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
