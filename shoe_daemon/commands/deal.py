"""`shoe-daemon deal`: deal card codes read on stdin as coups, one JSON line per coup."""

from __future__ import annotations

import argparse
import json
import sys

from shoe_daemon.commands.argtypes import DECKS_HELP, decks

HELP = "deal the card codes read on stdin as coups; print one JSON object per coup"

EPILOG = """\
Reads card codes (rank A 2-9 T J Q K, then suit S H D C, e.g. "9H TS AC"; 10 for T
and lower case are accepted) separated by white space, and deals them in order
through the rules engine: P, B, P, B, then the third-card rule. No burn, no cut
card; each coup closes when complete. Dealing stops when fewer than 6 cards are
left before a coup.

Each line is the coup's result: shoe, coup, coup_id, punto and banco (card codes
in dealing order), punto_total, banco_total, winner (punto|banco|tie), natural,
natural_total (8, 9 or null), punto_pair, banco_pair, cards, last_hand, revision.

Exit status 2, with a message on stderr, for a bad card code (naming the token
and its 1-based position) or a card that an N-deck shoe cannot hold that often.

    shoe-daemon shuffle --decks 8 | shoe-daemon deal --decks 8
"""

MIN_CARDS = 6  # the most a coup can take


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--decks", type=decks, default=8, metavar="N", help=f"{DECKS_HELP} (default 8)")


def run(args: argparse.Namespace) -> int:
    from collections import Counter

    from shoe_daemon.game.cards import CardCodeError, parse_card
    from shoe_daemon.game.engine import DealingEngine, ErrorPolicy, TableRules

    decks = args.decks
    tokens = sys.stdin.read().split()
    cards = []
    copies: Counter = Counter()
    for position, token in enumerate(tokens, start=1):
        try:
            card = parse_card(token, position)
        except CardCodeError as exc:
            print(f"shoe-daemon deal: {exc}", file=sys.stderr)
            return 2
        copies[card] += 1
        if copies[card] > decks:
            print(f"shoe-daemon deal: card {card.code} (token {token!r} at position {position}) "
                  f"appears {copies[card]} times, but a shoe of {decks} decks holds only {decks}",
                  file=sys.stderr)
            return 2
        cards.append(card)

    engine = DealingEngine(TableRules(decks=decks, on_error=ErrorPolicy.CONTINUE))
    out = sys.stdout
    i, n = 0, len(cards)
    while n - i >= MIN_CARDS:
        while True:
            step = engine.deal(cards[i], source="stdin")
            i += 1
            if step.alerts:  # cannot happen after the checks above; never print a doubtful coup
                print(f"shoe-daemon deal: {step.alerts[0].message}", file=sys.stderr)
                return 2
            if step.result is not None:
                break
        out.write(json.dumps(step.result.to_dict()) + "\n")
    out.flush()
    return 0
