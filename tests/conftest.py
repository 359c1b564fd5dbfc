"""Shared fixtures: a real Mosquitto per test, and collecting MQTT subscribers.

    def test_something(mosquitto, mqtt_subscriber):
        sub = mqtt_subscriber(mosquitto.port, "baccarat/#")
        ...  # publish to 127.0.0.1:mosquitto.port
        sub.wait_for(lambda msgs: len(msgs) >= 3)

    def test_other(mosquitto_factory):
        broker = mosquitto_factory(persistence=True, websockets_port=free_port())
        broker.restart()

A missing mosquitto binary fails the test with a pointer to scripts/system-deps.sh;
it is never skipped.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))   # `tests.support` whatever pytest's rootdir/import mode

from tests.support.mosquitto import MosquittoNotInstalled, MosquittoServer, Subscriber  # noqa: E402


def _start_mosquitto(**kwargs) -> MosquittoServer:
    try:
        server = MosquittoServer(**kwargs)
    except MosquittoNotInstalled as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        return server.start()
    except Exception:
        server.cleanup()
        raise


@pytest.fixture
def mosquitto_factory():
    """``make(**MosquittoServer kwargs) -> started MosquittoServer``; all stopped after the test."""
    servers: list[MosquittoServer] = []

    def make(**kwargs) -> MosquittoServer:
        server = _start_mosquitto(**kwargs)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.cleanup()


@pytest.fixture
def mosquitto(mosquitto_factory) -> MosquittoServer:
    """A fresh anonymous Mosquitto on a free 127.0.0.1 port (``.port``, ``.restart()``, ...)."""
    return mosquitto_factory()


@pytest.fixture
def mqtt_subscriber():
    """``make(port, topics="#", **Subscriber kwargs) -> started Subscriber``; stopped after the test."""
    subs: list[Subscriber] = []

    def make(port: int, topics="#", **kwargs) -> Subscriber:
        sub = Subscriber(port, topics, **kwargs)
        subs.append(sub)
        return sub.start()

    yield make
    for sub in subs:
        try:
            sub.stop()
        except Exception:  # noqa: BLE001
            pass
