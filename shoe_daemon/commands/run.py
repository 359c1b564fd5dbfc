"""`shoe-daemon run`: the long-running daemon of one table."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys

HELP = "run the daemon: shoe -> rules engine -> journal -> MQTT (one process per table)"

EXIT_CONFIG = 2


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", metavar="PATH", help="TOML configuration (every key also from "
                        "SHOE_DAEMON__<SECTION>__<KEY> environment variables); see docs/configuration.md")
    parser.add_argument("--check-config", action="store_true",
                        help="validate the configuration, print it with secrets masked, and exit")


def setup_logging(level: str) -> None:
    # stderr goes to the systemd journal under the unit; no timestamps of our own there.
    logging.basicConfig(level=level.upper(), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")


def run(args: argparse.Namespace) -> int:
    from shoe_daemon.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return EXIT_CONFIG
    if args.check_config:
        print(json.dumps(config.redacted(), indent=2))
        print("config OK", file=sys.stderr)
        return 0
    setup_logging(config.log.level)
    return asyncio.run(serve(config, config_path=args.config))


async def serve(config, daemon=None, *, config_path: str | None = None) -> int:
    from shoe_daemon.service import Daemon

    daemon = daemon or Daemon(config, config_path=config_path)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        return await daemon.run(stop)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
