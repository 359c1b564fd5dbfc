"""The Makefile's installs: the demo's venv holds only what the demo runs (no test tools), both venvs
are pinned by constraints.txt, and constraints.txt pins every dependency within pyproject's ranges."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
TEST_TOOLS = {"pytest", "playwright", "schemathesis", "hypothesis", "ruff"}

pytestmark = pytest.mark.skipif(not shutil.which("make"), reason="make not installed")


def dry_run(target: str) -> list[str]:
    # -B: as if every stamp were stale, so the install commands are printed; -n: run nothing.
    proc = subprocess.run(["make", "-nB", target], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def installs(lines: list[str]) -> list[str]:
    return [ln for ln in lines if re.search(r"pip install .*-e ", ln)]


def extras_of(line: str) -> set[str]:
    return set(re.search(r'\.\[([^\]]*)\]', line).group(1).split(","))


def test_demo_installs_only_what_it_runs_into_its_own_venv():
    lines = dry_run("demo")
    (install,) = installs(lines)
    assert install.startswith(".venv-demo/bin/python ") and "-c constraints.txt" in install
    extras = extras_of(install)
    assert extras == {"broker", "api", "floor"}      # the floor: demo --tables N
    requirements = [Requirement(r) for extra in extras for r in PROJECT["optional-dependencies"][extra]]
    requirements += [Requirement(r) for r in PROJECT["dependencies"]]
    assert not TEST_TOOLS & {canonicalize_name(r.name) for r in requirements}
    assert any(ln.startswith(".venv-demo/bin/shoe-daemon demo") for ln in lines)


def test_the_test_venv_keeps_everything_pinned_too():
    (install,) = installs(dry_run(".venv/.installed"))
    assert install.startswith(".venv/bin/python ") and "-c constraints.txt" in install
    assert extras_of(install) == set(PROJECT["optional-dependencies"])


def test_constraints_pin_every_dependency_within_its_range():
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line}"
            pins[canonicalize_name(name)] = version.strip()
    assert "shoe-daemon" not in pins
    wanted = [Requirement(r) for r in PROJECT["dependencies"]]
    wanted += [Requirement(r) for reqs in PROJECT["optional-dependencies"].values() for r in reqs]
    for req in wanted:
        name = canonicalize_name(req.name)
        if name in ("setuptools", "pip"):           # pip freeze leaves the installers out
            continue
        assert name in pins, f"{req.name} is not pinned in constraints.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req.name}=={pins[name]} is outside {req}"
