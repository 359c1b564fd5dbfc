from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shoe_daemon.recording.check import check_path
from shoe_daemon.recording.formats import find_fixtures

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "fixtures"
FIXTURES = list(find_fixtures([LIBRARY]))


@pytest.fixture
def copy_fixture(tmp_path):
    """``copy(name) -> Path``: a library fixture and its check file, copied into tmp_path."""

    def copy(name: str) -> Path:
        src = next(p for p in FIXTURES if p.name.startswith(name + ".shoelog"))
        dst = tmp_path / src.name
        shutil.copy(src, dst)
        chk = check_path(src)
        shutil.copy(chk, tmp_path / chk.name)
        return dst

    return copy
