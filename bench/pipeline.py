"""The whole pipeline on real parts: pty -> daemon (subprocess) -> journal -> Mosquitto -> subscriber.

    .venv/bin/python -m bench pipeline

- context for the latency: this disk's append + fdatasync time (paid once per commit with journal
  synchronous=full) and the broker hop alone (paho publish -> Mosquitto -> paho on_message).
- latency: from the last byte of a CARD_DRAWN frame written on the pty (timestamped right after
  ``os.write`` returns) to its ``coup/card`` message at a subscriber in its own process
  (``bench/_subscriber.py``, MQTT 3.1.1, QoS 1; ``time.perf_counter`` is CLOCK_MONOTONIC, the same
  clock in both processes), for every card of a shuffled 8-deck shoe, cards 6 ms apart (latency,
  not queueing); journal ``synchronous`` full (the default) and normal. This process plays the shoe
  itself with ``firmware_protocol.ShoeConnection`` (it answers the daemon's handshake, ACKs, light
  commands and clock sync). Cards ending a coup are also shown apart: their message leaves first,
  then the core computes the result, history, roads, stats and odds (their messages follow).
- throughput: the emulated shoe at full speed (pace 0, its default window of 16 unacknowledged
  events) for 3 shoes: cards per second from the start of dealing to the last result at a subscriber
  in its own process (``bench/_subscriber.py``: in this process it cost more CPU a card than the
  daemon and capped the figure).
- daemon CPU time per card: the daemon process's user + system time (/proc/PID/stat) over that
  throughput run, divided by the cards dealt (every thread of the daemon: reader, loop, journal,
  MQTT), next to its target.
- the publisher alone: ``MqttPublisher`` (delivery queue + paho client) on an asyncio loop in this
  process, QoS 1 to Mosquitto, as fast as the window of 16 unacknowledged messages allows:
  messages/s and this process's CPU time per message, MQTT 5 and 3.1.1.
- paho alone: paho's own client with nothing of ours around it (its public ``publish``,
  ``loop_write`` and ``loop_read`` in a plain select loop, the same window and payload): the least
  any publisher built on paho's public API can cost a message here. Times the messages a card,
  it is the floor under the daemon's CPU a card that no work of ours can go below. Printed with
  the core alone (``bench core``'s run, no I/O) beside it: the least those two parts cost a card.
- memory of the daemon process (VmRSS, VmHWM) after those shoes (no camera).
- start-up: from the fork of ``shoe-daemon run`` to its ``READY=1`` on a NOTIFY_SOCKET this process
  binds, on a fresh journal and on the journal of the 3 shoes (replay of the current shoe).

Every figure is printed next to its target with ``met`` / ``NOT met``. Needs mosquitto
(scripts/system-deps.sh). Files go to a temporary directory (``BENCH_DIR``).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from bench import cpu_ticks, steal_share
from firmware_protocol.connection import ShoeConnection
from firmware_protocol.messages import CardDrawn
from shoe_daemon.emulator import DealerScript, EmulatedShoe
from shoe_daemon.pty_line import PtyLine
from tests.e2e.harness import DaemonProcess, NotifySocket, write_config
from tests.support.mosquitto import MosquittoServer

SPACING = 0.006             # s between two frames of the latency run
THROUGHPUT_SHOES = 3

TARGET_P99_MS = 2.0
TARGET_CARDS_PER_S = 1300       # twice the card frames/s of a 115200-baud shoe (issue 12)
TARGET_CPU_US_PER_CARD = 250
PUBLISHER_MESSAGES = 20000
TARGET_RSS_MB = 120
TARGET_READY_S = 2.0
# A coup/card message's size, for the publisher and paho-alone runs.
CARD_PAYLOAD = json.dumps({"schema": 1, "seq": 0, "table_id": "bench", "type": "card", "coup": 12, "side": "punto",
                           "card": "9H", "punto_total": 9, "banco_total": 7, "next": None, "source": "shoe",
                           "x": "y" * 80}).encode()


def _pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


class TimedSubscriber:
    """A paho subscriber stamping every message with time.perf_counter() first thing in on_message."""

    def __init__(self, port: int):
        self.arrivals: list[tuple[float, str, bytes]] = []   # live messages only (no retained ones)
        self._cond = threading.Condition()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-{os.getpid()}",
                                  protocol=mqtt.MQTTv5)
        self.client.on_connect = lambda c, u, f, rc, p: c.subscribe("baccarat/#", qos=1)
        self._subscribed = threading.Event()
        self.client.on_subscribe = lambda *a: self._subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port, 30)
        self.client.loop_start()
        if not self._subscribed.wait(10):
            raise RuntimeError("the bench subscriber did not subscribe")

    def _on_message(self, client, userdata, message) -> None:
        t = time.perf_counter()
        if message.retain:
            return
        with self._cond:
            self.arrivals.append((t, message.topic, bytes(message.payload)))
            self._cond.notify_all()

    def wait_for(self, predicate, timeout: float):
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate(self.arrivals)
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the subscriber did not get what the bench waited for")
                self._cond.wait(min(left, 0.1))

    def clear(self) -> None:
        with self._cond:
            self.arrivals.clear()

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


class PtyShoe:
    """This process as the shoe: a raw pty, a stable link to it, ShoeConnection driven by hand."""

    def __init__(self, link: str):
        self.link = link
        self.line = PtyLine(link)
        self.line.plug()
        self.conn = ShoeConnection(now=time.monotonic(), boot_id=0x5EED)

    def service(self, until: float) -> None:
        """Answer the host (handshake, ACKs, lights, clock sync) and send heartbeats until ``until``."""
        while True:
            now = time.monotonic()
            left = until - now
            data = self.line.read(max(0.0, left))
            if data:
                self.conn.receive_data(data, time.monotonic())
                self.conn.events()
            out = self.conn.tick(time.monotonic())
            if out:
                self._write(out)
            if time.monotonic() >= until:
                return

    def _write(self, data: bytes) -> None:
        self.line.write(data)

    def send(self, message) -> float:
        """Write one frame; the perf_counter time right after its last byte was written."""
        self._write(self.conn.send(message, time.monotonic()))
        return time.perf_counter()

    def close(self) -> None:
        self.line.close()


def fsync_ms(directory: Path, n: int = 200) -> list[float]:
    """Append 4 KB + fdatasync on this disk, in ms (as a WAL commit does): the floor a durable
    (synchronous full) commit adds to every card's latency."""
    path = directory / "fsync.probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    out = []
    try:
        for i in range(n):
            t0 = time.perf_counter()
            os.pwrite(fd, os.urandom(4096), i * 4096)
            os.fdatasync(fd)
            out.append((time.perf_counter() - t0) * 1000)
    finally:
        os.close(fd)
        path.unlink()
    return out


def mqtt_hop_ms(broker: MosquittoServer, n: int = 300) -> list[float]:
    """publish() (QoS 1) in a paho client -> Mosquitto -> on_message of the subscriber, in ms:
    the floor of the broker hop alone, in this process."""
    sub = TimedSubscriber(broker.port)
    pub = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-pub-{os.getpid()}", protocol=mqtt.MQTTv5)
    pub.connect("127.0.0.1", broker.port, 30)
    pub.loop_start()
    try:
        sent = {}
        for i in range(n):
            sent[i] = time.perf_counter()
            pub.publish("baccarat/hop/probe", str(i).encode(), qos=1)
            time.sleep(SPACING)
        arrivals = sub.wait_for(lambda arr: arr if len(arr) >= n else None, timeout=30)
        return [(t - sent[int(payload)]) * 1000 for t, _, payload in arrivals]
    finally:
        pub.disconnect()
        pub.loop_stop()
        sub.stop()


def bench_latency(workdir: Path, broker: MosquittoServer, notify: NotifySocket,
                  synchronous: str) -> tuple[list[float], list[float]]:
    run = workdir / f"latency-{synchronous}"
    run.mkdir()
    shoe = PtyShoe(str(run / "shoe"))
    sub = SubscriberProcess(broker.port, f"baccarat/bench-{synchronous}")
    cfg = write_config(run / "daemon.toml", shoe_port=shoe.link, journal=run / "journal.sqlite3",
                       mqtt_port=broker.port, table_id=f"bench-{synchronous}", synchronous=synchronous,
                       log_level="warning")
    daemon = DaemonProcess(cfg, notify=notify, workdir=run)
    try:
        sub.wait_for("subscribed", 1, timeout=20)
        daemon.start(wait_ready=False)
        # Handshake: serve the pty until the daemon says the shoe's link is up.
        deadline = time.monotonic() + 30
        while not sub.has("linkup"):
            if time.monotonic() > deadline or not daemon.running:
                raise RuntimeError(f"the link did not come up:\n{daemon.log_text()}")
            shoe.service(time.monotonic() + 0.05)
        sent: dict[int, float] = {}
        next_at = time.monotonic()
        script = DealerScript(decks=8, seed=11, shoes=1)
        for action in script:
            shoe.service(next_at)
            t = shoe.send(action)
            if isinstance(action, CardDrawn):
                sent[action.counter] = t
            next_at = time.monotonic() + SPACING
        cards = sub.wait_for("card", len(sent), timeout=30)
        got: dict[int, float] = {}
        for _, t, counter in cards:
            got.setdefault(int(counter), float(t))
        assert set(got) == set(sent), "cards missing at the subscriber"
        last_of_coup = {}
        for d in script.dealt:
            if d.coup is not None:
                last_of_coup[d.coup] = d.counter
        ends = set(last_of_coup.values())
        return ([(got[c] - sent[c]) * 1000 for c in sent if c not in ends],
                [(got[c] - sent[c]) * 1000 for c in sent if c in ends])
    finally:
        if daemon.proc is not None:
            daemon.stop()
        sub.stop()
        shoe.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process, every thread (utime + stime in /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_publisher(broker: MosquittoServer, protocol: str, n: int = PUBLISHER_MESSAGES) -> tuple[float, float]:
    """``n`` QoS 1 messages of a coup/card's size through MqttPublisher on an asyncio loop to the
    broker: (messages/s from the first publish to the last PUBACK, CPU us per message in this
    process). The producer keeps at most 500 messages waiting (as the daemon's flow control does)."""
    import asyncio

    from shoe_daemon.config import MqttConfig
    from shoe_daemon.publish.mqtt import MqttPublisher

    payload = CARD_PAYLOAD

    async def run() -> tuple[float, float]:
        pub = MqttPublisher(MqttConfig(host="127.0.0.1", port=broker.port, protocol=protocol,
                                       client_id=f"bench-pub-{protocol}", queue_max=100_000),
                            table_id=f"bench-pub-{protocol.replace('.', '')}", version="bench",
                            loop=asyncio.get_running_loop())
        pub.start()
        while not (pub.connected and pub.stats()["queue_depth"] == 0):
            await asyncio.sleep(0.005)
        base = pub.stats()["acked"]
        t0, c0 = time.perf_counter(), time.process_time()
        sent = 0
        while sent < n:
            while pub.backlog > 500:
                await asyncio.sleep(0)
            for _ in range(min(100, n - sent)):
                pub.publish("coup/card", payload)
                sent += 1
            await asyncio.sleep(0)
        while pub.stats()["acked"] - base < n:
            await asyncio.sleep(0.0005)
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
        pub.stop(timeout=2)
        return n / elapsed, cpu / n * 1e6

    return asyncio.run(run())


def bench_paho_alone(broker: MosquittoServer, protocol: str, n: int = PUBLISHER_MESSAGES,
                     window: int = 16) -> float:
    """CPU us per QoS 1 message of paho's client alone (no queue, no asyncio, no callbacks of ours
    but a counter): ``publish`` while fewer than ``window`` are unacknowledged, then write, select,
    read. The payload is the publisher benchmark's."""
    import select

    payload = CARD_PAYLOAD
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-paho-{protocol}",
                         protocol=mqtt.MQTTv5 if protocol == "5" else mqtt.MQTTv311)
    acked = 0

    def on_publish(client, userdata, mid, reason_code, properties) -> None:
        nonlocal acked
        acked += 1

    client.on_publish = on_publish
    client.connect("127.0.0.1", broker.port)
    while not client.is_connected():
        client.loop(0.05)
    sock = client.socket()
    c0, sent = time.process_time(), 0
    while acked < n:
        while sent < n and sent - acked < window:
            client.publish(f"bench/paho/{protocol}", payload, qos=1)
            sent += 1
        client.loop_write()
        if select.select([sock], [], [], 1.0)[0]:
            client.loop_read()
    cpu = time.process_time() - c0
    client.disconnect()
    return cpu / n * 1e6


def core_alone_us() -> float:
    """CPU us a card of the core alone (``bench core``: the pipeline with no journal and no I/O,
    outputs encoded), the better of two runs."""
    from bench import core

    stream = core.events()
    runs = [core.run(stream) for _ in range(2)]
    cards, _, _, cpu = min(runs, key=lambda r: r[3])
    return cpu / cards * 1e6


class SubscriberProcess:
    """``bench._subscriber`` in its own process (see there why): the lines it writes, as they come."""

    def __init__(self, port: int, prefix: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "bench._subscriber", str(port), prefix],
                                     cwd=Path(__file__).resolve().parent.parent, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.lines: list[list[str]] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.split())
                self._cond.notify_all()

    def has(self, kind: str) -> bool:
        with self._cond:
            return any(line[0] == kind for line in self.lines)

    def wait_for(self, kind: str, n: int, timeout: float) -> list[list[str]]:
        """The first ``n`` lines of ``kind``, waiting up to ``timeout`` s for them."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [line for line in self.lines if line[0] == kind]
                if len(found) >= n:
                    return found[:n]
                left = deadline - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(f"the subscriber wrote {len(found)} '{kind}' lines, not {n}")
                self._cond.wait(min(left, 0.5))

    def stop(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def bench_throughput(workdir: Path, broker: MosquittoServer, notify: NotifySocket):
    run = workdir / "throughput"
    run.mkdir()
    shoe = EmulatedShoe(decks=8, seed=12, pace=0, shoes=THROUGHPUT_SHOES, link=str(run / "shoe"))
    shoe.open()
    sub = SubscriberProcess(broker.port, "baccarat/bench")
    cfg = write_config(run / "daemon.toml", shoe_port=shoe.link, journal=run / "journal.sqlite3",
                       mqtt_port=broker.port, table_id="bench", log_level="warning")
    daemon = DaemonProcess(cfg, notify=notify, workdir=run)
    ready_fresh = None
    try:
        sub.wait_for("subscribed", 1, timeout=20)
        daemon.start()
        ready_fresh = daemon.ready_at - daemon.started_at
        sub.wait_for("state", 1, timeout=20)
        t0 = time.perf_counter()
        cpu0 = cpu_seconds(daemon.pid)
        shoe.start()
        if not shoe.wait(120):
            raise RuntimeError("the emulated shoe did not finish")
        coups = len({(d.shoe, d.coup) for d in shoe.dealt if d.coup is not None})
        results = sub.wait_for("result", coups, timeout=60)
        cpu = cpu_seconds(daemon.pid) - cpu0
        elapsed = float(results[-1][1]) - t0
        messages = int(results[-1][2])
        cards = len(shoe.dealt)
        status = daemon.proc_status()
        rss = int(status["VmRSS"].split()[0]) / 1024
        hwm = int(status["VmHWM"].split()[0]) / 1024
    finally:
        daemon.stop()
        shoe.stop()
        sub.stop()
    # Start-up again on the journal of those shoes: verification + replay of the current shoe.
    shoe = EmulatedShoe(decks=8, seed=13, pace=0, shoes=1, link=str(run / "shoe"))
    shoe.open()
    readies = []
    try:
        for _ in range(3):
            d = DaemonProcess(cfg, notify=notify, workdir=run)
            d.start()
            readies.append(d.ready_at - d.started_at)
            d.stop()
    finally:
        shoe.stop()
    return cards, coups, messages, elapsed, cpu, rss, hwm, ready_fresh, readies


def main() -> dict[str, object]:
    base = os.environ.get("BENCH_DIR") or None
    workdir = Path(tempfile.mkdtemp(prefix="bench-pipeline-", dir=base))
    # No limit on the messages Mosquitto queues for a subscriber (default 1000): at full speed the daemon
    # publishes faster than this process's Python subscriber takes them, and what the broker dropped
    # would never arrive (the throughput run would time out waiting for the last result).
    broker = MosquittoServer(extra_conf=["max_queued_messages 0"]).start()
    notify = NotifySocket()
    results: dict[str, object] = {}
    ticks0 = cpu_ticks()
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"pipeline: pty -> daemon -> journal -> Mosquitto {broker.port} -> subscriber (files in {workdir};"
              f" {os.cpu_count()} CPUs, load average {load})")
        fs = fsync_ms(workdir)
        results["fsync_ms"] = {"p50": _pct(fs, 50), "p99": _pct(fs, 99)}
        print(f"  this disk: append 4 KB + fdatasync p50 {_pct(fs, 50):.2f} ms, p99 {_pct(fs, 99):.2f} ms "
              "(every card's commit pays one with journal synchronous=full)")
        hop = mqtt_hop_ms(broker)
        results["mqtt_hop_ms"] = {"p50": _pct(hop, 50), "p99": _pct(hop, 99)}
        print(f"  the broker hop alone (paho publish -> Mosquitto -> paho on_message): p50 {_pct(hop, 50):.2f} ms,"
              f" p99 {_pct(hop, 99):.2f} ms")
        for synchronous in ("full", "normal"):
            others, ends = bench_latency(workdir, broker, notify, synchronous)
            lat = others + ends
            p50, p99 = _pct(lat, 50), _pct(lat, 99)
            results[f"latency_{synchronous}"] = {"n": len(lat), "p50_ms": p50, "p99_ms": p99, "max_ms": max(lat),
                                                 "p99_ms_mid_coup": _pct(others, 99),
                                                 "p99_ms_coup_ending": _pct(ends, 99)}
            print(f"  latency card frame -> subscriber, journal {synchronous:<6}: p50 {p50:6.2f} ms  p99 {p99:6.2f} ms"
                  f"  max {max(lat):6.2f} ms  ({len(lat)} cards, {SPACING * 1000:.0f} ms apart)"
                  f"   target p99 <= {TARGET_P99_MS} ms: {_verdict(p99 <= TARGET_P99_MS)}")
            print(f"      cards within a coup: p50 {_pct(others, 50):6.2f} p99 {_pct(others, 99):6.2f} ms ({len(others)});"
                  f" cards ending a coup (their message first, then the result, roads, odds...): p50 "
                  f"{_pct(ends, 50):6.2f} p99 {_pct(ends, 99):6.2f} ms ({len(ends)})")
        for protocol in ("5", "3.1.1"):
            mps, us = bench_publisher(broker, protocol)
            results[f"publisher_mqtt{protocol}"] = {"messages_per_s": mps, "cpu_us_per_message": us}
            print(f"  the publisher alone (queue + paho client on an asyncio loop, QoS 1, MQTT {protocol:<5}):"
                  f" {mps:,.0f} messages/s, {us:.1f} us CPU a message ({PUBLISHER_MESSAGES:,} messages)")
        for protocol in ("5", "3.1.1"):
            us = bench_paho_alone(broker, protocol)
            results[f"paho_alone_mqtt{protocol}"] = {"cpu_us_per_message": us}
            print(f"  paho alone (its own client in a select loop, nothing of ours, QoS 1, MQTT {protocol:<5}):"
                  f" {us:.1f} us CPU a message")
        cards, coups, messages, elapsed, cpu, rss, hwm, ready_fresh, readies = bench_throughput(workdir, broker, notify)
        rate = cards / elapsed
        cpu_us = cpu / cards * 1e6
        results.update(cards=cards, coups=coups, messages=messages, seconds=elapsed, cards_per_s=rate, cpu_us_per_card=cpu_us,
                       rss_mb=rss, hwm_mb=hwm, ready_fresh_s=ready_fresh, ready_replay_s=readies)
        print(f"  throughput, emulator pace 0, journal full: {cards} cards / {coups} coups ({THROUGHPUT_SHOES} shoes)"
              f" in {elapsed:.2f} s = {rate:,.0f} cards/s ({messages / cards:.2f} messages a card)"
              f"   target >= {TARGET_CARDS_PER_S:,} cards/s: {_verdict(rate >= TARGET_CARDS_PER_S)}")
        print(f"  daemon CPU time per card in that run (all its threads): {cpu_us:.0f} us"
              f"   target <= {TARGET_CPU_US_PER_CARD} us: {_verdict(cpu_us <= TARGET_CPU_US_PER_CARD)}")
        paho = results["publisher_mqtt5"]["cpu_us_per_message"] * messages / cards
        print(f"      of which the publisher's share, from its figure alone above (MQTT 5 x {messages / cards:.2f}"
              f" messages a card): ~{paho:.0f} us; the rest (reader, journal, core) ~{cpu_us - paho:.0f} us")
        floor = min(results["paho_alone_mqtt5"]["cpu_us_per_message"],
                    results["paho_alone_mqtt3.1.1"]["cpu_us_per_message"]) * messages / cards
        core = core_alone_us()
        results.update(paho_alone_us_per_card=floor, core_alone_us_per_card=core)
        print(f"      the least two parts cost: paho alone x {messages / cards:.2f} messages a card ~{floor:.0f} us"
              f" + the core alone (bench core, no I/O) {core:.0f} us = {floor + core:.0f} us a card, before the"
              f" serial link and the journal ({'over' if floor + core > TARGET_CPU_US_PER_CARD else 'under'}"
              f" the target)")
        print(f"  daemon memory after {THROUGHPUT_SHOES} shoes (no camera): VmRSS {rss:.1f} MB, VmHWM {hwm:.1f} MB"
              f"   target <= {TARGET_RSS_MB} MB: {_verdict(max(rss, hwm) <= TARGET_RSS_MB)}")
        worst = max([ready_fresh, *readies])
        print(f"  start to READY=1: fresh journal {ready_fresh:.2f} s; after {THROUGHPUT_SHOES} shoes "
              f"(verify + replay) {', '.join(f'{r:.2f}' for r in readies)} s (median "
              f"{statistics.median(readies):.2f})   target <= {TARGET_READY_S} s: {_verdict(worst <= TARGET_READY_S)}")
        steal = steal_share(ticks0, cpu_ticks())
        if steal is not None:
            results["host_steal"] = steal
            print(f"  host steal over this benchmark: {100 * steal:.1f}% of the CPU time (other guests ran on"
                  " this VM's CPUs: every figure above waited for that too)")
    finally:
        notify.close()
        broker.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)
    return results


if __name__ == "__main__":
    main()
