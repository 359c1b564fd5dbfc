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
    parser.add_argument("--config", metavar="PATH", help="TOML configuration, required (every key also from "
                        "SHOE_DAEMON__<SECTION>__<KEY> environment variables); see docs/configuration.md")
    parser.add_argument("--check-config", action="store_true",
                        help="validate the configuration, print it with secrets masked, and exit")


# Libraries whose INFO lines are their own bookkeeping (the embedded broker, amqtt; its state
# machine, transitions; its websockets listener): shown only at log level debug.
CHATTY_LIBRARIES = ("amqtt", "transitions", "websockets")


def quiet_libraries(level: str) -> None:
    """Hold the chatty libraries at WARNING unless ``level`` is debug."""
    for name in CHATTY_LIBRARIES:
        logging.getLogger(name).setLevel(logging.NOTSET if level.upper() == "DEBUG" else logging.WARNING)


def setup_logging(level: str) -> None:
    # stderr goes to the systemd journal under the unit; no timestamps of our own there.
    logging.basicConfig(level=level.upper(), stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    quiet_libraries(level)


def run(args: argparse.Namespace) -> int:
    from shoe_daemon.config import ConfigError, load_config

    if not args.config:
        # Built-in defaults alone would bind 1883/8080 and open a journal in /var/lib: never by accident.
        print("shoe-daemon run: --config PATH is required (example: systemd/shoe-daemon.example.toml; "
              "docs/configuration.md; `shoe-daemon demo` needs none)", file=sys.stderr)
        return EXIT_CONFIG
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return EXIT_CONFIG
    from shoe_daemon.commands.extras import EXIT_MISSING, for_config, require

    if not require("run", for_config(config)):   # --check-config too: "config OK" means it can run
        return EXIT_MISSING
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
