"""The input events every source produces and the journal stores.

An event is a small, immutable envelope, timestamped by its source (``t``,
seconds since the epoch as a float, taken where the bytes or the frame
arrived): ``kind``, ``source`` and ``data``, the JSON object the journal keeps.
The core never reads a clock: time comes in with the events.

``data`` is parsed once, when the event is made, into ``payload``: one small
frozen class per kind (h11 style) with typed fields, so the core reads
``event.payload.counter`` (an int or None) instead of checking ``data`` by hand.
Parsing is lenient (a field of the wrong type reads as absent) because a
journal written by an earlier version must replay as it did; ``to_json()``,
which the journal calls to append a new event, is strict: an event whose data
does not fit its kind is a bug in the code that made it (:class:`EventError`).
The journal's bytes are those of ``data``, exactly as before payloads existed.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

from shoe_daemon.core.errors import EventError
from shoe_daemon.core.outputs import parse_json
from shoe_daemon.game.unset import UNSET  # re-exported: the payloads' "not in the data"


class Kind(StrEnum):
    # Cards, from the shoe, the camera or a person.
    CARD = "card"
    CARD_UNREADABLE = "card_unreadable"
    CARD_PUSHED_BACK = "card_pushed_back"
    CAMERA_CARD = "camera_card"
    # Shoe state.
    CUT_CARD = "cut_card"
    SHOE_INSERTED = "shoe_inserted"
    SHOE_REMOVED = "shoe_removed"
    SHOE_EMPTY = "shoe_empty"
    TAMPER = "tamper"
    BUTTON = "button"
    FAULT = "fault"
    # Links of the sources.
    LINK_UP = "link_up"
    LINK_DOWN = "link_down"
    # People, through the API (data always carries user and reason).
    NEW_SHOE = "new_shoe"
    CLOSE_COUP = "close_coup"
    VOID_COUP = "void_coup"
    RESOLVE_COUP = "resolve_coup"      # release a held coup
    CORRECT_CARD = "correct_card"
    CLEAR_ALERT = "clear_alert"
    ACK_ALERT = "ack_alert"
    BETS = "bets"
    CONFIG_RELOAD = "config_reload"    # audit only; the core ignores it


# -- field types -------------------------------------------------------------------------------
# Each check is (accepts(value), what it wants): lenient parsing keeps a value only if accepted.

def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_list(v: Any) -> bool:
    return isinstance(v, list)


def _is_dict(v: Any) -> bool:
    return isinstance(v, dict)


def _any(v: Any) -> bool:
    return True


def _opt(check):
    def accepts(v: Any) -> bool:
        return v is None or check(v)
    accepts.__name__ = f"optional {check.__name__.removeprefix('_is_')}"
    return accepts


INT, STR, BOOL, NUMBER, LIST, DICT, ANY = _is_int, _is_str, _is_bool, _is_number, _is_list, _is_dict, _any
OPT_INT, OPT_STR, OPT_NUMBER, OPT_DICT = _opt(INT), _opt(STR), _opt(NUMBER), _opt(DICT)


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    # dataclasses.fields() builds its tuple on every call: once per payload class is enough.
    return tuple(f.name for f in fields(cls))


@dataclass(frozen=True, slots=True)
class Payload:
    """The typed view of an event's ``data``. Subclasses list their fields with ``TYPES``
    (field name -> the check a value must pass); a missing or unfit value reads as the default."""

    TYPES: ClassVar[dict[str, Any]] = {}

    @classmethod
    def parse(cls, data: dict) -> Payload:
        kwargs = {}
        types = cls.TYPES
        for name in _field_names(cls):
            if name in data and types.get(name, ANY)(data[name]):
                kwargs[name] = data[name]
        return cls(**kwargs)

    @classmethod
    def problems(cls, data: dict) -> list[str]:
        """What in ``data`` does not fit this kind (empty when it all fits)."""
        out = []
        for name, check in cls.TYPES.items():
            if name in data and not check(data[name]):
                want = getattr(check, "__name__", "").removeprefix("_is_")
                out.append(f"{name}={data[name]!r} is not {want}")
        return out


@dataclass(frozen=True, slots=True)
class NoData(Payload):
    pass


@dataclass(frozen=True, slots=True)
class Attribution(Payload):
    """Who did it and why: every action a person takes carries these."""

    user: Any = UNSET
    reason: Any = UNSET

    @property
    def why(self) -> str:
        return "" if self.reason is UNSET else str(self.reason)


@dataclass(frozen=True, slots=True)
class CardData(Attribution):
    """A card, from the shoe (with its counter and link sequence), the camera or a person."""

    TYPES: ClassVar = {"card": ANY, "side": OPT_STR, "counter": OPT_INT, "lseq": OPT_INT, "shoe_link": OPT_STR}
    card: Any = UNSET          # as sent: a card code the table parses (and refuses if it is none)
    side: str | None = None
    counter: int | None = None
    lseq: int | None = None
    shoe_link: Any = UNSET     # the link state when a person typed it in (set when journaled)
    quality: Any = UNSET
    confidence: Any = UNSET

    # Shown with the dealt card when present, in this order.
    SHOWN: ClassVar = ("quality", "confidence", "user", "reason")

    def shown(self) -> dict:
        return {k: getattr(self, k) for k in self.SHOWN if getattr(self, k) is not UNSET}


@dataclass(frozen=True, slots=True)
class UnreadableData(Payload):
    TYPES: ClassVar = {"lseq": OPT_INT}
    counter: Any = None        # kept as sent: it goes into the alert's evidence as it is
    lseq: int | None = None
    reason: Any = ""


@dataclass(frozen=True, slots=True)
class PushedBackData(Payload):
    TYPES: ClassVar = {"card": OPT_STR, "counter": OPT_INT}
    card: str | None = None
    counter: int | None = None


@dataclass(frozen=True, slots=True)
class CameraCardData(Payload):
    TYPES: ClassVar = {"card": OPT_STR, "status": OPT_STR}
    card: str | None = None
    value: Any = None
    status: str | None = None
    confidence: Any = None
    zone: Any = None
    reason: Any = ""


@dataclass(frozen=True, slots=True)
class TamperData(Payload):
    TYPES: ClassVar = {"active": BOOL}
    what: Any = "tamper"
    active: bool = True


@dataclass(frozen=True, slots=True)
class ButtonData(Payload):
    TYPES: ClassVar = {"button": OPT_STR}
    button: str | None = None


@dataclass(frozen=True, slots=True)
class FaultData(Payload):
    """A fault a source reports: raised (``active`` true, the default) or cleared by the source.
    ``name``/``action``: what the protocol calls it and what the host must do (PROTOCOL.md §7.2);
    ``count``: how many times it happened (a driver may report a burst once)."""

    TYPES: ClassVar = {"severity": STR, "active": BOOL, "name": OPT_STR, "action": OPT_STR, "count": INT}
    code: Any = None
    severity: str = "warning"
    active: bool = True
    name: str | None = None
    action: str | None = None
    count: int = 1
    text: Any = None
    reason: Any = None


@dataclass(frozen=True, slots=True)
class LinkData(Payload):
    TYPES: ClassVar = {"missed": OPT_INT, "driver": OPT_STR}
    reason: Any = None
    driver: str | None = None
    missed: int | None = None


@dataclass(frozen=True, slots=True)
class NewShoeData(Attribution):
    """A new shoe; what the table carries into it is stamped on when it is journaled."""

    TYPES: ClassVar = {"decks": OPT_INT, "carried_alerts": LIST, "message_seq": INT, "shoe_number": INT,
                       "carried_history": DICT, "carried_sources": DICT}
    decks: int | None = None
    carried_alerts: list = field(default_factory=list)
    message_seq: int | None = None
    shoe_number: int | None = None
    carried_history: dict | None = None
    carried_sources: dict | None = None


@dataclass(frozen=True, slots=True)
class CoupActionData(Attribution):
    """Close, void or resolve a coup: ``coup_id`` the coup the person saw (None: the current one)."""

    TYPES: ClassVar = {"coup_id": OPT_STR}
    coup_id: str | None = None


@dataclass(frozen=True, slots=True)
class CorrectCardData(CoupActionData):
    TYPES: ClassVar = {"coup_id": OPT_STR, "index": OPT_INT, "card": OPT_STR}
    index: int | None = None
    card: str | None = None


@dataclass(frozen=True, slots=True)
class AlertActionData(Attribution):
    TYPES: ClassVar = {"alert_id": OPT_STR}
    alert_id: str | None = None


@dataclass(frozen=True, slots=True)
class BetsData(Attribution):
    TYPES: ClassVar = {"bets": _opt(LIST), "coup_id": OPT_STR, "limits": OPT_DICT}
    bets: list | None = None
    coup_id: str | None = None
    limits: dict | None = None


PAYLOADS: dict[Kind, type[Payload]] = {
    Kind.CARD: CardData,
    Kind.CARD_UNREADABLE: UnreadableData,
    Kind.CARD_PUSHED_BACK: PushedBackData,
    Kind.CAMERA_CARD: CameraCardData,
    Kind.TAMPER: TamperData,
    Kind.BUTTON: ButtonData,
    Kind.FAULT: FaultData,
    Kind.LINK_UP: LinkData,
    Kind.LINK_DOWN: LinkData,
    Kind.NEW_SHOE: NewShoeData,
    Kind.CLOSE_COUP: CoupActionData,
    Kind.VOID_COUP: CoupActionData,
    Kind.RESOLVE_COUP: CoupActionData,
    Kind.CORRECT_CARD: CorrectCardData,
    Kind.CLEAR_ALERT: AlertActionData,
    Kind.ACK_ALERT: AlertActionData,
    Kind.BETS: BetsData,
}


@dataclass(frozen=True, slots=True)
class Event:
    t: float
    kind: Kind
    source: str                        # "shoe", "camera", "api", "emulator", ...
    data: dict[str, Any] = field(default_factory=dict)
    payload: Payload = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "payload", PAYLOADS.get(self.kind, NoData).parse(self.data))

    def with_data(self, **more: Any) -> Event:
        """The same event with more data (what the table stamps on before it is journaled)."""
        return Event(self.t, self.kind, self.source, {**self.data, **more})

    def check(self) -> None:
        """Raise EventError unless the envelope and the data fit the kind."""
        problems = []
        if not isinstance(self.t, int | float) or isinstance(self.t, bool):
            problems.append(f"t={self.t!r} is not a number")
        if not isinstance(self.kind, Kind):
            problems.append(f"kind={self.kind!r} is not a Kind")
        if not isinstance(self.source, str):
            problems.append(f"source={self.source!r} is not a string")
        if not isinstance(self.data, dict):
            problems.append("data is not an object")
        else:
            problems += PAYLOADS.get(self.kind, NoData).problems(self.data)
        if problems:
            raise EventError(f"{getattr(self.kind, 'value', self.kind)} event from {self.source!r}: "
                             + "; ".join(problems))

    def to_json(self) -> str:
        """Canonical JSON: the same event always gives the same bytes (checked first)."""
        self.check()
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
