"""The journal: every input event, hash-chained, on disk before the core sees it.

See docs/journal.md. Public API::

    from shoe_daemon.journal import Journal, JournalCorrupt
    with Journal.open(path, synchronous="full") as journal:     # verifies (quick); raises if corrupt
        for seq, event in journal.current_shoe_events(): ...    # replay
        seq = journal.append(event)                              # durable on return
"""

from shoe_daemon.journal.chain import genesis, link
from shoe_daemon.journal.errors import (
    JournalBusy,
    JournalCorrupt,
    JournalError,
    JournalFull,
    JournalNotFound,
    JournalReadOnly,
    JournalUnavailable,
    JournalVersionError,
    Reason,
    RecallCorrupt,
)
from shoe_daemon.journal.files import APPLICATION_ID, FORMAT_VERSION
from shoe_daemon.journal.salvage import ExportResult, RecoverResult, export_jsonl, recover
from shoe_daemon.journal.store import CoupRecord, Entry, Journal, RawRecord
from shoe_daemon.journal.verify import Report

__all__ = [
    "APPLICATION_ID",
    "FORMAT_VERSION",
    "CoupRecord",
    "Entry",
    "ExportResult",
    "Journal",
    "JournalBusy",
    "JournalCorrupt",
    "JournalError",
    "JournalFull",
    "JournalNotFound",
    "JournalReadOnly",
    "JournalUnavailable",
    "JournalVersionError",
    "RawRecord",
    "Reason",
    "RecallCorrupt",
    "RecoverResult",
    "Report",
    "export_jsonl",
    "genesis",
    "link",
    "recover",
]
