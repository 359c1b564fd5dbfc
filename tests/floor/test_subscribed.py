"""The floor says it is storing every table (``start()`` returns, READY=1) only once the broker has
acknowledged its subscription: a SUBSCRIBE sent is not a subscription made. Before the SUBACK a
table's message is routed to no one (a shared subscription keeps nothing for a group that is not
there yet); under load the systemd test's first message was lost that way. The SUBACK's moment is
held by a scripted peer; the message's path runs through a real Mosquitto."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from shoe_daemon.floor.config import load_floor_config
from shoe_daemon.floor.service import FloorService
from shoe_daemon.floor.store import Store
from tests.floor.harness import floor_config
from tests.support.waiting import wait_until


def publish(port: int, topic: str) -> None:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="table-t9", protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", port)
    client.loop_start()
    try:
        payload = b'{"schema": 1, "seq": 1, "table_id": "t9", "type": "alerts", "t": 1.0, "alerts": []}'
        client.publish(topic, payload, qos=1).wait_for_publish(5)
    finally:
        client.disconnect()
        client.loop_stop()


class ScriptedBroker:
    """One MQTT 5 peer on a socket that answers CONNECT and holds the SUBACK until the test sends
    it: the moment it arrives cannot be made certain with a real broker."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.conn: socket.socket | None = None
        self.subscribe_id: bytes | None = None
        self.subscribed = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _packet(self) -> tuple[int, bytes]:
        head = self._read(1)[0]
        length, shift = 0, 0
        while True:
            byte = self._read(1)[0]
            length += (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return head, self._read(length)

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.conn.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the floor closed the connection")
            data += chunk
        return data

    def _serve(self) -> None:
        self.conn, _ = self.server.accept()
        head, _ = self._packet()
        assert head == 0x10, hex(head)                       # CONNECT
        self.conn.sendall(bytes([0x20, 3, 0, 0, 0]))         # CONNACK: success, no properties
        with contextlib.suppress(OSError):
            while True:
                head, body = self._packet()
                if head == 0x82:                             # SUBSCRIBE: held
                    self.subscribe_id = body[:2]
                    self.subscribed.set()
                elif head == 0xC0:                           # PINGREQ
                    self.conn.sendall(bytes([0xD0, 0]))

    def suback(self, reason: int) -> None:
        self.conn.sendall(bytes([0x90, 4]) + self.subscribe_id + bytes([0, reason]))

    def close(self) -> None:
        for s in (self.conn, self.server):
            if s is not None:
                s.close()


@pytest.mark.parametrize("reason", [0x01, 0x87])   # granted QoS 1; not authorised
def test_subscribed_only_on_the_brokers_acknowledgement(tmp_path, sqlite_url, caplog, reason):
    broker = ScriptedBroker()
    cfg = load_floor_config(floor_config(tmp_path / "floor.toml", broker_port=broker.port, database=sqlite_url))
    floor = FloorService(cfg, web=False)
    try:
        with caplog.at_level(logging.WARNING):
            floor.start(timeout=1.0)        # SUBSCRIBE sent, no SUBACK: not storing yet
            assert broker.subscribed.wait(5)
            assert not floor.consumer.subscribed.is_set()
            assert "not subscribed at the broker" in caplog.text
            broker.suback(reason)
            if reason == 0x01:
                assert floor.consumer.subscribed.wait(5)
            else:
                wait_until(lambda: "the broker refused the floor's subscription" in caplog.text, 5, "the refusal logged")
                assert not floor.consumer.subscribed.is_set()
    finally:
        floor.stop()
        broker.close()


def test_a_message_published_as_start_returns_is_stored(tmp_path, mosquitto, sqlite_url):
    cfg = load_floor_config(floor_config(tmp_path / "floor.toml", broker_port=mosquitto.port, database=sqlite_url))
    floor = FloorService(cfg, web=False).start(timeout=15.0)
    try:
        assert floor.consumer.subscribed.is_set()
        publish(mosquitto.port, "baccarat/t9/alerts/active")
        store = Store.open(sqlite_url)
        wait_until(lambda: store.count("messages") == 1, 15, "the table's first message in the floor's database")
    finally:
        floor.stop()
