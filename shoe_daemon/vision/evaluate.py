"""Scoring recogniser results against a synthetic frame's truth (the benchmark and ``enroll``).

A trial is one face-up card of the frame; it is *found* when a reported card's centre lies
within 0.3 card widths of it. Every reported card that matches no face-up card is a false card.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from shoe_daemon.game.cards import RANK_VALUES


@dataclass
class Tally:
    frames: int = 0
    cards: int = 0
    card_ok: int = 0
    card_wrong: int = 0
    card_none: int = 0          # found, no exact card (partial or unknown)
    value_ok: int = 0
    value_wrong: int = 0
    value_none: int = 0         # found, no value (unknown)
    not_found: int = 0
    zone_ok: int = 0
    false_cards: int = 0        # reported where no face-up card is
    false_frames: int = 0       # frames with at least one false card
    status: Counter = field(default_factory=Counter)
    wrong_examples: list = field(default_factory=list)
    ms: list = field(default_factory=list)
    conf: list = field(default_factory=list)   # (status, confidence, right)

    def pct(self, k: int) -> float:
        return 100.0 * k / self.cards if self.cards else float("nan")

    def summary(self) -> str:
        return (f"{self.cards} cards in {self.frames} frames: exact card read {self.pct(self.card_ok):.1f} %, "
                f"wrong {self.pct(self.card_wrong):.2f} %, value wrong {self.pct(self.value_wrong):.2f} %, "
                f"withheld {self.pct(self.card_none):.1f} %, not found {self.pct(self.not_found):.1f} %, "
                f"false cards {self.false_cards}")  # fmt: skip


def match(frame, result) -> tuple[list[tuple[object, int | None]], set[int]]:
    """[(true card, index of the reported card or None)] for the face-up cards, and the indices used."""
    used: set[int] = set()
    pairs = []
    for c in frame.cards:
        if c.code is None:
            continue
        w = float(np.linalg.norm(c.quad[1] - c.quad[0]))
        best, best_d = None, 0.3 * w
        for k, r in enumerate(result.cards):
            d = float(np.hypot(r.centre[0] - c.centre[0], r.centre[1] - c.centre[1]))
            if d < best_d and k not in used:
                best, best_d = k, d
        if best is not None:
            used.add(best)
        pairs.append((c, best))
    return pairs, used


def score_frame(frame, result, t: Tally) -> None:
    t.frames += 1
    t.ms.append(result.elapsed_ms)
    pairs, used = match(frame, result)
    for c, best in pairs:
        t.cards += 1
        if best is None:
            t.not_found += 1
            continue
        r = result.cards[best]
        t.status[r.status] += 1
        t.zone_ok += r.zone == c.zone
        if r.card is None:
            t.card_none += 1
        elif r.card == c.code:
            t.card_ok += 1
        else:
            t.card_wrong += 1
            t.wrong_examples.append(f"{c.code} read {r.card} ({r.confidence:.3f})")
        true_value = RANK_VALUES[c.code[0]]
        if r.status == "ok":
            t.conf.append(("ok", r.confidence, r.card == c.code))
        elif r.status == "partial":
            t.conf.append(("partial", r.confidence, r.value == true_value))
        if r.value is None:
            t.value_none += 1
        elif r.value == true_value:
            t.value_ok += 1
        else:
            t.value_wrong += 1
            t.wrong_examples.append(f"{c.code} value read {r.value} ({r.status} {r.confidence:.3f})")
    extra = len(result.cards) - len(used)
    t.false_cards += extra
    t.false_frames += extra > 0
