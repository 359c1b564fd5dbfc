"""The API's audit log, anchored in the journal: verification of the file against its record.

The audit log (``journal.audit.jsonl``, written by ``shoe_daemon.api.audit.AuditLog``) is a JSON
Lines file whose lines chain by ``prev`` (the SHA-256 of the line before). That chain alone shows
an edited line, but not a cut tail, a removed last line, an emptied file or a removal whose
later lines were chained again. So every line's SHA-256 is also recorded in the journal (table
``audit``: line number, hash, and a checksum anchored at the chain value of the last event then,
see :func:`shoe_daemon.journal.chain.audit_checksum`), and :func:`verify_audit` compares the file
with that record, line by line. Run by ``shoe-daemon journal verify --audit`` and at every start
of the daemon (docs/journal.md, "The audit log").

Crash tolerance: a line is written (and fsynced) before its record, so a crash between the two
leaves one complete, well-chained line more than recorded: that is reported ``unrecorded = 1``,
not a failure, and the daemon records it at start.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from shoe_daemon.journal.errors import JournalCorrupt


def audit_path(journal_path: str | os.PathLike[str]) -> Path:
    """``journal.sqlite3`` -> ``journal.audit.jsonl``, beside it."""
    p = Path(journal_path)
    return p.with_name(p.stem + ".audit.jsonl")


def line_hash(line: str | bytes) -> str:
    """SHA-256 of one line (without its newline), as ``prev`` and the journal's record hold it."""
    return hashlib.sha256(line.encode() if isinstance(line, str) else line).hexdigest()


def read_lines(path: Path) -> tuple[list[bytes], bool]:
    """The file's lines (no newline) and whether it ends with a newline (False: a torn last line)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], True
    if not data:
        return [], True
    complete = data.endswith(b"\n")
    lines = data.split(b"\n")
    if complete:
        lines.pop()
    return lines, complete


@dataclass(frozen=True, slots=True)
class AuditReport:
    path: str
    ok: bool
    lines: int                  # lines in the file
    recorded: int               # lines the journal recorded for this file
    unrecorded: int = 0         # complete lines after the last recorded one (a crash: 0 or 1)
    anchored: bool = True       # False: a format-1 journal, nothing to compare with
    problem: str | None = None

    def summary(self) -> str:
        if not self.anchored:
            return f"audit log {self.path}: {self.lines} line(s); not anchored (journal format 1)"
        if self.ok:
            extra = f", {self.unrecorded} line written but not yet recorded (a crash)" if self.unrecorded else ""
            return f"audit log OK: {self.path}: {self.lines} line(s) match the journal's record{extra}"
        return f"audit log fails verification: {self.path}: {self.problem}"


def verify_audit(journal, path: str | os.PathLike[str]) -> AuditReport:
    """Compare the audit file at ``path`` with the journal's record of it (never raises for damage)."""
    p = Path(path)
    lines, complete = read_lines(p)

    def fail(problem: str, recorded: int) -> AuditReport:
        return AuditReport(str(p), False, len(lines), recorded, problem=problem)

    if journal.format < 2:
        return AuditReport(str(p), True, len(lines), 0, anchored=False)
    try:
        records = journal.audit_records()
    except JournalCorrupt as exc:
        return fail(exc.detail, 0)
    mine = records[journal.audit_base:]
    prev = ""
    for i, raw in enumerate(lines):
        n = i + 1
        try:
            entry = json.loads(raw)
        except ValueError:
            if i == len(lines) - 1 and not complete:
                return fail(f"line {n} is cut short (the file was truncated)", len(mine))
            return fail(f"line {n} is not JSON", len(mine))
        if not isinstance(entry, dict) or entry.get("prev") != prev:
            return fail(f"line {n}: the chain is broken (a line before it was changed or removed)", len(mine))
        h = line_hash(raw)
        if i < len(mine):
            if mine[i][1] != h:
                return fail(f"line {n} differs from the line recorded in the journal (changed, or lines before "
                            "it removed and the chain rewritten)", len(mine))
        prev = h
    if not complete and lines:
        return fail(f"line {len(lines)} is cut short (the file was truncated)", len(mine))
    if len(lines) < len(mine):
        gone = len(mine) - len(lines)
        what = "the file is empty or missing" if not lines else f"it ends after line {len(lines)}"
        return fail(f"{gone} line(s) recorded in the journal are missing: {what} (truncated, emptied or "
                    f"its last lines removed; the journal recorded {len(mine)})", len(mine))
    extra = len(lines) - len(mine)
    if extra > 1:
        return fail(f"{extra} lines after line {len(mine)} were never recorded in the journal (written by "
                    "something other than the daemon)", len(mine))
    return AuditReport(str(p), True, len(lines), len(mine), unrecorded=extra)


def _chain_ok(lines: list[bytes], complete: bool) -> bool:
    prev = ""
    for raw in lines:
        try:
            entry = json.loads(raw)
        except ValueError:
            return False
        if not isinstance(entry, dict) or entry.get("prev") != prev:
            return False
        prev = line_hash(raw)
    return complete


def _aside_name(path: Path) -> Path:
    n = 1
    while (candidate := path.with_name(f"{path.name}.corrupt-{n}")).exists():
        n += 1
    return candidate


@dataclass(frozen=True, slots=True)
class StartCheck:
    report: AuditReport
    adopted: int = 0                 # lines of an unrecorded file recorded now (migration, recover)
    set_aside: str | None = None     # where a failing file was moved (never deleted)


def check_at_start(journal, path: str | os.PathLike[str]) -> StartCheck:
    """What the daemon does at start (writable journal): verify the audit file against the journal.

    - intact: record the one line a crash may have left unrecorded;
    - the journal has no record at all (a format-1 journal just migrated, a fresh journal made by
      ``journal recover``) and the file's own chain holds: adopt it (record every line);
    - otherwise a failing file is moved aside as ``<name>.corrupt-<n>`` and the journal notes it
      (meta ``audit_set_aside``); the caller raises the alert. The next line starts a new file.
    """
    p = Path(path)
    report = verify_audit(journal, p)
    if not report.anchored:
        return StartCheck(report)
    if report.ok:
        if report.unrecorded:
            lines, _ = read_lines(p)
            journal.audit_append(journal.audit_base + len(lines), line_hash(lines[-1]))
        return StartCheck(report)
    lines, complete = read_lines(p)
    try:
        nothing_recorded = not journal.audit_records() and journal.audit_base == 0
    except JournalCorrupt:
        nothing_recorded = False
    if nothing_recorded and _chain_ok(lines, complete):
        for n, raw in enumerate(lines, start=1):
            journal.audit_append(n, line_hash(raw))
        return StartCheck(AuditReport(str(p), True, len(lines), len(lines)), adopted=len(lines))
    aside = None
    if p.exists():
        aside = _aside_name(p)
        os.rename(p, aside)
    journal.audit_restart({"file": str(aside) if aside else None, "problem": report.problem})
    return StartCheck(report, set_aside=str(aside) if aside else None)
