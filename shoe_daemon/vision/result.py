"""What the recogniser reports: each card seen face up, and a frame's cards."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

STATUSES = ("ok", "partial", "unknown")

@dataclass
class CardResult:
    """One card seen face up. ``quad`` is clockwise from an end of a short side, in image pixels."""

    card: str | None
    value: int | None
    status: str
    confidence: float
    quad: list[list[float]]
    zone: str | None
    reason: str = ""
    # The posteriors behind the decision (for the fuser; not in the JSON).
    rank_probs: np.ndarray | None = field(default=None, repr=False)
    suit_probs: np.ndarray | None = field(default=None, repr=False)

    @property
    def centre(self) -> tuple[float, float]:
        q = np.asarray(self.quad)
        return float(q[:, 0].mean()), float(q[:, 1].mean())

    @property
    def width(self) -> float:
        q = np.asarray(self.quad)
        return float(min(np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[1])))

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"card": self.card, "value": self.value, "status": self.status,
                             "confidence": round(float(self.confidence), 4), "quad": self.quad,
                             "zone": self.zone}  # fmt: skip
        if self.reason:
            d["reason"] = self.reason
        return d


@dataclass
class FrameResult:
    cards: list[CardResult]
    elapsed_ms: float
    # White card-shaped things not reported (card backs, unreadable faces): [(quad, reason)].
    rejected: list[tuple[list[list[float]], str]] = field(default_factory=list)
    size: tuple[int, int] = (0, 0)     # (width, height)
    # With an enrolled deck: every quadrilateral the deck model read, [(quad, DeckReading)].
    deck_readings: list = field(default_factory=list)

    def to_json(self, image: str | None = None) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if image is not None:
            d["image"] = image
        d["cards"] = [c.to_json() for c in self.cards]
        d["elapsed_ms"] = round(self.elapsed_ms, 2)
        return d
