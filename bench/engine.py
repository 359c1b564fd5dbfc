"""Cards per second through the dealing engine the daemon uses.

Deals whole shuffled 8-deck shoes through :class:`DealingEngine` (auto closing,
no burn), coup after coup until fewer than 6 cards remain, then starts a new
shoe. Every card goes through ``deal()`` and returns a full Step (card record,
coup snapshot, result when the coup settles). Two runs: bare cards, and cards
with the shoe's counter and the camera's side (the checks the serial shoe and
the camera trigger). The shuffles are made before the clock starts. Target:
>= 200,000 cards/s.

Run: ``python -m bench engine`` (from the repository root).
"""

from __future__ import annotations

import random
import time

from shoe_daemon.game.cards import ALL_CODES, parse_card
from shoe_daemon.game.engine import DealingEngine, TableRules

TARGET = 200_000


def _shoes(n: int, decks: int = 8, seed: int = 2024) -> list[list]:
    rng = random.Random(seed)
    cards = [parse_card(c) for c in ALL_CODES] * decks
    out = []
    for _ in range(n):
        rng.shuffle(cards)
        out.append(list(cards))
    return out


def run(shoes: list[list], *, with_checks: bool) -> tuple[int, int, float]:
    """Deal the shoes; returns (cards, coups, seconds).

    ``with_checks``: each card also carries the shoe's counter and the side it
    landed on (the side the previous step announced, as a careful croupier deals).
    """
    engine = DealingEngine(TableRules(decks=8))
    deal = engine.deal
    cards = coups = 0
    start = time.perf_counter()
    for shoe in shoes:
        engine.new_shoe()
        n = len(shoe)
        i = 0
        while n - i >= 6:
            side = None
            while True:
                if with_checks:
                    step = deal(shoe[i], counter=i + 1, side=side, t=float(i))
                    side = step.snapshot.next_side
                else:
                    step = deal(shoe[i])
                i += 1
                if step.result is not None:
                    break
            coups += 1
        cards += i
    seconds = time.perf_counter() - start
    if engine.shoe_state().dealt != i:  # a broken engine must not produce a figure
        raise RuntimeError("the engine lost count of the cards")
    return cards, coups, seconds


def main() -> None:
    shoes = _shoes(60)
    run(shoes[:5], with_checks=False)  # warm-up
    best = None
    for label, checks in (("cards only", False), ("with counter and side", True)):
        rates = []
        for _ in range(3):
            cards, coups, secs = run(shoes, with_checks=checks)
            rates.append(cards / secs)
        rate = max(rates)
        best = rate if best is None else min(best, rate)
        print(f"engine ({label}): {cards} cards, {coups} coups per run; "
              f"best of 3: {rate:,.0f} cards/s ({1e6 / rate:.2f} us/card)")
    verdict = "meets" if best >= TARGET else "BELOW"
    print(f"target {TARGET:,} cards/s: {verdict} ({best:,.0f} cards/s on the slower run)")


if __name__ == "__main__":
    main()
