"""The hash chain of the journal.

``checksum[n] = SHA-256(checksum[n-1] (32 raw bytes) || seq n (8 bytes, big endian) || body (UTF-8))``
stored as 64 lower-case hex digits; ``checksum[0]`` is the *genesis* of the journal,
``SHA-256("shoe-daemon journal v1\\0" || journal_id)``, so a record copied from another journal
does not link either. Anyone can check an export with nothing but ``hashlib``.
"""

from __future__ import annotations

from hashlib import sha256

GENESIS_TAG = b"shoe-daemon journal v1\x00"


def genesis(journal_id: str) -> str:
    """The chain value before seq 1."""
    return sha256(GENESIS_TAG + journal_id.encode("utf-8")).hexdigest()


def link(prev: str, seq: int, body: str) -> str:
    """The checksum of record ``seq`` with ``body`` that follows a record whose checksum is ``prev``."""
    return sha256(bytes.fromhex(prev) + seq.to_bytes(8, "big") + body.encode("utf-8")).hexdigest()
