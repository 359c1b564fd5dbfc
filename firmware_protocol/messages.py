"""ShoeLink v1 messages: one frozen dataclass per frame type (PROTOCOL.md section 7).

Every message carries the three header fields ``seq``, ``time_ms`` and
``flags`` as keyword-only fields with defaults, so an application builds a
message from its payload alone (``CardDrawn("TH", counter=12, quality=97)``)
and the connection objects stamp the header when they send it. A decoded
message has its header fields filled in from the wire.

Type ids are grouped so that the id alone says the direction and whether the
message is sequenced (kept in the shoe's ring and acknowledged):

    0x01-0x3F  shoe -> host, sequenced events
    0x40-0x7F  shoe -> host, unsequenced (hello, heartbeat, status, ...)
    0x80-0xBF  host -> shoe
    0xC0-0xFF  reserved
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any, ClassVar

PROTOCOL_VERSION = 1

HEADER = struct.Struct("<BBHI")  # type, flags, seq, time_ms
HEADER_LEN = HEADER.size  # 8
CRC_LEN = 4
MIN_FRAME = HEADER_LEN + CRC_LEN  # 12
MAX_FRAME = 64  # raw (un-stuffed) frame: header + payload + CRC
MAX_PAYLOAD = MAX_FRAME - MIN_FRAME  # 52
MAX_ENCODED = MAX_FRAME + 1  # COBS adds exactly one byte to a frame of <= 254 bytes
SEQ_MOD = 1 << 16
TIME_MOD = 1 << 32

# Header flag bits.
FLAG_RETRANSMIT = 0x01  # this frame is a resend of an earlier one (same seq, same time_ms)
FLAGS_RESERVED = 0xFE   # sent as 0, ignored on receipt

RANKS = "A23456789TJQK"  # rank r is encoded as RANKS.index(r) + 1 (A=1 ... K=13)
SUITS = "SHDC"           # suit s is encoded as SUITS.index(s) (S=0, H=1, D=2, C=3)


class FieldError(ValueError):
    """A payload field outside its range (decoding reports it as BAD_FIELD)."""


class MsgType(IntEnum):
    # shoe -> host, sequenced
    CARD_DRAWN = 0x01
    CARD_UNREADABLE = 0x02
    CARD_PUSHED_BACK = 0x03
    CUT_CARD = 0x04
    SHOE_STATE = 0x05
    TAMPER = 0x06
    BUTTON = 0x07
    FAULT = 0x08
    # shoe -> host, unsequenced
    SHOE_HELLO = 0x40
    HEARTBEAT = 0x41
    STATUS = 0x42
    CLOCK_SYNC_REPLY = 0x43
    RESEND_GONE = 0x44
    # host -> shoe
    HOST_HELLO = 0x80
    ACK = 0x81
    RESEND_REQUEST = 0x82
    SET_LIGHTS = 0x83
    STATUS_REQUEST = 0x84
    CLOCK_SYNC = 0x85


def is_sequenced(type_id: int) -> bool:
    """Types 0x01-0x3F are events: numbered, kept in the ring, acknowledged."""
    return 0x01 <= type_id <= 0x3F


def is_shoe_to_host(type_id: int) -> bool:
    return 0x01 <= type_id <= 0x7F


def is_host_to_shoe(type_id: int) -> bool:
    return 0x80 <= type_id <= 0xBF


class UnreadableReason(IntEnum):
    UNKNOWN = 0
    NO_READ = 1        # nothing recognisable (blank, dirty, covered)
    AMBIGUOUS = 2      # two candidates, neither sure
    TOO_FAST = 3       # the card passed faster than the sensor can read
    SENSOR_FAULT = 4


class ShoeStateCode(IntEnum):
    INSERTED = 1       # cards (a new shoe) loaded
    REMOVED = 2        # the cards were taken out
    EMPTY = 3          # the last card left the shoe


class TamperKind(IntEnum):
    LID_OPENED = 1
    LID_CLOSED = 2
    ENCLOSURE_OPENED = 3
    MAGNETIC_FIELD = 4
    OPTICS_COVERED = 5


class Button(IntEnum):
    COUP_CONFIRM = 1
    BURN = 2
    NEW_SHOE = 3


class Lights(IntEnum):
    OFF = 0
    PUNTO = 1          # next card to Punto
    BANCO = 2          # next card to Banco
    COUP_COMPLETE = 3  # coup complete: wait for the results
    ERROR_STOP = 4     # error: stop dealing


class FaultCode(IntEnum):
    """Known fault codes; any non-zero u16 is accepted (0x8000-0xFFFF are vendor codes)."""

    OPTICS_DIRTY = 0x0001
    SENSOR_FAILURE = 0x0002
    CARD_JAM = 0x0003
    DOUBLE_CARD = 0x0004
    CARD_REVERSED = 0x0005
    RING_OVERFLOW = 0x0010
    RX_OVERFLOW = 0x0011
    LOW_VOLTAGE = 0x0020
    WATCHDOG_RESET = 0x0021
    OVER_TEMPERATURE = 0x0022
    CONFIG_CORRUPT = 0x0030
    CALIBRATION_NEEDED = 0x0031
    LIGHT_FAILURE = 0x0040
    BUTTON_STUCK = 0x0041


class Capability(IntFlag):
    READ_QUALITY = 1 << 0
    UNREADABLE_DETECT = 1 << 1
    PUSH_BACK_DETECT = 1 << 2
    CUT_CARD_DETECT = 1 << 3
    SHOE_PRESENCE = 1 << 4
    LID_SENSOR = 1 << 5
    LIGHTS = 1 << 6
    BUTTON_COUP_CONFIRM = 1 << 7
    BUTTON_BURN = 1 << 8
    BUTTON_NEW_SHOE = 1 << 9
    CLOCK_SYNC = 1 << 10
    TAMPER_OTHER = 1 << 11


CAPABILITIES_ALL = Capability((1 << 12) - 1)


class ShoeFlags(IntFlag):
    """The ``status`` bit field of HEARTBEAT and STATUS."""

    SHOE_PRESENT = 1 << 0
    LID_OPEN = 1 << 1
    EMPTY = 1 << 2
    HOST_LINK = 1 << 3
    FAULT_ACTIVE = 1 << 4
    CUT_CARD_SEEN = 1 << 5
    CLOCK_SYNCED = 1 << 6


# -- card codes on the wire --------------------------------------------------------------

def card_to_byte(card: str | None) -> int:
    """``"TH"`` -> 0x1A (suit << 4 | rank); ``None`` -> 0x00 (unknown, push-back only)."""
    if card is None:
        return 0
    text = str(card).upper()
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise FieldError(f"bad card code {card!r}")
    return (SUITS.index(text[1]) << 4) | (RANKS.index(text[0]) + 1)


def byte_to_card(value: int, allow_unknown: bool = False) -> str | None:
    if value == 0 and allow_unknown:
        return None
    rank, suit = value & 0x0F, value >> 4
    if not 1 <= rank <= 13 or suit > 3:
        raise FieldError(f"bad card byte 0x{value:02x}")
    return RANKS[rank - 1] + SUITS[suit]


def _enum(cls, value: int, name: str):
    try:
        return cls(value)
    except ValueError:
        raise FieldError(f"{name}={value} is not a {cls.__name__}") from None


def _check(cond: bool, text: str) -> None:
    if not cond:
        raise FieldError(text)


def _u(value: int, bits: int, name: str) -> int:
    value = int(value)
    if not 0 <= value < (1 << bits):
        raise FieldError(f"{name}={value} does not fit u{bits}")
    return value


def _pack_text(text: str, size: int, name: str) -> bytes:
    raw = text.encode("ascii", "strict") if text else b""
    if len(raw) > size or any(not 0x20 <= b <= 0x7E for b in raw):
        raise FieldError(f"{name} must be at most {size} printable ASCII characters")
    return raw.ljust(size, b"\x00")


def _unpack_text(raw: bytes, name: str) -> str:
    text, _, pad = raw.partition(b"\x00")
    if any(pad) or any(not 0x20 <= b <= 0x7E for b in text):
        raise FieldError(f"{name} is not NUL-padded printable ASCII")
    return text.decode("ascii")


# -- the messages --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """Base of every message: the header fields (PROTOCOL.md section 5)."""

    seq: int = 0
    time_ms: int = 0
    flags: int = 0

    TYPE: ClassVar[MsgType]
    PAYLOAD: ClassVar[struct.Struct]
    FIELDS: ClassVar[tuple[str, ...]]

    @property
    def retransmit(self) -> bool:
        return bool(self.flags & FLAG_RETRANSMIT)

    @property
    def sequenced(self) -> bool:
        return is_sequenced(self.TYPE)

    # Subclasses convert between their fields and the payload's struct values.
    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self.FIELDS)

    @classmethod
    def _from_values(cls, values: tuple, header: dict) -> Message:
        return cls(*values, **header)

    def pack_payload(self) -> bytes:
        try:
            return self.PAYLOAD.pack(*self._values())
        except struct.error as exc:
            raise FieldError(f"{type(self).__name__}: {exc}") from None

    @classmethod
    def unpack_payload(cls, payload: bytes, header: dict) -> Message:
        """Build from a payload of at least PAYLOAD.size bytes (extra bytes are ignored)."""
        return cls._from_values(cls.PAYLOAD.unpack_from(payload), header)

    def validate(self) -> None:
        """Raise FieldError when a field is out of its range (encode and decode both call it)."""


def _counter(value: int, name: str = "counter") -> None:
    _check(1 <= value <= 0xFFFF, f"{name}={value} must be 1-65535")


@dataclass(frozen=True, slots=True)
class CardDrawn(Message):
    """A card left the shoe and was read."""

    card: str
    counter: int
    quality: int = 100

    TYPE: ClassVar = MsgType.CARD_DRAWN
    PAYLOAD: ClassVar = struct.Struct("<BHB")
    FIELDS: ClassVar = ("card", "counter", "quality")

    def _values(self):
        return (card_to_byte(self.card), self.counter, self.quality)

    @classmethod
    def _from_values(cls, v, header):
        return cls(byte_to_card(v[0]), v[1], v[2], **header)

    def validate(self):
        card_to_byte(self.card)
        _counter(self.counter)
        _check(0 <= self.quality <= 100, f"quality={self.quality} must be 0-100")


@dataclass(frozen=True, slots=True)
class CardUnreadable(Message):
    """A card left the shoe but its code could not be read: the host falls back to the camera."""

    counter: int
    reason: UnreadableReason = UnreadableReason.NO_READ

    TYPE: ClassVar = MsgType.CARD_UNREADABLE
    PAYLOAD: ClassVar = struct.Struct("<HB")
    FIELDS: ClassVar = ("counter", "reason")

    @classmethod
    def _from_values(cls, v, header):
        return cls(v[0], _enum(UnreadableReason, v[1], "reason"), **header)

    def validate(self):
        _counter(self.counter)
        _enum(UnreadableReason, self.reason, "reason")


@dataclass(frozen=True, slots=True)
class CardPushedBack(Message):
    """The card with this counter went back into the shoe; the next draw reuses the counter."""

    card: str | None
    counter: int

    TYPE: ClassVar = MsgType.CARD_PUSHED_BACK
    PAYLOAD: ClassVar = struct.Struct("<BH")
    FIELDS: ClassVar = ("card", "counter")

    def _values(self):
        return (card_to_byte(self.card), self.counter)

    @classmethod
    def _from_values(cls, v, header):
        return cls(byte_to_card(v[0], allow_unknown=True), v[1], **header)

    def validate(self):
        card_to_byte(self.card)
        _counter(self.counter)


@dataclass(frozen=True, slots=True)
class CutCard(Message):
    """The cut card came out after ``counter`` cards had been drawn from this shoe."""

    counter: int

    TYPE: ClassVar = MsgType.CUT_CARD
    PAYLOAD: ClassVar = struct.Struct("<H")
    FIELDS: ClassVar = ("counter",)

    def validate(self):
        _u(self.counter, 16, "counter")


@dataclass(frozen=True, slots=True)
class ShoeState(Message):
    state: ShoeStateCode

    TYPE: ClassVar = MsgType.SHOE_STATE
    PAYLOAD: ClassVar = struct.Struct("<B")
    FIELDS: ClassVar = ("state",)

    @classmethod
    def _from_values(cls, v, header):
        return cls(_enum(ShoeStateCode, v[0], "state"), **header)

    def validate(self):
        _enum(ShoeStateCode, self.state, "state")


@dataclass(frozen=True, slots=True)
class Tamper(Message):
    what: TamperKind

    TYPE: ClassVar = MsgType.TAMPER
    PAYLOAD: ClassVar = struct.Struct("<B")
    FIELDS: ClassVar = ("what",)

    @classmethod
    def _from_values(cls, v, header):
        return cls(_enum(TamperKind, v[0], "what"), **header)

    def validate(self):
        _enum(TamperKind, self.what, "what")


@dataclass(frozen=True, slots=True)
class ButtonPressed(Message):
    button: Button

    TYPE: ClassVar = MsgType.BUTTON
    PAYLOAD: ClassVar = struct.Struct("<B")
    FIELDS: ClassVar = ("button",)

    @classmethod
    def _from_values(cls, v, header):
        return cls(_enum(Button, v[0], "button"), **header)

    def validate(self):
        _enum(Button, self.button, "button")


@dataclass(frozen=True, slots=True)
class Fault(Message):
    """A fault was raised (active=True) or cleared (active=False)."""

    code: int
    active: bool = True
    detail: int = 0

    TYPE: ClassVar = MsgType.FAULT
    PAYLOAD: ClassVar = struct.Struct("<HBH")
    FIELDS: ClassVar = ("code", "active", "detail")

    def _values(self):
        return (self.code, 1 if self.active else 0, self.detail)

    @classmethod
    def _from_values(cls, v, header):
        _check(v[1] in (0, 1), f"active={v[1]} must be 0 or 1")
        return cls(v[0], bool(v[1]), v[2], **header)

    def validate(self):
        _check(1 <= self.code <= 0xFFFF, f"code={self.code} must be 1-65535")
        _u(self.detail, 16, "detail")

    @property
    def known(self) -> FaultCode | None:
        try:
            return FaultCode(self.code)
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class ShoeHello(Message):
    """The shoe's half of the handshake; header ``seq`` is the shoe's last assigned event seq."""

    version: int
    boot_id: int
    last_acked: int
    ring_size: int
    ring_count: int
    heartbeat_ms: int
    fw_major: int
    fw_minor: int
    fw_patch: int
    capabilities: int
    model: str
    serial: str

    TYPE: ClassVar = MsgType.SHOE_HELLO
    PAYLOAD: ClassVar = struct.Struct("<BIHBBHBBBI16s16s")
    FIELDS: ClassVar = ("version", "boot_id", "last_acked", "ring_size", "ring_count", "heartbeat_ms",
                        "fw_major", "fw_minor", "fw_patch", "capabilities", "model", "serial")

    def _values(self):
        v = [getattr(self, f) for f in self.FIELDS]
        v[-2] = _pack_text(self.model, 16, "model")
        v[-1] = _pack_text(self.serial, 16, "serial")
        return tuple(v)

    @classmethod
    def _from_values(cls, v, header):
        v = list(v)
        v[-2] = _unpack_text(v[-2], "model")
        v[-1] = _unpack_text(v[-1], "serial")
        return cls(*v, **header)

    def validate(self):
        _check(self.version >= 1, "version must be >= 1")
        _check(1 <= self.ring_size <= 255, f"ring_size={self.ring_size} must be 1-255")
        _check(0 <= self.ring_count <= self.ring_size, f"ring_count={self.ring_count} exceeds ring_size")
        _check(1 <= self.heartbeat_ms <= 0xFFFF, f"heartbeat_ms={self.heartbeat_ms} must be 1-65535")

    @property
    def firmware(self) -> str:
        return f"{self.fw_major}.{self.fw_minor}.{self.fw_patch}"

    @property
    def oldest_seq(self) -> int:
        """The oldest event seq still in the shoe's ring."""
        return (self.seq - self.ring_count + 1) % SEQ_MOD


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """Sent every ``heartbeat_ms``; header ``seq`` is the shoe's last assigned event seq."""

    uptime_s: int
    cards_read: int
    cards_unreadable: int
    rx_errors: int
    lights: Lights
    status: int
    unacked: int

    TYPE: ClassVar = MsgType.HEARTBEAT
    PAYLOAD: ClassVar = struct.Struct("<IIIIBBB")
    FIELDS: ClassVar = ("uptime_s", "cards_read", "cards_unreadable", "rx_errors", "lights", "status", "unacked")

    @classmethod
    def _from_values(cls, v, header):
        return cls(*v[:4], _enum(Lights, v[4], "lights"), *v[5:], **header)

    def validate(self):
        _enum(Lights, self.lights, "lights")


@dataclass(frozen=True, slots=True)
class Status(Message):
    """The answer to STATUS_REQUEST."""

    status: int
    lights: Lights
    card_counter: int
    cut_card_at: int
    fault_code: int
    last_acked: int
    ring_count: int

    TYPE: ClassVar = MsgType.STATUS
    PAYLOAD: ClassVar = struct.Struct("<BBHHHHB")
    FIELDS: ClassVar = ("status", "lights", "card_counter", "cut_card_at", "fault_code", "last_acked", "ring_count")

    @classmethod
    def _from_values(cls, v, header):
        return cls(v[0], _enum(Lights, v[1], "lights"), *v[2:], **header)

    def validate(self):
        _enum(Lights, self.lights, "lights")


@dataclass(frozen=True, slots=True)
class ClockSyncReply(Message):
    """Echo of CLOCK_SYNC: host_time_ms as sent, shoe_rx_ms when it arrived; header time_ms = reply sent."""

    host_time_ms: int
    shoe_rx_ms: int

    TYPE: ClassVar = MsgType.CLOCK_SYNC_REPLY
    PAYLOAD: ClassVar = struct.Struct("<QI")
    FIELDS: ClassVar = ("host_time_ms", "shoe_rx_ms")


@dataclass(frozen=True, slots=True)
class ResendGone(Message):
    """The requested events are no longer in the ring: the host records them as lost."""

    first_seq: int
    count: int

    TYPE: ClassVar = MsgType.RESEND_GONE
    PAYLOAD: ClassVar = struct.Struct("<HB")
    FIELDS: ClassVar = ("first_seq", "count")

    def validate(self):
        _check(1 <= self.count <= 255, f"count={self.count} must be 1-255")


@dataclass(frozen=True, slots=True)
class HostHello(Message):
    min_version: int = PROTOCOL_VERSION
    max_version: int = PROTOCOL_VERSION

    TYPE: ClassVar = MsgType.HOST_HELLO
    PAYLOAD: ClassVar = struct.Struct("<BB")
    FIELDS: ClassVar = ("min_version", "max_version")

    def validate(self):
        _check(1 <= self.min_version <= self.max_version, "need 1 <= min_version <= max_version")


@dataclass(frozen=True, slots=True)
class Ack(Message):
    """Cumulative: every event up to and including ``ack_seq`` has been received."""

    ack_seq: int

    TYPE: ClassVar = MsgType.ACK
    PAYLOAD: ClassVar = struct.Struct("<H")
    FIELDS: ClassVar = ("ack_seq",)


@dataclass(frozen=True, slots=True)
class ResendRequest(Message):
    """Send events first_seq .. first_seq+count-1 (mod 65536) again."""

    first_seq: int
    count: int = 1

    TYPE: ClassVar = MsgType.RESEND_REQUEST
    PAYLOAD: ClassVar = struct.Struct("<HB")
    FIELDS: ClassVar = ("first_seq", "count")

    def validate(self):
        _check(1 <= self.count <= 255, f"count={self.count} must be 1-255")


@dataclass(frozen=True, slots=True)
class SetLights(Message):
    lights: Lights
    blink: bool = False

    TYPE: ClassVar = MsgType.SET_LIGHTS
    PAYLOAD: ClassVar = struct.Struct("<BB")
    FIELDS: ClassVar = ("lights", "blink")

    def _values(self):
        return (self.lights, 1 if self.blink else 0)

    @classmethod
    def _from_values(cls, v, header):
        _check(v[1] in (0, 1), f"blink={v[1]} must be 0 or 1")
        return cls(_enum(Lights, v[0], "lights"), bool(v[1]), **header)

    def validate(self):
        _enum(Lights, self.lights, "lights")


@dataclass(frozen=True, slots=True)
class StatusRequest(Message):
    TYPE: ClassVar = MsgType.STATUS_REQUEST
    PAYLOAD: ClassVar = struct.Struct("<")
    FIELDS: ClassVar = ()


@dataclass(frozen=True, slots=True)
class ClockSync(Message):
    """The host's clock in milliseconds (Unix epoch when the host uses wall-clock time)."""

    host_time_ms: int

    TYPE: ClassVar = MsgType.CLOCK_SYNC
    PAYLOAD: ClassVar = struct.Struct("<Q")
    FIELDS: ClassVar = ("host_time_ms",)


MESSAGE_CLASSES: dict[int, type[Message]] = {
    cls.TYPE: cls
    for cls in (
        CardDrawn, CardUnreadable, CardPushedBack, CutCard, ShoeState, Tamper, ButtonPressed, Fault,
        ShoeHello, Heartbeat, Status, ClockSyncReply, ResendGone,
        HostHello, Ack, ResendRequest, SetLights, StatusRequest, ClockSync,
    )
}

# Enum-typed fields: their names in to_dict/from_dict (vectors.json).
_ENUM_FIELDS: dict[str, type[IntEnum]] = {
    "reason": UnreadableReason,
    "state": ShoeStateCode,
    "what": TamperKind,
    "button": Button,
    "lights": Lights,
}


def to_dict(msg: Message) -> dict[str, Any]:
    """A JSON-friendly dict: type name, header fields, then payload fields (enums by name)."""
    out: dict[str, Any] = {"type": msg.TYPE.name, "seq": msg.seq, "time_ms": msg.time_ms, "flags": msg.flags}
    for name in msg.FIELDS:
        value = getattr(msg, name)
        if name in _ENUM_FIELDS:
            value = _ENUM_FIELDS[name](value).name
        elif isinstance(value, bool):
            value = value
        elif isinstance(value, IntFlag | IntEnum):
            value = int(value)
        out[name] = value
    return out


def from_dict(data: dict[str, Any]) -> Message:
    """Inverse of to_dict; raises KeyError/ValueError on bad input (it is for trusted files)."""
    cls = MESSAGE_CLASSES[MsgType[data["type"]]]
    kwargs = {}
    for name in cls.FIELDS:
        value = data[name]
        if name in _ENUM_FIELDS:
            value = _ENUM_FIELDS[name][value] if isinstance(value, str) else _ENUM_FIELDS[name](value)
        kwargs[name] = value
    return cls(**kwargs, seq=data.get("seq", 0), time_ms=data.get("time_ms", 0), flags=data.get("flags", 0))
