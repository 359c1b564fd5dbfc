"""The read-only accessors other modules use instead of private attributes."""

import math

import pytest

from firmware_protocol.connection import HostConnection, ShoeConnection
from shoe_daemon.config import Config
from shoe_daemon.service import Daemon


def test_shoe_connection_last_heartbeat():
    conn = ShoeConnection(now=0.0, boot_id=1, heartbeat_interval=1.0)
    assert conn.last_heartbeat == -math.inf
    conn.tick(0.5)                                   # the first tick sends a heartbeat
    assert conn.last_heartbeat == 0.5
    conn.tick(1.0)
    assert conn.last_heartbeat == 0.5                # not due yet
    conn.tick(1.6)
    assert conn.last_heartbeat == 1.6
    with pytest.raises(AttributeError):
        conn.last_heartbeat = 0.0                    # type: ignore[misc]


def test_host_connection_configured_link_timeout():
    assert HostConnection(link_timeout=2.5).configured_link_timeout == 2.5
    derived = HostConnection()
    assert derived.configured_link_timeout is None and derived.link_timeout > 0   # from the heartbeat


def test_daemon_loop_is_read_only_and_none_before_run():
    daemon = Daemon(Config())
    assert daemon.loop is None                       # run() sets it; replay's feeder reads it
    with pytest.raises(AttributeError):
        daemon.loop = object()                       # type: ignore[misc,assignment]
