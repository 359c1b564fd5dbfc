"""Table stress on own seeds: found / exact / wrong / false cards, split by touching and overlapped cards.

    python -m bench._table_stress --seed 881150 --frames 50 [--cases cardsjs:shipped,responsive:enrolled]
        [--condition stress] [--save out.json] [--diff before.json]

Each case (design:model) reads ``--frames`` frames of ``FrameGenerator(faces, backs,
CONDITIONS["table-stress"], seed + k)`` (k the case's place in the list), scored as the benchmark
scores (:func:`shoe_daemon.vision.evaluate.match`). A card not found is split by what became of it:
a quadrilateral the recogniser rejected there (its reason), or nothing (detection never found it).
``--save`` keeps every card's outcome; ``--diff`` prints the cards whose outcome changed against a
saved run. Own seeds only (880000-889999): never the benchmark's. Not part of ``make bench``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict

import numpy as np

DEFAULT_CASES = "cardsjs:shipped,responsive:enrolled,kennard-jumbo:enrolled,kennard-4colour:shipped"


def group(card) -> str:
    if card.covered > 0:
        return "overlapped"
    if card.touching:
        return "touching"
    return "apart"


def _reason(frame_result, card) -> str:
    """What the recogniser did with a quadrilateral at an unfound card's place, else 'no candidate'."""
    w = float(np.linalg.norm(card.quad[1] - card.quad[0]))
    best, best_d = "no candidate", 0.3 * w
    for quad, why in frame_result.rejected:
        c = np.mean(np.array(quad, float), axis=0)
        d = float(np.hypot(*(c - card.centre)))
        if d < best_d:
            best, best_d = why, d
    # The reading failures' text names numbers; keep the reason's words.
    return best.split("(")[0].strip()[:60]


def run_case(design: str, model: str, seed: int, frames: int, condition: str = "table-stress") -> list[dict]:
    from bench.camera import _models, enrolled_path
    from shoe_daemon.vision.cardart import design_back
    from shoe_daemon.vision.evaluate import match
    from shoe_daemon.vision.recognizer import Recognizer
    from shoe_daemon.vision.synth import CONDITIONS, FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    decks, backs = _decks_for(design)
    if design not in ("cardsjs", "font"):
        backs = [design_back(design)]
    path = _models()[model] if model in _models() else str(enrolled_path(design))
    rec = Recognizer({}, model_path=path)
    gen = FrameGenerator(decks, backs, CONDITIONS[condition], seed=seed)
    rows = []
    for i in range(frames):
        f = gen.frame(i)
        res = rec.recognize(f.image, zones=parse_zones(f.zones))
        pairs, used = match(f, res)
        for c, k in pairs:
            row = {"case": f"{design}:{model}", "seed": seed, "frame": i, "code": c.code, "group": group(c),
                   "width": round(float(np.linalg.norm(c.quad[1] - c.quad[0])), 1)}
            if k is None:
                row.update(found=False, why=_reason(res, c))
            else:
                r = res.cards[k]
                row.update(found=True, status=r.status, card=r.card, value=r.value)
            rows.append(row)
        for k, r in enumerate(res.cards):
            if k not in used:
                rows.append({"case": f"{design}:{model}", "seed": seed, "frame": i, "false": True,
                             "status": r.status, "card": r.card, "value": r.value, "width": round(r.width, 1),
                             "centre": [round(v, 1) for v in r.centre]})
    return rows



def _decks_for(design: str):
    from shoe_daemon.vision import cardart

    if design == "cardsjs":
        return cardart.cardsjs_faces(), cardart.cardsjs_backs()
    if design == "font":  # the benchmark's held-out font deck, on cardsJS backs (bench.camera._decks)
        from shoe_daemon.vision.train import TEST_FONT

        return cardart.font_deck(TEST_FONT[0], TEST_FONT[1]), cardart.cardsjs_backs()
    return cardart.design_faces(design), []


def _wrong(row) -> bool:
    from shoe_daemon.game.cards import RANK_VALUES

    return bool(row.get("found")) and (row["card"] not in (None, row["code"])
                                       or row["value"] not in (None, RANK_VALUES[row["code"][0]]))


def summary(rows: list[dict]) -> list[str]:
    out = ["| case | group | cards | found | exact | withheld | wrong | not found: no candidate | rejected |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    by = defaultdict(list)
    for r in rows:
        if not r.get("false"):
            by[(r["case"], r["group"])].append(r)
            by[("all", r["group"])].append(r)
            by[(r["case"], "all")].append(r)
            by[("all", "all")].append(r)
    for key in sorted(by):
        rs = by[key]
        n = len(rs)
        found = sum(r["found"] for r in rs)
        exact = sum(r["found"] and r["card"] == r["code"] for r in rs)
        wrong = sum(_wrong(r) for r in rs)
        nocand = sum(not r["found"] and r["why"] == "no candidate" for r in rs)
        out.append(f"| {key[0]} | {key[1]} | {n} | {found} ({100 * found / n:.1f} %) | {exact} ({100 * exact / n:.1f} %) "
                   f"| {found - exact - wrong} | {wrong} | {nocand} | {n - found - nocand} |")
    falses = [r for r in rows if r.get("false")]
    out.append(f"false cards: {len(falses)}")
    for r in falses:
        out.append(f"  false: {r['case']} seed {r['seed']} frame {r['frame']} {r['status']} {r['card']} "
                   f"value {r['value']} width {r['width']} at {r['centre']}")
    for r in rows:
        if _wrong(r):
            out.append(f"  wrong: {r['case']} seed {r['seed']} frame {r['frame']} {r['code']} read {r['card']} "
                       f"value {r['value']}")
    why = Counter((r["group"], r["why"]) for r in rows if not r.get("false") and not r["found"])
    out.append("not found, by what became of the card (group, reason): count")
    for (g, w), k in sorted(why.items(), key=lambda x: -x[1]):
        out.append(f"  {g:10s} {w}: {k}")
    return out


def diff(old: list[dict], new: list[dict]) -> list[str]:
    def key(r):
        return (r["case"], r["seed"], r["frame"], r.get("code"), r.get("false", False), tuple(r.get("centre", ())))

    def outcome(r):
        if r.get("false"):
            return f"false {r['status']} {r['card']}"
        return f"{r['status']} {r['card']} {r['value']}" if r["found"] else f"not found ({r['why']})"

    a, b = {key(r): outcome(r) for r in old}, {key(r): outcome(r) for r in new}
    lines = []
    for k in sorted(set(a) | set(b), key=str):
        if a.get(k) != b.get(k):
            lines.append(f"  {k[0]} seed {k[1]} frame {k[2]} {k[3] or ''}: {a.get(k, '-')} -> {b.get(k, '-')}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--frames", type=int, default=50)
    ap.add_argument("--cases", default=DEFAULT_CASES, help="design:model,... (model: shipped, fonts-only, enrolled)")
    ap.add_argument("--condition", default="table-stress", help="synth.CONDITIONS key (stress, nominal, ...)")
    ap.add_argument("--save")
    ap.add_argument("--diff")
    args = ap.parse_args(argv)
    if not 880000 <= args.seed <= 889999:
        print("own seeds only: 880000-889999", file=sys.stderr)
        return 2
    rows = []
    for k, case in enumerate(args.cases.split(",")):
        design, model = case.split(":")
        rows += run_case(design, model, args.seed + k, args.frames, args.condition)
    print("\n".join(summary(rows)))
    if args.diff:
        with open(args.diff) as fh:
            print("changed:")
            print("\n".join(diff(json.load(fh), rows)))
    if args.save:
        with open(args.save, "w") as fh:
            json.dump(rows, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
