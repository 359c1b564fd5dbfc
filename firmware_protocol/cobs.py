"""Consistent Overhead Byte Stuffing (Cheshire & Baker, 1999).

COBS removes every 0x00 from a frame so that 0x00 can delimit frames on the
wire. The encoded form is a sequence of groups: a code byte ``n`` (1-255)
followed by ``n - 1`` data bytes; a group with ``n < 255`` stands for its data
followed by one 0x00, except that the zero after the last group is dropped.
Overhead: one byte per 254 bytes or part thereof (exactly one byte for every
ShoeLink frame, which are at most 64 bytes).
"""

from __future__ import annotations


class CobsError(ValueError):
    """Bytes that are not a valid COBS encoding."""


def encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (the result contains no 0x00)."""
    out = bytearray()
    for part in bytes(data).split(b"\x00"):
        while len(part) >= 254:
            out.append(0xFF)
            out += part[:254]
            part = part[254:]
        out.append(len(part) + 1)
        out += part
    return bytes(out)


def decode(data: bytes) -> bytes:
    """Decode one COBS frame (without its delimiter); raises CobsError."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise CobsError(f"0x00 inside a COBS frame at offset {i}")
        end = i + code
        if end > n:
            raise CobsError(f"code byte 0x{code:02x} at offset {i} runs {end - n} byte(s) past the end")
        out += data[i + 1:end]
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)
