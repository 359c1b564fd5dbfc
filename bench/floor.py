"""The floor under a casino's load: 200 tables at a live pace into one broker, the floor into PostgreSQL.

    .venv/bin/python -m bench.floor                     # 200 tables, 60 s, PostgreSQL
    .venv/bin/python -m bench.floor --tables 50 --seconds 20 --database sqlite
    .venv/bin/python -m bench.floor --outage 60         # bridged tables, the floor link down 60 s
    .venv/bin/python -m bench floor                     # with the other benchmarks (defaults)

Load: each table replays the real messages of the fixture library's clean 8-deck shoe
(``fixtures/clean-8-decks.chk.gz``: coup snapshots, cards, results, history, roads,
stats, odds, alerts, as the core published them), re-addressed to its own table id,
one card a second (a live table's pace: the card's message and everything the core
published with it), tables started at random offsets within the first second. The
publishers are a few paho clients (QoS 1) in this process; each message's ``t`` is
stamped with the time it is handed to paho, so the floor's "t -> committed row"
latency (``/api/ingest``) is publish -> commit.

The floor is the real ``shoe-daemon floor`` process on a private PostgreSQL (initdb +
pg_ctl in a temp dir, as the tests) or SQLite, subscribed with an MQTT 5 shared
subscription to a private Mosquitto.

``--outage S``: the tables publish to their own Mosquitto brokers (``--bridges`` of
them, tables spread over them), each bridged to the floor broker with QoS 1 and
persistence (docs/floor.md); the floor broker is stopped S seconds in the middle of the
run and started again.

Printed: messages/s published and ingested (sustained, over the run), p50/p99/max from
publish to committed row (target p99 <= 100 ms), the floor process's CPU (% of one
core) and RSS (now and peak), and lost / doubled messages and coups (target 0 / 0).
"""

from __future__ import annotations

import argparse
import heapq
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import cpu_ticks, steal_share  # noqa: E402
from shoe_daemon.floor.store import Store  # noqa: E402
from shoe_daemon.recording.check import read_check  # noqa: E402
from tests.floor.harness import FloorProcess, bridge_conf  # noqa: E402
from tests.floor.pg import PostgresServer  # noqa: E402
from tests.support.mosquitto import MosquittoServer  # noqa: E402
from tests.support.waiting import wait_until  # noqa: E402

FIXTURE = ROOT / "fixtures" / "clean-8-decks.chk.gz"
TARGET_P99_MS = 100.0
PUBLISHERS = 4
T_MARK = "__T__"


def load_cards() -> list[list[tuple[str, int, bool, str]]]:
    """The fixture's messages grouped by card: each group starts with a coup/card message
    (the first group is the table's initial state). Payloads are templates: table id
    ``{TABLE}`` and ``t`` to be stamped."""
    groups: list[list] = [[]]
    for line in read_check(FIXTURE):
        topic, qos, retain, payload = line.split(" ", 3)
        suffix = topic.split("/", 2)[2]
        body = json.loads(payload)
        if suffix == "coup/card" and groups[-1]:
            groups.append([])
        if "t" in body:
            body["t"] = T_MARK
        if "table_id" in body:
            body["table_id"] = "{TABLE}"
        text = json.dumps(body, sort_keys=True, separators=(",", ":"))
        groups[-1].append((suffix, int(qos), retain == "r", text, body.get("seq")))
    return groups


class Load:
    """``n`` tables, one card a second each, from ``processes`` publisher processes.

    Each process owns a slice of the tables and one paho client that it drives itself
    (no network thread: ``publish`` writes the packet to the socket at once, the PUBACKs
    are read between cards), so a message's ``t`` is stamped at the moment it is written
    and the generator's own threads never queue it. Each process also measures how late
    it was against its schedule (``lag``): a generator that cannot keep the pace says so."""

    def __init__(self, n: int, seconds: float, brokers: list[int], prefix: str = "baccarat",
                 processes: int = PUBLISHERS) -> None:
        self.n, self.seconds, self.prefix = n, seconds, prefix
        self.tables = [f"b{i:03d}" for i in range(1, n + 1)]
        self.brokers = brokers
        self.processes = max(1, min(processes, n))
        self.published: dict[str, list[int]] = {t: [] for t in self.tables}
        self.count = 0
        self.lag: list[float] = []
        self.results = self.alert_events = 0      # coup/result and alerts/event messages published
        self.start_at = 0.0
        self._procs: list = []
        self._pipes: list = []

    def slices(self) -> list[tuple[int, list[int]]]:
        """(broker port, table indexes) per process: a table stays on one process and one broker,
        so its messages keep their order; with bridges, a table publishes to its own table broker."""
        out = []
        for p in range(self.processes):
            mine = [i for i in range(self.n) if i % self.processes == p]
            by_port: dict[int, list[int]] = {}
            for i in mine:
                by_port.setdefault(self.brokers[i % len(self.brokers)], []).append(i)
            out.extend(by_port.items())
        return out

    def start(self) -> float:
        ctx = multiprocessing.get_context("fork")
        self.start_at = time.time() + 2.0      # every process connected before the first card
        for k, (port, indexes) in enumerate(self.slices()):
            recv, send = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_publish, name=f"bench-load-{k}", daemon=True,
                               args=(k, port, [(i, self.tables[i]) for i in indexes], self.prefix,
                                     self.start_at, self.seconds, send))
            proc.start()
            send.close()
            self._procs.append(proc)
            self._pipes.append(recv)
        return self.start_at

    def running(self) -> bool:
        return any(p.is_alive() and not r.poll() for p, r in zip(self._procs, self._pipes, strict=True))

    def finish(self, timeout: float = 300.0) -> float:
        """Wait for every process (all its messages acknowledged by its broker); returns the
        seconds the load ran (first scheduled card to the last publish)."""
        last = self.start_at
        for proc, pipe in zip(self._procs, self._pipes, strict=True):
            if not pipe.poll(timeout):
                raise RuntimeError(f"{proc.name} did not finish (exit code {proc.exitcode})")
            result = pipe.recv()
            if "error" in result:
                raise RuntimeError(f"{proc.name}: {result['error']}")
            for table, seqs in result["published"].items():
                self.published[table].extend(seqs)
            self.count += result["count"]
            self.results += result["results"]
            self.alert_events += result["alert_events"]
            self.lag.extend(result["lag"])
            last = max(last, result["last"])
            proc.join(10)
        return last - self.start_at

    def close(self) -> None:
        for proc in self._procs:
            if proc.is_alive():
                proc.kill()


def _publish(k: int, port: int, tables: list[tuple[int, str]], prefix: str, start: float, seconds: float,
             pipe) -> None:
    """One publisher process (see ``Load``)."""
    try:
        pipe.send(_publish_tables(k, port, tables, prefix, start, seconds))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the run
        pipe.send({"error": repr(exc)})


def _publish_tables(k, port, tables, prefix, start, seconds) -> dict:
    groups = load_cards()
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-load-{k}-{os.getpid()}",
                         protocol=mqtt.MQTTv5)
    client.max_queued_messages_set(0)
    client.max_inflight_messages_set(0)      # unlimited: the broker's receive maximum applies
    acked = [0]                               # PUBACKs read (QoS 1: every message is acknowledged once)
    client.on_publish = lambda *_: acked.__setitem__(0, acked[0] + 1)
    client.connect("127.0.0.1", port, 30)
    deadline = time.monotonic() + 30
    while not client.is_connected():
        client.loop(0.05)
        if time.monotonic() > deadline:
            raise RuntimeError(f"cannot connect to 127.0.0.1:{port}")
    rnd = random.Random(7 + k)
    heap = [(start + rnd.random(), i, 0) for i, _ in tables]
    names = dict(tables)
    heapq.heapify(heap)
    end = start + seconds
    published: dict[str, list[int]] = {t: [] for _, t in tables}
    lag: list[float] = []
    count, last = 0, start
    kinds = {"coup/result": 0, "alerts/event": 0}
    while heap:
        at, i, n = heapq.heappop(heap)
        if at > end or n >= len(groups):
            continue
        while (delay := at - time.time()) > 0:
            client.loop(min(delay, 0.05))           # read PUBACKs while waiting for the card's time
        lag.append(time.time() - at)
        table = names[i]
        for suffix, qos, retain, text, seq in groups[n]:
            now = time.time()
            payload = text.replace('"{TABLE}"', f'"{table}"').replace(f'"{T_MARK}"', f"{now:.6f}")
            info = client.publish(f"{prefix}/{table}/{suffix}", payload, qos=qos, retain=retain)
            if info.rc != mqtt.MQTT_ERR_SUCCESS:
                raise RuntimeError(f"publish failed: {mqtt.error_string(info.rc)}")
            if seq is not None:
                published[table].append(seq)
            if suffix in kinds:
                kinds[suffix] += 1
            count += 1
        last = time.time()
        heapq.heappush(heap, (at + 1.0, i, n + 1))
    deadline = time.monotonic() + 300
    while acked[0] < count and time.monotonic() < deadline:
        client.loop(0.1)
    unacked = count - acked[0]
    client.disconnect()
    if unacked:
        raise RuntimeError(f"{unacked} messages never acknowledged by the broker")
    return {"published": published, "count": count, "lag": lag, "last": last,
            "results": kinds["coup/result"], "alert_events": kinds["alerts/event"]}


def proc_figures(pid: int) -> dict:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    kb = lambda k: int(status[k].split()[0])  # noqa: E731
    # schedstat's second field: nanoseconds the thread was runnable and waited for a CPU.
    wait = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            wait += int((task / "schedstat").read_text().split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            pass
    return {"cpu_s": cpu, "rss_mb": kb("VmRSS") / 1024, "hwm_mb": kb("VmHWM") / 1024, "wait_s": wait}


def cpu_pressure() -> float | None:
    """Seconds during which some runnable task on the machine waited for a CPU (PSI), or None."""
    try:
        some = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except OSError:
        return None
    return int(some.rsplit("total=", 1)[1]) / 1e6


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:   # noqa: S310 - our own service
        return json.loads(r.read())


def run(args) -> int:
    work = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    pg = None
    brokers: list[MosquittoServer] = []
    floor = None
    load = None
    try:
        if args.database == "postgresql":
            pg = PostgresServer(fsync=args.fsync).start()
            database = pg.create_database("floor")
        else:
            database = f"sqlite:///{work / 'floor.sqlite3'}"
        floor_broker = MosquittoServer(persistence=True, workdir=work / "floor-broker",
                                       extra_conf=["max_queued_messages 1000000", "max_inflight_messages 1000",
                                                   "set_tcp_nodelay true"])
        (work / "floor-broker").mkdir()
        floor_broker.start()
        brokers.append(floor_broker)
        table_ports = [floor_broker.port]
        tables_for_bridge = [f"b{i:03d}" for i in range(1, args.tables + 1)]
        if args.outage:
            table_ports = []
            for k in range(args.bridges):
                d = work / f"table-broker-{k}"
                d.mkdir()
                mine = tables_for_bridge[k::args.bridges]
                # One bridge per table broker, carrying the tables that publish to it.
                conf = (["set_tcp_nodelay true"] + bridge_conf(f"x{k}", floor_broker.port)[:-1]
                        + [f"topic baccarat/{t}/# out 1" for t in mine])
                b = MosquittoServer(persistence=True, workdir=d, extra_conf=conf).start()
                brokers.append(b)
                table_ports.append(b.port)
        cfg = work / "floor.toml"
        cfg.write_text(f"""[floor]
prefix = "baccarat"
database = "{database}"
share_group = "{'' if args.outage else 'floor'}"
client_id = "bench-floor"
session_expiry = {3600 if args.outage else 0}
gap_grace = 5.0
batch_wait = {args.batch_wait}

[broker]
host = "127.0.0.1"
port = {floor_broker.port}
protocol = "5"

[http]
port = {args.http_port or 0}
""")
        if not args.http_port:
            from tests.support.mosquitto import free_port

            port = free_port()
            cfg.write_text(cfg.read_text().replace("port = 0", f"port = {port}"))
        else:
            port = args.http_port
        floor = FloorProcess(cfg, work / "floor.log").start()
        wait_until(lambda: "subscribing" in floor.log_text(), 30, "the floor to subscribe")
        base = f"http://127.0.0.1:{port}"
        wait_until(lambda: _ok(base + "/healthz"), 30, "the floor page")
        pid = floor.proc.pid
        print(f"floor: {args.tables} tables x 1 card/s for {args.seconds:.0f} s, real payloads of {FIXTURE.name}; "
              f"database {args.database}{' (fsync on)' if args.fsync and args.database == 'postgresql' else ''}; {'bridged over ' + str(args.bridges) + ' table brokers, ' if args.outage else ''}"
              f"floor pid {pid}", flush=True)
        load = Load(args.tables, args.seconds, table_ports, processes=args.publishers)
        outage = {"done": False}

        def tick(elapsed: float) -> None:
            if args.outage and not outage.get("down") and elapsed >= (args.seconds - args.outage) / 2:
                outage["down"] = time.monotonic()
                floor_broker.stop()
                print(f"  floor broker stopped at {elapsed:.0f} s (the floor link is down)", flush=True)
            if args.outage and outage.get("down") and not outage["done"] and time.monotonic() - outage["down"] >= args.outage:
                floor_broker.start()
                outage["done"] = True
                print(f"  floor broker started again after {time.monotonic() - outage['down']:.0f} s", flush=True)

        cpu0 = proc_figures(pid)
        pressure0 = cpu_pressure()
        ticks0 = cpu_ticks()
        t_measure = time.time()         # CPU, its wait and the machine's pressure: from here to t_done
        t0 = load.start()
        while load.running():
            tick(time.time() - t0)
            time.sleep(0.2)
        if args.outage and not outage["done"]:
            floor_broker.start()
        wall = load.finish()
        published = {t: set(s) for t, s in load.published.items()}
        n_published = sum(len(s) for s in published.values())
        store = Store.open(database, migrate=False)
        try:
            wait_until(lambda: store.count("messages") >= n_published, 300, "the floor to store every message",
                       interval=0.5)
        except AssertionError:
            pass
        t_done = time.time()
        ticks1 = cpu_ticks()
        figs = proc_figures(pid)
        cpu = figs["cpu_s"] - cpu0["cpu_s"]
        waited = figs["wait_s"] - cpu0["wait_s"]
        pressure = cpu_pressure() - pressure0 if pressure0 is not None else None
        ingest = get_json(base + "/api/ingest")
        stored_rows = store.query("SELECT table_id, seq FROM messages")
        stored: dict[str, set] = {}
        for r in stored_rows:
            stored.setdefault(r["table_id"], set()).add(int(r["seq"]))
        lost = sum(len(s - stored.get(t, set())) for t, s in published.items())
        extra = sum(len(s - published.get(t, set())) for t, s in stored.items())
        # Doubling is judged against what was published, not the keys (which cannot repeat):
        # every coup/result published is one coup row, every alert event one event row.
        coups = store.count("coups")
        events = store.count("alert_events")
        doubled_coups, doubled_events = coups - load.results, events - load.alert_events
        lat = ingest["latency_ms"]
        hop = sorted(float(r["d"]) * 1000 for r in store.query(
            "SELECT received_at - t AS d FROM messages WHERE t IS NOT NULL AND t > 0"))
        pct = (lambda p: round(hop[min(len(hop) - 1, int(p / 100 * (len(hop) - 1) + 0.5))], 1)) if hop else None
        lag = sorted(load.lag)
        lag99 = lag[int(0.99 * (len(lag) - 1))] * 1000 if lag else 0.0
        rate_pub = load.count / wall
        rate_in = len(stored_rows) / (t_done - t0)
        met_lat = lat["p99"] is not None and lat["p99"] <= TARGET_P99_MS
        ok = lost == 0 and extra == 0 and doubled_coups == 0 and doubled_events == 0
        print(f"  published {load.count} messages in {wall:.1f} s: {rate_pub:.0f} msg/s "
              f"({args.tables} tables, {load.count / max(args.tables, 1) / wall:.2f} msg/s per table) "
              f"from {load.processes} processes; a card's lateness against its schedule p99 {lag99:.1f} ms")
        print(f"  ingested  {len(stored_rows)} messages in {t_done - t0:.1f} s: {rate_in:.0f} msg/s sustained; "
              f"{ingest['batches']:.0f} transactions, {ingest['duplicate']:.0f} duplicates dropped")
        print(f"  publish -> committed row: p50 {lat['p50']} ms, p99 {lat['p99']} ms, max {lat['max']} ms "
              f"over {lat['n']} messages (target p99 <= {TARGET_P99_MS:.0f} ms: {'met' if met_lat else 'NOT met'})")
        if pct:
            print(f"    publish -> received by the floor's MQTT client: p50 {pct(50)} ms, p99 {pct(99)} ms "
                  "(the generator's socket, the broker, the floor's network thread)")
        floor_lat = ingest.get("floor_latency_ms") or {}
        queue_lat = ingest.get("queue_latency_ms") or {}
        if floor_lat.get("n"):
            print(f"    received -> committed (the floor's queue, batch, transaction): p50 {floor_lat['p50']} ms, "
                  f"p99 {floor_lat['p99']} ms; of which received -> taken by the writer (the hand-off from "
                  f"paho's thread, and the previous batch's commit): p50 {queue_lat.get('p50')} ms, "
                  f"p99 {queue_lat.get('p99')} ms")
        span = t_done - t_measure
        steal = steal_share(ticks0, ticks1)
        print(f"  floor process: CPU {100 * cpu / span:.0f}% of one core over the run; "
              f"RSS {figs['rss_mb']:.0f} MB (peak {figs['hwm_mb']:.0f} MB); its threads waited {waited:.1f} s "
              "for a CPU" + (f"; machine: some task waited for a CPU {100 * pressure / span:.0f}% "
                             f"of the time, load average {os.getloadavg()[0]:.1f}" if pressure is not None else "")
              + (f"; host steal {100 * steal:.1f}% (other guests ran on this VM's CPUs)" if steal is not None else ""))
        print(f"  lost {lost} messages, {extra} unexpected; {coups} coups stored for {load.results} published "
              f"({doubled_coups:+d}), {events} alert events for {load.alert_events} ({doubled_events:+d}); "
              f"gaps {len(store.gaps())} (target 0 lost, 0 doubled: {'met' if ok else 'NOT met'})")
        store.close()
        return 0 if ok else 1
    finally:
        if load is not None:
            load.close()
        if floor is not None:
            floor.stop()
        for b in brokers:
            b.cleanup()
        if pg is not None:
            pg.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _ok(url: str) -> bool:
    try:
        get_json(url)
        return True
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=200)
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--database", choices=("postgresql", "sqlite"), default="postgresql")
    p.add_argument("--outage", type=float, default=0.0, metavar="S", help="stop the floor broker S seconds mid-run")
    p.add_argument("--bridges", type=int, default=4, help="table brokers bridged to the floor (with --outage)")
    p.add_argument("--no-fsync", dest="fsync", action="store_false",
                   help="PostgreSQL without fsync (as the tests run it); default: fsync on, each commit durable")
    p.add_argument("--batch-wait", type=float, default=0.0, metavar="S",
                   help="the floor's batch_wait (0: commit what has arrived)")
    p.add_argument("--publishers", type=int, default=PUBLISHERS, help="load generator processes")
    p.add_argument("--http-port", type=int, default=None)
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    args = p.parse_args(argv if argv is not None else (sys.argv[1:] if __name__ == "__main__" else []))
    if args.outage and args.outage >= args.seconds:
        args.seconds = args.outage + 40
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
