"""Argument types shared by the subcommands (argparse ``type=``; errors exit 2 with the message)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def positive_int(noun: str = "") -> Callable[[str], int]:
    """A whole number >= 1; ``noun`` names it in the messages ("decks": "... of decks")."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number" + (f" of {noun}" if noun else "")) from None
        if n < 1:
            what = f"the number of {noun} must" if noun else "must"
            raise argparse.ArgumentTypeError(f"{what} be at least 1, got {n}")
        return n

    return parse



def decks(text: str) -> int:
    """``--decks`` of every command: 4, 6 or 8 (the shoe's DECKS, as ``[table] decks``), one message for all."""
    from shoe_daemon.game.shoe import DECKS

    try:
        n = int(text)
    except ValueError:
        n = None
    if n not in DECKS:
        raise argparse.ArgumentTypeError(f"the number of decks must be 4, 6 or 8 (got {text!r})")
    return n


DECKS_HELP = "decks in the shoe: 4, 6 or 8"
