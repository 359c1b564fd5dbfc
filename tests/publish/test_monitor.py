"""`shoe-daemon monitor`: the view on sample payloads, and the command against real brokers."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoe_daemon.cli import main
from shoe_daemon.commands.monitor import parse_broker
from shoe_daemon.config import MqttConfig
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.monitor.view import CLEAR, TableView
from shoe_daemon.publish.broker import EmbeddedBroker
from shoe_daemon.publish.mqtt import MqttPublisher
from tests.support.mosquitto import free_port

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "baccarat/T1"

pytestmark = pytest.mark.timeout(60)


def j(**fields) -> bytes:
    return json.dumps({"schema": 1, "table_id": "T1", **fields}).encode()


# One coup as the core would publish it: Punto 5H AC = 6, Banco 4D 3S = 7, both stand.
CARDS = [
    j(seq=10, type="card", coup=1, side="punto", card="5H", punto_total=5, banco_total=0, next="banco", source="shoe"),
    j(seq=12, type="card", coup=1, side="banco", card="4D", punto_total=5, banco_total=4, next="punto", source="shoe"),
    j(seq=14, type="card", coup=1, side="punto", card="AC", punto_total=6, banco_total=4, next="banco", source="shoe"),
    j(seq=16, type="card", coup=1, side="banco", card="3S", punto_total=6, banco_total=7, next=None, source="shoe"),
]
RESULT = j(seq=18, type="result", coup=1, punto=["5H", "AC"], banco=["4D", "3S"], punto_total=6, banco_total=7,
           winner="banco", natural=False, natural_total=None, punto_pair=False, banco_pair=False)

EXPECTED_CARD_LINES = [
    "coup 1 card: punto 5H -> punto 5 banco 0 | next: banco [shoe]",
    "coup 1 card: banco 4D -> punto 5 banco 4 | next: punto [shoe]",
    "coup 1 card: punto AC -> punto 6 banco 4 | next: banco [shoe]",
    "coup 1 card: banco 3S -> punto 6 banco 7 | no more cards [shoe]",
]
EXPECTED_RESULT_LINE = "coup 1 result: banco wins 7 to 6 | punto 5H AC | banco 4D 3S"


def test_view_lines_for_a_coup():
    view = TableView(PREFIX)
    lines = []
    for c in CARDS:
        lines += view.apply("coup/card", c)
    lines += view.apply("coup/result", RESULT)
    assert lines == EXPECTED_CARD_LINES + [EXPECTED_RESULT_LINE]
    assert view.current["punto"] == ["5H", "AC"] and view.current["banco"] == ["4D", "3S"]
    assert view.current["complete"] is True and view.results_seen == 1
    # The snapshot republished after every card prints nothing live (the card line said it all).
    snapshot = j(coup=2, punto=["2H"], banco=[], punto_total=2, banco_total=0, next="banco", complete=False)
    assert view.apply("coup/current", snapshot, retained=False) == []
    assert view.current_line() == "coup 2 now: punto 2H (2) | banco - (0) | next: banco"


def test_view_is_tolerant_and_draws_a_screen():
    view = TableView(PREFIX, broker="b:1883", color=True)
    assert view.apply("coup/card", b"not json") == ["coup/card: unreadable payload (8 bytes)"]
    assert view.apply("coup/card", b'{"card": "9D"}') == ["coup ? card: ? 9D -> punto ? banco ? | no more cards"]
    assert view.apply("coup/result", b'{"winner": "tie", "punto_total": 4, "banco_total": 4, "natural": true,'
                                     b' "punto_pair": true, "banco_pair": true}') == [
        "coup ? result: tie 4 to 4 | natural | punto and banco pairs"]
    assert view.apply("unknown/topic", b"{}") == []
    assert view.apply("status", b'"online"') == ["status: online"]
    assert view.apply("alerts/active", b'{"alerts": [{"id": "a1", "kind": "tableau", "severity": "error",'
                                       b' "message": "Banco drew on 7"}]}') == [
        "alerts: 1 active: [error] Banco drew on 7"]
    assert view.apply("alerts/active", b'{"alerts": [{"id": "a1", "kind": "tableau", "severity": "error",'
                                       b' "message": "Banco drew on 7"}]}') == []          # unchanged
    view.apply("coup/current", j(coup=4, shoe=2, punto=["KH", "9S"], banco=["2C"], punto_total=9, banco_total=2,
                                 next="banco", complete=False, last_hand=True), retained=True)
    view.apply("shoe", j(decks=8, dealt=300, remaining=116, cut_card_out=True, last_hand=True))
    view.apply("history", j(coups=[{"winner": "punto"}, {"winner": "banco"}, {"winner": "tie"}]), retained=True)
    view.apply("sources", j(sources=[{"name": "serial", "state": "up"}, {"name": "camera", "connected": False}]))
    screen = view.screen()
    for text in ("Coup 4", "shoe 2", "K\u2665", "Banco drew on 7", "116 left", "LAST HAND", "serial up",
                 "camera down", "\x1b[31m"):
        assert text in screen, text
    assert CLEAR.startswith("\x1b[")


def test_parse_broker():
    assert parse_broker("mqtt.local") == ("mqtt.local", 1883)
    assert parse_broker("mqtt.local", tls=True) == ("mqtt.local", 8883)
    assert parse_broker("10.0.0.5:1884") == ("10.0.0.5", 1884)
    assert parse_broker("[::1]:1999") == ("::1", 1999)
    with pytest.raises(ValueError):
        parse_broker("host:notaport")


def test_monitor_prints_coup_lines_live(mosquitto):
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoe_daemon", "monitor", "--broker", f"127.0.0.1:{mosquitto.port}",
         "--table", "T1", "--coups", "1"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    pub = MqttPublisher(MqttConfig(host="127.0.0.1", port=mosquitto.port), table_id="T1", version="9.9.9")
    try:
        head = [proc.stdout.readline().rstrip("\n") for _ in range(2)]
        assert head == [
            f"broker: connected (127.0.0.1:{mosquitto.port})",
            f"monitor: subscribed to {PREFIX}/# on 127.0.0.1:{mosquitto.port} (MQTT 5)",
        ], proc.stderr.read() if proc.poll() is not None else head
        pub.start()
        for c in CARDS:
            pub.publish("coup/card", c)
            pub.publish("shoe", j(decks=8, dealt=1, remaining=415, cut_card_out=False, last_hand=False), retain=True)
        pub.publish("coup/result", RESULT)
        out, err = proc.communicate(timeout=15)
    finally:
        pub.stop(timeout=2)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines == [
        "status: online (table T1, v9.9.9)",
        *EXPECTED_CARD_LINES[:1],
        "shoe: 8 decks, 1 dealt, 415 left",      # printed once: later ones only change dealt/left
        *EXPECTED_CARD_LINES[1:],
        EXPECTED_RESULT_LINE,
    ]


def publish_retained_state(pub: MqttPublisher) -> None:
    pub.publish("coup/current", j(seq=30, coup=2, shoe=1, punto=["9H", "TS"], banco=["8C", "KD"], punto_total=9,
                                  banco_total=8, next=None, complete=True, last_hand=False), retain=True)
    pub.publish("shoe", j(seq=31, decks=8, dealt=8, remaining=408, cut_card_out=False, last_hand=False), retain=True)
    pub.publish("history", j(seq=32, coups=[{"coup": 1, "winner": "banco"}, {"coup": 2, "winner": "punto"}]),
                retain=True)
    pub.publish("alerts/active", j(seq=33, alerts=[]), retain=True)


def test_monitor_once_prints_the_retained_state(mosquitto, capsys):
    pub = MqttPublisher(MqttConfig(host="127.0.0.1", port=mosquitto.port), table_id="T1", version="9.9.9")
    publish_retained_state(pub)
    pub.start()
    deadline = time.monotonic() + 10
    while pub.stats()["acked"] < 5 and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        assert main(["monitor", "--broker", f"127.0.0.1:{mosquitto.port}", "--prefix", PREFIX, "--once"]) == 0
    finally:
        pub.stop(timeout=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [f"broker: connected (127.0.0.1:{mosquitto.port})",
                         f"monitor: subscribed to {PREFIX}/# on 127.0.0.1:{mosquitto.port} (MQTT 5)"]
    assert sorted(lines[2:]) == sorted([
        "status: online (table T1, v9.9.9)",
        "coup 2 (shoe 1) now: punto 9H TS (9) | banco 8C KD (8) | complete",
        "shoe: 8 decks, 8 dealt, 408 left",
        "history: B P",
        "alerts: none active",
    ])


def test_monitor_once_falls_back_to_311_on_the_embedded_broker(capsys):
    with EmbeddedBroker(port=free_port()) as broker:
        pub = MqttPublisher(broker.client_config(MqttConfig()), table_id="T1", version="9.9.9")
        publish_retained_state(pub)
        pub.start()
        deadline = time.monotonic() + 10
        while pub.stats()["acked"] < 5 and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            assert main(["monitor", "--broker", f"127.0.0.1:{broker.port}", "--table", "T1", "--once"]) == 0
        finally:
            pub.stop(timeout=2)
    out = capsys.readouterr().out.splitlines()
    assert "broker: no MQTT 5, using 3.1.1" in out
    assert "history: B P" in out and "status: online (table T1, v9.9.9)" in out


def test_monitor_once_with_no_broker_fails_clearly(capsys):
    port = free_port()
    rc = main(["monitor", "--broker", f"127.0.0.1:{port}", "--table", "T1", "--once", "--timeout", "0.5"])
    assert rc == 1
    assert f"no subscription on 127.0.0.1:{port} within 0.5 s" in capsys.readouterr().err


def test_view_on_the_cores_real_payloads():
    """The core's own outputs (Table) drawn by the view: the field names agree."""
    from shoe_daemon.core.events import Event, Kind
    from shoe_daemon.core.outputs import Publish
    from shoe_daemon.core.table import Table
    from shoe_daemon.game.engine import TableRules

    table = Table(TableRules(), "T1")
    # Punto QC KH 9H, Banco 2S 9C 4D: both draw, Punto 9 beats Banco 5.
    codes = ["QC", "2S", "KH", "9C", "9H", "4D"]
    outs = [o for i, c in enumerate(codes) for o in Pipeline(table).feed_one(Event(float(i), Kind.CARD, "shoe", {"card": c}))]
    view = TableView(PREFIX)
    lines = [line for o in outs if isinstance(o, Publish) for line in view.apply(o.topic, o.encode())]
    assert lines[:2] == ["coup 1 card: punto QC -> punto 0 banco 0 | next: banco [shoe]",
                         "shoe: 8 decks, 1 dealt, 415 left"]
    assert "coup 1 card: banco 4D -> punto 9 banco 5 | no more cards [shoe]" in lines
    assert lines[-1] == "coup 1 result: punto wins 9 to 5 | punto QC KH 9H | banco 2S 9C 4D"
    snapshot = [line for o in table.retained() for line in view.apply(o.topic, o.encode(), retained=True)]
    assert "coup 1 (shoe 1) now: punto QC KH 9H (9) | banco 2S 9C 4D (5) | complete" in snapshot
    assert "history: P" in snapshot


def test_screen_draws_the_big_road_from_the_roads_topic():
    from shoe_daemon.core.events import Event, Kind
    from shoe_daemon.core.table import Table
    from shoe_daemon.game.engine import TableRules
    from shoe_daemon.monitor.view import TableView

    table = Table(TableRules(), "t1")
    # P wins (9 vs 3), B wins (8 natural), B wins (natural 9 vs 0)
    codes = ["9S", "3H", "TD", "KC", "2S", "8H", "3D", "KD", "TS", "9H", "KS", "JD"]
    view = TableView("baccarat/t1")
    for i, code in enumerate(codes):
        for out in Pipeline(table).feed_one(Event(float(i), Kind.CARD, "shoe", {"card": code})):
            if hasattr(out, "topic"):
                view.apply(out.topic, out.encode())
    lines = view.big_road_lines()
    assert lines[0] == "Big Road PB"
    assert lines[1] == "          B"
    assert len(lines) == 6
    assert "Big Road PB" in view.screen()


def test_view_tags_cards_that_did_not_come_from_the_shoe():
    """The core's coup/current names each card's source: the snapshot line and the screen show it."""
    from shoe_daemon.core.events import Event, Kind
    from shoe_daemon.core.table import Table
    from shoe_daemon.game.engine import TableRules

    table = Table(TableRules(), "T1")
    events = [Event(0.0, Kind.CARD, "shoe", {"card": "2S"}), Event(1.0, Kind.CARD_UNREADABLE, "shoe", {}),
              Event(2.0, Kind.CARD, "camera", {"card": "3H", "confidence": 0.998}),
              Event(3.0, Kind.CARD_UNREADABLE, "shoe", {}),
              Event(4.0, Kind.CARD, "api", {"card": "4D", "user": "dealer"})]
    view = TableView(PREFIX)
    for event in events:
        for out in Pipeline(table).feed_one(event):
            if hasattr(out, "topic"):
                view.apply(out.topic, out.encode())
    expected = "coup 1 (shoe 1) now: punto 2S 4D[api] (6) | banco 3H[camera 99.8%] (3) | next: banco"
    assert view.current_line() == expected
    assert "3H[camera 99.8%]" in view.screen()
    # Live, from coup/card alone (a daemon without card_sources): the same tags.
    live = TableView(PREFIX)
    snapshot = {k: v for k, v in table.last_payload("coup/current").items() if k != "card_sources"}
    live.apply("coup/current", json.dumps(snapshot).encode(), retained=True)
    live.apply("coup/card", j(type="card", coup=1, side="banco", card="5C", punto_total=6, banco_total=8,
                              next=None, source="camera", confidence=0.5))
    assert live.current_line().startswith("coup 1 (shoe 1) now: punto 2S 4D (6) | banco 3H 5C[camera 50.0%] (8)")


def test_the_view_keeps_its_notes_and_says_when_a_person_is_awaited():
    view = TableView(PREFIX, broker="b:1883", notes=["console  http://127.0.0.1:9/console/#token=abc"])
    view.apply("coup/current", j(coup=3, shoe=1, punto=["9H"], banco=[], punto_total=9, banco_total=0,
                                 next="banco", complete=False, awaiting={"unreadable": 1, "queued_cards": 0}),
               retained=True)
    screen = view.screen()
    assert "waiting for a person: the shoe could not read a card; enter it at the console" in screen
    assert screen.splitlines()[-1] == "console  http://127.0.0.1:9/console/#token=abc"
    view.apply("coup/current", j(coup=3, shoe=1, punto=["9H", "2S"], banco=["KD", "3C"], punto_total=1,
                                 banco_total=3, next=None, complete=True, held=True,
                                 awaiting={"unreadable": 0, "queued_cards": 0}), retained=True)
    screen = view.screen()
    assert "held: a supervisor resolves it at the console" in screen and "waiting for a person" not in screen
