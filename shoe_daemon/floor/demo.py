"""`shoe-daemon demo --tables N`: a floor on one machine, with nothing plugged in.

N emulated shoes on pseudo-terminals, N real daemons (each with its journal and its
HTTP API on a free port), one broker (the embedded one, MQTT 3.1.1, as the
single-table demo uses), and the floor service on SQLite with its page. It prints
the floor page's URL and, with ``--coups M``, stops once every table has settled M
coups and the floor has stored them, then prints what the floor holds against the
tables' journals. Without ``--coups`` it runs until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

from shoe_daemon.commands.demo import free_port


class _Table:
    def __init__(self, table_id: str, workdir: str, broker_port: int, args, seed: int, faults,
                 credentials: tuple[str, str] | None = None) -> None:
        from shoe_daemon.config import ApiConfig, Config, JournalConfig, MqttConfig, ShoeConfig, TableConfig
        from shoe_daemon.emulator import EmulatedShoe

        self.id = table_id
        self.dir = os.path.join(workdir, table_id)
        os.makedirs(self.dir)
        self.shoe = EmulatedShoe(decks=args.decks, seed=seed, pace=args.pace, faults=faults,
                                 link=os.path.join(self.dir, "dealing-shoe"), shoes=None, coups=args.coups)
        path = self.shoe.open()
        self.api_port = free_port()
        self.config = Config(
            table=TableConfig(id=table_id, decks=args.decks),
            shoe=ShoeConfig(port=path, driver="protocol", reconnect_min=0.1, reconnect_max=1.0),
            journal=JournalConfig(path=os.path.join(self.dir, "journal.sqlite3"), synchronous="normal"),
            # The embedded broker lets only its writer publish under the tables' prefix.
            mqtt=MqttConfig(host="127.0.0.1", port=broker_port, protocol="3.1.1",
                            username=credentials[0] if credentials else None,
                            password=credentials[1] if credentials else None),
            api=ApiConfig(enabled=True, host="127.0.0.1", port=self.api_port),
        )
        self.results: list[str] = []
        self.loop = asyncio.new_event_loop()
        self.stop_event: asyncio.Event | None = None
        self.rc: int | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        from shoe_daemon.service import Daemon

        self.daemon = Daemon(self.config)
        self.daemon.listeners.append(
            lambda out: self.results.append(out.payload["coup_id"]) if out.topic == "coup/result" else None)

        async def serve() -> int:
            self.stop_event = asyncio.Event()
            return await self.daemon.run(self.stop_event)

        def main() -> None:
            asyncio.set_event_loop(self.loop)
            self.rc = self.loop.run_until_complete(serve())

        self.thread = threading.Thread(target=main, name=f"daemon-{self.id}", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.shoe.stop()
        if self.stop_event is not None and self.thread is not None and self.thread.is_alive():
            self.loop.call_soon_threadsafe(self.stop_event.set)
            self.thread.join(15)
        if self.thread is None or not self.thread.is_alive():
            self.loop.close()
        self.shoe.close()


def run_floor_demo(args, faults, seed: int) -> int:
    """`demo --tables N`: ``faults`` and ``seed`` as `demo` parsed them for one table."""
    from shoe_daemon.floor.config import floor_config_from
    from shoe_daemon.floor.service import FloorService
    from shoe_daemon.floor.store import Store
    from shoe_daemon.publish.broker import EmbeddedBroker

    n = args.tables
    if not 1 <= n <= 200:
        print("shoe-daemon demo: --tables must be between 1 and 200", file=sys.stderr)
        return 2
    workdir = tempfile.mkdtemp(prefix="shoe-daemon-floor-demo-")
    log_path = os.path.join(workdir, "demo.log")
    logging.basicConfig(level=logging.INFO, filename=log_path, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("amqtt", "transitions", "uvicorn", "uvicorn.error"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    broker_port = args.port or free_port()
    broker = EmbeddedBroker(port=broker_port)
    broker.start()
    tables = [_Table(f"t{i:02d}", workdir, broker_port, args, f"{seed}-{i}", faults, broker.credentials)
              for i in range(1, n + 1)]
    database = f"sqlite:///{os.path.join(workdir, 'floor.sqlite3')}"
    config = floor_config_from({
        "floor": {"prefix": "baccarat", "database": database, "share_group": "", "gap_grace": 3.0},
        "broker": {"host": "127.0.0.1", "port": broker_port, "protocol": "3.1.1"},
        "http": {"host": "127.0.0.1", "port": 0},
        "tables": [{"id": t.id, "api_url": f"http://127.0.0.1:{t.api_port}"} for t in tables],
    })
    floor = FloorService(config).start()
    for t in tables:
        t.start()
    print(f"demo: {n} emulated tables (seed {seed}) on the embedded broker 127.0.0.1:{broker_port}; log {log_path}",
          file=sys.stderr, flush=True)
    print(f"      floor page: {floor.url}/", file=sys.stderr, flush=True)
    print(f"      a table's display: http://127.0.0.1:{tables[0].api_port}/display/", file=sys.stderr, flush=True)
    stop = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda *_: stop.set())
    time.sleep(0.5)            # let the daemons connect before the first card
    for t in tables:
        t.shoe.start()
    rc = 0
    store = Store.open(database)
    try:
        while not stop.wait(0.5):
            if args.coups and all(len(t.results) >= args.coups for t in tables):
                break
            dead = [t.id for t in tables if t.thread is not None and not t.thread.is_alive()]
            if dead:
                print(f"demo: the daemon of table {dead[0]} stopped; see {log_path}", file=sys.stderr)
                rc = 1
                break
        settled = sum(len(set(t.results)) for t in tables)
        # The floor commits within a batch or two; give it a moment to store the last coups.
        deadline = time.monotonic() + 15
        while store.count("coups") < settled and time.monotonic() < deadline and rc == 0:
            time.sleep(0.2)
        stored = store.count("coups")
        print(f"demo: {n} tables, {settled} coups settled; the floor database holds {stored} coups, "
              f"{store.count('messages')} messages, {len(store.gaps(state='open'))} open gaps", file=sys.stderr)
        if args.coups and stored < settled:
            rc = rc or 1
    finally:
        signal.signal(signal.SIGINT, previous)
        store.close()
        for t in tables:
            t.stop()
        floor.stop()
        broker.stop()
        if rc == 0 and not any(t.rc for t in tables):
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"demo: files kept in {workdir}", file=sys.stderr)
    return rc
