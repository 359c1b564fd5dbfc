"""Getting records out of a journal: export (JSON lines) and recover (set a bad journal aside).

Both walk the chain from the genesis and keep only what verifies, in order, up to the first
problem: a record after a damaged one is never exported or carried as if it were good.

Export line format (one event per line, in seq order)::

    {"seq":1,"checksum":"<hex>","data":{...},"kind":"card","source":"shoe","t":1700000000.25}

that is the stored body (``Event.to_json()``) with ``seq`` and ``checksum`` put in front, so the
body is ``json.dumps`` of the line without those two keys (sorted keys, no spaces,
``ensure_ascii=False``) and the chain can be checked with :func:`shoe_daemon.journal.chain.link`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.journal.chain import genesis
from shoe_daemon.journal.errors import JournalCorrupt, JournalNotFound
from shoe_daemon.journal.files import WriterLock, fsync_dir, now_iso
from shoe_daemon.journal.store import Journal, Synchronous
from shoe_daemon.journal.verify import Report


@dataclass
class ExportResult:
    """What an export wrote. ``complete``: every record of the journal; else ``problem`` says why
    it stopped (the records ``first_seq``..``last_seq`` before it are intact)."""

    out: str
    written: bool
    records: int = 0
    first_seq: int | None = None
    last_seq: int | None = None
    journal_id: str | None = None
    genesis: str | None = None
    problem: JournalCorrupt | None = None
    report: Report | None = None

    @property
    def complete(self) -> bool:
        return self.problem is None


@dataclass
class RecoverResult:
    """What recover did. ``recovered`` False: the journal was intact and nothing was changed."""

    export: ExportResult
    recovered: bool
    moved: list[str] = field(default_factory=list)
    fresh_journal_id: str | None = None
    carried: int = 0


def _line(seq: int, checksum: str, body: str) -> str:
    # body is canonical JSON of an object: '{"data":...}'; put seq and checksum in front.
    return f'{{"seq":{seq},"checksum":"{checksum}",{body[1:]}\n'


class _Sink:
    """Writes export lines to ``out`` (``-``: stdout), through a temporary file for a real path."""

    def __init__(self, out: str | os.PathLike[str]):
        self.out = str(out)
        self.tmp: Path | None = None
        if self.out == "-":
            self.fh: IO[str] = sys.stdout
        else:
            target = Path(self.out)
            self.tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
            self.fh = open(self.tmp, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, seq: int, body: str, checksum: str) -> None:
        self.fh.write(_line(seq, checksum, body))

    def commit(self) -> None:
        self.fh.flush()
        if self.tmp is not None:
            os.fsync(self.fh.fileno())
            self.fh.close()
            os.replace(self.tmp, self.out)
            fsync_dir(Path(self.out).absolute().parent)
            self.tmp = None

    def discard(self) -> None:
        if self.tmp is not None:
            self.fh.close()
            with contextlib.suppress(FileNotFoundError):
                self.tmp.unlink()
            self.tmp = None
        else:
            self.fh.flush()


def _walk_export(
    path: Path, sink: _Sink, *, integrity: bool, on_event: Callable[[int, Event], None] | None = None
) -> ExportResult:
    result = ExportResult(out=sink.out, written=False)

    def on_record(seq: int, body: str, checksum: str, event: Event) -> None:
        sink.write(seq, body, checksum)
        if result.first_seq is None:
            result.first_seq = seq
        result.last_seq = seq
        result.records += 1
        if on_event is not None:
            on_event(seq, event)

    try:
        journal = Journal.open(path, readonly=True, verify="none")
    except JournalCorrupt as exc:
        result.problem = exc
        return result
    try:
        result.journal_id = journal.journal_id
        result.genesis = genesis(journal.journal_id)
        # export (integrity False) is about the events only; recover counts a bad recall row as
        # damage too, so that a journal the daemon refuses is never "intact, nothing to recover".
        report = journal._verify(full=True, integrity=integrity, on_record=on_record, recall=integrity)
    finally:
        journal.close()
    result.report = report
    result.problem = report.error()
    return result


def export_jsonl(path: str | os.PathLike[str], out: str | os.PathLike[str], *, intact_only: bool = False) -> ExportResult:
    """Export the journal at ``path`` to ``out`` (JSON lines; ``-`` for stdout).

    Every record is verified along the chain as it is written. If the journal is damaged:
    without ``intact_only`` nothing is written (an export is the whole journal or nothing; on
    stdout the lines already written stay) and ``problem`` says why; with ``intact_only`` the
    records before the first problem are written and ``problem`` says where it stopped.
    Only the events are exported: damage elsewhere in the file (the derived coups table, free
    pages) is reported by ``verify --full``, not here.
    """
    p = Path(path)
    if not p.exists():
        raise JournalNotFound(f"{p}: no such journal")
    sink = _Sink(out)
    try:
        result = _walk_export(p, sink, integrity=False)
        if result.problem is None or intact_only:
            sink.commit()
            result.written = True
        else:
            sink.discard()
    except BaseException:
        sink.discard()
        raise
    return result


def _aside_name(path: Path) -> Path:
    n = 1
    while True:
        base = path.with_name(f"{path.name}.corrupt-{n}")
        if not any(Path(f"{base}{suffix}").exists() for suffix in ("", "-wal", "-shm", "-head")):
            return base
        n += 1


def recover(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    carry_shoe: bool = False,
    synchronous: Synchronous = "full",
    force: bool = False,
) -> RecoverResult:
    """Recover from a damaged journal: export what is intact to ``out``, move the journal aside as
    ``<name>.corrupt-<n>`` (with its ``-wal``/``-shm``; never deleted) and create a fresh journal
    at ``path`` whose meta ``recovered_from`` names the old one. With ``carry_shoe``, the intact
    events of the current shoe are re-appended to the fresh journal (one transaction) so dealing
    can resume. An intact journal is left alone unless ``force``.

    Takes the writer lock: raises :class:`JournalBusy` while the daemon runs.
    """
    p = Path(path)
    lock = WriterLock(p)
    lock.acquire()
    try:
        if not p.exists():
            raise JournalNotFound(f"{p}: no such journal")
        shoe: list[Event] = []

        def on_event(seq: int, event: Event) -> None:
            if event.kind is Kind.NEW_SHOE:
                shoe.clear()
            shoe.append(event)

        sink = _Sink(out)
        try:
            export = _walk_export(p, sink, integrity=True, on_event=on_event if carry_shoe else None)
            if export.problem is None and not force:
                sink.discard()
                return RecoverResult(export=export, recovered=False)
            sink.commit()
            export.written = True
        except BaseException:
            sink.discard()
            raise

        base = _aside_name(p)
        moved = []
        for suffix in ("", "-wal", "-shm", "-head"):
            src = Path(f"{p}{suffix}")
            if src.exists():
                dst = Path(f"{base}{suffix}")
                os.rename(src, dst)
                moved.append(str(dst))
        fsync_dir(p.absolute().parent)

        problem = export.problem
        recovered_from = {
            "journal_id": export.journal_id,
            "file": str(base),
            "last_good_seq": export.last_seq or 0,
            "reason": problem.reason.value if problem else None,
            "detail": problem.detail if problem else "recover --force",
            "at": now_iso(),
            "carried": len(shoe) if carry_shoe else 0,
        }
        fresh = Journal.open(p, create=True, synchronous=synchronous, verify="none", _lock=lock)
        try:
            fresh._set_meta({"recovered_from": json.dumps(recovered_from, sort_keys=True)})
            carried = len(fresh.append_many(shoe)) if carry_shoe else 0
            fresh.verify().raise_if_corrupt()
            fresh_id = fresh.journal_id
        finally:
            fresh.close()
        return RecoverResult(export=export, recovered=True, moved=moved, fresh_journal_id=fresh_id, carried=carried)
    finally:
        lock.release()
