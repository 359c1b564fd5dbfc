"""The serial shoe source: owns the port and a reader thread, feeds a driver.

pyserial is blocking, so one thread reads the port; everything it learns goes
out through ``on_events`` (the service hands them to the asyncio loop). On an
unplug or I/O error it reports link down and reopens the port, and on reconnect
lets the driver re-handshake (the protocol driver then asks the shoe to resend
whatever was missed).

Reopening: a shoe keeps dealing into its ring while unplugged, and the ring is
finite (64 events, about a minute of play), so every second the host stays away
after the port is back can cost a card. While a device path is absent the
source watches it (a stat every 20 ms) and opens it the moment it exists again;
the doubling back-off (``reconnect_min`` .. ``reconnect_max``) only paces
retries of a port that exists but will not open (busy, permissions) and of
pyserial URLs, and even then a new device behind the name is tried at once.
"""

from __future__ import annotations

import collections
import logging
import os
import queue
import threading
import time
from collections.abc import Callable

import serial

from shoe_daemon.core.events import Event
from shoe_daemon.sources.base import ShoeDriver

log = logging.getLogger(__name__)

TICK = 0.1          # driver timers run at least this often
FLOOD_CHUNK = 4096  # a read this large means the line is flooded ...
FLOOD_PAUSE = 0.001  # ... and the reader pauses this long after it (at most ~4 MB/s read)
READ_TIMEOUT = 0.02
WATCH = 0.02        # how often an absent port's path is looked at
LIGHTS_PENDING = 64  # light changes waiting for the reader thread, at most


def open_port(settings) -> serial.SerialBase:
    """Open a device path or a pyserial URL (socket://, rfc2217://, loop://)."""
    kwargs = dict(
        baudrate=settings.baudrate,
        bytesize=settings.bytesize,
        parity=settings.parity,
        stopbits=settings.stopbits,
        timeout=READ_TIMEOUT,
        write_timeout=1.0,
    )
    if "://" not in settings.port:
        # Exclusive access (flock + TIOCEXCL) only exists for real device nodes.
        kwargs["exclusive"] = getattr(settings, "exclusive", True)
    return serial.serial_for_url(settings.port, **kwargs)


def port_identity(path: str) -> tuple[int, int, int] | None:
    """Which device a path names now (its device number and inode), None when absent.
    pyserial URLs have no path: None."""
    if "://" in path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_rdev, st.st_dev, st.st_ino)


class SerialSource:
    def __init__(
        self,
        settings,
        driver: ShoeDriver,
        on_events: Callable[[list[Event]], None],
        *,
        clock: Callable[[], float] = time.time,
        opener: Callable[[object], serial.SerialBase] = open_port,
    ):
        self.settings = settings
        self.driver = driver
        self._on_events = on_events
        self._clock = clock
        self._opener = opener
        self._writes: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Light states asked for, in order: every change reaches the shoe, as the core made it (a
        # replay then sends the same commands as the live run); bounded, the oldest dropped.
        self._lights: collections.deque[str] = collections.deque(maxlen=LIGHTS_PENDING)
        self._lights_lock = threading.Lock()
        self.port: serial.SerialBase | None = None
        # Figures for status, metrics and the watchdog.
        self.connected = False
        self.reconnects = 0
        self.bytes_in = 0
        self.last_error: str | None = None
        self.last_progress = time.monotonic()

    # -- control, from any thread -------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="shoe-reader", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._close()

    def set_lights(self, state: str) -> None:
        """Ask for the dealer lights; the reader thread asks the driver (drivers are not
        thread-safe) and writes the command, every change in order."""
        with self._lights_lock:
            self._lights.append(state)

    # -- the reader thread -----------------------------------------------------------
    def _run(self) -> None:
        backoff = self.settings.reconnect_min
        next_tick = 0.0
        while not self._stop.is_set():
            self.last_progress = time.monotonic()
            if self.port is None:
                seen = port_identity(self.settings.port)
                if not self._try_open():
                    if seen is None and "://" not in self.settings.port:
                        self._wait_until_present()   # absent: no back-off, open when it is back
                    else:
                        self._wait(backoff, seen)
                        backoff = min(backoff * 2, self.settings.reconnect_max)
                    continue
                backoff = self.settings.reconnect_min
            try:
                self._flush_writes()
                waiting = self.port.in_waiting
                data = self.port.read(max(1, min(waiting, 4096)))
                if not waiting and data:
                    # That read waited for the first byte; the rest of its frame is usually here
                    # by now: take it too, so the frame is decoded in this turn, not the next.
                    more = self.port.in_waiting
                    if more:
                        data += self.port.read(min(more, 4095))
            except (serial.SerialException, OSError) as exc:
                self._lost(str(exc) or type(exc).__name__)
                continue
            now = self._clock()
            if data:
                self.bytes_in += len(data)
                self._emit(*self.driver.feed(data, now))
                if len(data) >= FLOOD_CHUNK:
                    # A full read: bytes arrive faster than any shoe sends them (4 MB/s and more,
                    # junk on the line). Pause a moment so that this thread, busy parsing, leaves
                    # the interpreter to the event loop (the API, the broker) now and then.
                    self._stop.wait(FLOOD_PAUSE)
            if now >= next_tick:
                next_tick = now + TICK
                self._emit(*self.driver.tick(now))

    def _wait(self, seconds: float, seen: tuple[int, int, int] | None = None) -> None:
        """Sleep out a back-off in short steps: a waiting reader is still making progress
        (the watchdog must not restart a daemon whose shoe is merely unplugged). A device
        path that now names another device than when the open failed ends the wait."""
        deadline = time.monotonic() + seconds
        watch = "://" not in self.settings.port
        while not self._stop.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._stop.wait(min(remaining, WATCH if watch else TICK))
            self.last_progress = time.monotonic()
            if watch and port_identity(self.settings.port) not in (seen, None):
                return

    def _wait_until_present(self) -> None:
        """Watch an absent device path and return as soon as it exists (or on stop)."""
        while not self._stop.is_set() and port_identity(self.settings.port) is None:
            self._stop.wait(WATCH)
            self.last_progress = time.monotonic()

    def _try_open(self) -> bool:
        try:
            self.port = self._opener(self.settings)
        except (serial.SerialException, OSError, ValueError) as exc:
            message = str(exc)
            if message != self.last_error:
                log.warning("shoe port %s: %s (retrying)", self.settings.port, message)
            self.last_error = message
            return False
        log.info("shoe port %s open", self.settings.port)
        self.connected = True
        self.last_error = None
        self._emit(*self.driver.connected(self._clock()))
        return True

    def _lost(self, reason: str) -> None:
        log.warning("shoe port %s lost: %s", self.settings.port, reason)
        self._close()
        self.reconnects += 1
        self.last_error = reason
        self._emit(self.driver.disconnected(self._clock(), reason), b"")

    def _close(self) -> None:
        port, self.port = self.port, None
        self.connected = False
        if port is not None:
            try:
                port.close()
            except (serial.SerialException, OSError):
                pass

    def _emit(self, events: list[Event], reply: bytes) -> None:
        if reply:
            self._writes.put(reply)
        if events:
            self._on_events(events)

    def _flush_writes(self) -> None:
        with self._lights_lock:
            states = list(self._lights)
            self._lights.clear()
        for state in states:
            data = self.driver.lights(state, self._clock())
            if data:
                self._writes.put(data)
        while True:
            try:
                data = self._writes.get_nowait()
            except queue.Empty:
                return
            self.port.write(data)
