"""`shoe-daemon roads`: the scoreboard roads of a list of coup results read on stdin."""

from __future__ import annotations

import argparse

HELP = "Bead Plate, Big Road, Big Eye Boy, Small Road and Cockroach Pig of a list of coup results"

EPILOG = """\
Reads the coups on stdin, one token per coup, separated by white space:
  B, P or T (Banco win, Punto win, tie), optionally followed by
  b (Banco pair) and/or p (Punto pair):      echo "B Pp T Bbp" | shoe-daemon roads

--json prints one JSON object: bead_plate, big_road, big_eye_boy, small_road,
cockroach_pig, ask_banco, ask_punto, stats (format: docs/roads.md). Without it,
a text drawing of the grids: B/P (and T on the bead plate) for results, a digit
after a Big Road letter for the ties counted on that cell, r/b for red/blue
marks, '.' for an empty cell.

A bad token: a message naming it and its position (from 1), exit status 2.
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the text grids")


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from shoe_daemon.game.roads import Roads, TokenError, parse_tokens

    try:
        coups = parse_tokens(sys.stdin.read())
    except TokenError as e:
        print(f"shoe-daemon roads: error: {e}", file=sys.stderr)
        return 2
    roads = Roads(coups)
    if args.json:
        print(json.dumps(roads.to_dict()))
    else:
        print(format_text(roads.to_dict()))
    return 0


# --------------------------------------------------------------------------- text


def _grid(cells, rows: int, width: int, text, empty: str) -> list[str]:
    table = [[empty] * width for _ in range(rows)]
    for cell in cells:
        table[cell["row"]][cell["col"]] = text(cell)
    return [" ".join(line).rstrip() for line in table]


def _bead_text(cell) -> str:
    return cell["winner"][0].upper() + ("b" if cell["banco_pair"] else " ") + ("p" if cell["punto_pair"] else " ")


def _big_text(cell) -> str:
    ties = cell["ties"]
    return cell["winner"][0].upper() + (" " if ties == 0 else str(ties) if ties < 10 else "+")


_TITLES = (("big_eye_boy", "Big Eye Boy"), ("small_road", "Small Road"), ("cockroach_pig", "Cockroach Pig"))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def format_text(d: dict) -> str:
    """A monospace drawing of every road from ``Roads.to_dict()`` data."""
    lines: list[str] = []
    bead = d["bead_plate"]
    lines.append(f"Bead Plate ({_plural(d['coups'], 'coup')}; b/p after the letter: Banco/Punto pair)")
    lines += _grid(bead["cells"], bead["rows"], bead["width"], _bead_text, ".  ")
    big = d["big_road"]
    note = f", {_plural(big['pending_ties'], 'tie')} before the first win" if big["pending_ties"] else ""
    lines.append("")
    lines.append(f"Big Road ({_plural(len(big['columns']), 'column')}; digit after the letter: ties{note})")
    lines += _grid(big["cells"], big["rows"], big["width"], _big_text, ". ")
    for key, title in _TITLES:
        road = d[key]
        lines.append("")
        lines.append(f"{title} ({_plural(len(road['marks']), 'mark')}; r red, b blue)")
        lines += _grid(road["cells"], road["rows"], road["width"], lambda c: c["color"][0], ".")
    lines.append("")
    for key, title in (("ask_banco", "Ask Banco"), ("ask_punto", "Ask Punto")):
        ask = d[key]
        lines.append(f"{title + ':':<11}" + ", ".join(f"{t} {ask[k] or '-'}" for k, t in _TITLES))
    s = d["stats"]
    cur = s["current_streak"]
    naturals = "" if s["naturals"] is None else f"  naturals {s['naturals']}"
    lines.append("")
    lines.append(
        f"Banco {s['banco']}  Punto {s['punto']}  Tie {s['tie']}{naturals}  "
        f"Banco pairs {s['banco_pairs']}  Punto pairs {s['punto_pairs']}"
    )
    lines.append(
        f"longest streak: Banco {s['longest_banco_streak']}, Punto {s['longest_punto_streak']}; "
        f"current: " + (f"{cur['winner'].capitalize()} {cur['length']}" if cur["winner"] else "none")
    )
    return "\n".join(lines)
