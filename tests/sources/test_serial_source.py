"""The serial source on real pseudo-terminals: read, unplug, replug, lights."""

import queue
import time
from types import SimpleNamespace

from shoe_daemon.core.events import Kind
from shoe_daemon.pty_line import PtyLine
from shoe_daemon.sources.base import ShoeDriver
from shoe_daemon.sources.serial_source import SerialSource
from shoe_daemon.sources.text_driver import TextLineDriver


def new_pty(link):
    # udev-style: the stable name points at the new device; only the source holds the slave,
    # opened by path as it would /dev/ttyUSB0
    line = PtyLine(link, hold_slave=False)
    line.plug()
    return line


def settings(port):
    return SimpleNamespace(
        port=port, baudrate=115200, bytesize=8, parity="N", stopbits=1, exclusive=True,
        reconnect_min=0.05, reconnect_max=0.2, text_pattern=None,
    )


def collect(q, n, timeout=5.0):
    out, deadline = [], time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        try:
            out += q.get(timeout=0.05)
        except queue.Empty:
            pass
    return out


def test_reads_unplug_and_replug(tmp_path):
    link = str(tmp_path / "dealing-shoe")
    line = new_pty(link)
    q = queue.SimpleQueue()
    src = SerialSource(settings(link), TextLineDriver(), q.put)
    src.start()
    try:
        assert collect(q, 1)[0].kind is Kind.LINK_UP
        line.write(b"AS\n9D\n")
        cards = collect(q, 2)
        assert [e.data["card"] for e in cards] == ["AS", "9D"]

        line.unplug()
        down = collect(q, 1)
        assert down[0].kind is Kind.LINK_DOWN and down[0].data["reason"]

        line.plug()  # replugged under the same name
        assert collect(q, 1)[0].kind is Kind.LINK_UP
        line.write(b"KC\n")
        assert collect(q, 1)[0].data["card"] == "KC"
        assert src.reconnects == 1 and src.connected
    finally:
        src.stop()
        line.close()


def test_missing_port_retries_until_it_appears(tmp_path):
    link = str(tmp_path / "late-shoe")
    q = queue.SimpleQueue()
    src = SerialSource(settings(link), TextLineDriver(), q.put)
    src.start()
    try:
        time.sleep(0.3)
        assert q.empty() and not src.connected and "late-shoe" in (src.last_error or "")
        line = new_pty(link)
        assert collect(q, 1)[0].kind is Kind.LINK_UP
    finally:
        src.stop()
        line.close()


class EchoLights(ShoeDriver):
    def feed(self, data, now):
        return [], b""

    def lights(self, state, now):
        return f"L:{state}\n".encode()


def test_lights_are_written_to_the_shoe(tmp_path):
    link = str(tmp_path / "shoe")
    line = new_pty(link)
    src = SerialSource(settings(link), EchoLights(None), lambda evs: None)
    src.start()
    try:
        deadline = time.monotonic() + 5
        while not src.connected and time.monotonic() < deadline:
            time.sleep(0.01)
        src.set_lights("banco")
        got = b""
        while b"\n" not in got and time.monotonic() < deadline:
            got += line.read(0.1)
        assert got == b"L:banco\n"
    finally:
        src.stop()
        line.close()
