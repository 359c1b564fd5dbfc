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

from shoe_daemon.commands.argtypes import DECKS_HELP, decks
from shoe_daemon.commands.run import quiet_libraries

HELP = "run the daemon on an emulated shoe with the embedded broker and a live terminal view"


VIEW_START_WAIT = 30.0   # s at most for the view to subscribe before the shoe deals anyway


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--coups", type=int, default=None, metavar="N", help="stop after N coups (default: run until Ctrl-C)")
    parser.add_argument("--decks", type=decks, default=8, metavar="N", help=f"{DECKS_HELP} (default 8)")
    parser.add_argument("--seed", default=None, help="shuffle seed (default: random)")
    parser.add_argument("--pace", type=float, default=0.6, metavar="S", help="seconds between cards (default 0.6)")
    parser.add_argument("--fault", action="append", default=[], metavar="NAME=RATE",
                        help="inject emulator faults, e.g. noise=0.05 drop=0.02 (see `shoe-daemon emulate --help`)")
    parser.add_argument("--port", type=int, default=None, help="embedded broker port (default: a free one)")
    parser.add_argument("--plain", action="store_true", help="one line per event instead of the redrawn view")
    parser.add_argument("--http-port", type=int, default=None, metavar="PORT",
                        help="the API, display and console port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--ws-port", type=int, default=None, metavar="PORT",
                        help="the embedded broker's WebSocket port for the display (default: a free one)")
    parser.add_argument("--tables", type=int, default=None, metavar="N",
                        help="run N emulated tables and the floor service with its page (docs/floor.md)")


def free_port() -> int:
    """A port on 127.0.0.1 that is free now (the demo's broker, API and display)."""
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


def demo_tokens() -> dict[str, str]:
    """Fresh tokens for this run only (never written anywhere but the terminal): the console's sign-in."""
    import secrets

    return {role: secrets.token_urlsafe(18) for role in ("dealer", "supervisor", "technician")}


def build_config(workdir: str, shoe_path: str, port: int, decks: int, api_port: int, ws_port: int,
                 tokens: dict[str, str] | None = None):
    from shoe_daemon.config import (
        ApiConfig,
        ApiToken,
        Config,
        JournalConfig,
        MqttConfig,
        ShoeConfig,
        TableConfig,
    )

    return Config(
        table=TableConfig(id="demo", decks=decks),
        shoe=ShoeConfig(port=shoe_path, driver="protocol", reconnect_min=0.1, reconnect_max=1.0),
        journal=JournalConfig(path=os.path.join(workdir, "journal.sqlite3"), synchronous="normal"),
        mqtt=MqttConfig(embedded_port=port, embedded_ws_port=ws_port),
        # The API on loopback with this run's tokens: the console (/console/) enters cards and resolves coups.
        api=ApiConfig(enabled=True, host="127.0.0.1", port=api_port,
                      tokens=[ApiToken(user=f"demo-{role}", role=role, token=token)
                              for role, token in (tokens or {}).items()]),
    )


class _Stopped(Exception):
    """SIGTERM or SIGHUP: the demo stops as on Ctrl-C (view, shoe, daemon, temporary folder)."""


def _on_stop_signal(signum, frame):
    raise _Stopped(signal.Signals(signum).name)


def _stop_view(view: subprocess.Popen | None, grace: float = 5.0) -> int | None:
    """Ask the view to stop (SIGTERM: a SIGINT may be ignored, e.g. in a background job of a script),
    then kill it if it has not within ``grace`` seconds. Never raises TimeoutExpired."""
    if view is None:
        return None
    if view.poll() is None:
        view.terminate()
        try:
            view.wait(grace)
        except subprocess.TimeoutExpired:
            view.kill()
            view.wait()
    return view.returncode


def run(args: argparse.Namespace) -> int:
    from shoe_daemon.commands.extras import EXIT_MISSING, require

    if not require("demo", ["broker", "api"]):
        return EXIT_MISSING
    from shoe_daemon.emulator import EmulatedShoe, Faults

    try:
        faults = Faults.parse(args.fault)
    except ValueError as exc:
        print(f"shoe-daemon demo: {exc}", file=sys.stderr)
        return 2
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "big")
    if getattr(args, "tables", None):
        from shoe_daemon.floor.demo import run_floor_demo

        return run_floor_demo(args, faults, seed)
    from shoe_daemon.service import Daemon

    # Everything the demo makes lives in this folder, removed on every way out but a daemon failure.
    workdir = tempfile.mkdtemp(prefix="shoe-daemon-demo-")
    log_path = os.path.join(workdir, "daemon.log")
    old_sigint = signal.getsignal(signal.SIGINT)
    old_handlers = {sig: signal.signal(sig, _on_stop_signal) for sig in (signal.SIGTERM, signal.SIGHUP)}
    shoe = view = thread = loop = daemon = log_file = stop = None
    root = logging.getLogger()
    root_level = root.level
    result: dict[str, object] = {}
    results: list = []
    rc = 0
    try:
        # The view owns the terminal: the daemon logs to a file.
        log_file = logging.FileHandler(log_path)
        log_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(log_file)
        root.setLevel(logging.INFO)
        quiet_libraries("info")
        port = args.port or free_port()
        shoe = EmulatedShoe(decks=args.decks, seed=seed, pace=args.pace, faults=faults,
                            link=os.path.join(workdir, "dealing-shoe"), shoes=None, coups=args.coups)
        path = shoe.open()
        api_port, ws_port = args.http_port or free_port(), args.ws_port or free_port()
        tokens = demo_tokens()
        config = build_config(workdir, path, port, args.decks, api_port, ws_port, tokens)
        print(f"demo: emulated {args.decks}-deck shoe (seed {seed}) on {path}; embedded broker on 127.0.0.1:{port}; "
              f"daemon log {log_path}", file=sys.stderr, flush=True)
        print(f"      another view: shoe-daemon monitor --broker 127.0.0.1:{port} --table demo",
              file=sys.stderr, flush=True)
        print(f"      browser display: http://127.0.0.1:{api_port}/display/   API: http://127.0.0.1:{api_port}/docs",
              file=sys.stderr, flush=True)
        console = f"http://127.0.0.1:{api_port}/console/"
        print(f"      console (a card the shoe cannot read waits for a person there): {console}\n"
              f"        dealer:     {console}#token={tokens['dealer']}\n"
              f"        supervisor: {console}#token={tokens['supervisor']}\n"
              f"        technician: {console}#token={tokens['technician']}", file=sys.stderr, flush=True)

        daemon = Daemon(config)
        loop = asyncio.new_event_loop()
        stop = asyncio.Event()   # bound to the daemon's loop on first use; set from here to stop it

        def daemon_thread():
            asyncio.set_event_loop(loop)
            try:
                result["rc"] = loop.run_until_complete(_serve_until(daemon, stop))
            except Exception as exc:  # noqa: BLE001 - told on one line below; the traceback goes to the log
                logging.getLogger("shoe_daemon.demo").exception("the daemon failed")
                result["rc"], result["error"] = 1, f"{type(exc).__name__}: {exc}"

        thread = threading.Thread(target=daemon_thread, name="daemon", daemon=True)
        thread.start()
        view_ready = os.path.join(workdir, "view-ready")
        monitor = [sys.executable, "-m", "shoe_daemon", "monitor", "--broker", f"127.0.0.1:{port}",
                   "--table", "demo", "--ready-file", view_ready]
        if args.plain:
            monitor.append("--plain")
        # The redrawn view keeps where a person acts: a card the shoe cannot read, or a held coup,
        # waits for the console.
        for note in (f"display  http://127.0.0.1:{api_port}/display/",
                     f"console  {console}#token={tokens['dealer']}  (dealer: enter a card)",
                     f"         {console}#token={tokens['supervisor']}  (supervisor: resolve, void)"):
            monitor += ["--note", note]
        # Stop after N coups counted where they are settled (the daemon), not where they are
        # seen: a fast emulator may settle some before the view has subscribed.
        settled = threading.Event()

        def count_results(out):
            if out.topic == "coup/result":
                results.append(out.payload["coup_id"])
                if args.coups and len(results) >= args.coups:
                    settled.set()

        daemon.listeners.append(count_results)
        _wait_port(port, 10.0)  # the view's first connect should find the embedded broker up
        view = subprocess.Popen(monitor)
        # The first card waits for the view's subscription (its start takes seconds on a cold or busy
        # machine), so that the view shows every coup, the last one included.
        deadline = time.monotonic() + VIEW_START_WAIT
        while (not os.path.exists(view_ready) and view.poll() is None and thread.is_alive()
               and time.monotonic() < deadline):
            time.sleep(0.05)
        shoe.start()
        while view.poll() is None and thread.is_alive():   # a daemon that stopped ends the demo
            if settled.wait(0.2):
                time.sleep(1.0)  # let the view draw the last result
                break
        rc = _stop_view(view) or 0
    except KeyboardInterrupt:
        rc = 130
    except _Stopped as exc:
        print(f"demo: {exc}: stopping", file=sys.stderr, flush=True)
        rc = 0
    finally:
        # A second signal while cleaning up (bounded: 5 s for the view, 10 s for the daemon) must not
        # leave the folder behind.
        for sig in (*old_handlers, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)
        _stop_view(view)
        if shoe is not None:
            shoe.stop()
        if stop is not None and thread is not None:
            loop.call_soon_threadsafe(stop.set)
        if thread is not None:
            thread.join(10)
            if not thread.is_alive():
                loop.close()
        if result.get("rc"):
            why = f": {result['error']}" if "error" in result else f" with exit status {result['rc']}"
            print(f"demo: the daemon stopped{why}; see {log_path}", file=sys.stderr)
            rc = result["rc"]
        if log_file is not None:
            root.removeHandler(log_file)
            log_file.close()
            root.setLevel(root_level)
        if not result.get("rc"):
            shutil.rmtree(workdir, ignore_errors=True)
        for sig, handler in {**old_handlers, signal.SIGINT: old_sigint}.items():
            signal.signal(sig, handler)
    print(f"demo: {len(results)} coups settled", file=sys.stderr)
    return 0 if rc in (0, 130, -signal.SIGINT, -signal.SIGTERM) else rc


async def _serve_until(daemon, stop: asyncio.Event) -> int:
    # The demo's main thread runs the view (Ctrl-C reaches it); the daemon gets an
    # event to stop on instead of its own signal handlers.
    daemon.stop_event = stop
    return await daemon.run(stop)
