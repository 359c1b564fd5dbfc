"""Cards per second through the core alone: the Pipeline (stamp -> core -> emit, no journal) over
whole shuffled 8-deck shoes, with each output encoded as the publisher would (canonical JSON).

This is the core's share of the daemon's CPU time per card (the whole pipeline, with the journal,
the serial link and the broker, is ``python -m bench pipeline``). Target: the core's time per card
well inside the daemon's budget of 250 us.

Run: ``python -m bench core`` (from the repository root).
"""

from __future__ import annotations

import random
import time

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table
from shoe_daemon.game.cards import ALL_CODES
from shoe_daemon.game.engine import TableRules

BUDGET_US = 250.0
SHOES = 6


def events(seed: int = 7) -> list[Event]:
    rng = random.Random(seed)
    out = [Event(0.0, Kind.LINK_UP, "shoe", {"driver": "protocol"})]
    t = 1.0
    for _ in range(SHOES):
        out.append(Event(t, Kind.NEW_SHOE, "api", {"user": "pit", "reason": "bench"}))
        cards = list(ALL_CODES) * 8
        rng.shuffle(cards)
        for i, code in enumerate(cards[:-14]):   # the cut card: about a shoe's worth of coups
            t += 0.01
            out.append(Event(t, Kind.CARD, "shoe", {"card": code, "counter": i + 1, "lseq": i + 1}))
    return out


def run(stream: list[Event]) -> tuple[int, int, float, float]:
    """(cards, messages, wall seconds, cpu seconds)."""
    from shoe_daemon.game import odds

    odds.setup()
    messages = 0

    def emit(out) -> None:
        nonlocal messages
        if isinstance(out, Publish):
            out.encode()
            messages += 1

    pipeline = Pipeline(Table(TableRules(decks=8), "bench"), emit=emit)
    wall, cpu = time.perf_counter(), time.process_time()
    for event in stream:          # as the daemon feeds it: small batches, their outputs then dropped
        pipeline.feed((event,))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    cards = sum(1 for e in stream if e.kind is Kind.CARD)
    return cards, messages, wall, cpu


def main() -> None:
    stream = events()
    best = None
    for _ in range(3):
        result = run(stream)
        if best is None or result[3] < best[3]:
            best = result
    cards, messages, wall, cpu = best
    per_card = cpu / cards * 1e6
    print(f"core pipeline (no journal, no broker): {cards} cards, {messages} messages, best of 3")
    print(f"  {cards / wall:,.0f} cards/s; CPU {per_card:.1f} us per card "
          f"(the daemon's whole budget is {BUDGET_US:.0f} us: {'ok' if per_card <= BUDGET_US else 'MISSED'})")


if __name__ == "__main__":
    main()
