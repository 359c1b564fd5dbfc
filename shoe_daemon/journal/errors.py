"""Journal exceptions and the reasons a journal is declared corrupt."""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    """Why a journal is corrupt. The value is what the CLI prints and the tests match."""

    NOT_A_DATABASE = "not_a_database"          # the file is not SQLite (garbage, truncated header, empty)
    NOT_A_JOURNAL = "not_a_journal"            # SQLite, but not a shoe-daemon journal (or its meta is damaged)
    SQLITE_INTEGRITY = "sqlite_integrity"      # SQLite reports a damaged page/b-tree (quick_check, read error)
    SEQ_GAP = "seq_gap"                        # a seq is missing (a record was deleted)
    CHECKSUM_MISMATCH = "checksum_mismatch"    # a record's checksum does not match its body and the chain
    CHAIN_BREAK = "chain_break"                # the chain does not link to its anchor (genesis / checkpoint)
    UNPARSABLE_BODY = "unparsable_body"        # the body is not a valid event
    COLUMN_MISMATCH = "column_mismatch"        # t/kind/source columns disagree with the checksummed body
    TAIL_MISSING = "tail_missing"              # records at the end were removed
    CHECKPOINT_MISMATCH = "checkpoint_mismatch"  # a checkpoint row is missing, extra, or holds another hash
    RECALL_MISMATCH = "recall_mismatch"        # a coups (recall) row does not match its checksum and anchor
    AUDIT_MISMATCH = "audit_mismatch"          # the API's audit log does not match its record in the journal

    @property
    def text(self) -> str:
        return _TEXT[self]


_TEXT = {
    Reason.NOT_A_DATABASE: "file is not a database",
    Reason.NOT_A_JOURNAL: "not a shoe-daemon journal",
    Reason.SQLITE_INTEGRITY: "sqlite integrity error",
    Reason.SEQ_GAP: "gap in seq",
    Reason.CHECKSUM_MISMATCH: "checksum mismatch",
    Reason.CHAIN_BREAK: "chain break",
    Reason.UNPARSABLE_BODY: "unparsable body",
    Reason.COLUMN_MISMATCH: "column mismatch",
    Reason.TAIL_MISSING: "records missing at the end",
    Reason.CHECKPOINT_MISMATCH: "checkpoint mismatch",
    Reason.RECALL_MISMATCH: "recall record fails verification",
    Reason.AUDIT_MISMATCH: "audit log fails verification",
}


class JournalError(Exception):
    """Base class of every journal error."""


class JournalNotFound(JournalError, FileNotFoundError):
    """The journal file does not exist (and was not to be created)."""


class JournalBusy(JournalError):
    """Another process holds the journal's writer lock (a running daemon, or a recover)."""


class JournalVersionError(JournalError):
    """The journal was written in a format this version does not know (a newer daemon)."""


class JournalReadOnly(JournalError):
    """A write on a journal opened read-only."""


class JournalUnavailable(JournalError):
    """The journal cannot be written now: its file system is read-only, or an I/O error.

    Not damage: nothing was written (the transaction was rolled back), the journal stays intact
    and the write can be tried again once the cause is gone (:meth:`Journal.wait_writable`).
    ``cause`` is a short word for logs and alerts: ``read_only``, ``io_error``, ``disk_full``.
    """

    cause = "io_error"

    def __init__(self, message: str, *, cause: str | None = None):
        if cause is not None:
            self.cause = cause
        super().__init__(message)


class JournalFull(JournalUnavailable):
    """The journal's file system (or quota) is full: the write was rolled back, nothing lost."""

    cause = "disk_full"


class JournalCorrupt(JournalError):
    """The journal failed verification: dealing must stop (it is never silently skipped).

    ``reason`` is a :class:`Reason`; ``seq`` the first record found bad (None when the damage is
    not tied to a record, e.g. a file that is not a database); ``last_good_seq`` the last record
    verified intact before it (0: none; None: unknown); ``detail`` a sentence for people.
    """

    def __init__(
        self,
        reason: Reason,
        detail: str,
        *,
        seq: int | None = None,
        last_good_seq: int | None = None,
        path: str | None = None,
    ):
        self.reason = Reason(reason)
        self.detail = detail
        self.seq = seq
        self.last_good_seq = last_good_seq
        self.path = path
        super().__init__(self.describe())

    def describe(self) -> str:
        where = f"seq {self.seq}: " if self.seq is not None else ""
        good = "unknown" if self.last_good_seq is None else str(self.last_good_seq)
        path = f"{self.path}: " if self.path else ""
        return f"{path}journal corrupt: {where}{self.reason.text}: {self.detail} (last good seq: {good})"


class RecallCorrupt(JournalCorrupt):
    """A row of the recall (coups) table failed verification when read: it is never served.

    ``coup_id`` names the row (as stored; ``None`` if even that is unreadable)."""

    def __init__(self, coup_id: str | None, detail: str, *, path: str | None = None):
        self.coup_id = coup_id
        super().__init__(Reason.RECALL_MISMATCH, f"coup {coup_id}: {detail}", path=path)
