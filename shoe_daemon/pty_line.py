"""PtyLine: the far end of a virtual serial line, on a pseudo-terminal.

The daemon opens a serial port by path with pyserial; a pty's slave is such a path. Whatever plays
the shoe (the emulator, the recording tap, the replay, a benchmark, a test writing vendor lines)
holds the master: bytes written to it are what the daemon reads, bytes the daemon writes are read
from it. This is the one pty helper of the project.

- The slave is put in raw mode (no echo, no line editing, no CR/LF translation, no flow control),
  as a USB serial adapter behaves; the master is non-blocking.
- ``link`` is a stable name, as udev gives a USB adapter (/dev/dealing-shoe): ``plug()`` points it at
  the new pty atomically, ``unplug()`` removes it (if it is still ours) and closes the pty, so the
  daemon's reads fail as they do when a cable is pulled; ``plug()`` again is the shoe coming back.
- ``hold_slave=False`` closes our copy of the slave at once: only the daemon holds it, so POLLHUP on
  the master says whether the daemon has it open (the tap uses that).
"""

from __future__ import annotations

import contextlib
import os
import select
import time
import tty


class PtyLine:
    def __init__(self, link: str | os.PathLike | None = None, *, hold_slave: bool = True):
        self.link = os.fspath(link) if link is not None else None
        self.hold_slave = hold_slave
        self.master: int | None = None
        self.slave: int | None = None
        self.path: str | None = None     # the slave's own path, /dev/pts/N

    # -- plugging ------------------------------------------------------------------------------
    @property
    def plugged(self) -> bool:
        return self.master is not None

    @property
    def name(self) -> str | None:
        """What the daemon opens: the link, or the slave's path when there is none."""
        return self.link or self.path

    def plug(self) -> str:
        """A new pty (unplugging the old one); the link points at it. Returns ``name``."""
        self.unplug()
        master, slave = os.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        self.master, self.path = master, os.ttyname(slave)
        if self.hold_slave:
            self.slave = slave
        else:
            os.close(slave)
        if self.link:
            tmp = f"{self.link}.{os.getpid()}.tmp"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            os.symlink(self.path, tmp)
            os.replace(tmp, self.link)
        return self.name

    def unplug(self) -> None:
        """Remove the link (if it still points here) and close the pty: the cable is pulled."""
        if self.link and self.path:
            with contextlib.suppress(OSError):
                if os.readlink(self.link) == self.path:
                    os.unlink(self.link)
        for fd in (self.master, self.slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.master = self.slave = None

    close = unplug

    def __enter__(self) -> PtyLine:
        if not self.plugged:
            self.plug()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- bytes ---------------------------------------------------------------------------------
    def write_some(self, data: bytes) -> int:
        """Write what the pty takes now (0 when its buffer is full); OSError when it is gone."""
        try:
            return os.write(self.master, data)
        except (BlockingIOError, InterruptedError):
            return 0

    def write(self, data: bytes, timeout: float | None = None) -> None:
        """Write all of ``data``, waiting while the pty's buffer is full (TimeoutError after ``timeout``)."""
        view = memoryview(data)
        deadline = None if timeout is None else time.monotonic() + timeout
        while view:
            n = self.write_some(view)
            if n:
                view = view[n:]
                continue
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"pty {self.path}: {len(view)} bytes not taken within {timeout} s")
            select.select([], [self.master], [], 0.05)

    def read(self, timeout: float = 0.0) -> bytes:
        """What the daemon wrote (up to 64 KiB), waiting up to ``timeout``; b'' when nothing came.
        EIO (nobody has the slave open) reads as nothing."""
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return b""
        try:
            return os.read(self.master, 65536)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            return b""
