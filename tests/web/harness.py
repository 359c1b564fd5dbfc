"""What the display tests share: the page served by a FastAPI app, Chromium, a real Table's payloads.

    server = DisplayServer(config, ws_url=f"ws://127.0.0.1:{broker.websockets_port}").start()
    with browser_session() as browser:
        page = open_display(browser, server.url, width=1920, height=1080)

``DisplayServer`` mounts the page with ``shoe_daemon.web.mount`` on a bare FastAPI app run by
uvicorn in a thread, exactly as the HTTP API serves it. Chromium is Debian's (/usr/bin/chromium)
driven by the PyPI ``playwright`` package; nothing is downloaded. ``table_session`` runs a
real ``Table`` over a seeded shoe and returns its outputs, which ``publish_outputs`` sends to a
broker through the daemon's own ``MqttPublisher``.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shoe_daemon.config import Config, MqttConfig, TableConfig
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table, limits_from_config, rules_from_config
from shoe_daemon.game.cards import ALL_CODES
from tests.support.mosquitto import free_port, wait_port

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "docs" / "screenshots"
CHROMIUM = os.environ.get("SHOE_DAEMON_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
INSTALL_HINT = "install it with scripts/system-deps.sh (as root), or: apt-get install -y chromium"

# Records, in the page, when every card element enters the DOM (ms since the epoch, the
# same clock as Python's time.time()): the tests measure against the daemon's publish time.
# A card is known by its coup and its place on its side (``pos``: 0, 1, 2).
CARD_OBSERVER = """
window.__cardsSeen = [];
new MutationObserver(function (records) {
  var now = Date.now();
  records.forEach(function (r) {
    r.addedNodes.forEach(function (n) {
      if (n.nodeType !== 1) return;
      var cards = n.matches('.card[data-code]') ? [n] : Array.from(n.querySelectorAll('.card[data-code]'));
      cards.forEach(function (c) {
        window.__cardsSeen.push({coup: c.dataset.coup, code: c.dataset.code, side: c.dataset.side,
                                 pos: +c.dataset.pos, t: now});
      });
    });
  });
}).observe(document, {childList: true, subtree: true});
"""


# --------------------------------------------------------------------------- the page's server


class DisplayServer:
    """``shoe_daemon.web.mount`` on a bare FastAPI app, served by uvicorn on 127.0.0.1:``port``."""

    def __init__(self, config, *, ws_url: str | None = None, port: int | None = None) -> None:
        import uvicorn
        from fastapi import FastAPI

        from shoe_daemon import web

        self.app = FastAPI()
        web.mount(self.app, config, ws_url=ws_url)
        self.port = port or free_port()
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="off", access_log=False))
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/display/"

    def start(self) -> DisplayServer:
        self.thread = threading.Thread(target=self.server.run, name="display-http", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the display's HTTP server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(5)


# --------------------------------------------------------------------------- the browser


def chromium_path() -> str:
    path = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which("chromium")
    if not path:
        pytest.fail(f"chromium is not installed: {INSTALL_HINT}", pytrace=False)
    return path


@contextlib.contextmanager
def browser_session() -> Iterator:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the PyPI package playwright is not installed: .venv/bin/pip install playwright "
                    "(it drives /usr/bin/chromium; never run `playwright install`)", pytrace=False)

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_display(browser, url: str, *, width: int = 1920, height: int = 1080):
    """A new page at ``url`` with the card observer, waiting until the broker is connected."""
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1,
                                  reduced_motion="reduce")
    page = context.new_page()
    page.js_errors = []          # uncaught exceptions in the page: every test expects none
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
    page.add_init_script(CARD_OBSERVER)
    page.goto(url)
    page.wait_for_selector("#conn[data-state=connected]", timeout=10_000)
    return page


def conn_state(page) -> str:
    return page.get_attribute("#conn", "data-state")


# --------------------------------------------------------------------------- a real Table's payloads


def shuffled(seed: int, decks: int = 8) -> list[str]:
    cards = [c for c in ALL_CODES for _ in range(decks)]
    random.Random(seed).shuffle(cards)
    return cards


@dataclass
class Session:
    table: Table
    outputs: list[Publish] = field(default_factory=list)
    t: float = 1_718_000_000.0

    def __post_init__(self) -> None:
        self.pipeline = Pipeline(self.table)

    def feed(self, kind: Kind, source: str = "shoe", **data) -> list[Publish]:
        self.t += 2.5
        outs = [o for o in self.pipeline.feed_one(Event(self.t, kind, source, data)) if isinstance(o, Publish)]
        self.outputs += outs
        return outs

    def card(self, code: str, **data) -> list[Publish]:
        return self.feed(Kind.CARD, card=code, **data)

    def last(self, topic: str) -> dict:
        return next(o.payload for o in reversed(self.outputs) if o.topic == topic)

    def results(self) -> list[dict]:
        return [o.payload for o in self.outputs if o.topic == "coup/result"]


def display_config_for(table_id: str = "t1", port: int = 1883) -> Config:
    return Config(table=TableConfig(id=table_id, decks=8, burn="none"), mqtt=MqttConfig(host="127.0.0.1", port=port))


def table_session(config: Config, seed: int, coups: int, then_cards: int = 0) -> tuple[Session, list[str]]:
    """A real Table dealt ``coups`` settled coups from a seeded 8-deck shoe, then ``then_cards`` more
    cards; returns the session and the cards left in the shoe."""
    table = Table(rules_from_config(config.table), config.table.id, odds_alert_edge=config.table.odds_alert_edge)
    table.limits = limits_from_config(config.table.limits)
    session = Session(table)
    shoe = shuffled(seed)
    session.feed(Kind.LINK_UP, info={"model": "emulated"})
    while len(session.results()) < coups:
        session.card(shoe.pop(0))
    for _ in range(then_cards):
        session.card(shoe.pop(0))
    return session, shoe


def publish_outputs(publisher, outputs) -> None:
    for out in outputs:
        publisher.publish(out.topic, out.encode(), out.qos, out.retain)


def make_publisher(config: Config):
    from shoe_daemon.publish.mqtt import MqttPublisher

    return MqttPublisher(config.mqtt, table_id=config.table.id, version="test", reconnect_min_delay=0.1,
                         reconnect_max_delay=0.5)


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.02, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not met within {timeout} s")
        time.sleep(interval)


def wait_port_open(port: int) -> None:
    if not wait_port(port, timeout=10):
        raise RuntimeError(f"nothing listens on {port}")
