"""The embedded (amqtt) broker with paho: connect, retained, Last Will, websockets, the publisher."""

from __future__ import annotations

import functools
import json
import socket
import time

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from shoe_daemon.config import MqttConfig
from shoe_daemon.publish.broker import EmbeddedBroker
from shoe_daemon.publish.mqtt import MqttPublisher
from tests.support.mosquitto import Subscriber, free_port, probe

pytestmark = pytest.mark.timeout(60)


# The embedded broker speaks MQTT 3.1.1 only.
probe311 = functools.partial(probe, protocol="3.1.1")


@pytest.fixture
def embedded():
    broker = EmbeddedBroker(port=free_port(), ws_port=free_port())
    broker.start()
    yield broker
    broker.stop()


def test_paho_311_connects_mqtt5_is_refused(embedded):
    assert probe311(embedded.port) == "Success"
    assert probe(embedded.port, protocol="5") == "Unsupported protocol version"


def test_retained_and_last_will(embedded):
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="dying", protocol=mqtt.MQTTv311)
    client.username_pw_set(*embedded.credentials)          # only the writer publishes (and wills)
    client.will_set("t/status", "offline", qos=1, retain=True)
    client.connect("127.0.0.1", embedded.port)
    client.loop_start()
    client.publish("t/status", "online", qos=1, retain=True).wait_for_publish(5)
    client.publish("t/shoe", "state", qos=1, retain=True).wait_for_publish(5)

    with Subscriber(embedded.port, "t/#", protocol="3.1.1") as sub:
        sub.wait_for(lambda ms: {(m.topic, m.payload, m.retain) for m in ms}
                     == {("t/status", b"online", True), ("t/shoe", b"state", True)})
        client.loop_stop()
        client.socket().close()             # gone without DISCONNECT: the broker sends the will
        sub.wait_for(lambda ms: [m.payload for m in ms if m.topic == "t/status"][-1:] == [b"offline"])

    # Over websockets too (the browser page's way in): the retained will, once per topic.
    with Subscriber(embedded.ws_port, "t/#", protocol="3.1.1", transport="websockets") as ws:
        ws.wait_for(lambda ms: {(m.topic, m.payload) for m in ms} == {("t/status", b"offline"), ("t/shoe", b"state")})
        time.sleep(0.2)
        assert len(ws.snapshot()) == 2


def test_retained_messages_only_for_the_sessions_own_subscriptions(embedded):
    # amqtt 0.12 sends a connecting client the retained messages of *other* clients'
    # subscriptions; EmbeddedBroker's override stops that.
    with Subscriber(embedded.port, "a/#", protocol="3.1.1"):
        with Subscriber(embedded.port, "b/#", protocol="3.1.1") as other:
            pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="p", protocol=mqtt.MQTTv311)
            pub.username_pw_set(*embedded.credentials)
            pub.connect("127.0.0.1", embedded.port)
            pub.loop_start()
            pub.publish("a/x", "A", qos=1, retain=True).wait_for_publish(5)
            pub.publish("b/x", "B", qos=1, retain=True).wait_for_publish(5)
            pub.disconnect()
            pub.loop_stop()
            other.wait_for(lambda ms: len(ms) == 1)
            with Subscriber(embedded.port, "b/#", protocol="3.1.1") as late:
                late.wait_for(lambda ms: len(ms) >= 1)
                time.sleep(0.3)
                assert [(m.topic, m.payload) for m in late.snapshot()] == [("b/x", b"B")]


def test_the_publisher_on_the_embedded_broker(embedded):
    config = embedded.client_config(MqttConfig(embedded_port=embedded.port))
    assert (config.host, config.port, config.protocol) == ("127.0.0.1", embedded.port, "3.1.1")
    with Subscriber(embedded.port, "baccarat/T1/#", protocol="3.1.1") as sub:
        pub = MqttPublisher(config, table_id="T1", version="1", reconnect_min_delay=0.1)
        pub.publish("shoe", b'{"seq":1}', retain=True)
        pub.start()
        for i in range(20):
            pub.publish("coup/card", json.dumps({"seq": i + 2}))
        sub.wait_for(lambda ms: sum(m.topic.endswith("coup/card") for m in ms) == 20)
        cards = [json.loads(m.payload)["seq"] for m in sub.snapshot() if m.topic.endswith("coup/card")]
        assert cards == list(range(2, 22))
        pub.stop(timeout=5)
        sub.wait_for(lambda ms: [json.loads(m.payload)["state"] for m in ms if m.topic.endswith("status")]
                     == ["online", "offline"])
    assert pub.stats()["acked"] == 23


def test_loopback_only_and_a_busy_port_is_an_error():
    with pytest.raises(ValueError, match="loopback"):
        EmbeddedBroker(host="0.0.0.0")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        broker = EmbeddedBroker(port=s.getsockname()[1])
        with pytest.raises(RuntimeError, match="cannot start"):
            broker.start()
    # start/stop again on a fresh instance works, stop twice is harmless
    b = EmbeddedBroker(port=free_port())
    b.start()
    b.stop()
    b.stop()


def test_only_the_writer_publishes_a_display_only_reads(embedded):
    """The issue: any local process could publish a retained forged coup/result or status=offline
    under the table's prefix. Now: anonymous (a display) reads; its publishes are dropped, its Last
    Will there is refused; a wrong writer password is refused; the writer's messages go through."""
    user, password = embedded.credentials
    with Subscriber(embedded.port, "baccarat/T1/#", protocol="3.1.1") as display:   # reading: anonymous
        assert probe311(embedded.port, publish=["baccarat/T1/coup/result"]) == "Success"
        assert probe311(embedded.port, will="baccarat/T1/status") != "Success"
        assert probe311(embedded.port, username=user, password="wrong",
                        publish=["baccarat/T1/coup/result"]) != "Success"
        assert probe311(embedded.port, username="display", password="x") != "Success"
        assert probe311(embedded.port, username=user, password=password, publish=["baccarat/T1/coup/card"]) == "Success"
        display.wait_for(lambda ms: any(m.topic == "baccarat/T1/coup/card" for m in ms))
        time.sleep(0.5)                       # the forged ones would have arrived by now
        assert {m.topic for m in display.snapshot()} == {"baccarat/T1/coup/card"}
    with Subscriber(embedded.port, "baccarat/T1/#", protocol="3.1.1") as late:   # nothing forged retained
        late.wait_for(lambda ms: len(ms) >= 1)
        time.sleep(0.3)
        assert [m.topic for m in late.snapshot()] == ["baccarat/T1/coup/card"]


def test_a_protected_prefix_leaves_other_topics_open():
    broker = EmbeddedBroker(port=free_port(), protected="baccarat/T1/#")
    broker.start()
    try:
        with Subscriber(broker.port, "#", protocol="3.1.1") as sub:
            probe311(broker.port, publish=["baccarat/T1/status", "elsewhere/x"])
            sub.wait_for(lambda ms: any(m.topic == "elsewhere/x" for m in ms))
            time.sleep(0.3)
            assert [m.topic for m in sub.snapshot()] == ["elsewhere/x"]
    finally:
        broker.stop()


N_LAST = 100
N_SUBSCRIBERS = 2


def test_the_broker_hands_on_what_it_received_before_it_stops(caplog):
    """The daemon's last messages (its `offline` status) are published just before the embedded
    broker stops (Daemon.shutdown): amqtt's shutdown drops what its broadcast queue still holds
    ("N messages not broadcasted", the warning a run's log showed), so the broker lets that
    queue empty first. (Delivery to a subscriber still under way when the broker closes is
    amqtt's: not all of a burst this size reaches every subscriber.)"""
    broker = EmbeddedBroker(port=free_port(), ws_port=free_port())
    broker.start()
    subs = [Subscriber(broker.port, "t/#", protocol="3.1.1").start() for _ in range(N_SUBSCRIBERS)]
    pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="last-words", protocol=mqtt.MQTTv311)
    pub.username_pw_set(*broker.credentials)
    pub.connect("127.0.0.1", broker.port)
    pub.loop_start()
    try:
        for i in range(N_LAST - 1):
            pub.publish("t/n", str(i), qos=0)
        pub.publish("t/n", str(N_LAST - 1), qos=1).wait_for_publish(10)   # the broker has read them all
        with caplog.at_level("WARNING", logger="amqtt"):
            broker.stop()                                                # at once, as the daemon does
        assert "not broadcasted" not in caplog.text, caplog.text
    finally:
        pub.loop_stop()
        for sub in subs:
            sub.stop()
        broker.stop()


def test_the_drain_waits_for_a_message_still_on_its_way():
    """A client's last packet may be read but not yet in the broadcast queue when the queue is
    first seen empty: the drain waits until it has stayed empty for DRAIN_SETTLE."""
    import asyncio
    import types

    from shoe_daemon.publish.broker import DRAIN_SETTLE

    async def run() -> tuple[float, float]:
        queue: asyncio.Queue = asyncio.Queue()
        broker = EmbeddedBroker(port=free_port(), ws_port=free_port())
        broker._broker = types.SimpleNamespace(_broadcast_queue=queue)
        loop = asyncio.get_running_loop()
        loop.call_later(0.03, queue.put_nowait, "offline")     # arrives after the drain began
        loop.call_later(0.06, queue.get_nowait)                # and is broadcast
        t0 = loop.time()
        await broker._drain(timeout=2.0)
        return loop.time() - t0, queue.qsize()

    took, left = asyncio.run(run())
    assert left == 0 and took >= 0.06 + DRAIN_SETTLE * 0.9, took
