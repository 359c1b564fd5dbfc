"""Fusing frames: a card is decided from several frames while it rests, never from one.

The daemon's camera source feeds every :class:`~shoe_daemon.vision.recognizer.FrameResult` to
``CardFuser.update(result, t)``. Cards are tracked by position (a card that moves more than a
fraction of its width starts over: it is still being dealt). Once a card has rested for
``settle_frames`` frames, each further frame votes; the fuser says, once per card:

* ``ok`` with the card when at least ``min_votes`` frames read that exact card ``ok``, no frame
  read another card ``ok``, and their mean calibrated confidence is at least ``min_confidence``;
* ``unsure`` after ``max_frames`` settled frames otherwise (frames disagree, or too few read it),
  with ``value`` set when every frame that gave a value gave the same one (at least
  ``min_votes`` of them) - baccarat needs only the value - and null otherwise.

A card not seen for ``lost_frames`` frames is dropped (``gone`` lists it once). A decided card is
remembered for ``recall_frames`` frames more: if a card shows again at its place in that time (a hand
lay over it for a second), it is that card, not decided again - a second decision would reach the
core as the next card of the zone.

    recognizer = Recognizer(config)
    fuser = CardFuser()
    for frame in open_frames(config.camera.source):
        for decision in fuser.update(recognizer.recognize(frame.image), frame.t):
            ...  # decision.zone, decision.status, decision.card, decision.value
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from shoe_daemon.vision.result import CardResult, FrameResult


@dataclass
class FusedCard:
    track: int
    zone: str | None
    status: str                  # "ok" or "unsure"
    card: str | None
    value: int | None
    confidence: float
    frames: int                  # settled frames that voted
    quad: list[list[float]]
    reason: str = ""
    t: float | None = None

    def to_json(self) -> dict:
        return {"track": self.track, "zone": self.zone, "status": self.status, "card": self.card,
                "value": self.value, "confidence": round(self.confidence, 4), "frames": self.frames,
                "quad": self.quad, "reason": self.reason}  # fmt: skip


@dataclass
class Track:
    id: int
    centre: tuple[float, float]
    width: float
    last: CardResult
    seen: int = 1                # consecutive frames at rest
    missed: int = 0
    votes: list[CardResult] = field(default_factory=list)
    decided: FusedCard | None = None


class CardFuser:
    def __init__(self, *, settle_frames: int = 2, min_votes: int = 3, max_frames: int = 12,
                 min_confidence: float = 0.98, lost_frames: int = 5, move_tolerance: float = 0.25,
                 recall_frames: int = 15):  # fmt: skip
        self.settle_frames = settle_frames
        self.min_votes = min_votes
        self.max_frames = max_frames
        self.min_confidence = min_confidence
        self.lost_frames = lost_frames
        self.move_tolerance = move_tolerance
        self.recall_frames = recall_frames
        self.tracks: list[Track] = []
        self.gone: list[Track] = []
        self.out_of_sight: list[Track] = []     # decided, lost, still recalled (see the module doc)
        self._ids = itertools.count(1)

    def reset(self) -> None:
        """Forget every card (e.g. when the coup is cleared)."""
        self.tracks.clear()
        self.gone.clear()
        self.out_of_sight.clear()

    def update(self, result: FrameResult, t: float | None = None) -> list[FusedCard]:
        """Feed one frame's result; returns the cards decided by this frame."""
        self.gone = []
        unmatched = list(range(len(result.cards)))
        pairs = []
        for ti, tr in enumerate(self.tracks):
            for ci in unmatched:
                c = result.cards[ci]
                d = float(np.hypot(c.centre[0] - tr.centre[0], c.centre[1] - tr.centre[1]))
                if d <= max(tr.width, 1.0):
                    pairs.append((d, ti, ci))
        pairs.sort()
        used_t, used_c = set(), set()
        for _d, ti, ci in pairs:
            if ti in used_t or ci in used_c:
                continue
            used_t.add(ti)
            used_c.add(ci)
            tr = self.tracks[ti]
            c = result.cards[ci]
            if not self._at_its_place(tr, c):
                # Still moving (being dealt or slid into place): start over. A card decided stays
                # decided in its zone: slid, or half under a hand for a frame (its outline's centre
                # jumps), it is still that card (own seed 881715, layout 25: a TH decided twice).
                tr.seen, tr.votes = 1, []
                if c.zone != tr.last.zone:
                    tr.decided = None
            else:
                tr.seen += 1
            tr.centre, tr.width, tr.last, tr.missed = c.centre, c.width, c, 0
            if tr.seen > self.settle_frames:
                tr.votes.append(c)
        for ti, tr in enumerate(self.tracks):
            if ti not in used_t:
                tr.missed += 1
        for tr in self.out_of_sight:
            tr.missed += 1
        self.out_of_sight = [tr for tr in self.out_of_sight if tr.missed <= self.lost_frames + self.recall_frames]
        for ci, c in enumerate(result.cards):
            if ci not in used_c:
                self.tracks.append(self._recalled(c) or Track(next(self._ids), c.centre, c.width, c))
        self.gone = [tr for tr in self.tracks if tr.missed >= self.lost_frames]
        self.tracks = [tr for tr in self.tracks if tr.missed < self.lost_frames]
        self.out_of_sight += [tr for tr in self.gone if tr.decided is not None]
        out = []
        for tr in self.tracks:
            if tr.decided is None and tr.missed == 0 and tr.votes:
                fused = self._decide(tr, t)
                if fused is not None:
                    tr.decided = fused
                    out.append(fused)
        return out

    def _recalled(self, c: CardResult) -> Track | None:
        """The decided card out of sight at ``c``'s place (same zone, moved less than the tolerance)."""
        for tr in self.out_of_sight:
            if self._at_its_place(tr, c):
                self.out_of_sight.remove(tr)
                tr.centre, tr.width, tr.last, tr.seen, tr.missed, tr.votes = c.centre, c.width, c, 1, 0, []
                return tr
        return None

    def _at_its_place(self, tr: Track, c: CardResult) -> bool:
        """Whether ``c`` lies where ``tr``'s card was last seen: in its zone, moved less than the
        tolerance."""
        d = float(np.hypot(c.centre[0] - tr.centre[0], c.centre[1] - tr.centre[1]))
        return d <= self.move_tolerance * tr.width and c.zone == tr.last.zone

    def _decide(self, tr: Track, t: float | None) -> FusedCard | None:
        votes = tr.votes
        ok = Counter(v.card for v in votes if v.status == "ok")
        values = Counter(v.value for v in votes if v.value is not None)
        quad = tr.last.quad
        if len(ok) == 1:
            (card, n), = ok.items()
            conf = float(np.mean([v.confidence for v in votes if v.card == card]))
            if n >= self.min_votes and conf >= self.min_confidence and len(values) == 1:
                return FusedCard(tr.id, tr.last.zone, "ok", card, votes[-1].value if votes[-1].card == card else
                                 next(v.value for v in votes if v.card == card), conf, len(votes), quad, "", t)  # fmt: skip
        if len(votes) < self.max_frames:
            return None
        if len(ok) > 1:
            reason = f"frames read different cards: {', '.join(sorted(ok))}"
        elif not ok:
            reason = "no frame read the card"
        else:
            reason = f"too few frames read it ({max(ok.values())} of {len(votes)})"
        value = None
        conf = 0.0
        if len(values) == 1:
            (v, n), = values.items()
            if n >= self.min_votes:
                value = v
                conf = float(np.mean([c.confidence for c in votes if c.value == v]))
        return FusedCard(tr.id, tr.last.zone, "unsure", None, value, conf, len(votes), quad, reason, t)
