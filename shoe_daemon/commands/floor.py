"""`shoe-daemon floor`: the floor service (docs/floor.md).

Subscribes to every table under ``[floor] prefix``, keeps their coups, alerts,
status and supervisor actions in the floor's database, fills gaps from the tables'
recall, and serves the pit's page. Stops cleanly on SIGTERM / Ctrl-C.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading

HELP = "the floor service: every table's coups and alerts in one database, and the pit's page"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, metavar="PATH", help="the floor's configuration (TOML)")
    parser.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    parser.add_argument("--migrate-only", action="store_true", help="create or upgrade the database schema and exit")


def run(args: argparse.Namespace) -> int:
    from shoe_daemon.floor import schema
    from shoe_daemon.floor.config import FloorConfigError, load_floor_config

    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = load_floor_config(args.config)
    except FloorConfigError as exc:
        print(f"shoe-daemon floor: {exc}", file=sys.stderr)
        return 2
    try:
        version = schema.upgrade_apart(config.floor.database)     # Alembic's memory stays in the child
    except schema.SchemaError as exc:
        print(f"shoe-daemon floor: {exc}", file=sys.stderr)
        return 1
    if args.migrate_only:
        print(f"floor database at schema version {version}")
        return 0

    from shoe_daemon.floor.service import FloorService
    from shoe_daemon.sdnotify import Notifier

    notifier = Notifier()          # systemd's Type=notify (systemd/shoe-daemon-floor.service); else no-op
    notifier.status(f"database at schema {version}; connecting to the broker")
    service = FloorService(config).start(migrate=False)
    if service.url:
        print(f"floor page: {service.url}/", file=sys.stderr, flush=True)
    broker = f"{config.broker.host}:{config.broker.port}"
    if service.consumer.subscribed.is_set():
        notifier.ready(f"storing every table under {config.floor.prefix}/ from {broker}")
    else:
        notifier.ready(f"started; not subscribed at the broker {broker} yet (retrying)")
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        while not stop.wait(1.0):
            pass
    finally:
        notifier.stopping("committing what was received")
        service.stop()
        notifier.close()
    return 0
