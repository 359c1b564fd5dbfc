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
import tempfile
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


# The fontconfig of a Chromium that cannot see the host's fonts: it knows one font only, a
# one-glyph placeholder (tests/web/fonts/, a "■" of Noto Sans Symbols 2 renamed "Shoe Test
# Placeholder"). Chromium needs at least one system font (with none, it refuses every web font
# too); this one has no letter or digit, so any text the pages do not draw with their own fonts
# shows as empty boxes, is measured differently, and CSS.getPlatformFontsForNode names it.
PLACEHOLDER_FONT = Path(__file__).resolve().parent / "fonts" / "placeholder.ttf"
PLACEHOLDER_FAMILY = "Shoe Test Placeholder"
HOST_FONT_DIRS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts")
# The same rendering settings whatever the host's fontconfig says (they move glyph advances by
# fractions of a pixel): Debian's defaults, stated.
FONTS_CONF = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig>
{dirs}
  <cachedir>{cache}</cachedir>
  <match target="font">
    <edit name="antialias" mode="assign"><bool>true</bool></edit>
    <edit name="hinting" mode="assign"><bool>true</bool></edit>
    <edit name="hintstyle" mode="assign"><const>hintslight</const></edit>
    <edit name="rgba" mode="assign"><const>none</const></edit>
  </match>
</fontconfig>
"""


def hidden_fonts_env(directory: Path, *, host_fonts: bool = False) -> dict[str, str]:
    """The environment of a Chromium that sees none of the host's fonts (``FONTCONFIG_FILE``), or,
    ``host_fonts=True``, the same one that also sees the host's font folders: the two differ in
    the fonts they know and in nothing else."""
    fonts = directory / "fonts"
    fonts.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(PLACEHOLDER_FONT, fonts / PLACEHOLDER_FONT.name)
    dirs = [str(fonts)] + ([d for d in HOST_FONT_DIRS] if host_fonts else [])
    conf = directory / ("host-fonts.conf" if host_fonts else "fonts.conf")
    conf.write_text(FONTS_CONF.format(dirs="\n".join(f"  <dir>{d}</dir>" for d in dirs),
                                      cache=directory / ("cache-host" if host_fonts else "cache")))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FONTCONFIG")}
    env["FONTCONFIG_FILE"] = str(conf)
    return env


@contextlib.contextmanager
def browser_session(*, hide_host_fonts: bool = False) -> Iterator:
    """Debian's Chromium; ``hide_host_fonts``: one that cannot see the host's fonts (the tests' own)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the PyPI package playwright is not installed: .venv/bin/pip install playwright "
                    "(it drives /usr/bin/chromium; never run `playwright install`)", pytrace=False)

    with contextlib.ExitStack() as stack:
        env = None
        if hide_host_fonts:
            env = hidden_fonts_env(Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="no-host-fonts-"))))
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, env=env)
        try:
            yield browser
        finally:
            browser.close()


def launch_with_host_fonts(browser, directory: Path):
    """A second Chromium of the same Playwright, that also sees the host's fonts (to compare the two)."""
    return browser.browser_type.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS,
                                       env=hidden_fonts_env(directory, host_fonts=True))


def open_display(browser, url: str, *, width: int = 1920, height: int = 1080):
    """A new page at ``url`` with the card observer, waiting until the broker is connected."""
    context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1,
                                  reduced_motion="reduce")
    page = context.new_page()
    page.js_errors = []          # uncaught exceptions in the page: every test expects none
    page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
    page.add_init_script(CARD_OBSERVER)
    page.goto(url)
    wait_fonts(page)
    page.wait_for_selector("#conn[data-state=connected]", timeout=10_000)
    return page


def wait_fonts(page) -> None:
    """The page's shipped fonts are in (common.js marks <html data-fonts>); "failed" fails the test."""
    page.wait_for_selector("html[data-fonts]", state="attached", timeout=10_000)
    assert page.get_attribute("html", "data-fonts") == "ready", "the page's own fonts did not load"


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


def camera_event(session, code: str, zone: str, confidence: float):
    value = {"A": 1, "T": 0, "J": 0, "Q": 0, "K": 0}.get(code[0]) if not code[0].isdigit() else int(code[0])
    return session.feed(Kind.CAMERA_CARD, "camera", card=code, value=value, status="ok", confidence=confidence,
                        zone=zone)


def deal_stand_ins(session, rest: list[str], confidence: float) -> list:
    """Three cards of a new coup: Punto from the shoe; Banco unread by the shoe, read by the camera;
    Punto unread by both, typed in by the dealer."""
    outs = session.card(rest.pop(0))
    outs += session.feed(Kind.CARD_UNREADABLE)
    outs += camera_event(session, rest.pop(0), "banco", confidence)
    outs += session.feed(Kind.CARD_UNREADABLE)
    outs += session.feed(Kind.CAMERA_CARD, "camera", card=None, value=None, status="unsure", confidence=0.3,
                         zone="punto")
    outs += session.feed(Kind.CARD, "api", card=rest.pop(0), user="dealer", reason="read by eye")
    return outs


def publish_outputs(publisher, outputs) -> None:
    for out in outputs:
        publisher.publish(out.topic, out.encode(), out.qos, out.retain)


def make_publisher(config: Config):
    from shoe_daemon.publish.mqtt import MqttPublisher

    return MqttPublisher(config.mqtt, table_id=config.table.id, version="test", reconnect_min_delay=0.1,
                         reconnect_max_delay=0.5)


def wait_port_open(port: int) -> None:
    if not wait_port(port, timeout=10):
        raise RuntimeError(f"nothing listens on {port}")
