"""The audit log of the API's writes: who, when, what, why, and what came of it.

An append-only JSON Lines file next to the journal (``journal.sqlite3`` ->
``journal.audit.jsonl``). Every line is canonical JSON and carries ``prev``, the
SHA-256 of the line before it (``""`` for the first), so an edited line shows; each
line is flushed and fsync'ed before the API answers, then its SHA-256 is recorded
in the journal (``Journal.audit_append``), so a cut tail, a removed last line, an
emptied file or a removal with the chain rewritten show too
(:mod:`shoe_daemon.journal.audit` verifies; ``shoe-daemon journal verify --audit``
and every start of the daemon run it). The journal holds the events themselves
(the truth the core replays); this log adds the attempts the core never saw (wrong
role, refused before journaling) and the HTTP outcome of each.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from shoe_daemon.journal.audit import audit_path, line_hash, read_lines

__all__ = ["AuditLog", "audit_path", "verify"]

log = logging.getLogger("shoe_daemon.api")

TAIL_CHUNK = 64 * 1024


def _line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _hash(line: str) -> str:
    return line_hash(line)


def _last_line(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - TAIL_CHUNK))
            chunk = f.read()
    except FileNotFoundError:
        return None
    lines = [ln for ln in chunk.split(b"\n") if ln.strip()]
    return lines[-1].decode() if lines else None


class AuditLog:
    """``AuditLog(path, journal=None)``: with a (writable) journal, each line's hash is recorded there."""

    def __init__(self, path: str | os.PathLike[str], journal=None):
        self.path = Path(path)
        last = _last_line(self.path)
        self._prev = _hash(last) if last is not None else ""
        self._lock = threading.Lock()
        self.journal = journal if journal is not None and not getattr(journal, "readonly", True) else None
        self._lines = len(read_lines(self.path)[0]) if self.journal is not None else 0

    def write(self, entry: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            entry = {**entry, "prev": self._prev}
            line = _line(entry)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            try:
                os.write(fd, (line + "\n").encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            self._prev = _hash(line)
            self._lines += 1
            if self.journal is not None and getattr(self.journal, "format", 1) >= 2:
                from shoe_daemon.journal import JournalError

                try:
                    self.journal.audit_append(self.journal.audit_base + self._lines, self._prev)
                except (JournalError, OSError, ValueError) as exc:
                    # The line is written; its record is missing: the next start reports it.
                    log.error("audit log %s: line %d not recorded in the journal: %s", self.path, self._lines, exc)
        return entry

    def tail(self, n: int) -> list[dict[str, Any]]:
        """The last ``n`` entries, oldest first."""
        try:
            with open(self.path, encoding="utf-8") as f:
                lines = f.readlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines[-n:] if n > 0 else []:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    out.append({"unparsable": line})
        return out


def verify(path: str | os.PathLike[str]) -> tuple[bool, int, str]:
    """(ok, lines checked, problem) for an audit file: every ``prev`` must match the line before."""
    prev = ""
    n = 0
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, start=1):
            line = raw.rstrip("\n")
            try:
                entry = json.loads(line)
            except ValueError:
                return False, n, f"line {n} is not JSON"
            if entry.get("prev") != prev:
                return False, n, f"line {n}: the chain is broken (a line before it was changed or removed)"
            prev = _hash(line)
    return True, n, ""
