"""Run the real daemon as a subprocess, the way systemd does, with everything in a temp dir.

    notify = NotifySocket()                                  # our stand-in for systemd's socket
    cfg = write_config(tmp / "daemon.toml", shoe_port=shoe.link, journal=tmp / "j.sqlite3",
                       mqtt_port=mosquitto.port)
    daemon = DaemonProcess(cfg, notify=notify, workdir=tmp).start()   # returns once READY=1 arrived
    ...
    assert daemon.stop() == 0                               # SIGTERM, clean exit

Readiness is the daemon's own ``READY=1`` datagram (shoe_daemon/sdnotify.py) on a socket the test
binds, so a test never sleeps for a fixed time to "let it start". A daemon that exits while being
waited for raises with its log.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


def clean_env(**extra: str) -> dict[str, str]:
    """The test's environment without any SHOE_DAEMON__ override or systemd variable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items()
           if not k.upper().startswith("SHOE_DAEMON__") and k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra)
    return env


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """``python -m shoe_daemon ARGS`` to completion (text output captured)."""
    return subprocess.run([PYTHON, "-m", "shoe_daemon", *args], cwd=ROOT, env=env or clean_env(),
                          capture_output=True, text=True, timeout=timeout)


# --------------------------------------------------------------------------- sd_notify


class NotifySocket:
    """A datagram socket standing in for systemd's NOTIFY_SOCKET; collects every notification.

    ``messages`` holds ``(time.monotonic(), {"READY": "1", "STATUS": ...})`` in arrival order.
    The socket lives in a short temp dir (AF_UNIX paths are limited to 107 bytes).
    """

    def __init__(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="e2e-sd-")
        self.path = os.path.join(self.dir, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.messages: list[tuple[float, dict[str, str]]] = []
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._read, name="notify-socket", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._closed:
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            now = time.monotonic()
            fields = dict(line.partition("=")[::2] for line in data.decode(errors="replace").splitlines() if line)
            with self._cond:
                self.messages.append((now, fields))
                self._cond.notify_all()

    def count(self, key: str, value: str | None = None) -> int:
        with self._cond:
            return sum(1 for _, f in self.messages if key in f and (value is None or f[key] == value))

    def times(self, key: str, value: str | None = None) -> list[float]:
        with self._cond:
            return [t for t, f in self.messages if key in f and (value is None or f[key] == value)]

    def wait(self, predicate: Callable[[], bool], timeout: float, poll: Callable[[], None] | None = None) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                if poll is not None:
                    poll()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(min(remaining, 0.1))
        return True

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self.sock.close()
        self._thread.join(1.0)
        shutil.rmtree(self.dir, ignore_errors=True)


# --------------------------------------------------------------------------- configuration


def write_config(
    path: str | os.PathLike,
    *,
    shoe_port: str,
    journal: str | os.PathLike,
    mqtt_port: int | None = None,
    embedded_port: int | None = None,
    table_id: str = "e2e",
    decks: int = 8,
    synchronous: str = "full",
    closing: str = "auto",
    mqtt_protocol: str = "5",
    log_level: str = "info",
    driver: str = "protocol",
    burn: str | None = None,
    api_port: int | None = None,
) -> Path:
    """A daemon configuration: Mosquitto on 127.0.0.1:``mqtt_port``, or (``mqtt_port`` None) the
    embedded broker on ``embedded_port``. The HTTP API is off unless given a port (a free one:
    the tests run in parallel); ``burn``: the table's burn rule (default: the daemon's)."""
    if mqtt_port is not None:
        mqtt = f'host = "127.0.0.1"\nport = {mqtt_port}\nprotocol = "{mqtt_protocol}"\n'
    else:
        mqtt = f"embedded_port = {embedded_port}\n"
    api = f"enabled = true\nport = {api_port}" if api_port is not None else "enabled = false"
    burn_line = f'burn = "{burn}"\n' if burn is not None else ""
    text = f"""\
[table]
id = "{table_id}"
decks = {decks}
closing = "{closing}"
{burn_line}
[shoe]
driver = "{driver}"
port = "{shoe_port}"
reconnect_min = 0.05
reconnect_max = 0.25
link_timeout = 3.0

[journal]
path = "{journal}"
synchronous = "{synchronous}"

[mqtt]
{mqtt}
[api]
{api}

[log]
level = "{log_level}"
"""
    path = Path(path)
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- the daemon


class DaemonExited(AssertionError):
    pass


class DaemonProcess:
    """``python -m shoe_daemon run --config PATH`` as a child process; stderr goes to a log file."""

    def __init__(self, config: str | os.PathLike, *, notify: NotifySocket, workdir: str | os.PathLike,
                 env: dict[str, str] | None = None):
        self.config = Path(config)
        self.notify = notify
        self.workdir = Path(workdir)
        self.env = env
        self.proc: subprocess.Popen | None = None
        self.runs = 0
        self.log_path: Path | None = None
        self.started_at: float | None = None     # time.monotonic() just before the fork
        self.ready_at: float | None = None       # time.monotonic() when READY=1 arrived

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self, *, wait_ready: bool = True, timeout: float = 30.0) -> DaemonProcess:
        assert not self.running, "already running"
        self.runs += 1
        self.log_path = self.workdir / f"daemon-{self.runs}.log"
        env = dict(self.env) if self.env is not None else clean_env()
        env["NOTIFY_SOCKET"] = self.notify.path
        self._ready_before = self.notify.count("READY", "1")
        with open(self.log_path, "wb") as log:
            self.started_at = time.monotonic()
            self.proc = subprocess.Popen(
                [PYTHON, "-m", "shoe_daemon", "run", "--config", str(self.config)],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        if wait_ready:
            self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float = 30.0) -> float:
        """Wait for this run's READY=1; returns the seconds from the fork to it."""
        exited: list[int] = []

        def poll() -> None:
            if self.proc.poll() is not None:
                exited.append(self.proc.returncode)

        ok = self.notify.wait(lambda: self.notify.count("READY", "1") > self._ready_before or bool(exited),
                              timeout, poll)
        if exited or not ok:
            what = f"exited with status {exited[0]}" if exited else f"was not ready within {timeout} s"
            raise DaemonExited(f"the daemon {what}; its log:\n{self.log_text()}")
        self.ready_at = self.notify.times("READY", "1")[-1]
        return self.ready_at - self.started_at

    def wait_exit(self, timeout: float = 30.0) -> int:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the daemon did not exit within {timeout} s; its log:\n{self.log_text()}") from None

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM (a clean stop) and the exit status."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.wait_exit(timeout)

    def kill(self) -> int:
        """SIGKILL: a crash, nothing flushed."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        return self.wait_exit(10.0)

    def log_text(self) -> str:
        if self.log_path is None:
            return ""
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def proc_status(self) -> dict[str, str]:
        """/proc/PID/status as a dict (VmRSS, VmHWM, ...)."""
        out = {}
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                out[key] = value.strip()
        return out

    def cleanup(self) -> None:
        if self.running:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
