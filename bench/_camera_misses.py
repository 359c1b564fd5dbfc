"""An enrolled design's misses on synthetic frames, each with why: not for the benchmark's seeds.

    python -m bench._camera_misses font-peek nominal 880650 120 [--model PATH] [--quiet] [--json OUT]

Reads ``frames`` frames of ``condition`` (synth.CONDITIONS) of a vendored design, seeded ``seed``,
with its enrolled model ($SHOE_DAEMON_CACHE/bench-camera, or ``--model``) and prints each face-up
card not read exactly: its width, stress tags, what was reported (status, reason), rejections
near it, and the deck model's reading (card, probability, likeness, the generic reader's guess and
the corner model's reading of its clear index); then the tally, and how often the corner model
named the card right or wrong (at >= 0.8 and >= 0.5). Use own seeds only (880000-889999).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


def _near(quad, card, width: float) -> bool:
    """Is ``quad``'s centre within 0.3 card widths of the true ``card``'s (evaluate.match's rule)?"""
    return bool(np.hypot(*(np.mean(quad, axis=0) - card.centre)) < 0.3 * width)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("design")
    ap.add_argument("condition")
    ap.add_argument("seed", type=int)
    ap.add_argument("frames", type=int)
    ap.add_argument("--model")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()

    from bench.camera import enrolled_path
    from shoe_daemon.vision import cardart
    from shoe_daemon.vision.evaluate import Tally, match, score_frame
    from shoe_daemon.vision.recognizer import Recognizer
    from shoe_daemon.vision.synth import CONDITIONS, FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    gen = FrameGenerator(cardart.design_faces(a.design), [cardart.design_back(a.design)],
                         CONDITIONS[a.condition], seed=a.seed)
    rec = Recognizer({}, model_path=a.model or str(enrolled_path(a.design)))
    t = Tally()
    misses = []
    corner_stats = []   # (corner model right?, its p, generic right?, generic p) of every corner reading
    for i in range(a.frames):
        f = gen.frame(i)
        res = rec.recognize(f.image, zones=parse_zones(f.zones))
        score_frame(f, res, t)
        pairs, _used = match(f, res)
        for q, dr in res.deck_readings:
            if dr.corner is None:
                continue
            tc = [c for c in f.face_up if _near(q, c, float(np.linalg.norm(c.quad[1] - c.quad[0])))]
            if tc:
                corner_stats.append((dr.corner == tc[0].code, dr.p_corner, dr.generic == tc[0].code, dr.p_generic))
        for c, k in pairs:
            r = res.cards[k] if k is not None else None
            if r is not None and r.card == c.code:
                continue
            w = float(np.linalg.norm(c.quad[1] - c.quad[0]))

            rej = [why for q, why in res.rejected if _near(q, c, w)]
            drs = [dr for q, dr in res.deck_readings if _near(q, c, w)]
            d = {"frame": i, "card": c.code, "w": round(w), "tags": [x for x in f.tags(c) if not x.startswith(("felt", "defocus", "width"))],
                 "got": None if r is None else f"{r.status} {r.card} {r.confidence:.3f}: {r.reason}",
                 "rejected": rej,
                 "deck": [f"{dr.card} p={dr.p_card:.3f} m={dr.match:.2f} gen={dr.generic} {dr.p_generic:.3f} "
                          f"corner={dr.corner} {dr.p_corner:.3f}" for dr in drs]}
            misses.append(d)
            if not a.quiet:
                print(json.dumps(d))
    print(f"{a.design} {a.condition} seed {a.seed}: {t.summary()}; ok {t.card_ok} wrong {t.card_wrong} "
          f"withheld {t.card_none} not found {t.not_found} value wrong {t.value_wrong}")
    cs = corner_stats
    print(f"  corner readings {len(cs)}: right {sum(r for r, *_ in cs)}, right >= 0.8 {sum(r and p >= 0.8 for r, p, *_ in cs)}, "
          f"wrong >= 0.8 {sum((not r) and p >= 0.8 for r, p, *_ in cs)}, wrong >= 0.5 {sum((not r) and p >= 0.5 for r, p, *_ in cs)}, "
          f"both right >= (0.9, 0.8) {sum(r and g and p >= 0.8 and pg >= 0.9 for r, p, g, pg in cs)}, "
          f"agreeing wrong {sum((not r) and (not g) and p >= 0.5 for r, p, g, pg in cs)}")
    for ex in t.wrong_examples:
        print("  WRONG", ex)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"misses": misses, "ok": t.card_ok, "cards": t.cards, "wrong": t.card_wrong,
                       "none": t.card_none, "not_found": t.not_found, "false": t.false_cards}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
