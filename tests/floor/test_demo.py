"""`shoe-daemon demo --tables N --coups M`: N emulated tables, their daemons and the floor, to the end."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.floor.harness import ROOT


def test_demo_tables_runs_the_floor_and_stops_after_m_coups_on_every_table():
    proc = subprocess.run([sys.executable, "-m", "shoe_daemon", "demo", "--tables", "3", "--coups", "2",
                           "--pace", "0.01", "--seed", "5"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"floor page: http://127\.0\.0\.1:\d+/", proc.stderr)
    m = re.search(r"demo: 3 tables, (\d+) coups settled; the floor database holds (\d+) coups, \d+ messages, "
                  r"(\d+) open gaps", proc.stderr)
    assert m, proc.stderr
    settled, stored, gaps = map(int, m.groups())
    assert settled == stored == 6 and gaps == 0


def test_demo_tables_out_of_range_is_a_usage_error():
    proc = subprocess.run([sys.executable, "-m", "shoe_daemon", "demo", "--tables", "500"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--tables must be between 1 and 200" in proc.stderr
