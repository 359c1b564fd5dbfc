"""Every library fixture is made by its recipe, byte for byte, and the core's outputs while it was made are
its check file: the virtual table (emulator + the daemon's driver and core on a simulated clock) and the
replay through the real daemon agree."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from shoe_daemon.recording.check import check_path, diff, read_check
from shoe_daemon.recording.formats import read_fixture
from tests.recording.conftest import FIXTURES, LIBRARY

pytestmark = pytest.mark.timeout(120)


def load_recipes():
    spec = importlib.util.spec_from_file_location("make_fixtures", LIBRARY / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module        # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


MAKE = load_recipes()


def test_every_fixture_has_a_recipe_and_every_recipe_a_fixture():
    files = sorted(p.name for p in FIXTURES)
    assert files == sorted(r.filename for r in MAKE.RECIPES.values())
    for path in FIXTURES:
        fx = read_fixture(path)
        assert fx.header.command == f"{MAKE.COMMAND} {fx.name}"


@pytest.mark.parametrize("name", list(MAKE.RECIPES))
def test_recipe_remakes_the_fixture(name, tmp_path):
    recipe = MAKE.RECIPES[name]
    session = recipe.make(recipe)
    stored = LIBRARY / recipe.filename
    made = tmp_path / recipe.filename
    from shoe_daemon.recording.formats import write_fixture

    write_fixture(made, session.fixture)
    hint = (f"fixtures/{recipe.filename} is not what its recipe makes now. If the daemon's wire behaviour "
            f"changed on purpose, run `{MAKE.COMMAND} {name}` and review the change.")
    assert read_fixture(made).records == read_fixture(stored).records, hint
    assert made.read_bytes() == stored.read_bytes(), hint
    expected = read_check(check_path(stored))
    problem = diff(expected, session.lines, "check file (replay through the daemon)", f"{name} (core while made)")
    assert not problem, "\n" + problem
