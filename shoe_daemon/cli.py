"""`shoe-daemon` console script: one argparse front door, one module per subcommand.

Each module in ``shoe_daemon.commands`` has ``HELP``, ``configure(parser)`` and
``run(args) -> int``. Modules keep heavy imports (OpenCV, FastAPI, paho) inside
``run`` so that ``shoe-daemon deal`` starts fast on a table PC with no camera.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Subcommand name -> module under shoe_daemon.commands. Later issues add to this list.
COMMANDS = {
    "deal": "deal",
    "odds": "odds",
    "emulate": "emulate",
    "shuffle": "shuffle",
    "roads": "roads",
    "monitor": "monitor",
    "journal": "journal",
    "run": "run",
    "demo": "demo",
    "record": "record",
    "replay": "replay",
    "recognize": "recognize",
    "camera": "camera",
    "floor": "floor",
}

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    from shoe_daemon import __version__

    parser = argparse.ArgumentParser(
        prog="shoe-daemon",
        description="Punto Banco dealing-shoe daemon and its tools.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"shoe_daemon.commands.{module_name}")
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.configure(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `shoe-daemon deal ... | head` is normal use, not an error.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
