"""The shoe driver interface: bytes in, events out, no I/O of its own.

A driver is sans-I/O (like h11): the serial source owns the port and the
thread, and calls the driver with the bytes it read and the time it read them.
The same driver therefore runs unchanged under the live port, the replay of a
recorded fixture, and the unit tests.

Each driver class declares its own settings (``Settings``, a pydantic model of
the ``[shoe]`` keys that only it reads); the configuration validates them when it
loads, so a driver's bad setting is refused like any other (docs/drivers.md).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from shoe_daemon.core.events import Event
from shoe_daemon.core.outputs import Lights  # noqa: F401  (drivers map these states to their wire)


class DriverSettings(BaseModel):
    """Base of a driver's settings model: its own ``[shoe]`` keys, each with a default.

    The port keys (port, baudrate, bytesize, parity, stopbits, exclusive, reconnect_min,
    reconnect_max) and ``driver`` belong to the configuration, not to a driver: a driver
    must not declare them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class ShoeDriver(ABC):
    #: the Event.source tag of the events this driver produces
    source = "shoe"
    #: the driver's own [shoe] settings (a DriverSettings subclass); none by default
    Settings: type[DriverSettings] = DriverSettings

    def __init__(self, settings=None):
        # The validated Settings (ShoeConfig.driver_settings); None gives the defaults. Any object
        # with the same attributes does too (the whole ShoeConfig carries the driver's keys).
        self.settings = settings if settings is not None else self.Settings()

    def resume(self, recent_events: Sequence[Event]) -> None:
        """Before the port opens: the journal's last events, newest first, so that a driver whose
        shoe numbers its events can continue where the journal stopped. Default: nothing."""
        return None

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

    def standby(self) -> bool:
        """Before the port opens, for a daemon whose journal cannot be written yet: keep the link
        for the lights only, acknowledging and reporting no event, so that the shoe keeps them for
        the real start to fetch. True if this driver can (its shoe keeps what is not acknowledged);
        a driver that cannot (a shoe that sends each card once) is not started in standby."""
        return False
