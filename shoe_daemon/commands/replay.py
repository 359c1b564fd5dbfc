"""`shoe-daemon replay`: recorded sessions through the real daemon, checked against their .chk files.

    shoe-daemon replay --list                         # the library, one line per fixture
    shoe-daemon replay fixtures/error-extra-card.shoelog --print
    shoe-daemon replay --check fixtures/              # every fixture; a diff and exit 1 on a difference
    shoe-daemon replay --update-check fixtures/reader-noise.shoelog
    shoe-daemon replay --speed 1 --broker 127.0.0.1:1883 fixtures/clean-8-decks.shoelog.gz

Each fixture gets a fresh daemon (temporary journal, no API) reading a pty through
pyserial with the fixture's driver; see docs/fixtures.md and docs/technician.md.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HELP = "replay recorded shoe sessions (fixtures) through the daemon; --check diffs its outputs with the .chk files"

EXIT_DIFF = 1
EXIT_USAGE = 2


def default_library() -> Path:
    """$SHOE_DAEMON_FIXTURES, else the library installed with the package (a wheel carries it as
    shoe_daemon/fixture_library, see setup.py), else the repository's fixtures/ (a checkout or an
    editable install), else ./fixtures."""
    env = os.environ.get("SHOE_DAEMON_FIXTURES")
    if env:
        return Path(env)
    package = Path(__file__).resolve().parents[1]
    for library in (package / "fixture_library", package.parent / "fixtures"):
        if library.is_dir():
            return library
    return Path("fixtures")


def parse_speed(text: str) -> float | None:
    """``max`` -> None (as fast as the daemon reads); ``1`` recorded timing; ``N`` N times faster."""
    if text.lower() in ("max", "0", "inf"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--speed takes 1, a factor N or max (got {text!r})") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"--speed must be positive (got {text!r})")
    return value


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("fixtures", nargs="*", metavar="FIXTURE",
                        help="fixture files, or directories of them (default with --list or --check: the library)")
    parser.add_argument("--speed", type=parse_speed, default=None, metavar="1|N|max",
                        help="1 = the recorded timing, N = N times faster, max = as fast as possible (default)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="compare the outputs with NAME.chk; print a unified diff and exit 1 on any difference")
    mode.add_argument("--update-check", action="store_true", help="rewrite NAME.chk from this replay")
    mode.add_argument("--list", action="store_true", help="list the fixtures with their one-line descriptions")
    parser.add_argument("--broker", metavar="HOST:PORT", help="also publish to this MQTT broker (watch it with "
                        "`shoe-daemon monitor --broker HOST:PORT --table ID`)")
    parser.add_argument("--print", dest="print_messages", action="store_true",
                        help="print the messages (check format: TOPIC QOS RETAIN PAYLOAD) on stdout")
    parser.add_argument("--diff-lines", type=int, default=200, metavar="N", help="cut a diff at N lines (default 200)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="show the daemon's log and how its host->shoe bytes compare with the recording")


class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    WIDTH = 30

    def __init__(self, name: str, stream=None):
        self.stream = stream or sys.stderr
        self.name = name
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._shown = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        pct = int(100 * done / total)
        if pct == self._shown:
            return
        self._shown = pct
        fill = self.WIDTH * done // total
        self.stream.write(f"\r[{'#' * fill}{'.' * (self.WIDTH - fill)}] {pct:3d}% {self.name}")
        self.stream.flush()

    def clear(self) -> None:
        if self.enabled and self._shown >= 0:
            self.stream.write("\r" + " " * (self.WIDTH + 8 + len(self.name)) + "\r")
            self.stream.flush()


def read_or_why(path: Path):
    """(fixture, None), or (None, what is wrong) in words: "no such file", "not a fixture: ..."."""
    import zlib

    from shoe_daemon.recording.formats import FixtureFormatError, is_fixture, read_fixture

    if not path.exists():
        return None, "no such file"
    if path.is_dir():
        return None, "a directory with no fixtures (.shoelog or .shoelog.gz files) in it"
    if not is_fixture(path):
        return None, "not a fixture: the name must end in .shoelog or .shoelog.gz"
    try:
        return read_fixture(path), None
    except FixtureFormatError as exc:
        # "PATH:LINE: problem" -> "line LINE: problem"
        text = str(exc).removeprefix(str(path))
        text = f"line {text[1:]}" if text[1:2].isdigit() else text.lstrip(": ")
        return None, f"not a fixture: {text}"
    except UnicodeDecodeError as exc:
        return None, f"not a fixture: not UTF-8 text (byte {exc.start}); a binary file?"
    except (EOFError, zlib.error) as exc:
        return None, f"not a fixture: a damaged gzip stream ({exc or 'cut short'})"
    except OSError as exc:   # gzip.BadGzipFile is an OSError
        what = "not gzip-compressed" if "gzip" in str(exc).lower() else (exc.strerror or str(exc))
        return None, f"not a fixture: {what}" if "gzip" in what else what
    except ValueError as exc:
        return None, f"not a fixture: {exc}"


def reads_frames(fixture) -> bool:
    """Whether replaying ``fixture`` reads recorded camera frames (OpenCV, the 'camera' extra)."""
    from shoe_daemon.recording.formats import CAMERA

    return any(r.kind == CAMERA and isinstance(r.data, dict) and r.data.get("frame") and not r.data.get("event")
               for r in fixture.records)


def list_fixtures(paths: list[Path], out=None) -> int:
    from shoe_daemon.recording.check import check_path
    from shoe_daemon.recording.formats import fixture_stem

    out = out or sys.stdout
    rows = []
    for path in paths:
        fx, why = read_or_why(path)
        if fx is None:
            rows.append((path.name, f"(unreadable: {why})"))
            continue
        mark = "" if check_path(path).exists() else "  [no check file]"
        rows.append((fixture_stem(path), f"{fx.header.description or '(no description)'}{mark}"))
    width = max((len(r[0]) for r in rows), default=0)
    for name, text in rows:
        print(f"{name:{width}}  {text}", file=out)
    return 0


def run(args: argparse.Namespace) -> int:
    import logging

    from shoe_daemon.recording.check import check_path, diff, read_check, update_check
    from shoe_daemon.recording.formats import find_fixtures
    from shoe_daemon.recording.replay import ReplayError, replay

    targets = args.fixtures or ([str(default_library())] if (args.list or args.check or args.update_check) else [])
    if not targets:
        print("shoe-daemon replay: name a fixture (or a directory of them), or use --list", file=sys.stderr)
        return EXIT_USAGE
    paths = list(find_fixtures(targets))
    # An empty directory gives no path: named here, not a silent success.
    paths += [Path(t) for t in targets if Path(t).is_dir() and not any(p.parent == Path(t) for p in paths)]
    if args.list:
        return list_fixtures(paths)
    # Every file is read before the first replay: all the bad ones are named at once, nothing replayed.
    fixtures, bad = [], 0
    for p in paths:
        fixture, why = read_or_why(p)
        if fixture is None:
            print(f"shoe-daemon replay: {p}: {why}", file=sys.stderr)
            bad += 1
        fixtures.append(fixture)
    if bad:
        return EXIT_USAGE
    broker = None
    if args.broker:
        from shoe_daemon.commands.monitor import parse_broker

        try:
            broker = parse_broker(args.broker)
        except ValueError as exc:
            print(f"shoe-daemon replay: --broker: {exc}", file=sys.stderr)
            return EXIT_USAGE
    if args.verbose:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")

    failed: list[str] = []
    missing: list[str] = []
    skipped: list[str] = []
    no_camera = None    # why recorded frames cannot be read here (no 'camera' extra), checked once
    for path, fixture in zip(paths, fixtures, strict=True):
        name = fixture.name
        if reads_frames(fixture):
            if no_camera is None:
                from shoe_daemon.commands.extras import message
                from shoe_daemon.commands.extras import missing as missing_extras

                problems = missing_extras(["camera"])
                no_camera = message("replay", problems).removeprefix("shoe-daemon replay: ") if problems else ""
            if no_camera:
                # A table installed without the camera cannot read frames: said, not failed.
                print(f"{name}: SKIPPED: its recorded camera frames: {no_camera}", file=sys.stderr)
                skipped.append(name)
                continue
        chk = check_path(path)
        if args.check and not chk.exists():
            print(f"{name}: no check file {chk.name}: make it with `shoe-daemon replay --update-check {path}`",
                  file=sys.stderr)
            missing.append(name)
            continue
        progress = Progress(name)
        try:
            result = replay(fixture, speed=args.speed, broker=broker, progress=progress, verbose=args.verbose)
        except ReplayError as exc:
            progress.clear()
            print(f"{name}: REPLAY FAILED: {exc}", file=sys.stderr)
            failed.append(name)
            continue
        progress.clear()
        lines = result.lines
        summary = f"{len(lines)} messages, {result.events} events, {result.elapsed:.2f} s"
        if args.print_messages:
            sys.stdout.write("".join(line + "\n" for line in lines))
        if args.verbose:
            for note in result.info:
                print(f"{name}: {note}", file=sys.stderr)
        if args.update_check:
            written, changed = update_check(path, lines, [
                f"check of {path.name}: the MQTT messages its replay must publish, one per line",
                "TOPIC QOS RETAIN(r|-) PAYLOAD; see docs/fixtures.md. Rebuild: shoe-daemon replay --update-check",
            ])
            print(f"{name}: {'updated' if changed else 'unchanged'} {written.name} ({summary})", file=sys.stderr)
        elif args.check:
            expected = read_check(chk)
            text = diff(expected, lines, f"{chk} (expected)", f"{name} (replay)", max_lines=args.diff_lines)
            if text:
                sys.stdout.write(text)
                sys.stdout.flush()
                print(f"{name}: FAILED: outputs differ from {chk.name} ({summary})", file=sys.stderr)
                failed.append(name)
            else:
                print(f"{name}: ok ({summary})", file=sys.stderr)
        else:
            print(f"{name}: {summary}", file=sys.stderr)
    if args.check and len(paths) > 1:
        ok = len(paths) - len(failed) - len(missing) - len(skipped)
        print(f"{ok} of {len(paths)} fixtures match their check files"
              + (f"; failed: {', '.join(failed)}" if failed else "")
              + (f"; no check file: {', '.join(missing)}" if missing else "")
              + (f"; skipped (no 'camera' extra): {', '.join(skipped)}" if skipped else ""), file=sys.stderr)
    if (missing and not failed) or (skipped and len(skipped) == len(paths)):   # nothing could be checked
        return EXIT_USAGE
    return EXIT_DIFF if failed or missing else 0
