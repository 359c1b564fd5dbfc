"""Reopening the shoe's port on real pseudo-terminals: a port that is back is opened at once.

The shoe deals into its ring while unplugged, so the host's back-off must not outlast the
outage: after a long unplug (the doubling back-off would by then wait 4 s between tries) the
port is reopened as soon as its name exists again. Back-off only paces a port that exists but
will not open, and there a new device behind the name still ends the wait.
"""

import os
import queue
import time
from types import SimpleNamespace

import serial

from shoe_daemon.core.events import Kind
from shoe_daemon.sources.serial_source import SerialSource, open_port
from shoe_daemon.sources.text_driver import TextLineDriver
from tests.sources.test_serial_source import collect, new_pty


def settings(port, lo=0.5, hi=30.0):
    # The shipped defaults: the back-off doubles from 0.5 s to 30 s.
    return SimpleNamespace(port=port, baudrate=115200, bytesize=8, parity="N", stopbits=1, exclusive=True,
                           reconnect_min=lo, reconnect_max=hi, text_pattern=None)


def test_a_port_that_is_back_is_opened_at_once_after_a_long_unplug(tmp_path):
    link = str(tmp_path / "dealing-shoe")
    master = new_pty(link)
    q = queue.SimpleQueue()
    src = SerialSource(settings(link), TextLineDriver(), q.put)
    src.start()
    try:
        assert collect(q, 1)[0].kind is Kind.LINK_UP
        master.unplug()                      # unplugged: udev removes the name
        assert collect(q, 1)[0].kind is Kind.LINK_DOWN
        time.sleep(4.2)                      # old back-off: tries at 0, 0.5, 1.5, 3.5, next at 7.5 s
        assert q.empty() and not src.connected
        master = new_pty(link)               # plugged back
        back = time.monotonic()
        up = collect(q, 1, timeout=5.0)
        waited = time.monotonic() - back
        assert up and up[0].kind is Kind.LINK_UP
        # The doubling back-off would have waited until 7.5 s (3.3 s more); watching the name
        # reopens it within a few 20 ms looks.
        assert waited < 2.5, f"reopened {waited:.2f} s after the port came back"   # loaded machines: margin
        master.write(b"QS\n")
        assert collect(q, 1)[0].data["card"] == "QS"
    finally:
        src.stop()
        master.unplug()


def test_a_port_that_exists_but_will_not_open_is_retried_with_back_off(tmp_path):
    link = str(tmp_path / "dealing-shoe")
    not_a_tty = tmp_path / "plain-file"
    not_a_tty.write_text("")
    os.symlink(not_a_tty, link)              # exists, but pyserial cannot configure it
    attempts = []

    def opener(s):
        attempts.append(time.monotonic())
        return open_port(s)

    q = queue.SimpleQueue()
    src = SerialSource(settings(link, lo=0.2, hi=5.0), TextLineDriver(), q.put, opener=opener)
    src.start()
    master = None
    try:
        time.sleep(1.6)                      # back-off: tries at 0, 0.2, 0.6, 1.4
        assert not src.connected and src.last_error
        assert 2 <= len(attempts) <= 6, attempts  # paced, not hammered every 20 ms (80 looks)
        master = new_pty(link)               # a new device behind the same name (an atomic rename)
        back = time.monotonic()
        up = collect(q, 1, timeout=5.0)
        assert up and up[0].kind is Kind.LINK_UP
        assert time.monotonic() - back < 1.5  # next back-off step was 1.6 s away
    finally:
        src.stop()
        if master is not None:
            master.unplug()


def test_pyserial_urls_keep_the_back_off(tmp_path):
    attempts = []

    def opener(s):
        attempts.append(time.monotonic())
        raise serial.SerialException("connection refused")

    src = SerialSource(settings("socket://127.0.0.1:9", lo=0.2, hi=5.0), TextLineDriver(), lambda e: None,
                       opener=opener)
    src.start()
    try:
        time.sleep(1.0)                      # tries at 0, 0.2, 0.6, then 1.4
    finally:
        src.stop()
    assert 2 <= len(attempts) <= 4, attempts
