"""Fixtures of the display tests: Chromium, a Mosquitto with websockets, a rich display, a live table.

``rich_display`` is a display page showing everything it can draw (roads, odds, the cut card,
source badges, an alert) from a real Table's retained messages, shared by a module's tests.

``live_table(coups=N, pace=S)`` is the whole chain the display sits at the end of, in one
process as in ``shoe-daemon demo``: an emulated shoe on a pty -> the real ``Daemon`` (journal,
core, ``MqttPublisher``) -> real Mosquitto (TCP for the daemon, websockets for the page) -> the
page served by ``shoe_daemon.web.mount`` -> Chromium. Every message the daemon publishes is
recorded with the time it was handed to the publisher (``LiveTable.published``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shoe_daemon.config import ApiConfig, Config, JournalConfig, MqttConfig, ShoeConfig, TableConfig
from shoe_daemon.core.events import Kind
from shoe_daemon.emulator import EmulatedShoe
from tests.support.mosquitto import MosquittoServer, free_port
from tests.web.harness import (
    SCREENSHOTS,
    DisplayServer,
    Session,
    browser_session,
    deal_stand_ins,
    display_config_for,
    make_publisher,
    open_display,
    publish_outputs,
    table_session,
)


@pytest.fixture(scope="module")
def browser():
    """Chromium that cannot see the host's fonts: every page test passes on any machine or none."""
    with browser_session(hide_host_fonts=True) as b:
        yield b


@pytest.fixture
def shots(tmp_path) -> Path:
    """Where a test's screenshots go: docs/screenshots with UPDATE_SCREENSHOTS=1, else its tmp_path."""
    out = SCREENSHOTS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture
def ws_mosquitto(mosquitto_factory) -> MosquittoServer:
    """A fresh Mosquitto with a websockets listener (``.websockets_port``)."""
    return mosquitto_factory(websockets_port=free_port())


@dataclass
class RichDisplay:
    broker: MosquittoServer
    config: Config
    server: DisplayServer
    session: Session

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.broker.websockets_port}"


@pytest.fixture(scope="module")
def rich_display():
    """A display with everything it can draw, on its own Mosquitto (the module's tests only read
    it): 30 coups of roads and odds, the cut card out, a coup of source badges (a card the camera
    read, one typed in) and an alert (a card the shoe could not read), all retained."""
    broker = MosquittoServer(websockets_port=free_port()).start()
    config = display_config_for("t1", broker.port)
    server = publisher = None
    try:
        server = DisplayServer(config, ws_url=f"ws://127.0.0.1:{broker.websockets_port}").start()
        publisher = make_publisher(config)
        session, rest = table_session(config, seed=9, coups=30)
        deal_stand_ins(session, rest, confidence=0.998)
        session.feed(Kind.CUT_CARD)
        session.feed(Kind.CARD_UNREADABLE, counter=300)
        publish_outputs(publisher, session.outputs)
        publisher.start()
        yield RichDisplay(broker, config, server, session)
    finally:
        if publisher is not None:
            publisher.stop(timeout=2)
        if server is not None:
            server.stop()
        broker.cleanup()


@dataclass
class Published:
    t: float          # time.time() when the daemon handed it to the publisher
    topic: str
    payload: dict


@dataclass
class LiveTable:
    config: Config
    broker: MosquittoServer
    daemon: object
    shoe: EmulatedShoe
    server: DisplayServer
    published: list[Published] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on(self, topic: str) -> list[Published]:
        with self.lock:
            return [p for p in self.published if p.topic == topic]

    def last(self, topic: str) -> Published | None:
        found = self.on(topic)
        return found[-1] if found else None

    def open(self, browser, width: int = 1920, height: int = 1080):
        return open_display(browser, self.server.url, width=width, height=height)


def _live_config(tmp_path, shoe_path: str, mqtt_port: int) -> Config:
    return Config(
        table=TableConfig(id="web", decks=8),
        shoe=ShoeConfig(port=shoe_path, driver="protocol", reconnect_min=0.1, reconnect_max=1.0),
        journal=JournalConfig(path=str(tmp_path / "journal.sqlite3"), synchronous="normal"),
        mqtt=MqttConfig(host="127.0.0.1", port=mqtt_port, protocol="5"),
        api=ApiConfig(enabled=False),
    )


@pytest.fixture
def live_table(tmp_path, ws_mosquitto):
    """``make(coups=None, pace=0.1, seed=1) -> LiveTable``: the daemon is running and the emulated
    shoe opened but not dealing (``table.shoe.start()`` starts it)."""
    from shoe_daemon.service import Daemon

    logging.getLogger("amqtt").setLevel(logging.WARNING)
    started: list[tuple] = []

    def make(coups: int | None = None, pace: float = 0.1, seed: int = 1) -> LiveTable:
        shoe = EmulatedShoe(decks=8, seed=seed, pace=pace, link=str(tmp_path / "dealing-shoe"), coups=coups)
        path = shoe.open()
        config = _live_config(tmp_path, path, ws_mosquitto.port)
        daemon = Daemon(config)
        server = DisplayServer(config, ws_url=f"ws://127.0.0.1:{ws_mosquitto.websockets_port}").start()
        table = LiveTable(config, ws_mosquitto, daemon, shoe, server)

        def record(out) -> None:
            with table.lock:
                table.published.append(Published(time.time(), out.topic, out.payload))

        daemon.listeners.append(record)
        loop = asyncio.new_event_loop()
        stop = asyncio.Event()
        result: dict = {}

        def run() -> None:
            asyncio.set_event_loop(loop)
            result["rc"] = loop.run_until_complete(daemon.run(stop))

        thread = threading.Thread(target=run, name="daemon", daemon=True)
        thread.start()
        started.append((table, loop, stop, thread, result))
        deadline = time.monotonic() + 10
        while daemon.publisher is None or not daemon.publisher.stats()["connected"]:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"the daemon did not connect to the broker (rc {result.get('rc')})")
            time.sleep(0.02)
        return table

    yield make
    for table, loop, stop, thread, result in started:
        table.shoe.stop()
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        table.shoe.close()
        table.server.stop()
        assert table.shoe.error is None, f"the emulated shoe failed: {table.shoe.error!r}"
        assert not thread.is_alive(), "the daemon did not stop"
        assert result.get("rc") == 0, f"the daemon exited with {result.get('rc')}"
