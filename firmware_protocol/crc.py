"""CRC-32/ISO-HDLC, the frame check of ShoeLink v1 (PROTOCOL.md section 4).

The same CRC as Ethernet, zlib, PNG and gzip, so every platform has one:

    width 32, poly 0x04C11DB7, init 0xFFFFFFFF, refin true, refout true,
    xorout 0xFFFFFFFF, check (CRC of ASCII "123456789") 0xCBF43926.

``crc32`` is zlib's (C speed); ``crc32_reference`` is the bit-by-bit
definition a firmware engineer can read, and the tests prove they agree.
"""

from __future__ import annotations

import zlib

WIDTH = 32
POLY = 0x04C11DB7
POLY_REFLECTED = 0xEDB88320
INIT = 0xFFFFFFFF
REFIN = True
REFOUT = True
XOROUT = 0xFFFFFFFF
CHECK = 0xCBF43926  # crc32(b"123456789")
RESIDUE = 0xDEBB20E3  # register value after running over data + its (little-endian) CRC, before xorout


def crc32(data: bytes) -> int:
    """CRC-32/ISO-HDLC of ``data``."""
    return zlib.crc32(data) & 0xFFFFFFFF


def crc32_reference(data: bytes) -> int:
    """The bit-by-bit definition (reflected, LSB first): slow, obviously right."""
    crc = INIT
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ POLY_REFLECTED if crc & 1 else crc >> 1
    return crc ^ XOROUT
