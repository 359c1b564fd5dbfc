"""`shoe-daemon emulate`: a virtual dealing shoe on a pseudo-terminal.

The first line on stdout is the device path to open (flushed at once), e.g.

    $ shoe-daemon emulate --seed 7 --pace 1.5 --link /tmp/shoe0 &
    /tmp/shoe0
    $ shoe-daemon run --port /tmp/shoe0 ...

Progress goes to stderr. The shoe keeps answering (heartbeats, resends) after
the last coup until interrupted, or for --linger seconds.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from shoe_daemon.commands.argtypes import DECKS_HELP, decks

HELP = "run a virtual dealing shoe (ShoeLink v1) on a pseudo-terminal"

FAULT_HELP = (
    "inject a fault: NAME=RATE, repeatable. Link faults per frame: noise, corrupt, drop, disconnect "
    "(unplug for disconnect_time seconds, default 0.5: --fault disconnect_time=2); dealer faults: "
    "unreadable, push_back (per card), extra_card, missing_card (per coup)"
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--decks", type=decks, default=8, metavar="N", help=f"{DECKS_HELP} (default 8)")
    parser.add_argument("--seed", default=None,
                        help="shuffle and fault seed; the same seed and options deal the same shoe (default: random)")
    parser.add_argument("--pace", type=float, default=1.0,
                        help="seconds per card; 0 = as fast as the link allows, i.e. paced by the host's ACKs (default 1.0)")
    parser.add_argument("--coups", type=int, default=None, help="stop dealing after N coups (new shoes as needed)")
    parser.add_argument("--shoes", type=int, default=None, help="stop after N shoes (default 1, or as many as --coups needs)")
    parser.add_argument("--cut", type=int, default=None,
                        help="put the cut card N cards from the end (default 14-16 drawn per shoe; 0 = none)")
    parser.add_argument("--no-burn", action="store_true", help="do not burn cards at the start of a shoe")
    parser.add_argument("--stack", default=None,
                        help="deal these card codes in order instead of a shuffle (e.g. '9H 2C 3D TS ...')")
    parser.add_argument("--link", default=None,
                        help="stable symlink to the pty (re-pointed on every reconnect, like a udev link)")
    parser.add_argument("--fault", action="append", default=[], metavar="NAME=RATE", help=FAULT_HELP)
    parser.add_argument("--heartbeat", type=float, default=1.0, help="heartbeat interval in seconds (default 1.0)")
    parser.add_argument("--window", type=int, default=16,
                        help="with --pace 0: unacknowledged events allowed in flight (default 16)")
    parser.add_argument("--linger", type=float, default=None,
                        help="exit this many seconds after the last coup (default: run until interrupted)")
    parser.add_argument("--model", default="EMU-SHOE", help="model string in the handshake")
    parser.add_argument("--serial", default="EMU0000001", help="serial number in the handshake")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every event sent to stderr")


def _parse_stack(text: str) -> list[str]:
    from shoe_daemon.game.cards import parse_cards

    return [c.code for c in parse_cards(text.replace(",", " "))]


def build_shoe(args):
    """The EmulatedShoe the options describe (also used by tests)."""
    import random

    from firmware_protocol.connection import ShoeIdentity
    from shoe_daemon.emulator import EmulatedShoe, Faults

    faults = Faults.parse(args.fault)
    seed = args.seed
    if seed is None:
        seed = random.SystemRandom().randrange(1_000_000)
    else:
        try:
            seed = int(seed)
        except ValueError:
            pass
    stack = _parse_stack(args.stack) if args.stack else None
    shoes = args.shoes if args.shoes is not None else (None if args.coups is not None else 1)
    shoe = EmulatedShoe(
        decks=args.decks, seed=seed, pace=args.pace, faults=faults, link=args.link, linger=args.linger,
        stack=stack, cut=args.cut, coups=args.coups, shoes=shoes, burn=not args.no_burn,
        heartbeat=args.heartbeat, window=args.window,
        identity=ShoeIdentity(model=args.model, serial=args.serial),
    )
    return shoe, seed


def run(args) -> int:
    from shoe_daemon.game.cards import CardCodeError

    try:
        shoe, seed = build_shoe(args)
    except (ValueError, CardCodeError) as exc:
        print(f"shoe-daemon emulate: {exc}", file=sys.stderr)
        return 2
    path = shoe.open()
    print(path, flush=True)
    what = f"stack of {len(shoe.simulator.script.stack)} cards" if args.stack else f"{args.decks} decks"
    print(f"emulated shoe: {what}, seed {seed}, pace {args.pace}s, boot_id "
          f"{shoe.simulator.conn.boot_id:08x} on {path}", file=sys.stderr, flush=True)

    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()
        shoe._stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    reporter = threading.Thread(target=_report, args=(shoe, stop, args.verbose), daemon=True)
    reporter.start()
    try:
        shoe.run()
    finally:
        stop.set()
        reporter.join(1.0)
        for s, handler in old.items():
            signal.signal(s, handler)
        shoe.close()
        sim = shoe.simulator
        print(f"dealt {len(shoe.dealt)} cards in {sim.script.coups_dealt if hasattr(sim.script, 'coups_dealt') else '?'}"
              f" coups; {len(shoe.sent_events)} events; {shoe.disconnects} disconnects; "
              f"{len(sim.fault_log)} link faults", file=sys.stderr, flush=True)
    return 0


def _report(shoe, stop: threading.Event, verbose: bool) -> None:
    from firmware_protocol.messages import to_dict

    shown = 0
    while not stop.wait(0.2):
        events = shoe.sent_events
        if verbose:
            while shown < len(events):
                print("sent", to_dict(events[shown]), file=sys.stderr, flush=True)
                shown += 1


if __name__ == "__main__":  # python -m shoe_daemon.commands.emulate
    p = argparse.ArgumentParser(prog="shoe-daemon emulate", description=HELP)
    configure(p)
    raise SystemExit(run(p.parse_args()))
