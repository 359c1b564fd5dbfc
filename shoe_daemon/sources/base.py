"""The shoe driver interface: bytes in, events out, no I/O of its own.

A driver is sans-I/O (like h11): the serial source owns the port and the
thread, and calls the driver with the bytes it read and the time it read them.
The same driver therefore runs unchanged under the live port, the replay of a
recorded fixture, and the unit tests.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from shoe_daemon.core.events import Event
from shoe_daemon.core.outputs import Lights  # noqa: F401  (drivers map these states to their wire)


class ShoeDriver(ABC):
    #: the Event.source tag of the events this driver produces
    source = "shoe"

    def __init__(self, settings):
        self.settings = settings

    def connected(self, now: float) -> tuple[list[Event], bytes]:
        """The port has just been opened: events to record, bytes to send (a handshake)."""
        return [], b""

    @abstractmethod
    def feed(self, data: bytes, now: float) -> tuple[list[Event], bytes]:
        """Bytes read from the port: the events they complete, and bytes to answer."""

    def tick(self, now: float) -> tuple[list[Event], bytes]:
        """Called about every 100 ms: timers (heartbeats, link timeouts, resends)."""
        return [], b""

    def disconnected(self, now: float, reason: str) -> list[Event]:
        """The port was lost (unplug, I/O error)."""
        return []

    def lights(self, state: str, now: float) -> bytes:
        """Bytes that set the dealer lights; b'' when the shoe has none."""
        return b""
