"""`make test` leaves the machine's services alone: scripts/system-deps.sh stops no broker.

The script runs for real, with recording stand-ins for the service managers first on PATH; they
say every service is active, which is when the old script stopped the system Mosquitto."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "system-deps.sh"
# What could stop, restart or kill a service; apt-get too, so that nothing is installed by the test.
RECORDED = ("systemctl", "service", "invoke-rc.d", "pkill", "killall", "kill", "apt-get", "apt")


@pytest.fixture
def fakebin(tmp_path):
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in RECORDED:
        tool = bin_dir / name
        tool.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\nexit 0\n')   # "active", "done"
        tool.chmod(0o755)
    return bin_dir, log


def test_system_deps_stops_no_service(fakebin):
    bin_dir, log = fakebin
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = log.read_text().splitlines() if log.exists() else []
    touching = [c for c in calls if c.split()[0] not in ("apt-get", "apt")]
    assert touching == [], f"system-deps.sh called: {touching}"
    # An apt-get run (a package missing on this machine) installs only: no remove, no purge.
    assert all(c.split()[1:2] in (["update"], ["install"]) for c in calls), calls


def test_the_stand_ins_are_used(fakebin):
    # The check above would pass vacuously if the script did not find the recording tools first.
    bin_dir, log = fakebin
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["bash", "-c", "systemctl is-active --quiet mosquitto && systemctl stop mosquitto"],
                   env=env, check=True, timeout=30)
    assert log.read_text().splitlines() == ["systemctl is-active --quiet mosquitto", "systemctl stop mosquitto"]


@pytest.mark.skipif(not shutil.which("shellcheck"), reason="shellcheck not installed")
def test_shellcheck_clean():
    proc = subprocess.run(["shellcheck", str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
