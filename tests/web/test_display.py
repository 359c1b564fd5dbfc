"""The browser scoreboard in Chromium, against real brokers.

Live tests: the emulated shoe -> the real Daemon -> Mosquitto (websockets listener) -> the page.
Rendering tests: a real Table's payloads, published by the daemon's own MqttPublisher, drawn by
the page and checked element by element; they also take the screenshots of docs/display.md
(written to docs/screenshots/ with UPDATE_SCREENSHOTS=1, to a temp dir otherwise).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from shoe_daemon.core.events import Kind
from shoe_daemon.publish.broker import EmbeddedBroker
from tests.support.mosquitto import free_port
from tests.support.waiting import wait_until
from tests.web.harness import (
    DisplayServer,
    conn_state,
    deal_stand_ins,
    display_config_for,
    make_publisher,
    open_display,
    publish_outputs,
    table_session,
)

LATENCY_BOUND = 1.0   # seconds from the daemon publishing coup/card to the card in the page's DOM
SCREENSHOT_MAX = 500 * 1024

CONN_OBSERVER = """
window.__connStates = [document.querySelector('#conn').dataset.state];
new MutationObserver(function () {
  window.__connStates.push(document.querySelector('#conn').dataset.state);
}).observe(document.querySelector('#conn'), {attributes: true, attributeFilter: ['data-state']});
"""


PACKET_LOG = """
window.__packets = [];
['packetsend', 'packetreceive'].forEach(function (ev) {
  window.scoreboard.client.on(ev, function (p) {
    window.__packets.push([Date.now(), (ev === 'packetsend' ? 'send ' : 'recv ') + p.cmd + (p.topic ? ' ' + p.topic : '')]);
  });
});
['connect', 'reconnect', 'close', 'offline'].forEach(function (ev) {
  window.scoreboard.client.on(ev, function () { window.__packets.push([Date.now(), 'event ' + ev]); });
});
"""


def coup_id(payload: dict) -> str:
    return f"{payload['shoe']}-{payload['coup']}"


def card_keys(cards) -> list[tuple[str, int]]:
    """(coup id, place on its side) of each coup/card in publication order: how the page knows a card."""
    keys, count = [], {}
    for p in cards:
        k = (coup_id(p.payload), p.payload["side"])
        keys.append((k[0], count.get(k, 0)))
        count[k] = count.get(k, 0) + 1
    return keys


def dom_cards(page, side: str) -> list[str]:
    return page.eval_on_selector_all(f"#cards-{side} .card", "els => els.map(e => e.dataset.code)")


def count(page, selector: str) -> int:
    return page.eval_on_selector_all(selector, "els => els.length")


def wait_roads(page, seq: int) -> None:
    page.wait_for_function("seq => document.querySelector('#roads').dataset.seq === String(seq)", arg=seq,
                           timeout=10_000)


def assert_roads_drawn(page, roads: dict) -> None:
    """Every road's cells in the DOM: one element per cell of the payload."""
    assert count(page, "#bead-plate .cell") == len(roads["bead_plate"]["cells"])
    assert count(page, "#big-road .cell") == len(roads["big_road"]["cells"])
    for name, dom_id in (("big_eye_boy", "big-eye-boy"), ("small_road", "small-road"), ("cockroach_pig", "cockroach-pig")):
        assert count(page, f"#{dom_id} .cell") == len(roads[name]["cells"]), name
        reds = sum(1 for c in roads[name]["cells"] if c["color"] == "red")
        assert count(page, f"#{dom_id} .cell.red") == reds, name
    ties = sum(1 for c in roads["big_road"]["cells"] if c["ties"])
    assert count(page, "#big-road .cell .tie-slash") == ties
    cells = roads["big_road"]["cells"]
    pairs = sum(c["banco_pair"] for c in cells) + sum(c["punto_pair"] for c in cells)
    assert count(page, "#big-road .cell .dot") == pairs


def assert_coup_drawn(page, current: dict) -> None:
    for side in ("punto", "banco"):
        assert dom_cards(page, side) == current[side]
        shown = page.inner_text(f"#total-{side}")
        assert shown == (str(current[f"{side}_total"]) if current[side] else "")


# --------------------------------------------------------------------------- live: daemon + emulated shoe


def test_a_dealt_card_shows_within_a_second(live_table, browser):
    table = live_table(coups=4, pace=0.12)
    page = table.open(browser)
    table.shoe.start()
    wait_until(lambda: len(table.on("coup/result")) >= 4, timeout=30, what="4 coups settled")
    dealt = [p for p in table.on("coup/card") if p.payload["role"] == "coup"]
    assert len(dealt) >= 16
    keys = card_keys(dealt)
    seen: dict[tuple[str, str, int], dict] = {}

    def all_seen() -> bool:
        for s in page.evaluate("window.__cardsSeen"):
            seen.setdefault((s["coup"], s["side"], s["pos"]), s)
        return all((k[0], p.payload["side"], k[1]) in seen for k, p in zip(keys, dealt, strict=True))

    wait_until(all_seen, timeout=5, what="every dealt card in the DOM")
    latencies = []
    for k, p in zip(keys, dealt, strict=True):
        s = seen[(k[0], p.payload["side"], k[1])]
        assert s["code"] == p.payload["card"]
        latencies.append(s["t"] / 1000.0 - p.t)
    ms = sorted(x * 1000 for x in latencies)
    print(f"\ncard -> DOM latency over {len(ms)} cards: median {statistics.median(ms):.1f} ms, "
          f"p90 {ms[int(0.9 * (len(ms) - 1))]:.1f} ms, max {ms[-1]:.1f} ms")
    assert max(latencies) < LATENCY_BOUND
    assert page.js_errors == []


def test_the_roads_have_one_element_per_cell_of_the_last_payload(live_table, browser):
    table = live_table(coups=7, pace=0.04, seed=11)
    page = table.open(browser, 800, 480)
    table.shoe.start()
    wait_until(lambda: len(table.on("coup/result")) >= 7, timeout=30, what="7 coups settled")
    time.sleep(0.3)   # the last coup's outputs (roads, odds, shoe) follow its result
    roads = table.last("roads").payload
    assert roads["coups"] == 7
    wait_roads(page, roads["seq"])
    assert count(page, "#big-road .cell") == len(roads["big_road"]["cells"]) > 0
    assert_roads_drawn(page, roads)
    assert_coup_drawn(page, table.last("coup/current").payload)
    stats = table.last("stats").payload
    assert page.inner_text("#n-coups") == str(stats["coups"]) == "7"
    assert [page.inner_text(f"#n-{w}") for w in ("banco", "punto", "tie")] == [
        str(stats["banco"]), str(stats["punto"]), str(stats["tie"])]
    assert page.inner_text("#cards-left") == str(table.last("shoe").payload["remaining"])
    assert page.js_errors == []


def test_the_page_recovers_after_a_broker_restart_without_reloading(live_table, browser):
    table = live_table(coups=None, pace=0.15, seed=5)
    page = table.open(browser)
    page.evaluate("window.__sameDocument = true")
    page.evaluate(CONN_OBSERVER)
    page.evaluate(PACKET_LOG)
    table.shoe.start()
    wait_until(lambda: len(page.evaluate("window.__cardsSeen")) >= 3, timeout=15, what="cards before the restart")

    table.broker.restart()
    restarted = time.time()
    page.wait_for_function("window.__connStates.includes('reconnecting')", timeout=10_000)
    page.wait_for_selector("#conn[data-state=connected]", timeout=15_000)
    assert page.evaluate("window.__sameDocument") is True    # no reload
    # Subscribed again: from now on every card reaches the page (cards the daemon sent before
    # that are not events the page can get, only their coup's retained state).
    page.wait_for_function("t => window.__packets.some(p => p[0] > t && p[1] === 'recv suback')",
                           arg=restarted * 1000, timeout=10_000)
    subscribed = time.time()

    after = wait_until(
        lambda: next((p for p in table.on("coup/card") if p.t > subscribed and p.payload["role"] == "coup"), None),
        timeout=15, what="a card dealt after the restart")
    dealt = [p for p in table.on("coup/card") if p.payload["role"] == "coup"]
    cid, pos = card_keys(dealt)[dealt.index(after)]
    key = {"coup": cid, "side": after.payload["side"], "pos": pos}
    try:
        page.wait_for_function(
            "k => window.__cardsSeen.some(s => s.coup === k.coup && s.side === k.side && s.pos === k.pos)",
            arg=key, timeout=10_000)
    except Exception as exc:
        packets = "\n".join(f"  {t / 1000.0:.3f} {what}" for t, what in page.evaluate("window.__packets")[-40:])
        raise AssertionError(
            f"{key} ({after.payload['card']}, published {after.t:.3f}, restart done {restarted:.3f}, "
            f"page subscribed {subscribed:.3f}) not shown;\n"
            f"connection states {page.evaluate('window.__connStates')}; last cards seen "
            f"{page.evaluate('window.__cardsSeen.slice(-3)')}\npublisher {table.daemon.publisher.stats()}\n"
            f"page packets:\n{packets}\nmosquitto:\n{table.broker.log_text()[-2500:]}") from exc
    seen = next(s for s in page.evaluate("window.__cardsSeen")
                if (s["coup"], s["side"], s["pos"]) == (key["coup"], key["side"], key["pos"]))
    assert seen["code"] == after.payload["card"]
    states = page.evaluate("window.__connStates")
    print(f"\nconnection states through the restart: {states}; card after restart shown "
          f"{seen['t'] / 1000.0 - after.t:.3f} s after its publication")
    assert conn_state(page) == "connected"
    assert page.js_errors == []


# --------------------------------------------------------------------------- rendering + screenshots


def _shot(page, directory: Path, name: str) -> Path:
    path = directory / name
    page.screenshot(path=str(path))
    size = path.stat().st_size
    assert 10_000 < size < SCREENSHOT_MAX, f"{name}: {size} bytes"
    return path


def test_rendering_mid_shoe_and_screenshots(ws_mosquitto, browser, shots):
    config = display_config_for("t1", ws_mosquitto.port)
    server = DisplayServer(config, ws_url=f"ws://127.0.0.1:{ws_mosquitto.websockets_port}").start()
    publisher = make_publisher(config)
    try:
        # 31 coups of a seeded shoe: coup 31 is Punto 7 (TS QH 7D) over Banco 4 (6C 6S 2C), a Banco pair.
        session, rest = table_session(config, seed=9, coups=31)
        publish_outputs(publisher, session.outputs)
        publisher.start()
        big = open_display(browser, server.url + "?profile=pit", width=1920, height=1080)
        wait_roads(big, session.last("roads")["seq"])
        current = session.last("coup/current")
        result = session.results()[-1]
        assert (result["winner"], result["banco_pair"], current["coup"]) == ("punto", True, 31)
        assert_coup_drawn(big, current)
        assert_roads_drawn(big, session.last("roads"))
        assert big.inner_text("#result-main") == "PUNTO WINS 7 TO 4"
        assert "BANCO PAIR" in big.inner_text("#result-chips")
        assert big.get_attribute("#result-bar", "data-winner") == "punto"
        assert "win" in big.get_attribute("#side-punto", "class")
        assert big.is_hidden("#last-hand") and big.is_hidden("#alert-banner") and big.is_hidden("#unavailable")
        odds = session.last("odds")
        assert big.inner_text("#bet-banco .prob") == f"{odds['probability']['banco'] * 100:.2f}%"
        assert big.inner_text("#bet-tie .edge") == f"{odds['house_edge']['tie'] * 100:.2f}%"
        assert big.inner_text("#bet-banco .lim") == "10 – 10K"
        assert big.inner_text("#bet-tie .lim") == "5 – 1,000"
        assert big.inner_text("#coup-no") == "31" and big.inner_text("#table-id") == "T1"
        _shot(big, shots, "display-1920x1080.png")

        # Coup 32 being dealt: the dealer's screen shows the cards, the totals, the side the next card goes to.
        dealing = []
        for _ in range(3):
            dealing += session.card(rest.pop(0))
        publish_outputs(publisher, dealing)
        current = session.last("coup/current")
        assert current["coup"] == 32 and current["next_side"] is not None
        small = open_display(browser, server.url + "?profile=pit", width=800, height=480)
        small.wait_for_function("n => document.querySelectorAll('#coup .card').length === n", arg=3, timeout=5000)
        for page in (big, small):   # the big screen follows live, the small one drew from the retained state
            assert_coup_drawn(page, current)
            assert "next" in page.get_attribute(f"#side-{current['next_side']}", "class")
        assert small.get_attribute("#coup", "data-state") == "dealing"
        _shot(small, shots, "display-800x480.png")

        # The cut card is out: coup 32 ends, coup 33 is the last hand; then the shoe cannot read a card.
        more = session.feed(Kind.CUT_CARD)
        while session.last("coup/current")["coup"] == 32:
            more += session.card(rest.pop(0))
        more += session.card(rest.pop(0))
        more += session.feed(Kind.CARD_UNREADABLE, counter=300)
        publish_outputs(publisher, more)
        alerts = session.last("alerts/active")["alerts"]
        assert [a["kind"] for a in alerts] == ["card_unreadable"]
        for page in (big, small):
            page.wait_for_selector("#alert-banner:not([hidden])", timeout=5000)
            assert page.is_visible("#last-hand")
            assert page.inner_text("#last-hand").upper() == "LAST HAND"
            assert page.get_attribute("#alert-banner", "data-severity") == alerts[0]["severity"]
            assert page.inner_text("#alert-message") == alerts[0]["message"]
            assert page.inner_text("#alert-kind") == "CARD UNREADABLE"
            assert_coup_drawn(page, session.last("coup/current"))
        _shot(small, shots, "display-800x480-alert.png")
        assert big.js_errors == [] and small.js_errors == []
    finally:
        publisher.stop(timeout=2)
        server.stop()


def finish_coup(session, rest: list[str]) -> list:
    outs = []
    while not session.last("coup/current")["settled"]:
        outs += session.card(rest.pop(0))
    return outs


def shown_sources(page, side: str) -> list[tuple]:
    """(card code, badge text or None, badge title or None) of each card drawn on ``side``."""
    return [tuple(x) for x in page.eval_on_selector_all(
        f"#cards-{side} .card-wrap:not(.empty)",
        "ws => ws.map(w => { const b = w.querySelector('.src-badge');"
        " return [w.querySelector('.card').dataset.code, b && b.textContent, b && b.title]; })")]


def assert_sources_drawn(page, current: dict) -> None:
    """A badge on every card the shoe did not read (CAM and the confidence, or MANUAL), none on the shoe's."""
    for side in ("punto", "banco"):
        shown = shown_sources(page, side)
        assert [code for code, _, _ in shown] == current[side]
        for (code, text, title), src in zip(shown, current["card_sources"][side], strict=True):
            if src["source"] == "shoe":
                assert text is None, code
            elif src["source"] == "camera":
                assert text == f"CAM {src['confidence'] * 100:.1f}%" and "camera" in title, code
            else:
                assert text == "MANUAL" and "person" in title, code


def assert_badges_readable(page) -> None:
    """Every badge is at least 10 px high text, inside its side's box and its card's width give or take."""
    for box in page.eval_on_selector_all(".src-badge", """bs => bs.map(b => {
        const r = b.getBoundingClientRect(), s = b.closest('.side').getBoundingClientRect();
        const c = b.parentElement.getBoundingClientRect();
        return {font: parseFloat(getComputedStyle(b).fontSize), top: r.top, bottom: r.bottom, left: r.left,
                right: r.right, sTop: s.top, sBottom: s.bottom, sLeft: s.left, sRight: s.right,
                width: r.width, cardWidth: c.width}; })"""):
        assert box["font"] >= 10, box
        assert box["sTop"] <= box["top"] and box["bottom"] <= box["sBottom"], box
        assert box["sLeft"] <= box["left"] and box["right"] <= box["sRight"], box
        assert box["width"] <= box["cardWidth"] * 1.25, box


def test_source_badges_mid_coup_and_live_and_screenshots(ws_mosquitto, browser, shots):
    """A card the shoe did not read carries a badge: the camera's (with its confidence) or a person's."""
    config = display_config_for("t1", ws_mosquitto.port)
    server = DisplayServer(config, ws_url=f"ws://127.0.0.1:{ws_mosquitto.websockets_port}").start()
    publisher = make_publisher(config)
    try:
        # Joining mid-coup: the badges come from the retained coup/current alone.
        session, rest = table_session(config, seed=9, coups=3)
        deal_stand_ins(session, rest, confidence=0.998)
        current = session.last("coup/current")
        assert current["card_sources"] == {"punto": [{"source": "shoe"}, {"source": "api"}],
                                           "banco": [{"source": "camera", "confidence": 0.998}]}
        publish_outputs(publisher, session.outputs)
        publisher.start()
        pages = [open_display(browser, server.url, width=w, height=h) for w, h in ((1920, 1080), (800, 480))]
        for page in pages:
            page.wait_for_function("() => document.querySelectorAll('#coup .src-badge').length === 2", timeout=5000)
            assert_sources_drawn(page, current)
            assert_badges_readable(page)
        _shot(pages[1], shots, "display-800x480-sources.png")
        # The shoe deals the rest of the coup: the badges stay.
        publish_outputs(publisher, finish_coup(session, rest))
        current = session.last("coup/current")
        for page in pages:
            page.wait_for_function("() => document.querySelector('#coup').dataset.state === 'settled'", timeout=5000)
            assert_sources_drawn(page, current)

        # Live: the next coup's cards arrive as coup/card messages first; coup/current follows.
        outs = deal_stand_ins(session, rest, confidence=0.91)
        current = session.last("coup/current")
        assert current["coup"] == 5
        publish_outputs(publisher, [o for o in outs if o.topic == "coup/card"])
        for page in pages:
            page.wait_for_function("() => document.querySelectorAll('#coup .card').length === 3", timeout=5000)
            assert_sources_drawn(page, current)
        publish_outputs(publisher, outs)
        for page in pages:
            page.wait_for_function("seq => window.scoreboard.state.coup.seq === seq", arg=current["seq"],
                                   timeout=5000)
            assert_sources_drawn(page, current)
            assert_badges_readable(page)
            assert page.js_errors == []
    finally:
        publisher.stop(timeout=2)
        server.stop()


# --------------------------------------------------------------------------- profiles


def odds_strings(odds: dict) -> list[str]:
    """Every way the page would write the odds: probabilities and house edges as percentages."""
    out = []
    for part in ("probability", "house_edge"):
        for bet in ("banco", "punto", "tie"):
            out.append(f"{odds[part][bet] * 100:.2f}%")
    return out


def test_profiles_player_dealer_and_pit(ws_mosquitto, browser, shots):
    """player: no odds, edge or alert anywhere in the DOM; dealer: alerts, no odds; pit: everything."""
    config = display_config_for("t1", ws_mosquitto.port)
    # The player's advantage alert on every bet (any expectation above -50%), and a card the shoe cannot read.
    config = config.model_copy(update={"table": config.table.model_copy(update={"odds_alert_edge": -0.5}),
                                       "display": config.display.model_copy(update={"profile": "player"})})
    server = DisplayServer(config, ws_url=f"ws://127.0.0.1:{ws_mosquitto.websockets_port}").start()
    publisher = make_publisher(config)
    try:
        session, _ = table_session(config, seed=9, coups=6)
        session.feed(Kind.CARD_UNREADABLE, counter=300)
        kinds = {a["kind"] for a in session.last("alerts/active")["alerts"]}
        assert kinds == {"odds_advantage", "card_unreadable"}
        publish_outputs(publisher, session.outputs)
        publisher.start()
        odds = session.last("odds")
        pages = {}
        for profile, query in (("player", ""), ("player", "?profile=player"), ("dealer", "?profile=dealer"),
                               ("pit", "?profile=pit")):
            page = open_display(browser, server.url + query, width=800, height=480)
            wait_roads(page, session.last("roads")["seq"])
            page.wait_for_function("() => document.querySelector('#n-coups').textContent === '6'", timeout=5000)
            assert page.get_attribute("body", "data-profile") == profile
            pages[profile + query] = page
        time.sleep(0.3)      # every retained message is in (alerts/active came before roads)

        for name in ("player", "player?profile=player"):
            page = pages[name]
            html = page.content()
            assert count(page, ".bets .prob, .bets .edge, .bets th.odds-col, #odds-note") == 0
            assert "EDGE" not in html and ">WIN<" not in html and "LIVE ODDS" not in html
            assert not [x for x in odds_strings(odds) if x in html]
            assert "favours the player" not in html and "odds_advantage" not in html
            assert page.is_hidden("#alert-banner")
            assert page.evaluate("window.scoreboard.state.odds") is None
            assert page.inner_text("#bet-banco .lim") == "10 – 10K"        # the limits stay

        dealer = pages["dealer?profile=dealer"]
        html = dealer.content()
        assert count(dealer, ".bets .prob, .bets .edge") == 0 and not [x for x in odds_strings(odds) if x in html]
        assert dealer.is_visible("#alert-banner")
        assert dealer.get_attribute("#alert-banner", "data-kind") == "card_unreadable"
        assert dealer.inner_text("#alert-more") == ""                     # the advantage alerts are not its
        assert "favours the player" not in html

        pit = pages["pit?profile=pit"]
        assert pit.inner_text("#bet-banco .prob") == f"{odds['probability']['banco'] * 100:.2f}%"
        assert pit.inner_text("#bet-tie .edge") == f"{odds['house_edge']['tie'] * 100:.2f}%"
        assert pit.is_visible("#alert-banner")
        assert pit.inner_text("#alert-more") == "+3 MORE"                 # card_unreadable and 3 advantages
        assert sorted(a["kind"] for a in pit.evaluate("window.scoreboard.state.alerts")) == [
            "card_unreadable", "odds_advantage", "odds_advantage", "odds_advantage"]
        for name, file in (("player", "display-800x480-player.png"), ("dealer?profile=dealer", "display-800x480-dealer.png"),
                           ("pit?profile=pit", "display-800x480-pit.png")):
            _shot(pages[name], shots, file)
        for page in pages.values():
            assert page.js_errors == []
    finally:
        publisher.stop(timeout=2)
        server.stop()


# --------------------------------------------------------------------------- the embedded broker, configuration


def test_the_embedded_brokers_websockets_listener_feeds_the_page(browser):
    """No ``[mqtt] host``: the page finds the embedded broker's websockets port in config.json."""
    config = display_config_for("emb")
    config = config.model_copy(update={"mqtt": config.mqtt.model_copy(update={
        "host": None, "embedded_port": free_port(), "embedded_ws_port": free_port()})})
    broker = EmbeddedBroker(port=config.mqtt.embedded_port, ws_port=config.mqtt.embedded_ws_port)
    broker.start()
    server = DisplayServer(config).start()        # broker URL from display_config(), not given
    publisher = make_publisher(config.model_copy(update={"mqtt": broker.client_config(config.mqtt)}))
    try:
        session, _ = table_session(config, seed=3, coups=8, then_cards=2)
        publish_outputs(publisher, session.outputs)
        publisher.start()
        page = open_display(browser, server.url, width=800, height=480)
        wait_roads(page, session.last("roads")["seq"])
        page.wait_for_function("() => document.querySelectorAll('#coup .card').length === 2", timeout=5000)
        assert_roads_drawn(page, session.last("roads"))
        assert_coup_drawn(page, session.last("coup/current"))
        # a card published now arrives live over the embedded broker too
        publish_outputs(publisher, session.card("KS"))
        page.wait_for_function("() => document.querySelectorAll('#coup .card').length === 3", timeout=5000)
        assert_coup_drawn(page, session.last("coup/current"))
        assert page.js_errors == []
    finally:
        publisher.stop(timeout=2)
        server.stop()
        broker.stop()


def test_the_page_works_from_any_static_server_with_query_parameters(ws_mosquitto, browser):
    """No config.json (python -m http.server): ?broker= and ?table= are enough."""
    import functools
    import http.server
    import threading

    from shoe_daemon.web import static_dir

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(static_dir()))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    config = display_config_for("plain", ws_mosquitto.port)
    publisher = make_publisher(config)
    try:
        session, _ = table_session(config, seed=4, coups=3)
        publish_outputs(publisher, session.outputs)
        publisher.start()
        url = (f"http://127.0.0.1:{httpd.server_address[1]}/index.html"
               f"?broker=ws://127.0.0.1:{ws_mosquitto.websockets_port}&table=plain&alerts=off")
        page = open_display(browser, url, width=800, height=480)
        wait_roads(page, session.last("roads")["seq"])
        assert_coup_drawn(page, session.last("coup/current"))
        assert page.inner_text("#table-id") == "PLAIN"
        assert page.inner_text("#bet-banco .lim") == "–"          # limits come from config.json only
        assert page.js_errors == []
    finally:
        publisher.stop(timeout=2)
        httpd.shutdown()
        httpd.server_close()


def test_a_page_with_no_broker_url_says_how_to_configure_it(browser):
    config = display_config_for("nows")
    config = config.model_copy(update={"mqtt": config.mqtt.model_copy(update={"host": None, "embedded_ws_port": None})})
    server = DisplayServer(config).start()
    try:
        context = browser.new_context(viewport={"width": 800, "height": 480})
        page = context.new_page()
        page.goto(server.url)
        page.wait_for_selector("#unavailable:not([hidden])", timeout=5000)
        assert page.inner_text("#unavailable-title") == "DISPLAY NOT CONFIGURED"
        assert "embedded_ws_port" in page.inner_text("#unavailable-text")
        assert page.get_attribute("#conn", "data-state") == "offline"
        context.close()
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _close_contexts(browser):
    yield
    for context in list(browser.contexts):
        context.close()
