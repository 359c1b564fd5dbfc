"""sd_notify in a few lines: one datagram to $NOTIFY_SOCKET, no libsystemd.

Outside systemd (no NOTIFY_SOCKET) every call is a no-op, so the daemon runs
the same from a terminal, a test or the unit.
"""

from __future__ import annotations

import os
import socket

SEND_TIMEOUT = 1.0  # s


class Notifier:
    def __init__(self, address: str | None = None):
        address = address if address is not None else os.environ.get("NOTIFY_SOCKET")
        self.address = None
        if address:
            # A leading '@' is an abstract socket: the name starts with a NUL byte.
            self.address = "\0" + address[1:] if address.startswith("@") else address
        self._sock = None

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def notify(self, *lines: str) -> bool:
        if self.address is None:
            return False
        if self._sock is None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            # A datagram send blocks while the receiver's queue is full: bound it, so that a
            # stalled manager can never freeze the event loop that calls this.
            self._sock.settimeout(SEND_TIMEOUT)
        try:
            self._sock.sendto("\n".join(lines).encode(), self.address)
            return True
        except OSError:  # includes TimeoutError
            return False  # systemd gone or socket full: never fatal for the table

    def ready(self, status: str = "") -> bool:
        return self.notify("READY=1", *([f"STATUS={status}"] if status else []))

    def status(self, status: str) -> bool:
        return self.notify(f"STATUS={status}")

    def watchdog(self) -> bool:
        return self.notify("WATCHDOG=1")

    def stopping(self, status: str = "") -> bool:
        return self.notify("STOPPING=1", *([f"STATUS={status}"] if status else []))

    def watchdog_interval(self) -> float | None:
        """Half of WATCHDOG_USEC in seconds, when systemd asked for pings (as sd_watchdog_enabled:
        WATCHDOG_PID, when set, must be this process; a value that is not a positive integer
        means no watchdog)."""
        usec = os.environ.get("WATCHDOG_USEC", "").strip()
        pid = os.environ.get("WATCHDOG_PID", "").strip()
        if not usec.isdigit() or int(usec) == 0:
            return None
        if pid and pid != str(os.getpid()):
            return None
        return int(usec) / 2e6

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
