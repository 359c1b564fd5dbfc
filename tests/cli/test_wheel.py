"""A wheel built from the repository and installed without -e carries the fixture library:
`replay --list` shows the whole library and `replay --check` passes on it, as for a technician at
an installed table (`make install`).

The wheel is built from a copy of the working tree's files (tracked and new, not ignored: what a
clone holds) without build isolation, and installed with --no-deps into a fresh venv whose
dependencies come from the test's own venv through a .pth file: no network, no index.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from shoe_daemon.floor.store import SCHEMA_VERSION
from shoe_daemon.recording.formats import find_fixtures, fixture_stem

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = sorted(fixture_stem(p) for p in find_fixtures([ROOT / "fixtures"]))

pytestmark = pytest.mark.timeout(600)


def run(cmd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    files = run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT).stdout.split("\0")
    src = tmp / "src"
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"),
         str(src)])
    wheel = next((tmp / "dist").glob("shoe_daemon-*.whl"))
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    # After the venv's own site-packages: the installed shoe_daemon wins over the editable one.
    Path(site, "zz-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SHOE_DAEMON_FIXTURES")}
    return wheel, venv, env, tmp / "elsewhere"


def shoe_daemon(installed, *args) -> subprocess.CompletedProcess:
    _, venv, env, cwd = installed
    cwd.mkdir(exist_ok=True)            # not the repository: nothing to find in ./fixtures
    return subprocess.run([str(venv / "bin" / "shoe-daemon"), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=500)


def test_it_runs_the_installed_copy(installed):
    _, venv, env, cwd = installed
    cwd.mkdir(exist_ok=True)
    where = run([str(venv / "bin" / "python"), "-c", "import shoe_daemon; print(shoe_daemon.__file__)"],
                cwd=cwd, env=env).stdout.strip()
    assert where.startswith(str(venv)), where


def test_the_wheel_carries_the_library_and_the_licences(installed):
    names = zipfile.ZipFile(installed[0]).namelist()
    packaged = [n for n in names if n.startswith("shoe_daemon/fixture_library/")]
    for stem in LIBRARY:
        assert any(n.rsplit("/", 1)[-1].startswith(stem + ".shoelog") for n in packaged), stem
        assert any(n.rsplit("/", 1)[-1].startswith(stem + ".chk") for n in packaged), stem
    frames = [p.relative_to(ROOT / "fixtures").as_posix() for p in (ROOT / "fixtures" / "camera").rglob("*.jpg")]
    assert frames and all(f"shoe_daemon/fixture_library/{f}" in names for f in frames)
    assert not any(n.endswith(".py") for n in packaged)            # the makers stay in the repository
    licences = [n.split("/licenses/", 1)[1] for n in names if "/licenses/" in n]
    assert {"LICENSE", "THIRD_PARTY.md", "assets/cardsjs/COPYING.LESSER.txt"} <= set(licences)
    metadata = zipfile.ZipFile(installed[0]).read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    headers = metadata.decode().split("\n\n", 1)[0].splitlines()      # PEP 639, no deprecated License:
    assert "License-Expression: Apache-2.0 AND MIT AND ISC AND LGPL-3.0-or-later" in headers
    assert "License-File: LICENSE" in headers and not any(h.startswith("License: ") for h in headers)


def test_replay_list_shows_the_whole_library(installed):
    proc = shoe_daemon(installed, "replay", "--list")
    assert proc.returncode == 0, proc.stderr
    listed = sorted(line.split()[0] for line in proc.stdout.splitlines())
    assert listed == LIBRARY
    assert "unreadable" not in proc.stdout.replace("reader-unreadable-card", "").replace("camera-unreadable-card", "")
    assert "[no check file]" not in proc.stdout


def test_replay_check_passes_on_it(installed):
    proc = shoe_daemon(installed, "replay", "--check")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"{len(LIBRARY)} of {len(LIBRARY)} fixtures match their check files" in proc.stderr


def test_the_installed_floor_migrates_its_database(installed):
    """The floor's Alembic revisions are package data: the installed copy builds its schema."""
    _, venv, env, cwd = installed
    cwd.mkdir(exist_ok=True)
    code = ("import sys, shoe_daemon.floor.store as s; st = s.Store.open(sys.argv[1]); "
            "print(s.__file__, st.schema_version(), st.count('coups'))")
    out = run([str(venv / "bin" / "python"), "-c", code, f"sqlite:///{cwd / 'floor.sqlite3'}"], cwd=cwd, env=env)
    where, version, coups = out.stdout.split()
    assert where.startswith(str(venv)) and (int(version), int(coups)) == (SCHEMA_VERSION, 0)
