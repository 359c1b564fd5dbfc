"""EmulatedShoe: a virtual dealing shoe on a pseudo-terminal.

The daemon opens ``shoe.path`` with pyserial exactly as it opens
/dev/ttyUSB0. The emulator keeps the pty master; the slave side is put in raw
mode (no echo, no line editing, no CR/LF translation, no flow control).

Unplugging. A pty cannot be unplugged in place, so the emulator does what
udev does for a USB serial adapter: the stable name is a symlink (``link``,
e.g. /tmp/shoe0, like /dev/dealing-shoe). On a disconnect the pty is closed
(the host's reads and writes fail: EOF/EIO, which pyserial reports as
SerialException) and the symlink is removed; after the outage a new pty is
opened and the symlink re-created pointing at it, and the shoe sends an
unsolicited SHOE_HELLO. The shoe itself keeps running through the outage
(dealer, ring, clock): the host re-handshakes and fetches what it missed.
When disconnect faults are enabled and no link was given, one is made in a
temporary directory so that ``path`` stays valid.
"""

from __future__ import annotations

import contextlib
import os
import select
import tempfile
import threading
import time

from shoe_daemon.emulator.dealer import Disconnect, Faults
from shoe_daemon.emulator.simulator import ShoeSimulator
from shoe_daemon.pty_line import PtyLine

POLL = 0.02
MAX_OUT_BUFFER = 64 * 1024


class EmulatedShoe:
    """A virtual shoe speaking ShoeLink v1 on a pty.

    ``EmulatedShoe(decks=8, seed=1, pace=0, faults=Faults(drop=0.01), link="/tmp/shoe0")``;
    other keyword arguments go to ShoeSimulator (stack, cut, coups, shoes, burn, scenario,
    heartbeat, window, ring_size, boot_id, identity, first_seq, clock_start_ms).

    ``start()`` runs it in a background thread (``stop()`` ends it); ``run()`` runs it in the
    calling thread until ``stop()`` or, with ``linger`` set, that long after the script ends.
    ``wait()`` blocks until the script has been dealt. ``dealt``, ``sent_events`` and
    ``mistakes`` are the ground truth.
    """

    def __init__(
        self,
        decks: int = 8,
        seed: object = 0,
        pace: float = 0.0,
        faults: Faults | None = None,
        *,
        link: str | None = None,
        linger: float | None = None,
        **options,
    ):
        self.faults = faults or Faults()
        self.simulator = ShoeSimulator(decks=decks, seed=seed, pace=pace, faults=self.faults,
                                       now=time.monotonic(), **options)
        scenario = options.get("scenario") or []
        needs_link = self.faults.disconnect > 0 or any(isinstance(a, Disconnect) for a in scenario)
        self._tmpdir: str | None = None
        if link is None and needs_link:
            self._tmpdir = tempfile.mkdtemp(prefix="shoe-emu-")
            link = os.path.join(self._tmpdir, "shoe")
        self.link = link
        self.linger = linger
        self._pty: PtyLine | None = None    # plugged, or None during an outage
        self._pending = bytearray()           # written, not yet taken by the pty
        self._stop = threading.Event()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._reconnect_at: float | None = None
        self.path: str | None = None
        self.disconnects = 0
        self.error: BaseException | None = None

    # -- ground truth -----------------------------------------------------------------------------
    @property
    def dealt(self):
        return self.simulator.dealt

    @property
    def sent_events(self):
        return self.simulator.sent_events

    @property
    def mistakes(self):
        return self.simulator.mistakes

    @property
    def connected(self) -> bool:
        return self._pty is not None

    # -- lifecycle ----------------------------------------------------------------------------------
    def open(self) -> str:
        """Create the pty (and the link); returns the path a host opens. Idempotent."""
        if self._pty is None and self._reconnect_at is None:
            self._plug(time.monotonic())
        return self.path

    def start(self) -> EmulatedShoe:
        self.open()
        self._thread = threading.Thread(target=self._run_safely, name="emulated-shoe", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        self.close()

    def close(self) -> None:
        self._unplug()
        if self._tmpdir is not None:
            with contextlib.suppress(OSError):
                os.rmdir(self._tmpdir)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the script is done (True) or the timeout passes (False)."""
        return self._done.wait(timeout)

    def inject(self, *actions) -> None:
        """Run these actions (messages, Pause, Disconnect, Noise) next, from any thread."""
        self._done.clear()
        self.simulator.inject(*actions)

    def __enter__(self) -> EmulatedShoe:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- the loop ---------------------------------------------------------------------------------------
    def _run_safely(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # surfaced to tests through .error
            self.error = exc
            self._done.set()
            raise

    def run(self) -> None:
        self.open()
        sim = self.simulator
        done_at: float | None = None
        while not self._stop.is_set():
            now = time.monotonic()
            pty = self._pty
            if pty is None and self._reconnect_at is not None and now >= self._reconnect_at:
                self._plug(now)
                pty = self._pty
            timeout = max(0.0, min(POLL, sim.next_deadline() - now))
            if pty is not None:
                wlist = [pty.master] if self._pending else []
                try:
                    readable, _, _ = select.select([pty.master], wlist, [], timeout)
                except (OSError, ValueError):
                    readable = []
                if readable:
                    try:
                        data = os.read(pty.master, 4096)
                    except (BlockingIOError, InterruptedError):
                        data = b""
                    except OSError:
                        data = b""  # EIO: nobody has the slave open right now
                    if data:
                        sim.receive_data(data, time.monotonic())
            else:
                self._stop.wait(timeout)
            now = time.monotonic()
            result = sim.step(now)
            if self._pty is not None and result.data:
                self._write(result.data)
            elif self._pty is not None and self._pending:
                self._write(b"")
            if result.disconnect is not None:
                self._unplug()
                self.disconnects += 1
                self._reconnect_at = now + result.disconnect
            if sim.done:
                if not self._done.is_set():
                    self._done.set()
                    done_at = now
                if self.linger is not None and done_at is not None and now - done_at >= self.linger:
                    break
            else:
                self._done.clear()
                done_at = None

    def _write(self, data: bytes) -> None:
        pending = self._pending
        pending += data
        if len(pending) > MAX_OUT_BUFFER:
            # Nobody is reading: a UART would have lost these bytes too.
            del pending[: len(pending) - MAX_OUT_BUFFER]
        try:
            n = self._pty.write_some(pending)
        except OSError:
            pending.clear()
            return
        del pending[:n]

    # -- plugging -----------------------------------------------------------------------------------------
    def _plug(self, now: float) -> None:
        self._pty = PtyLine(self.link)
        self._pending.clear()
        self._reconnect_at = None
        self.path = self._pty.plug()
        self.simulator.connected(now)

    def _unplug(self) -> None:
        pty, self._pty = self._pty, None
        if pty is not None:
            pty.unplug()
