"""`shoe-daemon odds`: the exact analysis of the three bets for a shoe."""

from __future__ import annotations

import argparse

from shoe_daemon.commands.argtypes import DECKS_HELP, decks

HELP = "exact Banco / Punto / Tie counts, probabilities and house edges for a shoe"

EPILOG = """\
Counts are over every ordered 6-card sequence of the shoe (the convention of the
published tables), exact integers. Without --remaining or --dealt: a full shoe.

--remaining COMP, the cards left in the shoe, in one of two forms:
  ten counts for the card values 0,1,...,9 (value 0 = T J Q K, 1 = A):
      --remaining 128,32,32,32,32,32,32,32,32,32
  RANK:COUNT pairs, ranks A 2-9 T J Q K (10 = T), ranks not named count 0:
      --remaining A:32,2:32,3:32,4:32,5:32,6:32,7:32,8:32,9:32,T:32,J:32,Q:32,K:32
  With --decks as well, no value may exceed what a full shoe of that many decks holds.

--dealt CODES, the cards already out of a full --decks shoe, card codes
(rank then suit, e.g. "AS 9H TD KC", separated by spaces or commas).

At least 6 cards must be left. Bad input: a message and exit status 2.
"""

DEFAULT_DECKS = 8


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "--decks",
        type=decks,
        metavar="N",
        help=f"{DECKS_HELP}: a full shoe (default {DEFAULT_DECKS})",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--remaining",
        type=_composition,
        metavar="COMP",
        help="the cards left in the shoe: 10 counts for values 0-9, or RANK:COUNT,... (see below)",
    )
    group.add_argument(
        "--dealt",
        type=_dealt,
        metavar="CODES",
        help="card codes already dealt from a full --decks shoe (e.g. 'AS 9H TD')",
    )


def _composition(text: str):
    """Parse --remaining (both forms) into a Composition; errors as ArgumentTypeError (exit 2)."""
    from shoe_daemon.game.odds import composition_from_ranks, composition_from_values

    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: empty item; give 10 counts or RANK:COUNT pairs separated by commas")
    try:
        if any(":" in p for p in parts):
            counts = {}
            for p in parts:
                rank, sep, count = p.partition(":")
                if not sep:
                    raise ValueError(f"{p!r} is not RANK:COUNT (do not mix the two forms)")
                rank = rank.strip().upper()
                if rank in counts or (rank == "10" and "T" in counts) or (rank == "T" and "10" in counts):
                    raise ValueError(f"rank {rank} given twice")
                counts[rank] = _count(count, f"rank {rank}")
            return composition_from_ranks(counts)
        if len(parts) != 10:
            raise ValueError(f"{len(parts)} counts given; give 10, for the values 0,1,...,9 (or RANK:COUNT pairs)")
        return composition_from_values([_count(p, f"value {v}") for v, p in enumerate(parts)])
    except (ValueError, TypeError) as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _count(text: str, what: str) -> int:
    text = text.strip()
    if not text.isdigit():
        raise ValueError(f"count {text!r} for {what} is not a non-negative whole number")
    return int(text)


def _dealt(text: str):
    from shoe_daemon.game.cards import CardCodeError, parse_cards

    try:
        return parse_cards(text.replace(",", " "))
    except CardCodeError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _fail(message: str) -> int:
    import sys

    print(f"shoe-daemon odds: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    import json

    from shoe_daemon.game.odds import analyze, full_shoe, remaining_after

    decks = args.decks
    try:
        if args.remaining is not None:
            composition = args.remaining
            if decks is not None:
                full = full_shoe(decks).counts
                over = [v for v in range(10) if composition.counts[v] > full[v]]
                if over:
                    v = over[0]
                    return _fail(
                        f"--remaining has {composition.counts[v]} cards of value {v}, "
                        f"but a full {decks}-deck shoe holds only {full[v]}"
                    )
        else:
            decks = DEFAULT_DECKS if decks is None else decks
            composition = remaining_after(decks, args.dealt or ())
        result = analyze(composition)
    except ValueError as e:
        return _fail(str(e))

    if args.json:
        print(json.dumps({"decks": decks, **result.to_dict()}))
    else:
        print(format_table(result, decks, dealt=len(args.dealt or ())))
    return 0


def format_table(result, decks: int | None, dealt: int = 0) -> str:
    """The readable form: one row per bet."""
    where = f"{decks}-deck shoe" if decks is not None else "shoe"
    if dealt:
        where += f", {dealt} card{'s' if dealt != 1 else ''} dealt"
    lines = [
        f"Punto Banco, {where}: {result.cards} cards left",
        "composition (values 0-9): " + " ".join(str(c) for c in result.counts),
        f"6-card sequences: {result.total:,}",
        "",
        f"{'bet':<6} {'pays':>6} {'sequences won':>26} {'probability':>12} {'house edge':>11}",
    ]
    rows = [
        ("Banco", "19:20", result.banco, result.p_banco, result.edge_banco),
        ("Punto", "1:1", result.punto, result.p_punto, result.edge_punto),
        ("Tie", "8:1", result.tie, result.p_tie, result.edge_tie),
    ]
    for name, pays, count, p, edge in rows:
        lines.append(f"{name:<6} {pays:>6} {count:>26,} {p:>12.8f} {edge * 100:>10.4f}%")
    lines.append("")
    lines.append("house edge: minus the expected value per unit staked (ties included; Punto/Banco push on a tie)")
    return "\n".join(lines)
