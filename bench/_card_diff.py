"""Per-card readings of own-seed synthetic frames, dumped by one tree's code and compared with another's.

    PYTHONPATH=TREE python -m bench._card_diff dump font nominal 884500 300 OUT.json [--model PATH]
    python -m bench._card_diff diff OLD.json NEW.json [--all]

``dump`` uses only what every tree since 2026-11-30 has (synth, cardart, recognizer), so the old
code can run it from this file (``python bench/_card_diff.py`` with PYTHONPATH at the old tree).
The deck is ``font`` (bench.camera's held-out font deck), ``cardsjs`` or a vendored design name.
Each face-up card gets the reported card matched as evaluate.match does (centre within 0.3 of its
width): status, card, reason, and rejections near it. ``diff`` counts exact/withheld/not
found/wrong/false of each and lists the cards whose reading changed (every card with --all).
Use own seeds only (880000-889999): never the benchmark's.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter

import numpy as np


def _faces_backs(deck: str):
    from shoe_daemon.vision import cardart

    if deck == "font":
        from shoe_daemon.vision.train import TEST_FONT

        return cardart.font_deck(TEST_FONT[0], TEST_FONT[1]), cardart.cardsjs_backs()
    if deck == "cardsjs":
        return cardart.cardsjs_faces(), cardart.cardsjs_backs()
    return cardart.design_faces(deck), [cardart.design_back(deck)]


def _near(quad, centre, width: float) -> bool:
    return bool(np.hypot(*(np.mean(np.asarray(quad), axis=0) - centre)) < 0.3 * width)


def dump(deck: str, condition: str, seed: int, frames: int, out: str, model: str | None) -> None:
    from shoe_daemon.vision.recognizer import Recognizer
    from shoe_daemon.vision.synth import FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    faces, backs = _faces_backs(deck)
    gen = FrameGenerator(faces, backs, condition, seed=seed)
    rec = Recognizer({}, model_path=model) if model else Recognizer({})
    rows = []
    for i in range(frames):
        f = gen.frame(i)
        res = rec.recognize(f.image, zones=parse_zones(f.zones))
        used: set[int] = set()
        cards = []
        for c in f.cards:
            if c.code is None:
                continue
            w = float(np.linalg.norm(c.quad[1] - c.quad[0]))
            best, best_d = None, 0.3 * w
            for k, r in enumerate(res.cards):
                d = float(np.hypot(r.centre[0] - c.centre[0], r.centre[1] - c.centre[1]))
                if d < best_d and k not in used:
                    best, best_d = k, d
            if best is not None:
                used.add(best)
            r = res.cards[best] if best is not None else None
            cards.append({"code": c.code, "w": round(w), "hand": c.occluded_corner is not None,
                          "status": r.status if r else None, "card": r.card if r else None,
                          "conf": round(float(r.confidence), 4) if r else None, "reason": r.reason if r else "",
                          "rejected": [why for q, why in res.rejected if _near(q, c.centre, w)]})  # fmt: skip
        false = [{"status": r.status, "card": r.card, "reason": r.reason}
                 for k, r in enumerate(res.cards) if k not in used]  # fmt: skip
        rows.append({"frame": i, "hash": hashlib.sha1(f.image.tobytes()).hexdigest()[:12], "cards": cards,
                     "false": false})  # fmt: skip
        if (i + 1) % 50 == 0:
            print(f"{i + 1} frames", file=sys.stderr)
    with open(out, "w") as fh:
        json.dump({"deck": deck, "condition": condition, "seed": seed, "frames": rows}, fh)


def outcome(c: dict) -> str:
    if c["status"] is None:
        return "not found"
    if c["card"] is None:
        return "withheld"
    return "exact" if c["card"] == c["code"] else "wrong"


def tally(rows: list[dict]) -> Counter:
    t = Counter(outcome(c) for r in rows for c in r["cards"])
    t["cards"] = sum(len(r["cards"]) for r in rows)
    t["false"] = sum(len(r["false"]) for r in rows)
    return t


def line(name: str, t: Counter) -> str:
    n = max(t["cards"], 1)
    return (f"{name}: {t['cards']} cards, exact {t['exact']} ({100 * t['exact'] / n:.2f} %), withheld {t['withheld']} "
            f"({100 * t['withheld'] / n:.2f} %), not found {t['not found']}, wrong {t['wrong']}, false {t['false']}")


def diff(old_path: str, new_path: str, show_all: bool) -> None:
    old, new = (json.load(open(p)) for p in (old_path, new_path))
    print(line("old", tally(old["frames"])))
    print(line("new", tally(new["frames"])))
    moves: Counter = Counter()
    if len(old["frames"]) != len(new["frames"]):
        raise SystemExit(f"the two runs read {len(old['frames'])} and {len(new['frames'])} frames: dump the same N")
    for a, b in zip(old["frames"], new["frames"], strict=True):
        if a["hash"] != b["hash"]:
            print(f"frame {a['frame']}: images differ ({a['hash']} / {b['hash']})")
            continue
        for ca, cb in zip(a["cards"], b["cards"], strict=True):
            oa, ob = outcome(ca), outcome(cb)
            moves[(oa, ob)] += 1
            if show_all or (oa, ob, ca["card"]) != (ob, oa, cb["card"]) and (oa != ob or ca["card"] != cb["card"]):
                print(json.dumps({"frame": a["frame"], "code": ca["code"], "w": ca["w"], "hand": ca["hand"],
                                  "old": [ca["status"], ca["card"], ca["reason"][:90]],
                                  "new": [cb["status"], cb["card"], cb["reason"][:90]],
                                  "new_rejected": cb["rejected"]}))  # fmt: skip
        for fb in b["false"]:
            print(json.dumps({"frame": b["frame"], "false (new)": fb}))
    print("old -> new:", dict(moves))


def main(argv: list[str]) -> int:
    if argv[0] == "dump":
        model = argv[argv.index("--model") + 1] if "--model" in argv else None
        dump(argv[1], argv[2], int(argv[3]), int(argv[4]), argv[5], model)
    else:
        diff(argv[1], argv[2], "--all" in argv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
