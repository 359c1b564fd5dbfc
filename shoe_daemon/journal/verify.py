"""Verification of a journal: the walk along the hash chain, and its report.

One walk serves ``verify`` (quick and full), ``export`` and ``recover``: it reads the records in
seq order from an anchor, recomputes the chain and stops at the first problem.

Quick verification (every start of the daemon) walks from the last checkpoint, that is from the
last ``new_shoe`` record (the checkpoint row holds the chain value just before it), to the end,
plus a few O(1) checks of the whole table (first seq, highest seq ever written) and SQLite's
``PRAGMA quick_check``. Full verification walks from the genesis and runs
``PRAGMA integrity_check``.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.journal.chain import genesis, link, recall_checksum
from shoe_daemon.journal.errors import JournalCorrupt, Reason

NEW_SHOE = Kind.NEW_SHOE.value

# Called for every record found intact, in seq order: (seq, body, checksum, event).
OnRecord = Callable[[int, str, str, Event], None]


@dataclass(frozen=True, slots=True)
class Problem:
    reason: Reason
    seq: int | None
    detail: str
    last_good_seq: int | None


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of a verification. ``ok`` or else ``reason``/``seq``/``detail``/``last_good_seq``.

    ``first_seq``..``last_seq`` is the range walked along the chain (``first_seq`` is 1 for a full
    verification); ``records`` the number of records walked; ``highest_seq`` the last seq present.
    """

    path: str
    full: bool
    ok: bool
    journal_id: str | None
    first_seq: int
    last_seq: int
    records: int
    highest_seq: int
    seconds: float
    reason: Reason | None = None
    seq: int | None = None
    detail: str | None = None
    last_good_seq: int | None = None
    recall_rows: int | None = None      # recall (coups) rows verified; None: not checked (format 1)

    def error(self) -> JournalCorrupt | None:
        if self.ok:
            return None
        assert self.reason is not None
        return JournalCorrupt(
            self.reason, self.detail or "", seq=self.seq, last_good_seq=self.last_good_seq, path=self.path
        )

    def raise_if_corrupt(self) -> None:
        err = self.error()
        if err is not None:
            raise err

    def summary(self) -> str:
        kind = "full" if self.full else "quick"
        if self.ok:
            span = f"seq {self.first_seq}..{self.last_seq}" if self.records else "no records"
            recall = ("recall not verifiable (journal format 1: opened read-only, not migrated)"
                      if self.recall_rows is None else f"{self.recall_rows} recall record(s) verified")
            return (
                f"journal OK ({kind}): {self.path}: {self.records} record(s) verified ({span}), "
                f"highest seq {self.highest_seq}, {recall}, {self.seconds:.3f} s"
            )
        err = self.error()
        assert err is not None
        return f"{err.describe()} [{kind} verification, {self.seconds:.3f} s]"


ENVIRONMENT_ERRORS = ("unable to open database file", "database is locked", "readonly database")


def is_environment_error(exc: sqlite3.Error) -> bool:
    """Errors of the surroundings (permissions, locks), not of the file's content."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and any(e in text for e in ENVIRONMENT_ERRORS)


def classify_db_error(exc: sqlite3.Error) -> Reason:
    text = str(exc).lower()
    if "not a database" in text or "file is encrypted" in text:
        return Reason.NOT_A_DATABASE
    return Reason.SQLITE_INTEGRITY


# A recall row as read for verification: every text column as bytes (a row damaged into invalid
# UTF-8 is a failed verification, not a decoding error), and the chain value of its anchor.
RECALL_SELECT = (
    "SELECT CAST(c.coup_id AS BLOB), c.shoe, c.coup, CAST(c.result AS BLOB), c.seq, c.recorded, "
    "CAST(c.checksum AS BLOB), CAST(e.checksum AS BLOB) FROM coups c LEFT JOIN events e ON e.seq = c.seq"
)


def _text(value: object) -> str | None:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    return value if isinstance(value, str) else None


def check_recall_row(row: tuple, journal_id: str) -> tuple[str | None, tuple | None, str | None]:
    """Verify one row of :data:`RECALL_SELECT`: ``(coup_id, decoded row, problem)``.

    The decoded row is ``(coup_id, shoe, coup, result_json, seq, recorded)`` when it verifies
    (problem None); else problem is a sentence and the row is None. ``coup_id`` is the stored id
    when it is readable, for the message."""
    raw_id, shoe, coup, raw_result, seq, recorded, raw_checksum, raw_anchor = row
    coup_id = _text(raw_id)
    if coup_id is None:
        return None, None, "the coup id is not valid UTF-8 text"
    result = _text(raw_result)
    if result is None:
        return coup_id, None, "the result is not valid UTF-8 text"
    if not (isinstance(shoe, int) and isinstance(coup, int) and isinstance(seq, int)):
        return coup_id, None, "shoe, coup and seq must be integers"
    if isinstance(recorded, int):
        recorded = float(recorded)
    if not isinstance(recorded, float):
        return coup_id, None, "recorded is not a number"
    checksum = _text(raw_checksum)
    if checksum is None:
        return coup_id, None, "the row has no checksum"
    if seq == 0:
        anchor = genesis(journal_id)
    else:
        anchor = _text(raw_anchor)
        if anchor is None:
            return coup_id, None, f"its anchor, event seq {seq}, is not in the journal"
    try:
        expected = recall_checksum(anchor, seq, coup_id, shoe, coup, result, recorded)
    except (ValueError, OverflowError):
        return coup_id, None, "its anchor's chain value is not a checksum"
    if checksum != expected:
        return coup_id, None, (f"the stored checksum does not match the row and the chain value of event seq {seq}: "
                               "the row was altered")
    try:
        json.loads(result)
    except ValueError:
        return coup_id, None, "the result is not JSON"
    return coup_id, (coup_id, shoe, coup, result, seq, recorded), None


class _Walk:
    """Walk records from ``start`` (whose predecessor's checksum is ``prev``); stop at the first problem."""

    def __init__(self, conn: sqlite3.Connection, start: int, prev: str, checkpoints: dict[int, str]):
        self.conn = conn
        self.start = start
        self.prev = prev
        self.checkpoints = checkpoints
        self.last_good = start - 1
        self.records = 0
        self.problem: Problem | None = None

    def _fail(self, reason: Reason, seq: int | None, detail: str) -> None:
        self.problem = Problem(reason, seq, detail, self.last_good)

    def run(self, on_record: OnRecord | None = None) -> None:
        expected = self.start
        prev = self.prev
        cur = self.conn.execute(
            "SELECT seq, t, kind, source, body, checksum FROM events WHERE seq >= ? ORDER BY seq", (self.start,)
        )
        try:
            for seq, t, kind, source, body, checksum in cur:
                if seq != expected:
                    missing = f"seq {expected}" if seq == expected + 1 else f"seq {expected}..{seq - 1}"
                    self._fail(Reason.SEQ_GAP, expected, f"{missing} missing: the next record is seq {seq}")
                    return
                if not isinstance(body, str):
                    self._fail(Reason.CHECKSUM_MISMATCH, seq, f"the body is not text ({type(body).__name__})")
                    return
                computed = link(prev, seq, body)
                if checksum != computed:
                    try:
                        Event.from_json(body)
                        note = ""
                    except Exception:
                        note = "; the body is not a valid event either (truncated?)"
                    self._fail(
                        Reason.CHECKSUM_MISMATCH,
                        seq,
                        "the stored checksum does not match the record's body and the previous record's "
                        f"checksum: the record was altered, torn or moved{note}",
                    )
                    return
                try:
                    event = Event.from_json(body)
                except Exception as exc:  # noqa: BLE001 - any failure to rebuild the event
                    self._fail(Reason.UNPARSABLE_BODY, seq, f"{type(exc).__name__}: {exc}")
                    return
                if kind != event.kind.value or source != event.source or t != event.t:
                    self._fail(
                        Reason.COLUMN_MISMATCH,
                        seq,
                        f"columns (t={t!r}, kind={kind!r}, source={source!r}) disagree with the body "
                        f"(t={event.t!r}, kind={event.kind.value!r}, source={event.source!r})",
                    )
                    return
                if kind == NEW_SHOE:
                    cp = self.checkpoints.pop(seq, None)
                    if cp is None:
                        self._fail(Reason.CHECKPOINT_MISMATCH, seq, "the new_shoe record has no checkpoint row")
                        return
                    if cp != prev:
                        self._fail(
                            Reason.CHECKPOINT_MISMATCH,
                            seq,
                            "the checkpoint row holds a chain value that is not the one before this record",
                        )
                        return
                if on_record is not None:
                    on_record(seq, body, computed, event)
                prev = computed
                self.prev = prev
                self.last_good = seq
                self.records += 1
                expected = seq + 1
        except sqlite3.DatabaseError as exc:
            self._fail(classify_db_error(exc), expected, f"reading the record failed: {exc}")
        finally:
            cur.close()


def verify_connection(
    conn: sqlite3.Connection,
    *,
    path: str,
    journal_id: str,
    full: bool,
    integrity: bool = True,
    on_record: OnRecord | None = None,
    head: tuple[int, str] | None = None,
    recall: bool = True,
) -> Report:
    """Verify the journal behind ``conn``; ``head`` is the witness (seq, checksum) of the last
    acknowledged append, read *before* this call (so the snapshot taken here includes it)."""
    t0 = time.perf_counter()
    first_seq = 1
    highest = 0
    walk: _Walk | None = None
    problem: Problem | None = None
    recall_rows: int | None = None

    def report() -> Report:
        p = problem
        return Report(
            path=path,
            full=full,
            ok=p is None,
            journal_id=journal_id,
            first_seq=first_seq,
            last_seq=walk.last_good if walk else first_seq - 1,
            records=walk.records if walk else 0,
            highest_seq=highest,
            seconds=time.perf_counter() - t0,
            reason=p.reason if p else None,
            seq=p.seq if p else None,
            detail=p.detail if p else None,
            last_good_seq=p.last_good_seq if p else None,
            recall_rows=recall_rows,
        )

    try:
        conn.execute("BEGIN")  # one read snapshot for the whole verification
        try:
            lo, hi = conn.execute("SELECT min(seq), max(seq) FROM events").fetchone()
            highest = hi or 0
            row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
            high_water = row[0] if row else 0
            checkpoints = dict(conn.execute("SELECT seq, prev_checksum FROM checkpoints").fetchall())
            start, prev = 1, genesis(journal_id)
            if not full:
                # Anchor: the last new_shoe record and its checkpoint row.
                (shoe,) = conn.execute(f"SELECT max(seq) FROM events WHERE kind = '{NEW_SHOE}'").fetchone()
                if lo is not None and lo != 1:
                    problem = Problem(
                        Reason.SEQ_GAP, 1, f"seq 1..{lo - 1} missing: the first record is seq {lo}", 0
                    )
                elif shoe is not None:
                    first_seq = shoe
                    cp = checkpoints.get(shoe)
                    if cp is None:
                        problem = Problem(
                            Reason.CHECKPOINT_MISMATCH, shoe, "the last new_shoe record has no checkpoint row", None
                        )
                    elif shoe == 1:
                        if cp != prev:
                            problem = Problem(
                                Reason.CHAIN_BREAK, 1, "the checkpoint at seq 1 is not the journal's genesis", None
                            )
                    else:
                        before = conn.execute("SELECT checksum FROM events WHERE seq = ?", (shoe - 1,)).fetchone()
                        if before is None:
                            problem = Problem(
                                Reason.SEQ_GAP, shoe - 1, f"seq {shoe - 1} missing before the last new_shoe", None
                            )
                        elif before[0] != cp:
                            problem = Problem(
                                Reason.CHAIN_BREAK,
                                shoe,
                                f"the checkpoint at seq {shoe} does not link to the checksum of seq {shoe - 1}",
                                None,
                            )
                    start, prev = shoe, cp or prev
                    checkpoints = {s: c for s, c in checkpoints.items() if s >= shoe}
            if problem is None:
                walk = _Walk(conn, start, prev, checkpoints)
                walk.run(on_record)
                problem = walk.problem
            if problem is None and walk is not None:
                last = walk.last_good
                if high_water > last:
                    missing = f"seq {last + 1}" if high_water == last + 1 else f"seq {last + 1}..{high_water}"
                    problem = Problem(
                        Reason.TAIL_MISSING,
                        last + 1,
                        f"{missing} missing at the end: the journal had written up to seq {high_water}",
                        last,
                    )
                elif head is not None and head[0] > last:
                    hseq = head[0]
                    missing = f"seq {last + 1}" if hseq == last + 1 else f"seq {last + 1}..{hseq}"
                    problem = Problem(
                        Reason.TAIL_MISSING,
                        last + 1,
                        f"{missing} missing at the end: seq {hseq} was acknowledged (head witness); "
                        "the -wal file was lost or cut, or an older copy was restored",
                        last,
                    )
                elif walk.checkpoints:
                    extra = min(walk.checkpoints)
                    problem = Problem(
                        Reason.CHECKPOINT_MISMATCH,
                        extra,
                        f"a checkpoint row at seq {extra} is not at a new_shoe record",
                        min(extra - 1, last),
                    )
            if problem is None and head is not None and head[0] > 0:
                row = conn.execute("SELECT checksum FROM events WHERE seq = ?", (head[0],)).fetchone()
                if row is None or row[0] != head[1]:
                    problem = Problem(
                        Reason.CHAIN_BREAK,
                        head[0],
                        "the record differs from the one acknowledged (head witness): the journal was rewritten",
                        head[0] - 1 if full else None,
                    )
            if problem is None and walk is not None and recall:
                (version,) = conn.execute("PRAGMA user_version").fetchone()
                if version >= 2:
                    # Recall rows anchored in the walked range (quick: the current shoe; full: all).
                    recall_rows = 0
                    cur = conn.execute(f"{RECALL_SELECT} WHERE c.seq IS NULL OR c.seq >= ? ORDER BY c.rowid",
                                       (0 if full else start,))
                    for row in cur:
                        coup_id, _decoded, why = check_recall_row(row, journal_id)
                        if why is not None:
                            problem = Problem(Reason.RECALL_MISMATCH, None, f"coup {coup_id}: {why}", walk.last_good)
                            break
                        recall_rows += 1
                    cur.close()
            if problem is None and integrity:
                pragma = "integrity_check" if full else "quick_check"
                rows = [r[0] for r in conn.execute(f"PRAGMA {pragma}(5)").fetchall()]
                if rows != ["ok"]:
                    problem = Problem(
                        Reason.SQLITE_INTEGRITY,
                        None,
                        f"PRAGMA {pragma}: " + "; ".join(rows),
                        walk.last_good if (walk is not None and full) else None,
                    )
        finally:
            if conn.in_transaction:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
    except sqlite3.DatabaseError as exc:
        if is_environment_error(exc):
            raise
        good = walk.last_good if walk is not None else None
        problem = Problem(classify_db_error(exc), None, str(exc), good)
    return report()
