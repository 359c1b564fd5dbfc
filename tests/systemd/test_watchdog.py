"""The watchdog rule, in-process: WATCHDOG=1 goes out from the event loop only while the shoe
reader makes progress.

"Progress" is the reader thread's loop going round (SerialSource.last_progress, set on every
iteration: at least every READ_TIMEOUT = 20 ms while the port is open, silent or not). A silent
shoe is not a stall; a reader stuck in a driver, or an event loop that no longer runs, is, and
then the pings stop and systemd restarts the service after WatchdogSec.

A frozen reader cannot be made from outside the daemon's process, so these tests drive
Daemon._watchdog directly: with a fake source whose last_progress stops advancing, with the real
SerialSource on a real pty whose driver blocks, and with a blocked event loop. The end-to-end test
(test_service_notify.py) covers the pings of a healthy daemon under its real NOTIFY_SOCKET.
"""

from __future__ import annotations

import asyncio
import threading
import time
from types import SimpleNamespace

import pytest

from shoe_daemon import service
from shoe_daemon.config import Config
from shoe_daemon.pty_line import PtyLine
from shoe_daemon.service import Daemon
from shoe_daemon.sources.base import ShoeDriver
from shoe_daemon.sources.serial_source import SerialSource

INTERVAL = 0.05   # as if WATCHDOG_USEC = 100 ms
STALL = 0.3       # WATCHDOG_STALL, shortened for the tests


class Recorder:
    """A Notifier stand-in that keeps (monotonic time, message)."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, str]] = []

    def _add(self, text: str) -> bool:
        self.sent.append((time.monotonic(), text))
        return True

    def watchdog(self) -> bool:
        return self._add("WATCHDOG=1")

    def status(self, status: str) -> bool:
        return self._add(f"STATUS={status}")

    def ready(self, status: str = "") -> bool:
        return self._add("READY=1")

    def stopping(self, status: str = "") -> bool:
        return self._add("STOPPING=1")

    def notify(self, *lines: str) -> bool:
        return self._add("\n".join(lines))

    def pings(self, since: float = 0.0, until: float = float("inf")) -> list[float]:
        return [t for t, m in self.sent if m == "WATCHDOG=1" and since <= t < until]


class FakeSource:
    def __init__(self) -> None:
        self.last_progress = time.monotonic()
        self.connected = True


@pytest.fixture
def stall(monkeypatch):
    monkeypatch.setattr(service, "WATCHDOG_STALL", STALL)
    return STALL


def make_daemon(recorder: Recorder, ready: bool = True) -> Daemon:
    daemon = Daemon(Config(), notifier=recorder)
    if ready:
        daemon.ready.set()
    return daemon


async def run_watchdog(daemon: Daemon, body) -> None:
    task = asyncio.create_task(daemon._watchdog(INTERVAL))
    try:
        await body()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def test_pings_stop_while_the_source_makes_no_progress(stall):
    rec = Recorder()
    daemon = make_daemon(rec)
    source = daemon.source = FakeSource()
    marks = {}

    async def body():
        async def advance(seconds):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                source.last_progress = time.monotonic()
                await asyncio.sleep(0.01)

        await advance(0.5)                      # healthy
        marks["frozen"] = time.monotonic()
        await asyncio.sleep(1.0)                # last_progress frozen
        marks["resumed"] = time.monotonic()
        await advance(0.5)
        marks["end"] = time.monotonic()

    asyncio.run(run_watchdog(daemon, body))
    assert len(rec.pings(until=marks["frozen"])) >= 5
    # Frozen: pings go on until WATCHDOG_STALL has passed, then none until progress resumes.
    silent = rec.pings(marks["frozen"] + stall + INTERVAL, marks["resumed"])
    assert silent == [], f"{len(silent)} pings while the source was stalled"
    assert len(rec.pings(marks["resumed"] + INTERVAL, marks["end"])) >= 4


class FreezingDriver(ShoeDriver):
    """A driver that hangs inside feed() while ``frozen`` is set: the reader thread is stuck."""

    def __init__(self) -> None:
        super().__init__(None)
        self.frozen = threading.Event()
        self.release = threading.Event()
        self.fed = 0

    def feed(self, data: bytes, now: float):
        self.fed += len(data)
        if self.frozen.is_set():
            self.release.wait(10)
        return [], b""


def test_a_frozen_reader_thread_stops_the_pings_and_a_silent_port_does_not(stall, tmp_path):
    line = PtyLine()
    port = line.plug()
    settings = SimpleNamespace(port=port, baudrate=115200, bytesize=8, parity="N", stopbits=1, exclusive=True,
                               reconnect_min=0.05, reconnect_max=0.2)
    driver = FreezingDriver()
    source = SerialSource(settings, driver, lambda events: None)
    rec = Recorder()
    daemon = make_daemon(rec)
    daemon.source = source
    marks = {}

    async def body():
        source.start()
        await asyncio.sleep(0.8)                 # port open and silent: the reader loop still turns
        assert source.connected
        marks["freeze"] = time.monotonic()
        driver.frozen.set()
        line.write(b"x")                         # the reader hangs in feed()
        await asyncio.sleep(1.0)
        assert driver.fed >= 1
        marks["release"] = time.monotonic()
        driver.release.set()
        await asyncio.sleep(0.5)
        marks["end"] = time.monotonic()

    try:
        asyncio.run(run_watchdog(daemon, body))
    finally:
        driver.release.set()
        source.stop()
        line.close()
    assert len(rec.pings(until=marks["freeze"])) >= 10, "a silent port is not a stall"
    assert rec.pings(marks["freeze"] + stall + INTERVAL, marks["release"]) == []
    assert len(rec.pings(marks["release"] + INTERVAL, marks["end"])) >= 4


def test_a_blocked_event_loop_sends_no_pings(stall):
    rec = Recorder()
    daemon = make_daemon(rec)
    source = daemon.source = FakeSource()
    keep = threading.Event()

    def progress():        # the reader thread is fine ...
        while not keep.wait(0.01):
            source.last_progress = time.monotonic()

    thread = threading.Thread(target=progress, daemon=True)
    thread.start()
    marks = {}

    async def body():
        await asyncio.sleep(0.3)
        marks["block"] = time.monotonic()
        time.sleep(0.8)    # ... but the loop is stuck (a blocking call in a coroutine)
        marks["unblock"] = time.monotonic()
        await asyncio.sleep(0.3)

    try:
        asyncio.run(run_watchdog(daemon, body))
    finally:
        keep.set()
        thread.join()
    pings = rec.pings()
    assert rec.pings(marks["block"] + 0.01, marks["unblock"]) == []
    assert max(b - a for a, b in zip(pings, pings[1:], strict=False)) >= 0.75


# ----------------------------------------------------------------------------------------------------------
# The watchdog while the daemon waits for its shoe.


def test_a_reader_waiting_for_an_unplugged_shoe_is_not_stalled(stall, tmp_path):
    settings = SimpleNamespace(port=str(tmp_path / "no-shoe-here"), baudrate=115200, bytesize=8, parity="N",
                               stopbits=1, exclusive=True, reconnect_min=1.0, reconnect_max=1.0)
    source = SerialSource(settings, FreezingDriver(), lambda events: None)
    rec = Recorder()
    daemon = make_daemon(rec)
    daemon.source = source

    async def body():
        source.start()
        await asyncio.sleep(1.5)

    try:
        asyncio.run(run_watchdog(daemon, body))
    finally:
        source.stop()
    pings = rec.pings()
    assert max(b - a for a, b in zip(pings, pings[1:], strict=False)) < 2 * INTERVAL + 0.1


def test_no_pings_before_ready(stall):
    rec = Recorder()
    daemon = make_daemon(rec, ready=False)
    source = daemon.source = FakeSource()

    async def body():
        end = time.monotonic() + 0.4
        while time.monotonic() < end:
            source.last_progress = time.monotonic()
            await asyncio.sleep(0.01)

    asyncio.run(run_watchdog(daemon, body))
    assert rec.pings() == []
