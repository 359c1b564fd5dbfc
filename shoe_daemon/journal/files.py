"""The journal's files on disk, apart from their records: what a journal file is and how one is made.

- ``create_file(path)``: a new journal, built under a temporary name and linked into place (never
  half a file under the real name), with its schema (``SCHEMA``), ``meta`` and identity
  (``APPLICATION_ID``, ``FORMAT_VERSION`` in SQLite's header);
- ``connect`` and ``read_meta``: open one and check that it is a journal this code reads;
- ``WriterLock``: the one writer's ``flock`` on ``<journal>.lock``;
- the head witness ``<journal>-head`` (``head_path``, ``read_head``: the last acknowledged append);
- ``unavailable_error`` / ``db_error``: the journal's exception for what the file system or
  SQLite said (full, read-only, I/O error, not a database).

``store.Journal`` (the records) and ``salvage`` (recover) use these.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import fcntl
import os
import sqlite3
import uuid
from collections.abc import Mapping
from pathlib import Path

from shoe_daemon.journal.errors import (
    JournalBusy,
    JournalCorrupt,
    JournalError,
    JournalFull,
    JournalNotFound,
    JournalUnavailable,
    JournalVersionError,
    Reason,
)
from shoe_daemon.journal.verify import classify_db_error, is_environment_error

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)   # format 1 (no recall checksums, no audit anchor) is migrated on a writer's open
APPLICATION_ID = 0x53484F45  # "SHOE": PRAGMA application_id of every journal file


SCHEMA = """
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE events (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,   -- 1, 2, 3 ... with no gap
    t        REAL NOT NULL,                       -- copies of the body's fields, for queries
    kind     TEXT NOT NULL,
    source   TEXT NOT NULL,
    body     TEXT NOT NULL,                       -- Event.to_json(), exactly
    checksum TEXT NOT NULL                        -- hex SHA-256(prev checksum || seq || body)
);
CREATE INDEX events_new_shoe ON events(seq) WHERE kind = 'new_shoe';
CREATE TABLE checkpoints (
    seq           INTEGER PRIMARY KEY,            -- the seq of a new_shoe record
    prev_checksum TEXT NOT NULL,                  -- the chain value just before it
    created       REAL NOT NULL
);
CREATE TABLE coups (                              -- derived: rebuilt from the events if lost
    coup_id  TEXT PRIMARY KEY,
    shoe     INTEGER NOT NULL,
    coup     INTEGER NOT NULL,
    result   TEXT NOT NULL,                       -- JSON written by the daemon
    seq      INTEGER,                             -- the anchor: the event the row was written after
    recorded REAL NOT NULL,
    checksum TEXT                                 -- recall_checksum(anchor's chain value, row) (format 2)
);
CREATE INDEX coups_order ON coups(shoe, coup);
""" + """
CREATE TABLE audit (                              -- the API's audit log, anchored (format 2)
    n        INTEGER PRIMARY KEY,                 -- line number over all audit files (1, 2, ...)
    hash     TEXT NOT NULL,                       -- SHA-256 of that line
    seq      INTEGER NOT NULL,                    -- the anchor: the last event when it was written
    checksum TEXT NOT NULL                        -- audit_checksum(anchor's chain value, n, hash)
);
"""

# Format 1 -> 2: the recall rows get their anchor and checksum, the audit anchor its table.
MIGRATE_1_2 = """
ALTER TABLE coups ADD COLUMN checksum TEXT;
CREATE TABLE audit (n INTEGER PRIMARY KEY, hash TEXT NOT NULL, seq INTEGER NOT NULL, checksum TEXT NOT NULL);
"""


class WriterLock:
    """An exclusive ``flock`` on ``<journal>.lock`` (released by the kernel if the process dies)."""

    def __init__(self, path: Path):
        self.journal = path
        self.path = path.with_name(path.name + ".lock")
        self.fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            if holder == str(os.getpid()):
                holder += ", this process: another Journal object is open"
            os.close(fd)
            raise JournalBusy(
                f"{self.journal}: the journal is in use by a writer (pid {holder}, lock "
                f"{self.path}); stop the daemon first"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # the pid is for people (a full disk); the flock is the lock
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


HEAD_MAGIC = "shoe-daemon-head"
HEAD_SIZE = 160


def head_path(path: Path) -> Path:
    """The head witness of a journal: ``<journal>-head``, beside ``-wal`` and ``-shm``."""
    return path.with_name(path.name + "-head")


def read_head(path: Path, journal_id: str) -> tuple[int, str] | None:
    """(seq, checksum) of the last acknowledged append, or None (no witness, another journal's,
    or unreadable: a witness that cannot be read is no witness, never a reason to stop)."""
    try:
        text = head_path(path).read_bytes()[:HEAD_SIZE].decode("ascii")
        magic, version, jid, seq, checksum = text.split()
        if magic != HEAD_MAGIC or version != "1" or jid != journal_id:
            return None
        return int(seq), checksum
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    uri = path.absolute().as_uri() + ("?mode=ro" if readonly else "?mode=rw")
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=10.0)
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def create_file(path: Path, extra_meta: Mapping[str, str] | None = None) -> None:
    """Create a journal atomically: build it under a temporary name, then link it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.executescript(f"BEGIN;{SCHEMA}COMMIT;")
            conn.execute("BEGIN")
            meta = {
                "format": str(FORMAT_VERSION),
                "journal_id": uuid.uuid4().hex,
                "created": now_iso(),
                "created_by": created_by(),
                **(extra_meta or {}),
            }
            conn.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", meta.items())
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
            conn.execute("COMMIT")
            conn.execute("PRAGMA journal_mode = WAL")  # persistent, in the file header
        finally:
            conn.close()
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # never replaces an existing file
        except FileExistsError:
            pass  # created meanwhile by someone else: open theirs
        fsync_dir(path.parent)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def created_by() -> str:
    from shoe_daemon import __version__

    return f"shoe-daemon {__version__}"


def db_error(exc: sqlite3.Error, path: Path) -> JournalError:
    """The exception to raise for a SQLite error met while opening ``path``."""
    unavailable = unavailable_error(exc, path, "cannot open the journal")
    if unavailable is not None:
        return unavailable
    if is_environment_error(exc):
        return JournalError(f"{path}: cannot open the journal: {exc}")
    return JournalCorrupt(classify_db_error(exc), str(exc), path=str(path))


# SQLite's primary result codes of the surroundings (https://sqlite.org/rescode.html).
_SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 8, 10, 13, 14
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def unavailable_error(exc: BaseException, path: Path, what: str) -> JournalUnavailable | None:
    """:class:`JournalFull` / :class:`JournalUnavailable` for a write that failed because of the
    file system (full, read-only, I/O error); None for any other error."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        primary = code & 0xFF if isinstance(code, int) else None
        text = str(exc).lower()
        if primary == _SQLITE_FULL or "disk is full" in text:
            return JournalFull(f"{path}: {what}: the file system is full ({exc})")
        if primary == _SQLITE_READONLY or "readonly database" in text:
            return JournalUnavailable(f"{path}: {what}: the journal cannot be written ({exc})", cause="read_only")
        if primary == _SQLITE_IOERR or "disk i/o error" in text:
            return JournalUnavailable(f"{path}: {what}: I/O error ({exc})", cause="io_error")
        if primary == _SQLITE_CANTOPEN:
            return JournalUnavailable(f"{path}: {what}: cannot open the file ({exc}): check the directory's "
                                      "permissions and file system", cause="cannot_open")
        return None
    if isinstance(exc, OSError):
        name = exc.filename or path
        if exc.errno in _FULL_ERRNOS:
            return JournalFull(f"{name}: {what}: the file system is full ({exc.strerror})")
        if exc.errno == errno.EROFS:
            return JournalUnavailable(f"{name}: {what}: read-only file system", cause="read_only")
        if exc.errno in (errno.EACCES, errno.EPERM):
            return JournalUnavailable(f"{name}: {what}: permission denied", cause="permission")
        if exc.errno == errno.EIO:
            return JournalUnavailable(f"{name}: {what}: I/O error", cause="io_error")
    return None


def read_meta(conn: sqlite3.Connection, path: Path) -> dict[str, str]:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise JournalNotFound(f"{path}: no such journal") from None
    if size == 0:
        raise JournalCorrupt(Reason.NOT_A_DATABASE, "the file is empty (0 bytes)", path=str(path))
    with open(path, "rb") as fh:
        header = fh.read(100)
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        raise JournalCorrupt(
            Reason.NOT_A_DATABASE,
            f"no SQLite header ({size} bytes: garbage, or truncated)",
            path=str(path),
        )
    try:
        (app,) = conn.execute("PRAGMA application_id").fetchone()
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if app != APPLICATION_ID:
            raise JournalCorrupt(
                Reason.NOT_A_JOURNAL,
                f"SQLite file with application_id {app:#x}, not {APPLICATION_ID:#x}",
                path=str(path),
            )
        if version > FORMAT_VERSION:
            raise JournalVersionError(
                f"{path}: journal format {version} is newer than this daemon's ({FORMAT_VERSION}); upgrade"
            )
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise db_error(exc, path) from None
    if version not in READABLE_VERSIONS or not meta.get("journal_id") or meta.get("format") != str(version):
        raise JournalCorrupt(
            Reason.NOT_A_JOURNAL,
            f"meta table damaged (format {meta.get('format')!r}, user_version {version}, "
            f"journal_id {meta.get('journal_id')!r})",
            path=str(path),
        )
    return meta
