"""Frames on the wire: header + payload + CRC-32, COBS-stuffed, 0x00-delimited.

``encode_frame(message)`` gives the bytes to write. ``Decoder`` is the
incremental decoder: ``feed(chunk)`` with any split of the byte stream returns
the messages and ``DecodeError`` objects completed by that chunk. It never
raises on bad input, never holds more than ``MAX_ENCODED`` bytes of a frame
(a longer frame is dropped and reported as OVERSIZE once its delimiter
arrives) and is back in step at the next 0x00.

The order of the checks is part of the protocol (PROTOCOL.md section 6), so
the Python and C decoders report the same error for the same bytes:

    empty frame          -> ignored, no result
    > MAX_ENCODED bytes  -> OVERSIZE
    COBS code overrun    -> COBS
    < 12 bytes decoded   -> TOO_SHORT
    CRC mismatch         -> BAD_CRC
    type not in v1       -> UNKNOWN_TYPE      (seq and type reported)
    payload too short    -> BAD_LENGTH        (seq and type reported)
    field out of range   -> BAD_FIELD         (seq and type reported)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import StrEnum

from firmware_protocol import cobs
from firmware_protocol.crc import crc32
from firmware_protocol.messages import (
    CRC_LEN,
    HEADER,
    HEADER_LEN,
    MAX_ENCODED,
    MAX_FRAME,
    MESSAGE_CLASSES,
    MIN_FRAME,
    FieldError,
    Message,
)

DELIMITER = b"\x00"
_CRC = struct.Struct("<I")


class ErrorKind(StrEnum):
    OVERSIZE = "OVERSIZE"
    COBS = "COBS"
    TOO_SHORT = "TOO_SHORT"
    BAD_CRC = "BAD_CRC"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    BAD_LENGTH = "BAD_LENGTH"
    BAD_FIELD = "BAD_FIELD"
    # Reported by the connections, never by the decoder: a valid frame that the
    # receiving side should never get (e.g. a host frame echoed back to the host).
    WRONG_DIRECTION = "WRONG_DIRECTION"


@dataclass(frozen=True, slots=True)
class DecodeError:
    """A frame that was dropped, and why. ``seq``/``msg_type`` are set once the CRC was good."""

    kind: ErrorKind
    detail: str = ""
    size: int = 0                 # encoded bytes between the delimiters
    msg_type: int | None = None
    seq: int | None = None


def encode_raw(message: Message) -> bytes:
    """The un-stuffed frame: header, payload, CRC-32 (little-endian). Raises on bad fields."""
    message.validate()
    for name, bits in (("seq", 16), ("time_ms", 32), ("flags", 8)):
        value = getattr(message, name)
        if not 0 <= value < (1 << bits):
            raise FieldError(f"{name}={value} does not fit u{bits}")
    body = HEADER.pack(message.TYPE, message.flags, message.seq, message.time_ms) + message.pack_payload()
    if len(body) + CRC_LEN > MAX_FRAME:  # pragma: no cover - every v1 message fits
        raise FieldError("frame too long")
    return body + _CRC.pack(crc32(body))


def encode_frame(message: Message, leading_delimiter: bool = False) -> bytes:
    """The bytes to write: COBS(raw frame) + 0x00, optionally preceded by a 0x00."""
    wire = cobs.encode(encode_raw(message)) + DELIMITER
    return DELIMITER + wire if leading_delimiter else wire


def parse_raw(raw: bytes, size: int = 0) -> Message | DecodeError:
    """Check and parse one un-stuffed frame. Never raises."""
    if len(raw) < MIN_FRAME:
        return DecodeError(ErrorKind.TOO_SHORT, f"{len(raw)} bytes after COBS, need {MIN_FRAME}", size)
    body = raw[:-CRC_LEN]
    (wire_crc,) = _CRC.unpack_from(raw, len(body))
    if crc32(body) != wire_crc:
        return DecodeError(ErrorKind.BAD_CRC, f"crc {wire_crc:08x} != {crc32(body):08x}", size)
    type_id, flags, seq, time_ms = HEADER.unpack_from(body)
    cls = MESSAGE_CLASSES.get(type_id)
    if cls is None:
        return DecodeError(ErrorKind.UNKNOWN_TYPE, f"type 0x{type_id:02x}", size, type_id, seq)
    payload = body[HEADER_LEN:]
    if len(payload) < cls.PAYLOAD.size:
        return DecodeError(
            ErrorKind.BAD_LENGTH, f"{cls.TYPE.name} payload {len(payload)} < {cls.PAYLOAD.size}", size, type_id, seq
        )
    try:
        message = cls.unpack_payload(payload, {"seq": seq, "time_ms": time_ms, "flags": flags})
        message.validate()
    except (FieldError, ValueError) as exc:
        return DecodeError(ErrorKind.BAD_FIELD, f"{cls.TYPE.name}: {exc}", size, type_id, seq)
    return message


def decode_frame(encoded: bytes) -> Message | DecodeError | None:
    """One frame's bytes between delimiters -> message, error, or None for an empty frame."""
    n = len(encoded)
    if n == 0:
        return None
    if n > MAX_ENCODED:
        return DecodeError(ErrorKind.OVERSIZE, f"{n} bytes > {MAX_ENCODED}", n)
    try:
        raw = cobs.decode(encoded)
    except cobs.CobsError as exc:
        return DecodeError(ErrorKind.COBS, str(exc), n)
    return parse_raw(raw, n)


class Decoder:
    """Incremental frame decoder with bounded memory.

    ``feed(data)`` returns a list of ``Message`` and ``DecodeError`` in stream
    order. The decoder starts in step (the first byte begins a frame).
    """

    __slots__ = ("_buf", "_overflow", "frames", "errors", "bytes_in")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._overflow = 0  # bytes of the current frame beyond the buffer (dropped)
        self.frames = 0
        self.errors = 0
        self.bytes_in = 0

    @property
    def buffered(self) -> int:
        """Bytes of an incomplete frame held (never more than MAX_ENCODED)."""
        return len(self._buf)

    def reset(self) -> None:
        """Forget a partial frame (e.g. after the port was reopened)."""
        self._buf.clear()
        self._overflow = 0

    def feed(self, data: bytes) -> list[Message | DecodeError]:
        out: list[Message | DecodeError] = []
        if not data:
            return out
        self.bytes_in += len(data)
        parts = bytes(data).split(b"\x00")
        last = len(parts) - 1
        for i, part in enumerate(parts):
            if self._overflow or len(self._buf) + len(part) > MAX_ENCODED:
                self._overflow += len(part)
                if self._buf:
                    self._overflow += len(self._buf)
                    self._buf.clear()
            elif i < last and not self._buf:
                # Fast path: a whole frame inside this chunk.
                if part:
                    self._emit(decode_frame(part), out)
                continue
            else:
                self._buf += part
            if i < last:  # a delimiter ends the current frame
                if self._overflow:
                    size = self._overflow
                    self._overflow = 0
                    self._emit(DecodeError(ErrorKind.OVERSIZE, f"{size} bytes > {MAX_ENCODED}", size), out)
                elif self._buf:
                    frame = bytes(self._buf)
                    self._buf.clear()
                    self._emit(decode_frame(frame), out)
        return out

    def _emit(self, result, out) -> None:
        if result is None:
            return
        if isinstance(result, DecodeError):
            self.errors += 1
        else:
            self.frames += 1
        out.append(result)


def decode_stream(data: bytes) -> list[Message | DecodeError]:
    """Decode a whole byte string with a fresh decoder (partial trailing frame ignored)."""
    return Decoder().feed(data)
