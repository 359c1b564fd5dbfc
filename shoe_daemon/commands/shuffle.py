"""`shoe-daemon shuffle`: print a freshly shuffled shoe's card codes."""

from __future__ import annotations

import argparse
import sys

from shoe_daemon.commands.argtypes import DECKS_HELP, decks

HELP = "print the card codes of a freshly shuffled shoe (pipe it into `shoe-daemon deal`)"

EPILOG = """\
Prints the 52 x N card codes of a shuffled N-deck shoe, 13 to a line, in dealing
order. The shuffle is random.Random(SEED).shuffle of the decks in rank-major order;
the same --seed gives the same shoe. Without --seed a seed is drawn from the
`secrets` module; the seed used is printed on stderr so a shoe can be reproduced.
(For demos and tests: a casino shuffle is physical.)

    shoe-daemon shuffle --decks 8 --seed 42 | shoe-daemon deal --decks 8
"""

PER_LINE = 13


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--decks", type=decks, default=8, metavar="N", help=f"{DECKS_HELP} (default 8)")
    parser.add_argument("--seed", type=int, metavar="S", help="seed for random.Random (default: random)")


def shuffled_codes(decks: int, seed: int) -> list[str]:
    """The shoe's codes in dealing order for ``seed``."""
    import random

    from shoe_daemon.game.cards import ALL_CODES

    codes = list(ALL_CODES) * decks
    random.Random(seed).shuffle(codes)
    return codes


def run(args: argparse.Namespace) -> int:
    seed = args.seed
    if seed is None:
        import secrets

        seed = secrets.randbits(63)
    codes = shuffled_codes(args.decks, seed)
    print(f"shoe-daemon shuffle: {args.decks} decks, {len(codes)} cards, seed {seed}", file=sys.stderr)
    lines = (" ".join(codes[i:i + PER_LINE]) for i in range(0, len(codes), PER_LINE))
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
    return 0
