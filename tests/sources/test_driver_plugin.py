"""A third-party shoe driver, end to end: examples/shoe-driver-example installed with pip (its entry
point in the ``shoe_daemon.drivers`` group), chosen by ``[shoe] driver = "example"`` with its own
settings, run by ``python -m shoe_daemon run`` on a real pty that this test writes the vendor's lines
into, the cards checked on a real Mosquitto and in the journal. Then what the configuration refuses:
an unknown driver (the known ones listed, the installed one among them), a bad or misspelt setting
of the driver's own (named by its key)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from shoe_daemon.pty_line import PtyLine
from tests.e2e.harness import DaemonProcess, NotifySocket, clean_env, run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "shoe-driver-example"


@dataclass
class Installed:
    source: Path                 # the copy it was built from (its tests run there)
    target: Path                 # pip install --target
    env: dict[str, str]          # an environment that sees it (PYTHONPATH)


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Installed:
    """The example installed into a directory of its own; the environment that sees it."""
    base = tmp_path_factory.mktemp("plugin")
    source = base / "src"
    # A copy: a build leaves build/ and *.egg-info beside the sources.
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    target = base / "site"
    # --no-build-isolation: setuptools from this environment, nothing fetched from an index.
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(source)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any(p.name.startswith("shoe_driver_example-") for p in target.glob("*.dist-info"))
    return Installed(source, target, clean_env(PYTHONPATH=os.pathsep.join([str(ROOT), str(target)])))


def config_text(tmp_path: Path, *, port: str = "/dev/null", mqtt_port: int = 1, shoe_extra: str = "") -> str:
    return f"""\
[table]
id = "plugin"
burn = "none"
[shoe]
driver = "example"
port = "{port}"
baudrate = 9600
reconnect_min = 0.05
reconnect_max = 0.25
example_max_line = 64
example_lamps = true
{shoe_extra}
[journal]
path = "{tmp_path / 'journal.sqlite3'}"
synchronous = "normal"
[mqtt]
host = "127.0.0.1"
port = {mqtt_port}
[api]
enabled = false
"""


def run_cli_python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code], env=clean_env(), capture_output=True, text=True,
                          check=True, timeout=60)
    return proc.stdout.strip()


def read_until(line: PtyLine, wanted: bytes, timeout: float = 20.0) -> bytes:
    got = b""
    deadline = time.monotonic() + timeout
    while wanted not in got:
        assert time.monotonic() < deadline, f"{wanted!r} never came from the daemon; got {got!r}"
        got += line.read(0.1)
    return got


def test_the_installed_driver_runs_the_daemon_from_its_config(tmp_path, plugin, mosquitto, mqtt_subscriber):
    env = plugin.env
    link = str(tmp_path / "acme-shoe")
    cfg = tmp_path / "daemon.toml"
    cfg.write_text(config_text(tmp_path, port=link, mqtt_port=mosquitto.port))
    sub = mqtt_subscriber(mosquitto.port, "baccarat/plugin/#")
    notify = NotifySocket()
    daemon = DaemonProcess(cfg, notify=notify, workdir=tmp_path, env=env)
    with PtyLine(link) as line:
        try:
            daemon.start()
            read_until(line, b"HELLO?\r\n")                     # the driver's handshake reached the shoe
            line.write(b"HELLO ACME-CS2 1.4\r\n")
            for text in (b"CARD 9H 1\r\n", b"CARD 2C 2\r\n", b"CARD KS 3\r\n", b"CARD 3D 4\r\n",
                         b"ERR 12 optical sensor dirty\r\n", b"CARD 10D 5\r\n"):
                line.write(text)
                time.sleep(0.05)
            cards = sub.wait_for(lambda msgs: (found := [m.json() for m in msgs if m.topic.endswith("/coup/card")])
                                 and len(found) >= 5 and found, timeout=30)
            assert [(c["card"], c["counter"], c["side"]) for c in cards] == [
                ("9H", 1, "punto"), ("2C", 2, "banco"), ("KS", 3, "punto"), ("3D", 4, "banco"), ("TD", 5, "punto")]
            result = sub.wait_for(lambda msgs: [m.json() for m in msgs if m.topic.endswith("/coup/result")])
            assert result[0]["winner"] == "punto" and result[0]["punto"] == ["9H", "KS"]
            sources = sub.wait_for(lambda msgs: [m.json() for m in msgs if m.topic.endswith("/sources")
                                                 and m.json()["sources"].get("shoe", {}).get("link") == "up"])
            assert sources[-1]["sources"]["shoe"]["info"] == {"driver": "example", "model": "ACME-CS2",
                                                              "firmware": "1.4"}
            fault = sub.wait_for(lambda msgs: [m.json() for m in msgs if m.topic.endswith("/alerts/event")
                                               and "acme_12" in m.payload.decode()])
            assert fault[0]["alert"]["message"] == "shoe fault acme_12: optical sensor dirty"
            # example_lamps = true: the core's lights reach the shoe in the vendor's words
            assert b"LAMP " in read_until(line, b"LAMP ")
        finally:
            status = daemon.stop() if daemon.running else None
            daemon.cleanup()
            notify.close()
    assert status == 0, daemon.log_text()
    shown = run_cli("journal", "show", "--config", str(cfg), "--json", "--last", "100", env=env)
    assert shown.returncode == 0, shown.stderr
    journaled = [json.loads(line) for line in shown.stdout.splitlines() if line.strip()]
    cards = [(e["data"]["card"], e["data"]["counter"]) for e in journaled if e["kind"] == "card" and e["source"] == "shoe"]
    assert cards == [("9H", 1), ("2C", 2), ("KS", 3), ("3D", 4), ("TD", 5)], shown.stdout[-2000:]
    assert {"kind": "fault", "source": "shoe", "data": {"code": "acme_12", "text": "optical sensor dirty"}} in [
        {k: e[k] for k in ("kind", "source", "data")} for e in journaled]


def test_an_unknown_driver_is_refused_with_the_known_ones(tmp_path, plugin):
    cfg = tmp_path / "daemon.toml"
    cfg.write_text(config_text(tmp_path).replace('driver = "example"', 'driver = "exampel"'))
    proc = run_cli("run", "--config", str(cfg), "--check-config", env=plugin.env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == ("config error: shoe.driver: unknown shoe driver 'exampel'; "
                                   "known: example, protocol, text (did you mean 'example'?)")
    # without the package on the path, "example" itself is unknown (unless this environment has it installed)
    cfg.write_text(config_text(tmp_path))
    proc = run_cli("run", "--config", str(cfg), "--check-config", env=clean_env())
    known = run_cli_python("from shoe_daemon.sources import driver_names; print(' '.join(driver_names()))")
    if "example" not in known.split():
        assert proc.returncode == 2
        assert proc.stderr.strip() == ("config error: shoe.driver: unknown shoe driver 'example'; known: "
                                       + ", ".join(known.split()))
    assert not (tmp_path / "journal.sqlite3").exists()


@pytest.mark.parametrize(("extra", "message"), [
    ("example_max_line = 2", "config error: shoe.example_max_line: must be at least 16 (got 2)"),
    ('example_lamps = "sometimes"', "config error: shoe.example_lamps: must be true or false (got 'sometimes')"),
    ("example_max_lines = 64", "config error: unknown key shoe.example_max_lines (did you mean example_max_line?)"),
])
def test_a_bad_driver_setting_is_refused_by_its_key(tmp_path, plugin, extra, message):
    cfg = tmp_path / "daemon.toml"
    text = config_text(tmp_path, shoe_extra=extra)
    if extra.startswith("example_max_line ="):
        text = text.replace("example_max_line = 64\n", "")
    if extra.startswith("example_lamps"):
        text = text.replace("example_lamps = true\n", "")
    cfg.write_text(text)
    proc = run_cli("run", "--config", str(cfg), "--check-config", env=plugin.env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == message
    # the same key from the environment names the variable
    if extra.startswith("example_max_line ="):
        cfg.write_text(config_text(tmp_path))
        env = {**plugin.env, "SHOE_DAEMON__SHOE__EXAMPLE_MAX_LINE": "5000"}
        proc = run_cli("run", "--config", str(cfg), "--check-config", env=env)
        assert proc.stderr.strip() == ("config error: shoe.example_max_line: must be at most 4096 (got 5000) "
                                       "(from SHOE_DAEMON__SHOE__EXAMPLE_MAX_LINE)")


def test_the_examples_own_tests_pass(plugin):
    """The example's unit tests (a recorded fixture, sans-I/O and through shoe-daemon's replay)."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           str(plugin.source)], cwd=str(plugin.source), env=plugin.env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout and "failed" not in proc.stdout
