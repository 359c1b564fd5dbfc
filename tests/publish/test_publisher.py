"""The MQTT publisher against a real Mosquitto: status/LWT, outages, order, queue policy, auth."""

from __future__ import annotations

import json
import logging
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from shoe_daemon.config import MqttConfig
from shoe_daemon.publish.mqtt import MqttPublisher
from tests.publish.helpers import PREFIX, check_each_threads_order, seqs, states
from tests.publish.relay import Relay
from tests.support.mosquitto import MosquittoServer, Subscriber, free_port, make_password_file
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(60)


def make_publisher(port: int, alerts: list | None = None, **config) -> MqttPublisher:
    cfg = MqttConfig(host="127.0.0.1", port=port, **config)
    hook = (lambda kind, evidence: alerts.append((kind, evidence))) if alerts is not None else None
    return MqttPublisher(
        cfg, table_id="T1", version="9.9.9", on_alert=hook,
        reconnect_min_delay=0.1, reconnect_max_delay=0.5,
    )


def card(seq: int) -> bytes:
    return json.dumps({"schema": 1, "seq": seq, "table_id": "T1", "type": "card"}).encode()


def first_arrivals(values: list[int]) -> list[int]:
    seen: set[int] = set()
    out = []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


@pytest.mark.parametrize("protocol", ["5", "3.1.1"])
def test_online_messages_and_clean_stop_offline(mosquitto, mqtt_subscriber, protocol):
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/#", protocol=protocol)
    pub = make_publisher(mosquitto.port, protocol=protocol)
    pub.publish("shoe", b'{"seq":0}', retain=True)      # before start(): waits in the queue
    pub.start()
    for i in range(1, 6):
        pub.publish("coup/card", card(i))
    sub.wait_for(lambda ms: seqs(ms) == [1, 2, 3, 4, 5])
    msgs = sub.snapshot()
    status = [m for m in msgs if m.topic == f"{PREFIX}/status"]
    assert json.loads(status[0].payload) == {"schema": 1, "state": "online", "table_id": "T1", "version": "9.9.9"}
    # online goes out first, then the backlog in order.
    assert msgs[0].topic == f"{PREFIX}/status"
    assert [m.topic for m in msgs[1:3]] == [f"{PREFIX}/shoe", f"{PREFIX}/coup/card"]
    assert all(m.qos == 1 for m in msgs)

    pub.stop(timeout=5)
    sub.wait_for(lambda ms: states(ms)[-1:] == ["offline"])
    stats = pub.stats()
    assert stats["connected"] is False
    assert stats["queue_depth"] == 0 and stats["dropped"] == 0
    assert stats["published"] == 6 and stats["acked"] >= 8      # 6 + online + offline
    assert stats["latency_ms_p50"] is not None and stats["latency_ms_p99"] is not None  # measured, not asserted

    # The retained status a late subscriber sees is offline; stop() disconnected cleanly (no LWT after it).
    late = mqtt_subscriber(mosquitto.port, f"{PREFIX}/status", protocol=protocol)
    late.wait_for(lambda ms: states(ms) == ["offline"] and ms[0].retain)


LWT_CHILD = """
import sys, time
from shoe_daemon.config import MqttConfig
from shoe_daemon.publish.mqtt import MqttPublisher
pub = MqttPublisher(MqttConfig(host="127.0.0.1", port=int(sys.argv[1])), table_id="T1", version="9.9.9")
pub.start()
while not (pub.connected and pub.stats()["queue_depth"] == 0):
    time.sleep(0.01)
print("ready", flush=True)
time.sleep(60)
"""


def test_last_will_offline_when_the_process_is_killed(mosquitto, mqtt_subscriber):
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/status")
    child = subprocess.Popen(
        [sys.executable, "-c", LWT_CHILD, str(mosquitto.port)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = child.stdout.readline()
        assert line.strip() == "ready", child.stderr.read()
        sub.wait_for(lambda ms: states(ms) == ["online"])
        child.send_signal(signal.SIGKILL)      # no DISCONNECT: the broker publishes the Last Will
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        child.stderr.close()
    sub.wait_for(lambda ms: states(ms) == ["online", "offline"])
    will = json.loads(sub.on_topic(f"{PREFIX}/status")[-1].payload)
    assert will == {"schema": 1, "state": "offline", "table_id": "T1", "version": "9.9.9"}
    late = mqtt_subscriber(mosquitto.port, f"{PREFIX}/status")
    late.wait_for(lambda ms: states(ms) == ["offline"] and ms[0].retain)   # the will is retained


def test_broker_restart_mid_stream_loses_nothing_and_keeps_order(mosquitto_factory):
    broker = mosquitto_factory(persistence=True)
    # A persistent session: the broker keeps QoS 1 messages for the subscriber while it is away too.
    sub = Subscriber(broker.port, f"{PREFIX}/coup/card", persistent=True).start()
    alerts: list = []
    pub = make_publisher(broker.port, alerts)
    pub.start()
    total = 300
    outage_started = threading.Event()
    try:
        wait_until(lambda: pub.connected, what="publisher connected")

        def producer():
            for i in range(total):
                pub.publish("coup/card", card(i))
                if i == 150:
                    outage_started.wait(5)   # the broker stops while this publishes; more during the outage
                time.sleep(0.002)

        thread = threading.Thread(target=producer)
        thread.start()
        sub.wait_for(lambda ms: len(ms) >= 50)
        broker.stop()                     # mid-stream, messages in flight
        outage_started.set()
        wait_until(lambda: not pub.connected, what="publisher noticed the outage")
        time.sleep(0.3)
        assert pub.stats()["queue_depth"] > 0
        broker.start()                    # same port
        thread.join(20)
        sub.wait_for(lambda ms: set(seqs(ms)) >= set(range(total)), timeout=20)
        got = seqs(sub.snapshot())
        assert first_arrivals(got) == list(range(total))     # every one, in order (dups allowed)
        wait_until(lambda: pub.stats()["queue_depth"] == 0, what="queue drained")
        stats = pub.stats()
        assert stats["reconnects"] >= 1 and stats["dropped"] == 0
        kinds = [k for k, _ in alerts]
        assert kinds[0] == "broker_connection_lost" and "broker_connection_restored" in kinds
    finally:
        pub.stop(timeout=2)
        sub.stop()


def test_unacknowledged_messages_are_resent_in_order_after_the_link_drops(mosquitto, mqtt_subscriber):
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/coup/card")
    with Relay(mosquitto.port) as relay:
        pub = make_publisher(relay.port)
        pub.start()
        try:
            for i in range(10):
                pub.publish("coup/card", card(i))
            sub.wait_for(lambda ms: len(ms) >= 10)
            wait_until(lambda: pub.stats()["queue_depth"] == 0, what="first ten acknowledged")
            relay.hold_replies()                 # the broker's PUBACKs stay behind the relay
            for i in range(10, 40):
                pub.publish("coup/card", card(i))
            wait_until(lambda: pub.stats()["inflight"] == 16, what="window full of unacknowledged messages")
            time.sleep(0.1)
            assert pub.stats()["inflight"] == 16 and pub.stats()["queued"] == 14   # the window holds
            relay.cut()                          # and the link drops
            wait_until(lambda: not pub.connected, what="link loss noticed")
            stats = pub.stats()
            assert stats["inflight"] == 0 and stats["queued"] == 30 and stats["resent"] == 16
            relay.release()
            sub.wait_for(lambda ms: set(seqs(ms)) >= set(range(40)), timeout=15)
            assert first_arrivals(seqs(sub.snapshot())) == list(range(40))
            wait_until(lambda: pub.stats()["queue_depth"] == 0, what="drained")
            assert relay.connections == 2 and pub.stats()["reconnects"] == 1
            # The broker published the Last Will of the dropped link before the new link's online.
            late = mqtt_subscriber(mosquitto.port, f"{PREFIX}/status")
            late.wait_for(lambda ms: states(ms) == ["online"])
        finally:
            pub.stop(timeout=2)


def test_retained_state_is_republished_after_a_reconnect(mosquitto, mqtt_subscriber):
    pub = make_publisher(mosquitto.port)
    pub.start()
    try:
        pub.publish("shoe", b'{"seq":1,"remaining":100}', retain=True)
        pub.publish("coup/current", b'{"seq":2,"coup":7}', retain=True)
        pub.publish("history", b'{"seq":3,"coups":[]}', retain=True)
        pub.publish("shoe", b'{"seq":4,"remaining":99}', retain=True)
        wait_until(lambda: pub.stats()["acked"] >= 5, what="acked")
        mosquitto.restart()               # no persistence: the broker forgets every retained message
        wait_until(lambda: pub.stats()["reconnects"] >= 1 and pub.stats()["queue_depth"] == 0, what="republished")
        late = mqtt_subscriber(mosquitto.port, f"{PREFIX}/#")
        got = late.wait_for(lambda ms: {m.topic: m.payload for m in ms if m.retain} if len(ms) >= 4 else None)
        assert got == {
            f"{PREFIX}/status": got[f"{PREFIX}/status"],
            f"{PREFIX}/shoe": b'{"seq":4,"remaining":99}',
            f"{PREFIX}/coup/current": b'{"seq":2,"coup":7}',
            f"{PREFIX}/history": b'{"seq":3,"coups":[]}',
        }
        assert json.loads(got[f"{PREFIX}/status"])["state"] == "online"
    finally:
        pub.stop(timeout=2)


@pytest.mark.parametrize("policy", ["drop_oldest", "drop_newest"])
def test_queue_full_policy_drops_counts_and_alerts_once(mosquitto_factory, policy):
    broker = mosquitto_factory(persistence=True)
    sub = Subscriber(broker.port, f"{PREFIX}/coup/card", persistent=True).start()
    alerts: list = []
    pub = make_publisher(broker.port, alerts, queue_max=10, queue_full=policy)
    pub.start()
    try:
        wait_until(lambda: pub.connected, what="connected")
        broker.stop()
        wait_until(lambda: not pub.connected, what="outage noticed")
        results = [pub.publish("coup/card", card(i)) for i in range(25)]
        stats = pub.stats()
        assert stats["dropped"] == 15 and stats["queued"] == 10
        full = [e for k, e in alerts if k == "publish_queue_full"]
        assert len(full) == 1 and full[0]["policy"] == policy and full[0]["queue_max"] == 10
        broker.start()
        expected = list(range(15, 25)) if policy == "drop_oldest" else list(range(10))
        sub.wait_for(lambda ms: set(seqs(ms)) >= set(expected), timeout=15)
        assert first_arrivals(seqs(sub.snapshot())) == expected
        if policy == "drop_newest":
            assert results == [True] * 10 + [False] * 15
        else:
            assert all(results)
    finally:
        pub.stop(timeout=2)
        sub.stop()


def test_username_password_and_a_wrong_password_keeps_retrying(mosquitto_factory, mqtt_subscriber, tmp_path,
                                                               caplog):
    pwfile = make_password_file(tmp_path / "passwd", {"table": "s3cret", "display": "d1"})
    broker = mosquitto_factory(password_file=pwfile)
    sub = mqtt_subscriber(broker.port, f"{PREFIX}/#", username="display", password="d1")

    good = make_publisher(broker.port, username="table", password="s3cret")
    good.start()
    good.publish("coup/card", card(1))
    sub.wait_for(lambda ms: seqs(ms) == [1])
    good.stop(timeout=2)

    alerts: list = []
    caplog.set_level(logging.DEBUG, logger="shoe_daemon.mqtt")
    bad = make_publisher(broker.port, alerts, username="table", password="wrong", client_id="bad-client")
    bad.start()
    try:
        bad.publish("coup/card", card(2))
        wait_until(lambda: bad.stats()["connect_failures"] >= 3, what="retries")
        stats = bad.stats()
        assert stats["connected"] is False and stats["queue_depth"] == 1
        assert "refused" in stats["last_error"] and "reason code 135" in stats["last_error"]
        errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert any("Not authorized" in e and "username and password" in e for e in errors)
        assert len(errors) == 1       # the same refusal is logged once, retries at DEBUG
        assert [k for k, _ in alerts] == ["broker_connection_lost"]
    finally:
        bad.stop(timeout=0.5)
    assert seqs(sub.snapshot()) == [1]


def test_broker_down_at_start_then_up(mqtt_subscriber, mosquitto_factory):
    port = free_port()
    alerts: list = []
    pub = make_publisher(port, alerts)
    pub.publish("shoe", b'{"seq":1}', retain=True)
    pub.start()                                       # nothing listens yet: fine, it retries
    try:
        wait_until(lambda: pub.stats()["connect_failures"] >= 1, what="first failure")
        assert "Connection refused" in pub.stats()["last_error"]
        for i in range(5):
            pub.publish("coup/card", card(i))
        broker = mosquitto_factory(port=port)
        wait_until(lambda: pub.connected and pub.stats()["queue_depth"] == 0, what="delivered")
        sub = mqtt_subscriber(broker.port, f"{PREFIX}/#")
        got = sub.wait_for(lambda ms: {m.topic: m.payload for m in ms if m.retain} if len(ms) >= 2 else None)
        assert got[f"{PREFIX}/shoe"] == b'{"seq":1}'
        assert pub.stats()["acked"] == 7                # online + shoe + 5 cards
        assert [k for k, _ in alerts] == ["broker_connection_lost", "broker_connection_restored"]
    finally:
        pub.stop(timeout=2)


def test_dns_failure_is_reported_and_retried(monkeypatch):
    real = socket.getaddrinfo

    def fake_getaddrinfo(host, *args, **kwargs):
        if host == "mqtt.table.example":
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_getaddrinfo)
    pub = MqttPublisher(MqttConfig(host="mqtt.table.example"), table_id="T1", version="x",
                        reconnect_min_delay=0.05, reconnect_max_delay=0.1)
    pub.start()
    try:
        wait_until(lambda: pub.stats()["connect_failures"] >= 2, what="retries")
        assert "Name or service not known" in pub.stats()["last_error"]
        assert pub.publish("coup/card", card(1)) is True
    finally:
        pub.stop(timeout=0.2)


def test_concurrent_publishers_keep_each_threads_order(mosquitto, mqtt_subscriber):
    sub = mqtt_subscriber(mosquitto.port, f"{PREFIX}/t/#")
    pub = make_publisher(mosquitto.port)
    pub.start()
    try:
        check_each_threads_order(pub, sub, threads=4)
    finally:
        pub.stop(timeout=2)


def test_bad_topics_are_programming_errors():
    pub = MqttPublisher(MqttConfig(host="127.0.0.1"), table_id="T1", version="x")
    for bad in ("/shoe", "coup/#", "a/+/b", "", "status"):
        with pytest.raises(ValueError):
            pub.publish(bad, b"{}")
    with pytest.raises(ValueError):
        pub.publish("shoe", b"{}", qos=3)
    with pytest.raises(ValueError):
        MqttPublisher(MqttConfig(host="h", prefix="/abs"), table_id="T1", version="x")
    assert MqttPublisher(MqttConfig(host="h", prefix="casino/t9/"), table_id="T1", version="x").prefix == "casino/t9"
    pub.stop()   # never started: nothing to do


def test_mosquitto_harness_restart_keeps_the_port(mosquitto):
    port = mosquitto.port
    assert mosquitto.start_seconds is not None and mosquitto.running
    mosquitto.restart()
    assert mosquitto.port == port and mosquitto.running
    with Subscriber(port, "x"):
        pass
    with MosquittoServer(websockets_port=free_port()) as ws:
        with Subscriber(ws.websockets_port, "x", transport="websockets"):
            pass


def make_certs(d: Path) -> dict[str, Path]:
    """A throw-away CA, a server cert for 127.0.0.1 and a client cert, with the openssl CLI."""
    openssl = shutil.which("openssl")
    assert openssl, "openssl is not installed: apt-get install -y openssl"

    def run(*args):
        subprocess.run([openssl, *args], cwd=d, check=True, capture_output=True, timeout=30)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=test-ca")
    for name, cn in (("server", "127.0.0.1"), ("client", "table-T1")):
        run("req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={cn}")
        (d / f"{name}.ext").write_text("subjectAltName=IP:127.0.0.1\n" if name == "server" else "basicConstraints=CA:FALSE\n")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", "2", "-extfile", f"{name}.ext")
    return {n: d / n for n in ("ca.pem", "server.pem", "server.key", "client.pem", "client.key")}


def test_tls_with_a_client_certificate(mosquitto_factory, tmp_path):
    certs = make_certs(tmp_path)
    tls_port = free_port()
    broker = mosquitto_factory(extra_conf=[
        f"listener {tls_port} 127.0.0.1",
        f"cafile {certs['ca.pem']}", f"certfile {certs['server.pem']}", f"keyfile {certs['server.key']}",
        "require_certificate true",
    ])
    pub = make_publisher(tls_port, tls_ca=str(certs["ca.pem"]), tls_cert=str(certs["client.pem"]),
                         tls_key=str(certs["client.key"]))
    pub.start()
    try:
        pub.publish("shoe", b'{"seq":1}', retain=True)
        wait_until(lambda: pub.connected and pub.stats()["queue_depth"] == 0, what="delivered over TLS")
    finally:
        pub.stop(timeout=2)
    with Subscriber(broker.port, f"{PREFIX}/shoe") as sub:        # the plain listener sees it
        sub.wait_for(lambda ms: [m.payload for m in ms] == [b'{"seq":1}'])

    # Without the client certificate the handshake fails: reported, retried, never raised.
    nocert = make_publisher(tls_port, tls_ca=str(certs["ca.pem"]))
    nocert.start()
    try:
        wait_until(lambda: nocert.stats()["connect_failures"] >= 2, what="TLS failures")
        assert not nocert.connected
    finally:
        nocert.stop(timeout=0.2)
    with pytest.raises(ValueError, match="TLS files"):
        make_publisher(tls_port, tls_ca=str(tmp_path / "missing.pem")).start()
