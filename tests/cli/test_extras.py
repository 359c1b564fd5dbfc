"""A missing optional extra is one line naming it and an exit, never a thread traceback and a hang.

The extra's module is hidden for real: a package of the same name first on PYTHONPATH whose import
raises ModuleNotFoundError, as on a machine where `pip install shoe-daemon` left the extra out."""

from __future__ import annotations

import subprocess

import pytest

from shoe_daemon.commands.extras import EXTRAS, message
from tests.e2e.harness import PYTHON, ROOT, clean_env, free_port


def hide(tmp_path, *modules: str) -> dict[str, str]:
    shim = tmp_path / "hidden"
    for module in modules:
        (shim / module).mkdir(parents=True)
        (shim / module / "__init__.py").write_text(
            f"raise ModuleNotFoundError(\"No module named '{module}'\", name={module!r})\n")
    return clean_env(PYTHONPATH=f"{shim}:{ROOT}")


def shoe_daemon(env, *args, timeout=60) -> subprocess.CompletedProcess:
    # A hang (the old behaviour: the broker thread retrying forever) fails as TimeoutExpired.
    return subprocess.run([PYTHON, "-m", "shoe_daemon", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def assert_one_line(proc, extra: str, module: str):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"pip install 'shoe-daemon[{extra}]'" in lines[0] and f"'{extra}' extra" in lines[0], lines[0]
    assert module in lines[0] and "Traceback" not in proc.stderr


def test_the_shim_hides_the_module(tmp_path):
    proc = subprocess.run([PYTHON, "-c", "import amqtt"], env=hide(tmp_path, "amqtt"), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1 and "No module named 'amqtt'" in proc.stderr


@pytest.mark.parametrize(("module", "extra"), [("amqtt", "broker"), ("fastapi", "api")])
def test_demo_without_an_extra(tmp_path, module, extra):
    proc = shoe_daemon(hide(tmp_path, module), "demo", "--coups", "1", "--pace", "0", "--plain")
    assert_one_line(proc, extra, module)


def test_demo_without_two_extras_names_both(tmp_path):
    proc = shoe_daemon(hide(tmp_path, "amqtt", "fastapi"), "demo", "--coups", "1")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "pip install 'shoe-daemon[broker,api]'" in proc.stderr


def config(tmp_path, extra: str) -> str:
    mqtt = "" if extra == "broker" else 'host = "127.0.0.1"\nport = 1\n'
    camera = ('[camera]\nenabled = true\nsource = "/nonexistent"\nzones = [{ name = "punto", polygon = '
              '[[0, 0], [10, 0], [10, 10]] }, { name = "banco", polygon = [[20, 0], [30, 0], [30, 10]] }]\n'
              if extra == "camera" else "")
    path = tmp_path / "daemon.toml"
    path.write_text(f"""\
[table]
id = "extras"
[shoe]
port = "{tmp_path / 'no-shoe'}"
[journal]
path = "{tmp_path / 'journal.sqlite3'}"
[mqtt]
embedded_port = {free_port()}
embedded_ws_port = {free_port()}
{mqtt}[api]
enabled = {'true' if extra == 'api' else 'false'}
port = {free_port()}
{camera}""")
    return str(path)


@pytest.mark.parametrize(("module", "extra"), [("amqtt", "broker"), ("fastapi", "api"), ("cv2", "camera")])
@pytest.mark.parametrize("check", [False, True])
def test_run_without_the_extra_its_config_needs(tmp_path, module, extra, check):
    args = ["run", "--config", config(tmp_path, extra)] + (["--check-config"] if check else [])
    proc = shoe_daemon(hide(tmp_path, module), *args)
    assert_one_line(proc, extra, module)
    assert not (tmp_path / "journal.sqlite3").exists()


def test_run_without_an_extra_its_config_does_not_use(tmp_path):
    # An external broker, no API, no camera: nothing optional is needed.
    proc = shoe_daemon(hide(tmp_path, "amqtt", "fastapi", "cv2"), "run", "--config", config(tmp_path, "none"),
                       "--check-config")
    assert proc.returncode == 0 and proc.stderr.strip() == "config OK", proc.stderr


def test_every_extra_is_in_pyproject():
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(EXTRAS) <= set(declared)
    assert message("x", [("camera", "No module named 'cv2'")]) == (
        "shoe-daemon x: the camera needs the 'camera' extra (No module named 'cv2'): "
        "pip install 'shoe-daemon[camera]'")


def test_replay_without_the_camera_skips_the_frame_fixtures_and_says_why(tmp_path):
    # `make install` installs broker,api: a technician's `replay --check` there must not fail on
    # the two fixtures whose replay reads camera frames, nor pass them in silence.
    library = ROOT / "fixtures"
    env = hide(tmp_path, "cv2")
    proc = shoe_daemon(env, "replay", "--check", str(library / "camera-manual-entry.shoelog"),
                       str(library / "shoe-burn.shoelog"), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert ("camera-manual-entry: SKIPPED: its recorded camera frames: the camera needs the 'camera' extra "
            "(No module named 'cv2'): pip install 'shoe-daemon[camera]'") in proc.stderr
    assert "shoe-burn: ok" in proc.stderr and "Traceback" not in proc.stderr
    assert "1 of 2 fixtures match their check files; skipped (no 'camera' extra): camera-manual-entry" in proc.stderr
    only = shoe_daemon(env, "replay", "--check", str(library / "camera-unreadable-card.shoelog"), timeout=300)
    assert only.returncode == 2 and "SKIPPED" in only.stderr        # nothing was checked: not a pass
