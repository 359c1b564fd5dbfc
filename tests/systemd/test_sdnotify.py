"""shoe_daemon.sdnotify.Notifier against real AF_UNIX datagram sockets, as systemd binds them."""

from __future__ import annotations

import os
import socket
import time
import uuid

import pytest

from shoe_daemon import sdnotify
from shoe_daemon.sdnotify import Notifier

from .helpers import NotifyListener


@pytest.fixture
def listener():
    with NotifyListener() as lst:
        yield lst


def test_outside_systemd_every_call_is_a_no_op(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    n = Notifier()
    assert not n.enabled
    assert n.ready("x") is False and n.status("x") is False and n.watchdog() is False and n.stopping() is False
    assert n.watchdog_interval() is None


def test_datagrams_on_a_path_socket(listener, monkeypatch):
    monkeypatch.setenv("NOTIFY_SOCKET", listener.path)
    n = Notifier()
    assert n.status("verifying journal")
    assert n.ready("dealing: table t1")
    assert n.watchdog()
    assert n.stopping("shutting down")
    got = listener.wait_for(lambda msgs: len(msgs) >= 4 and msgs, what="4 datagrams")
    assert listener.raw == [b"STATUS=verifying journal", b"READY=1\nSTATUS=dealing: table t1",
                            b"WATCHDOG=1", b"STOPPING=1\nSTATUS=shutting down"]
    # systemd accepts them (NotifyAccess=main) because they come from the main pid: this one.
    assert {m.pid for m in got} == {os.getpid()}
    n.close()


def test_abstract_socket_address():
    # NOTIFY_SOCKET=@name: an abstract socket (systemd uses these in containers and for tests).
    name = f"shoe-daemon-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(2)
        n = Notifier("@" + name)
        assert n.ready()
        assert sock.recv(100) == b"READY=1"
        n.close()


def test_no_listener_is_not_an_error(tmp_path):
    n = Notifier(str(tmp_path / "nobody-here"))
    assert n.enabled
    assert n.watchdog() is False   # ENOENT, swallowed: the table never stops for systemd


def test_a_full_socket_never_blocks_the_caller(monkeypatch):
    # Nobody reads: the receiver's queue fills up, and then a blocking send would hang the
    # event loop forever. The send gives up after SEND_TIMEOUT instead.
    monkeypatch.setattr(sdnotify, "SEND_TIMEOUT", 0.2)
    path = f"/tmp/sdn-full-{uuid.uuid4().hex[:8]}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(path)
        try:
            n = Notifier(path)
            started = time.monotonic()
            for _ in range(100_000):
                if not n.watchdog():
                    break
            else:
                pytest.fail("100000 datagrams queued: the socket never filled up")
            assert time.monotonic() - started < 10
            n.close()
        finally:
            os.unlink(path)


@pytest.mark.parametrize(
    ("usec", "pid", "expected"),
    [
        ("400000", None, 0.2),            # systemd's WATCHDOG_USEC, no WATCHDOG_PID: for us
        ("30000000", "self", 15.0),       # WatchdogSec=30s, WATCHDOG_PID = this process
        ("400000", "1", None),            # meant for another process (we are a child of it)
        (None, None, None),               # no watchdog
        ("0", None, None),
        ("", None, None),
        ("soon", None, None),             # garbage is no watchdog, not a crash at start-up
        ("-5", None, None),
    ],
)
def test_watchdog_interval(monkeypatch, usec, pid, expected):
    for key, value in (("WATCHDOG_USEC", usec), ("WATCHDOG_PID", str(os.getpid()) if pid == "self" else pid)):
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    assert Notifier("/nonexistent").watchdog_interval() == expected
