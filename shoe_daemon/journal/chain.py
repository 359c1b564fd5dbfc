"""The hash chain of the journal.

``checksum[n] = SHA-256(checksum[n-1] (32 raw bytes) || seq n (8 bytes, big endian) || body (UTF-8))``
stored as 64 lower-case hex digits; ``checksum[0]`` is the *genesis* of the journal,
``SHA-256("shoe-daemon journal v1\\0" || journal_id)``, so a record copied from another journal
does not link either. Anyone can check an export with nothing but ``hashlib``.

The recall table's rows carry :func:`recall_checksum`, which binds each row to the chain value of
the event it was written after (docs/journal.md, "Recall of coups").
"""

from __future__ import annotations

import struct
from hashlib import sha256

GENESIS_TAG = b"shoe-daemon journal v1\x00"


def genesis(journal_id: str) -> str:
    """The chain value before seq 1."""
    return sha256(GENESIS_TAG + journal_id.encode("utf-8")).hexdigest()


def link(prev: str, seq: int, body: str) -> str:
    """The checksum of record ``seq`` with ``body`` that follows a record whose checksum is ``prev``."""
    return sha256(bytes.fromhex(prev) + seq.to_bytes(8, "big") + body.encode("utf-8")).hexdigest()


RECALL_TAG = b"shoe-daemon recall v1\x00"


def recall_checksum(anchor: str, seq: int, coup_id: str, shoe: int, coup: int, result: str, recorded: float) -> str:
    """The checksum of a row of the coups (recall) table, anchored in the chain.

    ``anchor`` is the chain value (checksum) of the event ``seq`` that the row was written after:
    the row is bound to that place in the verified chain, so editing the row (its result, its
    coup, or the seq it points at) no longer matches. ``recorded`` enters as its IEEE-754 bytes.
    """
    h = sha256(RECALL_TAG)
    h.update(bytes.fromhex(anchor))
    h.update(seq.to_bytes(8, "big"))
    h.update(shoe.to_bytes(8, "big", signed=True))
    h.update(coup.to_bytes(8, "big", signed=True))
    h.update(struct.pack(">d", recorded))
    h.update(coup_id.encode("utf-8") + b"\x00")
    h.update(result.encode("utf-8"))
    return h.hexdigest()


AUDIT_TAG = b"shoe-daemon audit v1\x00"


def audit_checksum(anchor: str, seq: int, n: int, line_hash: str) -> str:
    """The checksum of the journal's record of audit line ``n`` (whose SHA-256 is ``line_hash``),
    anchored like a recall row at the chain value of event ``seq``."""
    return sha256(
        AUDIT_TAG + bytes.fromhex(anchor) + seq.to_bytes(8, "big") + n.to_bytes(8, "big") + bytes.fromhex(line_hash)
    ).hexdigest()
