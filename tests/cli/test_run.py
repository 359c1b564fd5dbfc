"""`shoe-daemon run` from a user's first try: no --config is refused; a running daemon logs its own lines,
not the embedded broker's (amqtt) or its state machine's (transitions) INFO bookkeeping."""

from __future__ import annotations

import logging
import signal
import subprocess
import time

from shoe_daemon.commands.run import CHATTY_LIBRARIES, quiet_libraries
from tests.e2e.harness import PYTHON, ROOT, clean_env, free_port, run_cli


def test_no_config_is_refused_with_one_line(tmp_path):
    started = time.monotonic()
    proc = run_cli("run", env=clean_env(HOME=str(tmp_path)))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--config PATH is required" in lines[0], proc.stderr
    assert proc.stdout == ""
    assert time.monotonic() - started < 30     # nothing was started (a daemon would run until stopped)


def test_no_config_with_check_config_is_refused_too():
    proc = run_cli("run", "--check-config")
    assert proc.returncode == 2 and "--config PATH is required" in proc.stderr


def test_run_logs_without_the_libraries_chatter(tmp_path):
    mqtt, ws, api = free_port(), free_port(), free_port()
    cfg = tmp_path / "daemon.toml"
    cfg.write_text(f"""\
[table]
id = "quiet"
[shoe]
port = "{tmp_path / 'no-shoe'}"
[journal]
path = "{tmp_path / 'journal.sqlite3'}"
[mqtt]
embedded_port = {mqtt}
embedded_ws_port = {ws}
[api]
enabled = true
port = {api}
""")
    proc = subprocess.Popen([PYTHON, "-m", "shoe_daemon", "run", "--config", str(cfg)], cwd=ROOT, env=clean_env(),
                            stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            if "connected to MQTT broker" in line:     # the broker ran and a client session went through it
                break
        proc.send_signal(signal.SIGINT)
        _, rest = proc.communicate(timeout=30)
        lines += rest.splitlines(keepends=True)
    finally:
        if proc.poll() is None:
            proc.kill()
    text = "".join(lines)
    assert "embedded MQTT broker" in text and "connected to MQTT broker" in text, text
    chatter = [ln for ln in lines if ln.split(" ", 2)[1:2] and ln.split(" ", 2)[1].split(".")[0] in CHATTY_LIBRARIES]
    assert chatter == [], "".join(chatter)


def test_debug_lets_the_libraries_speak():
    saved = {name: logging.getLogger(name).level for name in CHATTY_LIBRARIES}
    try:
        quiet_libraries("info")
        assert all(logging.getLogger(n).getEffectiveLevel() == logging.WARNING for n in CHATTY_LIBRARIES)
        quiet_libraries("debug")
        assert all(logging.getLogger(n).level == logging.NOTSET for n in CHATTY_LIBRARIES)
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)
