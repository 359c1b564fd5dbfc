"""The journal store: an append-only, hash-chained SQLite file (WAL mode).

See docs/journal.md for the design. In short: every input event is appended (its canonical
``Event.to_json()`` as ``body``, plus a SHA-256 chain ``checksum``) and committed before the core
sees it; a ``new_shoe`` record also writes a *checkpoint* row holding the chain value before it,
so that start-up verifies only the current shoe (plus SQLite's ``quick_check``) and replays it.
The recall rows (``coups``) and the audit log's record (``audit``) are anchored in that chain.
A write the file system refuses (full, read-only) raises :class:`JournalFull` /
:class:`JournalUnavailable` and is rolled back whole; :meth:`Journal.wait_writable` waits it out.

Concurrency: one ``Journal`` object is thread-safe (one connection behind a lock; iterators read
in chunks and never hold the lock while the caller runs). One *process* writes: opening for
writing takes an exclusive ``flock`` on ``<journal>.lock`` (:class:`JournalBusy` otherwise); any
number of read-only openers (the CLI while the daemon runs) may look at the same file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import canonical_json, parse_json
from shoe_daemon.journal.chain import audit_checksum, genesis, link, recall_checksum
from shoe_daemon.journal.errors import (
    JournalCorrupt,
    JournalError,
    JournalNotFound,
    JournalReadOnly,
    JournalUnavailable,
    Reason,
    RecallCorrupt,
)
from shoe_daemon.journal.files import (
    FORMAT_VERSION,
    HEAD_MAGIC,
    HEAD_SIZE,
    MIGRATE_1_2,
    WriterLock,
    connect,
    create_file,
    db_error,
    head_path,
    now_iso,
    read_head,
    read_meta,
    unavailable_error,
)
from shoe_daemon.journal.verify import (
    RECALL_SELECT,
    OnRecord,
    Report,
    check_recall_row,
    classify_db_error,
    is_environment_error,
    verify_connection,
)

Synchronous = Literal["full", "normal"]
VerifyMode = Literal["quick", "full", "none"]


_CHUNK = 1000


class Entry(NamedTuple):
    """One journaled event with its seq: ``for seq, event in journal.current_shoe_events()``."""

    seq: int
    event: Event


class RawRecord(NamedTuple):
    """A stored record as it is on disk (not parsed, not verified)."""

    seq: int
    body: Any
    checksum: Any


@dataclass(frozen=True, slots=True)
class CoupRecord:
    """A row of the derived coups table (what the daemon recorded after processing a coup)."""

    coup_id: str
    shoe: int
    coup: int
    result_json: str
    seq: int | None
    recorded: float
    verified: bool = True   # False only for a format-1 journal read without migration (no checksums)

    @property
    def result(self) -> Any:
        return json.loads(self.result_json)


def encode_event(event: Event) -> str:
    """The body stored for ``event``; refuses what would not replay byte for byte."""
    if not isinstance(event, Event):
        raise TypeError(f"journal takes Event objects, got {type(event).__name__}")
    if not isinstance(event.kind, Kind):
        raise ValueError(f"event kind must be a Kind, got {event.kind!r}")
    if not isinstance(event.t, float) or not math.isfinite(event.t):
        raise ValueError(f"event t must be a finite float (seconds since the epoch), got {event.t!r}")
    body = event.to_json()   # checks the event first
    # What replay will read must give these bytes again. Event.from_json(body).to_json() would say
    # so too, at twice the cost: it checks the data again, which equal bytes make needless.
    obj = parse_json(body)
    again = json.dumps({"t": float(obj["t"]), "kind": obj["kind"], "source": obj["source"], "data": obj["data"]},
                       sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if again != body:
        raise ValueError(f"event does not round-trip through JSON: {body[:200]}")
    return body


def _result_text(result: str | Mapping[str, Any]) -> str:
    if isinstance(result, str):
        json.loads(result)  # refuse what is not JSON
        return result
    return canonical_json(result).decode()


class Journal:
    """An open journal. Create with :meth:`Journal.open`; use as a context manager or ``close()``."""

    def __init__(
        self,
        path: Path,
        conn: sqlite3.Connection,
        meta: dict[str, str],
        *,
        readonly: bool,
        synchronous: Synchronous,
        lock: WriterLock | None,
    ):
        self._path = path
        self._conn: sqlite3.Connection | None = conn
        self._meta = meta
        self._readonly = readonly
        self._synchronous = synchronous
        self._lock = threading.RLock()
        self._writer_lock = lock
        self._genesis = genesis(meta["journal_id"])
        self._head_fd: int | None = None
        self.report: Report | None = None  # the verification done by open(), if any
        self.format = int(meta.get("format", FORMAT_VERSION))
        self._pending_recall: dict[str, tuple] = {}   # rows a full disk refused, written at the next chance
        self._deferred = False    # defer_sync(): appends are made durable by sync(), not by SQLite
        self._unsynced = False    # an append since the last sync()

    # ------------------------------------------------------------------ opening and closing

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        synchronous: Synchronous = "full",
        create: bool = True,
        readonly: bool = False,
        verify: VerifyMode = "quick",
        _lock: WriterLock | None = None,
    ) -> Journal:
        """Open (or create) the journal at ``path``.

        - ``synchronous="full"``: every commit is fsynced: an append that returned survives a power
          cut. ``"normal"``: it survives a crash of the process, not of the machine (the last
          commits may be lost, the journal stays consistent).
        - ``create``: create the file if it does not exist (atomically; an *existing* empty or
          foreign file is never overwritten: it is corrupt).
        - ``readonly``: no writer lock, no creation, appends refused (for the CLI and the API).
        - ``verify``: ``"quick"`` (default: for dealing: from the last checkpoint + quick_check),
          ``"full"`` (the whole chain + integrity_check) or ``"none"``. A failed verification
          closes the journal and raises :class:`JournalCorrupt`; ``journal.report`` keeps the report.

        Raises :class:`JournalCorrupt` (damaged, not a database, not a journal),
        :class:`JournalNotFound`, :class:`JournalBusy` (another writer), :class:`JournalVersionError`.
        """
        if synchronous not in ("full", "normal"):
            raise ValueError(f"synchronous must be 'full' or 'normal', got {synchronous!r}")
        if verify not in ("quick", "full", "none"):
            raise ValueError(f"verify must be 'quick', 'full' or 'none', got {verify!r}")
        p = Path(path)
        lock = _lock
        own_lock = False
        if not readonly and lock is None:
            if not p.exists() and not create:
                raise JournalNotFound(f"{p}: no such journal")
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
                lock = WriterLock(p)
                lock.acquire()
            except OSError as exc:
                raise unavailable_error(exc, p, "cannot take the writer lock") or exc from None
            own_lock = True
        try:
            if not p.exists():
                if readonly or not create:
                    raise JournalNotFound(f"{p}: no such journal")
                try:
                    create_file(p)
                except (OSError, sqlite3.Error) as exc:
                    raise unavailable_error(exc, p, "cannot create the journal") or exc from None
            try:
                conn = connect(p, readonly=readonly)
            except sqlite3.Error as exc:
                raise db_error(exc, p) from None
            try:
                meta = read_meta(conn, p)
                if not readonly:
                    try:
                        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                        if mode != "wal":
                            raise JournalError(f"{p}: cannot switch the journal to WAL mode (got {mode})")
                        conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
                        conn.execute("PRAGMA journal_size_limit = 67108864")
                    except sqlite3.DatabaseError as exc:
                        raise db_error(exc, p) from None
            except BaseException:
                conn.close()
                raise
            journal = cls(p, conn, meta, readonly=readonly, synchronous=synchronous, lock=lock)
        except BaseException:
            if own_lock and lock is not None:
                lock.release()
            raise
        if verify != "none":
            try:
                report = journal.verify(full=verify == "full")
            except BaseException:
                journal.close()
                raise
            journal.report = report
            if not report.ok:
                journal.close()
                report.raise_if_corrupt()
        if not readonly:
            try:
                if journal.format < FORMAT_VERSION:
                    journal._migrate()
                journal._open_head()
            except OSError as exc:
                journal.close()
                raise unavailable_error(exc, p, "cannot write the head witness") or exc from None
            except BaseException:
                journal.close()
                raise
        return journal

    def _migrate(self) -> None:
        """Format 1 -> 2, in one transaction: the recall rows get an anchor (their own seq when that
        event exists, else the last event) and a checksum; the audit anchor gets its table. A row
        written by format 1 is protected from later edits, not proven (meta ``migrated`` says so)."""
        with self._lock:
            conn = self._db()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for stmt in MIGRATE_1_2.strip().split(";"):
                        if stmt.strip():
                            conn.execute(stmt)
                    (last,) = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
                    rows = conn.execute("SELECT rowid, coup_id, shoe, coup, result, seq, recorded FROM coups").fetchall()
                    for rowid, coup_id, shoe, coup, result, seq, recorded in rows:
                        anchor_seq = seq if isinstance(seq, int) and 0 < seq <= last else last
                        conn.execute("UPDATE coups SET seq = ?, checksum = ? WHERE rowid = ?", (
                            anchor_seq,
                            recall_checksum(self._anchor(conn, anchor_seq), anchor_seq, coup_id, int(shoe), int(coup),
                                            result, float(recorded)),
                            rowid))  # fmt: skip
                    migrated = {"from": 1, "at": now_iso(), "recall_rows": len(rows)}
                    conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                     [("format", str(FORMAT_VERSION)), ("migrated", json.dumps(migrated, sort_keys=True))])
                    conn.execute(f"PRAGMA user_version = {FORMAT_VERSION}")
                    conn.execute("COMMIT")
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise db_error(exc, self._path) from None
            self._meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            self.format = FORMAT_VERSION

    def _anchor(self, conn: sqlite3.Connection, seq: int) -> str:
        """The chain value of event ``seq`` (0: the genesis)."""
        if seq == 0:
            return self._genesis
        row = conn.execute("SELECT checksum FROM events WHERE seq = ?", (seq,)).fetchone()
        if row is None:
            raise ValueError(f"no event seq {seq} in the journal to anchor the row at")
        return row[0]

    def _open_head(self) -> None:
        self._head_fd = os.open(head_path(self._path), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        with self._lock:
            row = self._db().execute("SELECT seq, checksum FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        self._write_head(*(row or (0, self._genesis)))

    def _write_head(self, seq: int, checksum: str) -> None:
        # One small pwrite after each commit, no fsync: it survives a crash of the process; after
        # a power cut it may be older than the journal (fine), never newer in full mode.
        if self._head_fd is not None:
            line = f"{HEAD_MAGIC} 1 {self.journal_id} {seq} {checksum}".ljust(HEAD_SIZE - 1) + "\n"
            try:
                os.pwrite(self._head_fd, line.encode("ascii"), 0)
            except OSError:
                # After a commit: the append is done and must not look failed (a retry would
                # double it). A stale witness is only older than the journal, which is fine.
                pass

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._head_fd is not None:
                os.close(self._head_fd)
                self._head_fd = None
            if self._writer_lock is not None:
                self._writer_lock.release()
                self._writer_lock = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise JournalError(f"{self._path}: journal is closed")
        return self._conn

    # ------------------------------------------------------------------ properties

    @property
    def path(self) -> Path:
        return self._path

    @property
    def journal_id(self) -> str:
        return self._meta["journal_id"]

    @property
    def created(self) -> str:
        return self._meta.get("created", "")

    @property
    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    @property
    def readonly(self) -> bool:
        return self._readonly

    @property
    def synchronous(self) -> Synchronous:
        return self._synchronous

    @property
    def closed(self) -> bool:
        return self._conn is None

    def last_seq(self) -> int:
        """The highest seq in the journal (0 when empty)."""
        with self._lock:
            (seq,) = self._db().execute("SELECT max(seq) FROM events").fetchone()
        return seq or 0

    def count(self) -> int:
        with self._lock:
            (n,) = self._db().execute("SELECT count(*) FROM events").fetchone()
        return n

    # ------------------------------------------------------------------ writing

    def append(self, event: Event) -> int:
        """Append one event; returns its seq once committed (durable per ``synchronous``)."""
        return self.append_many([event])[0]

    def append_many(self, events: Iterable[Event]) -> list[int]:
        """Append events in one transaction (group commit): all or none; returns their seqs."""
        items = [(ev, encode_event(ev)) for ev in events]
        if not items:
            return []
        if self._readonly:
            raise JournalReadOnly(f"{self._path}: journal opened read-only")
        seqs: list[int] = []
        with self._lock:
            conn = self._db()
            conn.execute("BEGIN IMMEDIATE")
            try:
                row = conn.execute("SELECT seq, checksum FROM events ORDER BY seq DESC LIMIT 1").fetchone()
                seq, prev = row if row else (0, self._genesis)
                now = time.time()
                for ev, body in items:
                    seq += 1
                    checksum = link(prev, seq, body)
                    conn.execute(
                        "INSERT INTO events(seq, t, kind, source, body, checksum) VALUES (?, ?, ?, ?, ?, ?)",
                        (seq, ev.t, ev.kind.value, ev.source, body, checksum),
                    )
                    if ev.kind is Kind.NEW_SHOE:
                        conn.execute(
                            "INSERT INTO checkpoints(seq, prev_checksum, created) VALUES (?, ?, ?)",
                            (seq, prev, now),
                        )
                    prev = checksum
                    seqs.append(seq)
                conn.execute("COMMIT")
                if self._deferred:
                    self._unsynced = True
            except BaseException as exc:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                typed = unavailable_error(exc, self._path, f"cannot append {len(items)} event(s)")
                if typed is not None:
                    raise typed from exc
                raise
            self._write_head(seq, prev)
        return seqs

    # ------------------------------------------------------------------ durability off the caller's thread

    def defer_sync(self) -> None:
        """With ``synchronous="full"``: from now on an append's commit is not fsynced by SQLite (WAL,
        synchronous NORMAL: it survives a crash of the process) and :meth:`sync` makes it survive a
        power cut too, as full would have. For a caller on an event loop: it runs ``sync()`` in a
        thread and acts on the appended events (publishes them) only after it returned."""
        if self._synchronous != "full" or self._deferred or self._readonly:
            return
        with self._lock:
            self._db().execute("PRAGMA synchronous = NORMAL")
            self._deferred = True

    @property
    def deferred(self) -> bool:
        """Whether appends are made durable by :meth:`sync` (after :meth:`defer_sync` under full)."""
        return self._deferred

    @property
    def unsynced(self) -> bool:
        """Whether an append since the last :meth:`sync` may not be on disk yet."""
        return self._unsynced

    def sync(self) -> None:
        """Make every append so far durable: fsync the write-ahead log, as synchronous=full does at
        each commit (an fsync of any descriptor flushes the file). Thread-safe, takes no lock while
        the disk works; raises OSError when the disk fails (the appends then count as unsynced)."""
        if not self._unsynced:
            return
        self._unsynced = False
        try:
            fd = os.open(self._path.with_name(self._path.name + "-wal"), os.O_RDONLY)
        except FileNotFoundError:
            return      # checkpointed and removed: in the database file, which the checkpoint synced
        except OSError:
            self._unsynced = True
            raise
        try:
            os.fsync(fd)
        except OSError:
            self._unsynced = True
            raise
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ a full or read-only disk

    RESERVE_BYTES = 1 << 20   # free space below which the journal's file system counts as full

    def writable(self) -> str | None:
        """None if the journal's file system can take writes now, else why not: ``read_only``,
        ``disk_full`` (less than :attr:`RESERVE_BYTES` free), ``permission``. A cheap probe
        (statvfs, access), for :meth:`wait_writable` and for a pipeline that holds dealing after
        :class:`JournalUnavailable`; the write itself is what finally tells."""
        d = self._path.absolute().parent
        try:
            st = os.statvfs(d)
        except OSError:
            return "io_error"
        if st.f_flag & os.ST_RDONLY:
            return "read_only"
        if st.f_bavail * st.f_frsize < self.RESERVE_BYTES:
            return "disk_full"
        if not os.access(self._path, os.W_OK) or not os.access(d, os.W_OK):
            return "permission"
        return None

    def wait_writable(self, timeout: float | None = None, interval: float = 1.0,
                      stop: Callable[[], bool] | None = None) -> bool:
        """Block until :meth:`writable` (then write the recall rows a full disk refused) and return
        True; False after ``timeout`` s or when ``stop()`` says so. For a thread; a loop polls
        :meth:`writable` instead (or runs this in ``asyncio.to_thread``)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if self.writable() is None:
                try:
                    self.flush_pending()
                    return True
                except JournalUnavailable:
                    pass  # statvfs said yes, SQLite no: wait on
            if stop is not None and stop():
                return False
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(interval if deadline is None else max(0.0, min(interval, deadline - time.monotonic())))

    @property
    def pending_recall(self) -> int:
        """Recall rows refused by a full disk, not yet written."""
        return len(self._pending_recall)

    def flush_pending(self) -> int:
        """Write the recall rows a full disk refused; returns how many (raises JournalUnavailable
        if it is still full)."""
        if not self._pending_recall:
            return 0
        with self._lock:
            rows = list(self._pending_recall.values())
            self._write_recall(rows)
            n = len(rows)
            self._pending_recall.clear()
        return n

    def _set_meta(self, items: Mapping[str, str]) -> None:
        with self._lock:
            conn = self._db()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", items.items())
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        self._meta.update(items)

    # ------------------------------------------------------------------ reading

    def _parse(self, seq: int, body: Any) -> Event:
        try:
            return Event.from_json(body)
        except Exception as exc:  # noqa: BLE001
            raise JournalCorrupt(
                Reason.UNPARSABLE_BODY, f"{type(exc).__name__}: {exc}", seq=seq, last_good_seq=None, path=str(self._path)
            ) from None

    def _rows(self, sql: str, args: tuple) -> list[tuple]:
        with self._lock:
            try:
                return self._db().execute(sql, args).fetchall()
            except sqlite3.DatabaseError as exc:
                raise JournalCorrupt(classify_db_error(exc), str(exc), path=str(self._path)) from None

    def events(self, since_seq: int = 0, limit: int | None = None) -> Iterator[Entry]:
        """Events with ``seq > since_seq`` in seq order, at most ``limit`` of them.

        Reads in chunks of 1000 (the lock is not held while the caller works): appends made
        during the iteration are seen when their seq comes.
        """
        after = since_seq
        remaining = limit
        while remaining is None or remaining > 0:
            n = _CHUNK if remaining is None else min(_CHUNK, remaining)
            rows = self._rows("SELECT seq, body FROM events WHERE seq > ? ORDER BY seq LIMIT ?", (after, n))
            if not rows:
                return
            for seq, body in rows:
                yield Entry(seq, self._parse(seq, body))
            after = rows[-1][0]
            if remaining is not None:
                remaining -= len(rows)

    def last_events(self, n: int = 10) -> list[Entry]:
        """The last ``n`` events, oldest first."""
        rows = self._rows("SELECT seq, body FROM events ORDER BY seq DESC LIMIT ?", (max(0, n),))
        return [Entry(seq, self._parse(seq, body)) for seq, body in reversed(rows)]

    def last_records(self, n: int = 10) -> list[RawRecord]:
        """The last ``n`` records as stored (body text and checksum), oldest first; for tools."""
        rows = self._rows("SELECT seq, body, checksum FROM events ORDER BY seq DESC LIMIT ?", (max(0, n),))
        return [RawRecord(*r) for r in reversed(rows)]

    def current_shoe_start(self) -> int | None:
        """The seq of the last ``new_shoe`` event, or None if there is none."""
        ((seq,),) = self._rows("SELECT max(seq) FROM events WHERE kind = 'new_shoe'", ())
        return seq

    def current_shoe_events(self) -> Iterator[Entry]:
        """The events of the current shoe: from the last ``new_shoe`` (included) — or from the
        start when there is none — to the end, in seq order. This is what start-up replays."""
        start = self.current_shoe_start()
        return self.events(since_seq=(start or 1) - 1)

    # ------------------------------------------------------------------ verification

    def verify(self, full: bool = False) -> Report:
        """Verify the journal (see docs/journal.md); returns a :class:`Report`, never raises for damage.

        Quick: from the last checkpoint (the last new_shoe) to the end + ``PRAGMA quick_check``.
        Full: the whole chain from the genesis + ``PRAGMA integrity_check``. Runs on its own
        read-only connection (a consistent snapshot; appends by other threads are not blocked).
        """
        return self._verify(full=full)

    def _verify(self, *, full: bool, integrity: bool = True, on_record: OnRecord | None = None,
                recall: bool = True) -> Report:
        self._db()
        head = read_head(self._path, self.journal_id)  # before the snapshot: it is included
        try:
            conn = connect(self._path, readonly=True)
        except sqlite3.Error as exc:
            if is_environment_error(exc):
                raise JournalError(f"{self._path}: cannot open the journal to verify it: {exc}") from None
            return Report(
                path=str(self._path), full=full, ok=False, journal_id=self.journal_id, first_seq=1,
                last_seq=0, records=0, highest_seq=0, seconds=0.0, reason=classify_db_error(exc),
                seq=None, detail=str(exc), last_good_seq=None,
            )  # fmt: skip
        try:
            return verify_connection(
                conn, path=str(self._path), journal_id=self.journal_id, full=full,
                integrity=integrity, on_record=on_record, head=head, recall=recall,
            )  # fmt: skip
        except sqlite3.Error as exc:  # only errors of the surroundings come out (locks, permissions)
            raise JournalError(f"{self._path}: cannot verify the journal: {exc}") from None
        finally:
            conn.close()

    # ------------------------------------------------------------------ recall of coups (derived)

    def record_coup(
        self, coup_id: str, shoe: int, coup: int, result_json: str | Mapping[str, Any], *, seq: int | None = None
    ) -> None:
        """Record (or replace) a coup's result, written by the daemon after processing it.

        ``result_json`` is JSON text, or a mapping that is stored as canonical JSON. ``seq`` is the
        row's anchor, the event that closed the coup (default: the last event journaled); the row
        carries :func:`~shoe_daemon.journal.chain.recall_checksum` over itself and that event's
        chain value, so it cannot be edited unseen (reads and verification check it).

        Derived data: the events are the truth. If the table is lost (a recovered journal, an
        older file), the daemon recomputes the coups by replaying and calls :meth:`rebuild_coups`.
        A full disk raises :class:`JournalFull` and keeps the row: it is written with the next
        recall row or by :meth:`wait_writable` / :meth:`flush_pending`.
        """
        if self._readonly:
            raise JournalReadOnly(f"{self._path}: journal opened read-only")
        row = (coup_id, int(shoe), int(coup), _result_text(result_json), seq, time.time())
        with self._lock:
            self._pending_recall.pop(coup_id, None)
            rows = [*self._pending_recall.values(), row]
            try:
                self._write_recall(rows)
            except JournalUnavailable:
                self._pending_recall[coup_id] = row
                raise
            self._pending_recall.clear()

    def _write_recall(self, rows: list[tuple], *, replace_all: bool = False) -> None:
        conn = self._db()
        # Derived data: its commit is not fsynced (WAL, synchronous NORMAL: safe against a crash of
        # the process, and the next event's full commit syncs the WAL and so this row with it). A
        # power cut may lose the last rows: start-up replays the current shoe and writes again any
        # that is missing. At full speed a coup's own fsync cost as much as its events' commits.
        relax = self._synchronous != "normal" and not self._deferred
        if relax:
            conn.execute("PRAGMA synchronous = NORMAL")
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                (last,) = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
                if replace_all:
                    conn.execute("DELETE FROM coups")
                for coup_id, shoe, coup, result, seq, recorded in rows:
                    anchor_seq = last if seq is None else int(seq)
                    checksum = recall_checksum(self._anchor(conn, anchor_seq), anchor_seq, coup_id, shoe, coup,
                                               result, recorded)
                    conn.execute(
                        "INSERT INTO coups(coup_id, shoe, coup, result, seq, recorded, checksum) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(coup_id) DO UPDATE SET shoe = excluded.shoe, "
                        "coup = excluded.coup, result = excluded.result, seq = excluded.seq, "
                        "recorded = excluded.recorded, checksum = excluded.checksum",
                        (coup_id, shoe, coup, result, anchor_seq, recorded, checksum),
                    )
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        conn.execute("ROLLBACK")
                typed = unavailable_error(exc, self._path, "cannot record a coup")
                if typed is not None:
                    raise typed from exc
                raise
        finally:
            if relax:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute(f"PRAGMA synchronous = {self._synchronous.upper()}")

    def rebuild_coups(self, records: Iterable[tuple[Any, ...]]) -> int:
        """Replace the whole coups table in one transaction: ``(coup_id, shoe, coup, result_json[, seq])``
        rows (``result_json`` text or a mapping, as for :meth:`record_coup`; ``seq`` the anchor)."""
        if self._readonly:
            raise JournalReadOnly(f"{self._path}: journal opened read-only")
        now = time.time()
        rows = []
        for rec in records:
            coup_id, shoe, coup, result, *rest = rec
            rows.append((coup_id, int(shoe), int(coup), _result_text(result), rest[0] if rest else None, now))
        with self._lock:
            self._write_recall(rows, replace_all=True)
            self._pending_recall.clear()
        return len(rows)

    def _recall(self, where: str, args: tuple) -> list[CoupRecord]:
        """Recall rows, each verified against its checksum and anchor (:class:`RecallCorrupt` if not)."""
        if self.format < 2:   # a format-1 file opened read-only: nothing to verify against
            rows = self._rows("SELECT coup_id, shoe, coup, result, seq, recorded FROM coups c " + where, args)
            return [CoupRecord(*r, verified=False) for r in rows]
        from shoe_daemon.journal.verify import _text

        out = []
        for row in self._rows(f"{RECALL_SELECT} {where}", args):
            coup_id, decoded, why = check_recall_row(row, self.journal_id)
            if why is not None:
                shown = coup_id if coup_id is not None else repr(_text(row[0]) or row[0])
                raise RecallCorrupt(shown, why, path=str(self._path))
            out.append(CoupRecord(*decoded))
        return out

    def coups(self, last: int = 10, shoe: int | None = None) -> list[CoupRecord]:
        """The last ``last`` coups (of ``shoe`` if given), oldest first, ordered by (shoe, coup).
        Raises :class:`RecallCorrupt` if one of them fails verification (never serves it)."""
        inner = "WHERE shoe = ?" if shoe is not None else ""
        args = (shoe,) if shoe is not None else ()
        return self._recall(
            f"WHERE c.rowid IN (SELECT rowid FROM coups {inner} ORDER BY shoe DESC, coup DESC LIMIT ?) "
            "ORDER BY c.shoe, c.coup",
            (*args, max(0, last)),
        )

    def coup(self, coup_id: str) -> CoupRecord | None:
        """One coup's recall row, verified (:class:`RecallCorrupt` if it fails), or None."""
        rows = self._recall("WHERE c.coup_id = ?", (coup_id,))
        return rows[0] if rows else None

    def coup_count(self) -> int:
        ((n,),) = self._rows("SELECT count(*) FROM coups", ())
        return n

    # ------------------------------------------------------------------ the audit log's anchor

    def audit_records(self) -> list[tuple[int, str]]:
        """``(n, line hash)`` of every audit line recorded, in order; each row checked against its
        checksum and anchor (JournalCorrupt ``audit_mismatch`` if one fails). Empty on format 1."""
        if self.format < 2:
            return []
        rows = self._rows(
            "SELECT a.n, CAST(a.hash AS BLOB), a.seq, CAST(a.checksum AS BLOB), CAST(e.checksum AS BLOB) "
            "FROM audit a LEFT JOIN events e ON e.seq = a.seq ORDER BY a.n", ())
        from shoe_daemon.journal.verify import _text

        out = []
        for n, raw_hash, seq, raw_checksum, raw_anchor in rows:
            line_hash, checksum = _text(raw_hash), _text(raw_checksum)
            anchor = self._genesis if seq == 0 else _text(raw_anchor)
            ok = False
            if isinstance(n, int) and isinstance(seq, int) and line_hash and checksum and anchor:
                try:
                    ok = audit_checksum(anchor, seq, n, line_hash) == checksum
                except (ValueError, OverflowError):
                    ok = False
            if not ok or n != len(out) + 1:
                raise JournalCorrupt(Reason.AUDIT_MISMATCH,
                                     f"the journal's record of audit line {n} was altered or removed",
                                     path=str(self._path))  # fmt: skip
            out.append((n, line_hash))
        return out

    def audit_append(self, n: int, line_hash: str) -> None:
        """Record audit line ``n`` (the next one: n = the count so far + 1) with its SHA-256."""
        if self._readonly:
            raise JournalReadOnly(f"{self._path}: journal opened read-only")
        with self._lock:
            conn = self._db()
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    (count,) = conn.execute("SELECT count(*) FROM audit").fetchone()
                    if n != count + 1:
                        raise ValueError(f"audit line {n} out of order: the journal has {count}")
                    (last,) = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
                    conn.execute("INSERT INTO audit(n, hash, seq, checksum) VALUES (?, ?, ?, ?)",
                                 (n, line_hash, last, audit_checksum(self._anchor(conn, last), last, n, line_hash)))
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            conn.execute("ROLLBACK")
                    raise
            except (sqlite3.Error, OSError) as exc:
                raise unavailable_error(exc, self._path, "cannot record an audit line") or exc from None

    @property
    def audit_base(self) -> int:
        """Audit lines recorded for earlier audit files (set aside after a failed verification)."""
        try:
            return int(self._meta.get("audit_base", "0"))
        except ValueError:
            return 0

    def audit_restart(self, note: Mapping[str, Any]) -> None:
        """The audit file was set aside (``note`` says where and why): the next file's line 1 is
        recorded after every line recorded so far (meta ``audit_base``, ``audit_set_aside``)."""
        count = len(self._rows("SELECT n FROM audit", ()))
        history = json.loads(self._meta.get("audit_set_aside", "[]"))
        history.append({**note, "lines_recorded": count - self.audit_base, "at": now_iso()})
        try:
            self._set_meta({"audit_base": str(count), "audit_set_aside": json.dumps(history, sort_keys=True)})
        except (sqlite3.Error, OSError) as exc:
            raise unavailable_error(exc, self._path, "cannot record the audit restart") or exc from None
