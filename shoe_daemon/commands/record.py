"""`shoe-daemon record`: tap a live shoe (or the emulator) and write a fixture.

    $ shoe-daemon record --port /dev/dealing-shoe --link /run/shoe-tap --out table7.shoelog \\
          --config /etc/shoe-daemon/shoe-daemon.toml --describe "table 7, sticky reader"
    /run/shoe-tap
    $ SHOE_DAEMON__SHOE__PORT=/run/shoe-tap shoe-daemon run --config ...

The first line on stdout is the pty the daemon must open instead of the shoe's
port (the --link when given). Bytes are forwarded both ways, so the table keeps
working. Ctrl-C (or --duration) ends the recording; the header is then completed
with the shoe's identity from its handshake. docs/technician.md has the steps.
"""

from __future__ import annotations

import argparse
import errno
import shlex
import signal
import sys
import time
from pathlib import Path

from shoe_daemon.commands.argtypes import DECKS_HELP, decks

HELP = "tap a live shoe's serial port through a pty and record what crosses the wire (a fixture)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", required=True, metavar="DEV",
                        help="the shoe's real port: a device (/dev/dealing-shoe) or a pyserial URL")
    parser.add_argument("--out", required=True, metavar="FILE",
                        help="the fixture to write: NAME.shoelog, or NAME.shoelog.gz (compressed)")
    parser.add_argument("--link", metavar="PATH",
                        help="a stable symlink to the pty for the daemon (re-made after an unplug; needed to "
                             "record an unplug)")
    parser.add_argument("--describe", metavar="TEXT", default=None,
                        help="what the recording shows (one line; `replay --list` prints it)")
    parser.add_argument("--config", metavar="PATH",
                        help="the daemon's configuration: its [table] rules, [shoe] driver and port settings go "
                             "into the header so that replay deals by the same rules")
    parser.add_argument("--baud", type=int, default=None, help="baud rate (default: the config's, else 115200)")
    parser.add_argument("--bytesize", type=int, choices=(5, 6, 7, 8), default=None)
    parser.add_argument("--parity", choices=("N", "E", "O"), default=None)
    parser.add_argument("--stopbits", type=float, choices=(1, 1.5, 2), default=None)
    parser.add_argument("--driver", metavar="NAME", default=None,
                        help="the daemon's shoe driver: protocol, text or an installed one's name "
                             "(default: the config's, else protocol)")
    parser.add_argument("--decks", type=decks, default=None, metavar="N", help=f"{DECKS_HELP} (header)")
    parser.add_argument("--duration", type=float, default=None, metavar="S",
                        help="stop after S seconds (default: until Ctrl-C or SIGTERM)")


def build_header(args, config, start: float):
    from shoe_daemon.recording.formats import Header, fixture_stem
    from shoe_daemon.recording.virtual import iso, port_header, table_header

    shoe = config.shoe
    return Header(
        name=fixture_stem(args.out),
        description=args.describe or f"recorded at {args.port}",
        date=iso(start),
        start=start,
        driver=shoe.driver,
        text_pattern=shoe.text_pattern if shoe.driver == "text" else None,
        table=table_header(config.table),
        port=port_header(shoe, args.port),
        command="shoe-daemon record " + shlex.join(_argv(args)),
        camera="none",
    )


def _config(args):
    from shoe_daemon.config import load_config

    config = load_config(args.config, read_secrets=False)   # the file and SHOE_DAEMON__* variables, as the daemon
    shoe = {"port": args.port if "://" in args.port or args.port.startswith("/") else str(Path(args.port).resolve())}
    for key, value in (("baudrate", args.baud), ("bytesize", args.bytesize), ("parity", args.parity),
                       ("stopbits", args.stopbits), ("driver", args.driver)):
        if value is not None:
            shoe[key] = int(value) if key == "stopbits" and float(value).is_integer() else value
    table = {"decks": args.decks} if args.decks is not None else {}
    if args.driver is not None:
        from shoe_daemon.sources import get_driver

        try:
            get_driver(args.driver)
        except (KeyError, ImportError) as exc:
            raise ValueError(str(exc)) from None
    return config.model_copy(update={
        "shoe": config.shoe.model_validate({**config.shoe.model_dump(), **shoe}),
        "table": config.table.model_validate({**config.table.model_dump(), **table}),
    })


EXIT_FAILED = 1


def _why(exc: BaseException) -> str:
    """The usual reasons in words; pyserial's own text otherwise."""
    code = getattr(exc, "errno", None)
    if code == errno.ENOENT:
        return "no such device (is the shoe plugged in? its stable name is under /dev/serial/by-id/)"
    if code in (errno.EACCES, errno.EPERM):
        return "permission denied (the user needs the dialout group, or the udev rule)"
    if code in (errno.EBUSY, errno.EAGAIN) or "exclusive" in str(exc).lower() or "lock" in str(exc).lower():
        return "busy: another process has it open (the daemon? record through the tap instead)"
    return str(exc)


def run(args: argparse.Namespace) -> int:
    import logging

    import serial

    from shoe_daemon.config import ConfigError
    from shoe_daemon.recording.formats import HOST, SHOE, format_for, open_writer, read_fixture, write_fixture
    from shoe_daemon.recording.tap import Tap, finish_header
    from shoe_daemon.sources.serial_source import open_port

    try:
        format_for(args.out)
        config = _config(args)
    except (ValueError, ConfigError) as exc:
        print(f"shoe-daemon record: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="record: %(message)s")
    out = Path(args.out)
    # The first open is made here, before any file: a wrong or busy port is an error now, not an
    # empty fixture after --duration. Later opens (after an unplug) are the tap's, with back-off.
    try:
        first = [open_port(config.shoe)]
    except (serial.SerialException, OSError, ValueError) as exc:
        print(f"shoe-daemon record: cannot open {args.port}: {_why(exc)}; nothing recorded", file=sys.stderr)
        return EXIT_FAILED

    def opener(settings):
        return first.pop() if first else open_port(settings)

    tap_name: list[str] = []

    def on_open(name: str) -> None:
        tap_name[:] = [name]
        print(name, flush=True)

    started = time.monotonic()
    tap = Tap(config.shoe, None, link=args.link, on_open=on_open, opener=opener)
    header = build_header(args, config, tap.start)
    # Streamed as it goes (a killed recording is still a fixture); the header is completed at the end.
    tap.writer = writer = open_writer(out, header)
    if not args.link:
        print("record: no --link: the daemon cannot follow an unplug of the shoe", file=sys.stderr)

    def on_signal(signum, frame):
        tap.stop()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    print(f"record: {args.port} -> {out} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    try:
        tap.run(args.duration)
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        writer.close()
    fixture = read_fixture(out)
    if not fixture.records:
        # Nothing crossed the wire (no host opened the pty, the shoe sent nothing): no fixture.
        out.unlink()
        pty = tap_name[0] if tap_name else "the pty"
        shoe = (f"{tap.unforwarded} bytes from the shoe were not forwarded" if tap.unforwarded
                else "the shoe sent nothing")
        print(f"shoe-daemon record: nothing recorded in {time.monotonic() - started:.1f} s: no host opened {pty} "
              f"and {shoe}; no fixture written", file=sys.stderr)
        return EXIT_FAILED
    fixture.header = finish_header(header, fixture.bytes_of(SHOE), config.shoe.driver)
    write_fixture(out, fixture)
    print(f"record: {len(fixture.records)} records in {fixture.duration:.1f} s: {tap.bytes[SHOE]} bytes from the "
          f"shoe, {tap.bytes[HOST]} from the host, {tap.sessions} host session(s), {tap.closes} close(s)"
          + (f", {tap.unforwarded} shoe bytes while no host had the port open" if tap.unforwarded else "")
          + (f", {tap.dropped} bytes the daemon did not read" if tap.dropped else "")
          + f" -> {out}", file=sys.stderr)
    return 0


def _argv(args) -> list[str]:
    out = ["--port", args.port, "--out", str(args.out)]
    for flag, value in (("--link", args.link), ("--describe", args.describe), ("--config", args.config),
                        ("--baud", args.baud), ("--driver", args.driver), ("--decks", args.decks),
                        ("--duration", args.duration)):
        if value is not None:
            out += [flag, str(value)]
    return out
