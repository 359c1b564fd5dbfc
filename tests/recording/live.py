"""Helpers: a live daemon (the real one, messages captured) in a thread, and a subprocess recorder."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from shoe_daemon.config import ApiConfig, Config, JournalConfig, ShoeConfig, TableConfig
from shoe_daemon.recording.replay import CaptureDaemon

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


class LiveDaemon:
    """``CaptureDaemon`` on ``port`` in a thread of its own, until ``stop()``."""

    def __init__(self, port: str, workdir: Path, *, driver: str = "protocol", **table):
        self.config = Config(
            table=TableConfig(id="fixture", **table),
            shoe=ShoeConfig(port=port, driver=driver, reconnect_min=0.05, reconnect_max=0.2),
            journal=JournalConfig(path=str(workdir / "live-journal.sqlite3"), synchronous="normal"),
            api=ApiConfig(enabled=False),
        )
        self.daemon = CaptureDaemon(self.config)
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = threading.Event()
        self.rc: int | None = None
        self._thread = threading.Thread(target=self._run, name="live-daemon", daemon=True)

    def _run(self) -> None:
        async def main():
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            self._started.set()
            return await self.daemon.run(self._stop)

        self.rc = asyncio.run(main())

    def start(self) -> LiveDaemon:
        self._thread.start()
        self._started.wait(5)
        return self

    @property
    def lines(self) -> list[str]:
        from shoe_daemon.recording.check import message_line

        return [message_line(*m) for m in self.daemon.capture.messages]

    def wait_for(self, pred, timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.daemon.capture is not None and pred(self.lines):
                return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)


def start_recorder(*args: str) -> tuple[subprocess.Popen, str]:
    """`shoe-daemon record ARGS` in a subprocess; returns it and the pty path it printed."""
    proc = subprocess.Popen([PYTHON, "-m", "shoe_daemon", "record", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    line = proc.stdout.readline().strip()
    if not line:
        proc.kill()
        raise AssertionError(f"record printed no path: {proc.stderr.read()}")
    return proc, line


TIMES = re.compile(r'"(t|since)":\d+(\.\d+)?')


def without_times(lines: list[str]) -> list[str]:
    """Message lines with every time field blanked (a live run and its replay differ only there)."""
    return [TIMES.sub(r'"\1":T', line) for line in lines]
