"""`shoe-daemon demo`: the whole table on one machine, with nothing plugged in.

An emulated shoe on a pseudo-terminal, the real daemon reading it through
pyserial, the embedded MQTT broker, and the live terminal view subscribed to
that broker, exactly as a display on the table PC would be.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HELP = "run the daemon on an emulated shoe with the embedded broker and a live terminal view"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--coups", type=int, default=None, metavar="N", help="stop after N coups (default: run until Ctrl-C)")
    parser.add_argument("--decks", type=int, default=8, choices=(4, 6, 8))
    parser.add_argument("--seed", default=None, help="shuffle seed (default: random)")
    parser.add_argument("--pace", type=float, default=0.6, metavar="S", help="seconds between cards (default 0.6)")
    parser.add_argument("--fault", action="append", default=[], metavar="NAME=RATE",
                        help="inject emulator faults, e.g. noise=0.05 drop=0.02 (see `shoe-daemon emulate --help`)")
    parser.add_argument("--port", type=int, default=None, help="embedded broker port (default: a free one)")
    parser.add_argument("--plain", action="store_true", help="one line per event instead of the redrawn view")
    parser.add_argument("--tables", type=int, default=None, metavar="N",
                        help="run N emulated tables and the floor service with its page (docs/floor.md)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)


def build_config(workdir: str, shoe_path: str, port: int, decks: int, api_port: int, ws_port: int):
    from shoe_daemon.config import ApiConfig, Config, JournalConfig, MqttConfig, ShoeConfig, TableConfig

    return Config(
        table=TableConfig(id="demo", decks=decks),
        shoe=ShoeConfig(port=shoe_path, driver="protocol", reconnect_min=0.1, reconnect_max=1.0),
        journal=JournalConfig(path=os.path.join(workdir, "journal.sqlite3"), synchronous="normal"),
        mqtt=MqttConfig(embedded_port=port, embedded_ws_port=ws_port),
        # Read-only API and the browser display; the demo has no tokens, so no writes.
        api=ApiConfig(enabled=True, host="127.0.0.1", port=api_port),
    )


def run(args: argparse.Namespace) -> int:
    if getattr(args, "tables", None):
        from shoe_daemon.floor.demo import run_floor_demo

        return run_floor_demo(args)
    from shoe_daemon.emulator import EmulatedShoe, Faults
    from shoe_daemon.service import Daemon

    try:
        faults = Faults.parse(args.fault)
    except ValueError as exc:
        print(f"shoe-daemon demo: {exc}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    workdir = tempfile.mkdtemp(prefix="shoe-daemon-demo-")
    log_path = os.path.join(workdir, "daemon.log")
    # The view owns the terminal: the daemon logs to a file.
    logging.basicConfig(level=logging.INFO, filename=log_path, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("amqtt", "transitions"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    port = args.port or _free_port()
    shoe = EmulatedShoe(decks=args.decks, seed=seed, pace=args.pace, faults=faults,
                        link=os.path.join(workdir, "dealing-shoe"), shoes=None, coups=args.coups)
    path = shoe.open()
    api_port, ws_port = _free_port(), _free_port()
    config = build_config(workdir, path, port, args.decks, api_port, ws_port)
    print(f"demo: emulated {args.decks}-deck shoe (seed {seed}) on {path}; embedded broker on 127.0.0.1:{port}; "
          f"daemon log {log_path}", file=sys.stderr, flush=True)
    print(f"      another view: shoe-daemon monitor --broker 127.0.0.1:{port} --table demo", file=sys.stderr, flush=True)
    print(f"      browser display: http://127.0.0.1:{api_port}/display/   API: http://127.0.0.1:{api_port}/docs",
          file=sys.stderr, flush=True)

    daemon = Daemon(config)
    loop = asyncio.new_event_loop()
    result: dict[str, int] = {}

    def daemon_thread():
        asyncio.set_event_loop(loop)
        result["rc"] = loop.run_until_complete(_serve_until(daemon))

    thread = threading.Thread(target=daemon_thread, name="daemon", daemon=True)
    thread.start()
    monitor = [sys.executable, "-m", "shoe_daemon", "monitor", "--broker", f"127.0.0.1:{port}", "--table", "demo",
               "--timeout", "15"]
    if args.plain:
        monitor.append("--plain")
    # Stop after N coups counted where they are settled (the daemon), not where they are
    # seen: a fast emulator may settle some before the view has subscribed.
    settled = threading.Event()
    results = []

    def count_results(out):
        if out.topic == "coup/result":
            results.append(out.payload["coup_id"])
            if args.coups and len(results) >= args.coups:
                settled.set()

    daemon.listeners.append(count_results)
    _wait_port(port, 10.0)  # the view's first connect should find the embedded broker up
    view = subprocess.Popen(monitor)
    if not daemon.ready.is_set():
        time.sleep(0.5)  # let the view subscribe before the first card
    shoe.start()
    rc = 0
    try:
        while view.poll() is None:
            if settled.wait(0.2):
                time.sleep(1.0)  # let the view draw the last result
                view.send_signal(signal.SIGINT)
                view.wait(5)
                break
        rc = view.returncode or 0
    except KeyboardInterrupt:
        view.wait(5)
        rc = 130
    finally:
        if view.poll() is None:
            view.kill()
        shoe.stop()
        stop = getattr(daemon, "stop_event", None)
        if stop is not None:
            loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        if result.get("rc"):
            print(f"demo: the daemon stopped with exit status {result['rc']}; see {log_path}", file=sys.stderr)
            rc = rc or result["rc"]
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"demo: {len(results)} coups settled", file=sys.stderr)
    return 0 if rc in (0, 130, -signal.SIGINT) else rc


async def _serve_until(daemon) -> int:
    # The demo's main thread runs the view (Ctrl-C reaches it); the daemon gets an
    # event to stop on instead of its own signal handlers.
    stop = asyncio.Event()
    daemon.stop_event = stop
    return await daemon.run(stop)


