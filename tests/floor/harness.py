"""The floor tests' rigs: live tables (emulated shoe -> real Daemon -> Mosquitto) and the floor.

    table = TableRig(tmp, "t1", broker_port=b.port, coups=8).start()   # daemon up, API on a free port
    table.deal(); table.wait_done()
    table.journal_coups()            # the table's own record, from its journal file

Each table is the real ``Daemon`` (journal, core, publisher, HTTP API) in its own thread
and event loop, as ``shoe-daemon demo`` runs it, reading an ``EmulatedShoe`` on a pty.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from shoe_daemon.config import ApiConfig, Config, JournalConfig, MqttConfig, ShoeConfig, TableConfig
from shoe_daemon.emulator import EmulatedShoe
from tests.support.mosquitto import free_port, wait_port

ROOT = Path(__file__).resolve().parents[2]


class TableRig:
    def __init__(self, workdir: Path, table_id: str, *, broker_port: int, coups: int = 8, pace: float = 0.02,
                 seed: int = 1, protocol: str = "5", api: bool = True, tokens: list[dict] = ()) -> None:
        self.dir = Path(workdir) / table_id
        self.dir.mkdir(parents=True, exist_ok=True)
        self.table_id = table_id
        self.journal_path = self.dir / "journal.sqlite3"
        self.shoe = EmulatedShoe(decks=8, seed=seed, pace=pace, link=str(self.dir / "shoe"), coups=coups)
        self.api_port = free_port() if api else None
        self.broker_port = broker_port
        self.protocol = protocol
        self.tokens = list(tokens)        # [{"user", "role", "token"}]: who may act on the table's API
        self.daemon = None
        self.published: list[tuple[str, dict]] = []
        self._lock = threading.Lock()
        self._loop = None
        self._stop = None
        self._thread = None
        self._result: dict = {}

    @property
    def api_url(self) -> str | None:
        return f"http://127.0.0.1:{self.api_port}" if self.api_port else None

    def start(self, timeout: float = 20.0) -> TableRig:
        from shoe_daemon.service import Daemon

        path = self.shoe.open()
        config = Config(
            table=TableConfig(id=self.table_id, decks=8),
            shoe=ShoeConfig(port=path, driver="protocol", reconnect_min=0.1, reconnect_max=1.0),
            journal=JournalConfig(path=str(self.journal_path), synchronous="normal"),
            mqtt=MqttConfig(host="127.0.0.1", port=self.broker_port, protocol=self.protocol),
            api=ApiConfig(enabled=self.api_port is not None, host="127.0.0.1", port=self.api_port or 8080,
                          tokens=self.tokens),
        )
        self.daemon = daemon = Daemon(config)

        def record(out) -> None:
            with self._lock:
                self.published.append((out.topic, out.payload))

        daemon.listeners.append(record)
        self._loop = loop = asyncio.new_event_loop()
        self._stop = asyncio.Event()

        def run() -> None:
            asyncio.set_event_loop(loop)
            self._result["rc"] = loop.run_until_complete(daemon.run(self._stop))

        self._thread = threading.Thread(target=run, name=f"daemon-{self.table_id}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while daemon.publisher is None or not daemon.publisher.stats()["connected"]:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"table {self.table_id}: the daemon did not connect (rc {self._result.get('rc')})")
            time.sleep(0.02)
        if self.api_port and not wait_port(self.api_port, timeout):
            raise RuntimeError(f"table {self.table_id}: the API did not listen on {self.api_port}")
        return self

    def deal(self) -> TableRig:
        self.shoe.start()
        return self

    def wait_done(self, timeout: float = 60.0) -> None:
        assert self.shoe.wait(timeout), f"table {self.table_id}: the shoe did not finish dealing"
        # The last card's messages are published once the core has them: wait for the publisher.
        deadline = time.monotonic() + timeout
        n = -1
        while time.monotonic() < deadline:
            stats = self.daemon.publisher.stats()
            with self._lock:
                now = len(self.published)
            if now == n and stats["queue_depth"] == 0 and stats["connected"]:
                return
            n = now
            time.sleep(0.3)
        raise AssertionError(f"table {self.table_id}: messages still queued: {self.daemon.publisher.stats()}")

    def results(self) -> list[dict]:
        with self._lock:
            return [p for topic, p in self.published if topic == "coup/result"]

    def seqs(self) -> list[int]:
        with self._lock:
            return [p["seq"] for _, p in self.published if "seq" in p]

    def journal_coups(self) -> list[dict]:
        from shoe_daemon.journal.store import Journal

        with Journal.open(self.journal_path, readonly=True, create=False, verify="none") as j:
            return [{**r.result, "coup_id": r.coup_id, "shoe": r.shoe, "coup": r.coup} for r in j.coups(last=100000)]

    def stop(self) -> None:
        self.shoe.stop()
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(15)
        self.shoe.close()
        assert self.shoe.error is None, f"the emulated shoe failed: {self.shoe.error!r}"


def floor_config(path: Path, *, broker_port: int, database: str, tables: list[TableRig] = (),
                 share_group: str = "floor", protocol: str = "5", http_port: int | None = None,
                 gap_grace: float = 1.0, client_id: str | None = None, session_expiry: int = 0,
                 lang: str | None = None) -> Path:
    lines = [
        "[floor]", 'prefix = "baccarat"', f'database = "{database}"', f'share_group = "{share_group}"',
        f"gap_grace = {gap_grace}", "gap_check_interval = 0.25", f"session_expiry = {session_expiry}",
    ]
    if client_id:
        lines.append(f'client_id = "{client_id}"')
    lines += ["", "[broker]", 'host = "127.0.0.1"', f"port = {broker_port}", f'protocol = "{protocol}"', "",
              "[http]", f"enabled = {'true' if http_port is not None else 'false'}", f"port = {http_port or 0}"]
    if lang:
        lines.append(f'lang = "{lang}"')
    for t in tables:
        lines += ["", "[[tables]]", f'id = "{t.table_id}"']
        if t.api_url:
            lines += [f'api_url = "{t.api_url}"', 'token = "floor-read-token"']
    path.write_text("\n".join(lines) + "\n")
    return path


class FloorProcess:
    """``python -m shoe_daemon floor --config PATH`` as a child process (to be killed)."""

    def __init__(self, config: Path, log: Path) -> None:
        self.config, self.log_path = config, log
        self.proc: subprocess.Popen | None = None

    def start(self) -> FloorProcess:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "shoe_daemon", "floor", "--config", str(self.config)],
                                         stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        return self

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> int | None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode if self.proc else None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def same_coup(db: dict, journal: dict) -> list[str]:
    """The fields where the floor's row and the table's journal disagree (empty: the same coup)."""
    diffs = []
    for key in ("shoe", "coup", "coup_id", "punto", "banco", "punto_total", "banco_total", "winner", "natural",
                "punto_pair", "banco_pair", "cards", "revision"):
        want = journal.get(key)
        if key == "revision":
            want = want or 0
        if db.get(key) != want:
            diffs.append(f"{key}: floor {db.get(key)!r} != journal {want!r}")
    return diffs


def dumps(x) -> str:
    return json.dumps(x, sort_keys=True)


def bridge_conf(table_id: str, floor_port: int, *, prefix: str = "baccarat", floor_host: str = "127.0.0.1") -> list[str]:
    """The table broker's bridge to the floor broker, as in docs/floor.md ("The bridge")."""
    return [
        "max_queued_messages 1000000",       # a link down for minutes: keep every QoS 1 message
        "max_inflight_messages 100",
        f"connection floor-{table_id}",
        f"address {floor_host}:{floor_port}",
        f"remote_clientid bridge-{table_id}",
        f"local_clientid bridge-{table_id}-local",
        "bridge_protocol_version mqttv311",
        "cleansession false",
        "try_private false",
        "bridge_attempt_unsubscribe false",
        "notifications false",
        "keepalive_interval 5",
        "restart_timeout 1 5",
        f"topic {prefix}/{table_id}/# out 1",
    ]
