"""SIGKILL a process appending in a loop: every acknowledged append is there, and it verifies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.journal import Journal

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import sys
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.journal import Journal

def ev(i):
    kind = Kind.NEW_SHOE if i % 50 == 0 else Kind.CARD
    return Event(1_700_000_000.0 + i, kind, "shoe", {"i": i})

j = Journal.open(sys.argv[1], synchronous=sys.argv[2])
i = 0
while True:
    if i % 7 == 0:
        seqs = j.append_many([ev(i + k) for k in range(5)])     # group commit
        i += 5
    else:
        seqs = [j.append(ev(i))]
        i += 1
    print(" ".join(map(str, seqs)), flush=True)                  # acknowledged: append returned
"""


def ev(i: int) -> Event:
    kind = Kind.NEW_SHOE if i % 50 == 0 else Kind.CARD
    return Event(1_700_000_000.0 + i, kind, "shoe", {"i": i})


@pytest.mark.parametrize("synchronous", ["full", "normal"])
def test_sigkill_loses_no_acknowledged_append(tmp_path, synchronous):
    path = tmp_path / "j.sqlite3"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path), synchronous],
        stdout=subprocess.PIPE, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    acked: list[int] = []
    deadline = time.monotonic() + 20
    assert child.stdout is not None
    while len(acked) < 3000 and time.monotonic() < deadline:
        line = child.stdout.readline()
        if not line:
            break
        acked += [int(s) for s in line.split()]
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read()                                    # acknowledged before the kill
    child.wait()
    acked += [int(s) for s in rest.split()]
    assert child.returncode == -signal.SIGKILL
    assert len(acked) >= 100, "the child did not get going"

    with Journal.open(path, verify="full") as j:                  # verifies, and resumes
        assert j.report is not None and j.report.ok
        last = j.last_seq()
        assert last >= max(acked)
        got = {e.seq: e.event for e in j.events()}
        assert all(got[s] == ev(s - 1) for s in acked)
        assert sorted(got) == list(range(1, last + 1))
        start = j.current_shoe_start()
        assert start is not None and got[start].kind is Kind.NEW_SHOE
        assert j.append(ev(last)) == last + 1
