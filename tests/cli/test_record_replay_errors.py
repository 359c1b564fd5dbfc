"""`record` and `replay` say what is wrong, exit non-zero, and leave nothing half-made.

- record on a port that does not open: an error at once, no fixture file (it used to exit 0 after
  --duration with an empty fixture); a recording across which nothing crossed is no fixture either.
- replay of a file that exists but is not a fixture: "not a fixture: <why>", not "no such file".
"""

from __future__ import annotations

import gzip
import os
import shutil
import tty

import pytest

from shoe_daemon.cli import main
from tests.e2e.harness import ROOT, run_cli


def test_record_a_port_that_does_not_exist(tmp_path):
    out = tmp_path / "x.shoelog"
    proc = run_cli("record", "--port", str(tmp_path / "nonexistent"), "--duration", "1", "--out", str(out))
    assert proc.returncode == 1, proc.stderr
    assert "cannot open" in proc.stderr and "no such device" in proc.stderr and "nothing recorded" in proc.stderr
    assert proc.stdout == ""                     # no pty was offered to a daemon
    assert not out.exists()


def test_record_dev_nonexistent(tmp_path):
    # The issue's own command line.
    out = tmp_path / "y.shoelog.gz"
    proc = run_cli("record", "--port", "/dev/nonexistent", "--duration", "1", "--out", str(out))
    assert proc.returncode == 1 and "/dev/nonexistent" in proc.stderr and not out.exists(), proc.stderr


def test_record_where_nothing_crossed_writes_no_fixture(tmp_path):
    master, slave = os.openpty()                 # a silent "shoe": the port opens, nothing comes
    tty.setraw(slave)
    try:
        out = tmp_path / "silent.shoelog"
        proc = run_cli("record", "--port", os.ttyname(slave), "--duration", "1", "--out", str(out))
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 1, proc.stderr
    assert "nothing recorded" in proc.stderr and "no fixture written" in proc.stderr
    assert not out.exists()


@pytest.fixture
def bad_files(tmp_path):
    files = {
        "text.shoelog": (b"hello\n", "not a fixture: line 1: expected 'T KIND [DATA]'"),
        "comment.shoelog": (b"# a comment\n", "not a fixture: not a shoelog (the first line must be '# shoelog 1')"),
        "empty.shoelog": (b"", "not a fixture: not a shoelog"),
        "binary.shoelog": (bytes(range(256)), "not a fixture: not UTF-8 text"),
        "plain.shoelog.gz": (b"# shoelog 1\n", "not a fixture: not gzip-compressed"),
        "cut.shoelog.gz": (gzip.compress((ROOT / "fixtures" / "shoe-burn.shoelog").read_bytes())[:400],
                           "not a fixture: a damaged gzip stream"),
        "notes.txt": (b"x\n", "not a fixture: the name must end in .shoelog or .shoelog.gz"),
    }
    for name, (data, _) in files.items():
        (tmp_path / name).write_bytes(data)
    return {tmp_path / name: why for name, (_, why) in files.items()}


def test_replay_says_what_is_wrong_with_each(bad_files, tmp_path):
    missing = tmp_path / "missing.shoelog"
    good = tmp_path / "shoe-burn.shoelog"
    shutil.copy(ROOT / "fixtures" / "shoe-burn.shoelog", good)
    proc = run_cli("replay", str(good), *map(str, bad_files), str(missing))
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    for path, why in bad_files.items():
        line = next(ln for ln in lines if ln.startswith(f"shoe-daemon replay: {path}: "))
        assert why in line and "no such file" not in line, line
    assert f"shoe-daemon replay: {missing}: no such file" in lines
    assert len(lines) == len(bad_files) + 1, proc.stderr   # all at once; the good one was not replayed
    assert "Traceback" not in proc.stderr


def test_replay_an_empty_directory_is_an_error(tmp_path):
    proc = run_cli("replay", "--check", str(tmp_path))
    assert proc.returncode == 2 and "a directory with no fixtures" in proc.stderr


def test_list_marks_the_unreadable(bad_files, capsys):
    assert main(["replay", "--list", *map(str, bad_files)]) == 0
    out = capsys.readouterr().out
    assert out.count("(unreadable: not a fixture: ") == len(bad_files)
