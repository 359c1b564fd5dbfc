"""The audit log of the API's writes: who, when, what, why, and what came of it.

An append-only JSON Lines file next to the journal (``journal.sqlite3`` ->
``journal.audit.jsonl``). Every line is canonical JSON and carries ``prev``, the
SHA-256 of the line before it (``""`` for the first), so a removed or edited
line shows; each line is flushed and fsync'ed before the API answers. The
journal holds the events themselves (the truth the core replays); this log adds
the attempts the core never saw (wrong role, refused before journaling) and the
HTTP outcome of each.

Check a copy with :func:`verify`.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

TAIL_CHUNK = 64 * 1024


def audit_path(journal_path: str | os.PathLike[str]) -> Path:
    p = Path(journal_path)
    return p.with_name(p.stem + ".audit.jsonl")


def _line(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _hash(line: str) -> str:
    return hashlib.sha256(line.encode()).hexdigest()


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
    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)
        last = _last_line(self.path)
        self._prev = _hash(last) if last is not None else ""
        self._lock = threading.Lock()

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
