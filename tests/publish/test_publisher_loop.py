"""The publisher on a caller's asyncio loop (as the daemon runs it), against a real Mosquitto."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time

import pytest

from shoe_daemon.config import MqttConfig
from shoe_daemon.publish.mqtt import MqttPublisher
from tests.publish.helpers import PREFIX, check_each_threads_order, seqs, states

pytestmark = pytest.mark.timeout(60)


def card(seq: int) -> bytes:
    return json.dumps({"seq": seq}).encode()


async def until(predicate, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not met within {timeout} s")
        await asyncio.sleep(0.005)


def on_loop(port: int, alerts: list | None = None, **config) -> MqttPublisher:
    hook = (lambda kind, evidence: alerts.append((kind, evidence))) if alerts is not None else None
    return MqttPublisher(MqttConfig(host="127.0.0.1", port=port, **config), table_id="T1", version="9.9.9",
                         on_alert=hook, reconnect_min_delay=0.05, reconnect_max_delay=0.2,
                         loop=asyncio.get_running_loop())


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_a_publish_on_the_loops_thread_is_on_the_socket_when_it_returns(mosquitto, mqtt_subscriber, protocol):
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/#", protocol=protocol)

    async def main():
        pub = on_loop(mosquitto.port, protocol=protocol)
        pub.publish("shoe", b'{"seq":0}', retain=True)
        pub.start()
        await until(lambda: pub.connected and pub.stats()["queue_depth"] == 0, what="connected, backlog out")
        assert not [t for t in threading.enumerate() if t.name.startswith("mqtt")]   # no thread of its own
        # The loop's thread blocks right after publish(): no other thread could write the message.
        pub.publish("coup/card", card(1))
        sub.wait_for(lambda ms: seqs(ms) == [1], timeout=5)
        for i in range(2, 300):
            pub.publish("coup/card", card(i))
        await until(lambda: pub.stats()["acked"] >= 301, what="all acknowledged")
        pub.stop(timeout=5)                   # on the loop's thread, which it does not give back meanwhile
        return pub.stats()

    stats = asyncio.run(main())
    sub.wait_for(lambda ms: states(ms)[-1:] == ["offline"])
    msgs = sub.snapshot()
    assert seqs(msgs) == list(range(1, 300))
    assert states(msgs) == ["online", "offline"] and msgs[0].topic == f"{PREFIX}/status"
    assert stats["connected"] is False and stats["queue_depth"] == 0 and stats["dropped"] == 0
    assert stats["acked"] == 302 and stats["latency_ms_p99"] is not None


def test_a_slow_connect_never_holds_the_loop(monkeypatch, mosquitto):
    """DNS, TCP and TLS run in a connecting thread: the loop keeps its pace meanwhile."""
    real = socket.getaddrinfo

    def slow_getaddrinfo(host, *args, **kwargs):
        if host == "slow.broker.example":
            time.sleep(0.8)
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_getaddrinfo)

    async def main():
        pub = MqttPublisher(MqttConfig(host="slow.broker.example", port=mosquitto.port), table_id="T1",
                            version="x", loop=asyncio.get_running_loop())
        pub.start()
        gaps = []
        last = started = time.monotonic()
        while not pub.connected:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now
            assert now - started < 30, "never connected"
        pub.stop(timeout=2)
        return gaps

    gaps = asyncio.run(main())
    assert sum(gaps) >= 0.8                      # the connect did take that long
    assert max(gaps) < 0.4, max(gaps)            # and the loop ran all along


def test_other_threads_publish_and_stop_while_the_loop_runs(mosquitto, mqtt_subscriber):
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/t/#")
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict = {}

    def run_loop():
        asyncio.set_event_loop(loop)

        async def boot():
            holder["pub"] = on_loop(mosquitto.port)
            holder["pub"].start()
            ready.set()

        loop.run_until_complete(boot())
        loop.run_forever()

    runner = threading.Thread(target=run_loop)
    runner.start()
    try:
        assert ready.wait(5)
        pub = holder["pub"]
        check_each_threads_order(pub, sub, threads=4)
        pub.stop(timeout=5)                      # from this thread: the loop delivers offline and closes
        assert pub.stats()["queue_depth"] == 0 and not pub.connected
        assert pub.publish("t/0", b"{}") is False
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join(5)
        loop.close()


def test_a_broker_restart_on_the_loop_loses_nothing(mosquitto_factory):
    from tests.support.mosquitto import Subscriber

    broker = mosquitto_factory(persistence=True)
    sub = Subscriber(broker.port, f"{PREFIX}/coup/card", persistent=True).start()
    alerts: list = []

    async def main():
        pub = on_loop(broker.port, alerts)
        pub.start()
        await until(lambda: pub.connected, what="connected")
        for i in range(100):
            pub.publish("coup/card", card(i))
            await asyncio.sleep(0.001)
        broker.stop()
        await until(lambda: not pub.connected, what="outage noticed")
        for i in range(100, 200):
            pub.publish("coup/card", card(i))
        assert pub.backlog >= 100
        broker.start()
        await until(lambda: pub.connected and pub.stats()["queue_depth"] == 0, timeout=20, what="drained")
        pub.stop(timeout=2)
        return pub.stats()

    try:
        stats = asyncio.run(main())
        sub.wait_for(lambda ms: set(seqs(ms)) >= set(range(200)), timeout=20)
        got = seqs(sub.snapshot())
        first = list(dict.fromkeys(got))
        assert first == list(range(200))
        assert stats["reconnects"] >= 1 and stats["dropped"] == 0
        kinds = [k for k, _ in alerts]
        assert kinds[0] == "broker_connection_lost" and "broker_connection_restored" in kinds
    finally:
        sub.stop()
