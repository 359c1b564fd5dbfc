"""Train the glyph classifiers: ``python -m shoe_daemon.vision.train`` (a developer's tool).

Needs ``rsvg-convert`` (librsvg2-bin) and the fonts below (fonts-dejavu-core, fonts-dejavu-extra,
fonts-liberation, fonts-urw-base35, fonts-freefont-ttf), about 10 minutes on 2 cores. Writes
``shoe_daemon/vision/models/glyphs.json`` (the shipped model: fonts + the cardsJS deck) and
``glyphs-fonts-only.json`` (fonts only: the benchmark reads cardsJS with it as an unseen design).

Training data never comes from whole-card templates: every sample is a rank glyph, suit pip or
non-index blob cut by the same segmentation the recogniser uses (:mod:`shoe_daemon.vision.index`)
from a card photographed by the synthetic camera (:meth:`FrameGenerator.card_patch`: any
rotation, 60-200 px wide, blur, light, noise, JPEG). The cards are procedural decks printed in
system fonts (index position and sizes varied per deck) and, for the shipped model, cardsJS.
Fonts held out of training (Times-like serifs) print the benchmark's "unseen font" deck.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from shoe_daemon.vision.model import (
    MODELS_DIR,
    RANK_CLASSES,
    SUIT_CLASSES,
    GlyphModels,
    fit_temperature,
    train_mlp,
)

# (family, weight, stretch): the fonts decks are printed in for training.
TRAIN_FONTS = [
    ("DejaVu Sans", "bold", "normal"), ("DejaVu Sans", "normal", "condensed"),
    ("DejaVu Sans", "bold", "condensed"), ("DejaVu Serif", "bold", "normal"),
    ("DejaVu Serif", "bold", "condensed"), ("DejaVu Serif", "normal", "normal"),
    ("DejaVu Sans Mono", "bold", "normal"), ("Nimbus Sans", "normal", "normal"),
    ("Nimbus Sans", "bold", "normal"), ("Nimbus Sans Narrow", "bold", "normal"),
    ("C059", "normal", "normal"), ("C059", "bold", "normal"), ("URW Bookman", "normal", "normal"),
    ("URW Bookman", "bold", "normal"), ("P052", "bold", "normal"), ("P052", "normal", "normal"),
    ("URW Gothic", "bold", "normal"), ("FreeSans", "bold", "normal"),
    ("Liberation Sans", "bold", "normal"), ("Liberation Sans Narrow", "bold", "normal"),
    ("Liberation Mono", "bold", "normal"), ("Nimbus Sans Narrow", "normal", "normal"),
    ("Liberation Sans Narrow", "normal", "normal"), ("Liberation Sans", "normal", "normal"),
    ("FreeSans", "normal", "normal"), ("URW Gothic", "normal", "normal"), ("DejaVu Sans", "normal", "normal"),
    ("DejaVu Sans Mono", "normal", "normal"),
]  # fmt: skip
SUIT_FONTS = ["DejaVu Sans", "FreeSans", "Standard Symbols PS", "DejaVu Serif"]
# Designs of procedural stroke-drawn rank glyphs (shoe_daemon.vision.strokefont): shapes no
# installed font has (flat-topped 3, open 4, barred J, curved 7...), each seed another design.
STROKE_DESIGNS = 16
# Never trained on: the benchmark's unseen-font deck is printed in the first.
HELD_OUT_FONTS = ["Liberation Serif", "Nimbus Roman", "FreeSerif"]
TEST_FONT = ("Liberation Serif", "bold")

RANK_INDEX = {r: i for i, r in enumerate(RANK_CLASSES)}
SUIT_INDEX = {s: i for i, s in enumerate(SUIT_CLASSES)}
REJECT_R = RANK_INDEX["reject"]
REJECT_S = SUIT_INDEX["reject"]


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Samples:
    def __init__(self) -> None:
        self.rx: list[np.ndarray] = []
        self.ry: list[int] = []
        self.sx: list[np.ndarray] = []
        self.sy: list[int] = []

    def rank(self, f, y):
        if f is not None:
            self.rx.append(f)
            self.ry.append(y)

    def suit(self, f, y):
        if f is not None:
            self.sx.append(f)
            self.sy.append(y)

    def arrays(self):
        return (np.array(self.rx, np.float32), np.array(self.ry, np.int64),
                np.array(self.sx, np.float32), np.array(self.sy, np.int64))  # fmt: skip

    def extend(self, other: Samples) -> None:
        self.rx += other.rx
        self.ry += other.ry
        self.sx += other.sx
        self.sy += other.sy


def collect(faces: dict[str, np.ndarray], backs: list[np.ndarray], per_card: int, seed: int,
            conditions=("nominal", "stress")) -> Samples:  # fmt: skip
    """Glyph samples from ``per_card`` synthetic photos of every face (and some of backs)."""
    from shoe_daemon.vision import detect, index, pips
    from shoe_daemon.vision.synth import CONDITIONS, FrameGenerator, with_overrides

    out = Samples()
    rng = np.random.default_rng(seed)
    gens = [FrameGenerator(faces, backs, with_overrides(CONDITIONS[c], card_width=(58.0, 210.0)), seed)
            for c in conditions]  # fmt: skip
    jobs = [(code, k) for code in faces for k in range(per_card)]
    jobs += [(None, k) for k in range(max(4, per_card * len(faces) // 12))]
    for code, _ in jobs:
        gen = gens[int(rng.integers(len(gens)))]
        hand = int(rng.integers(4)) if rng.random() < 0.15 else None
        face = faces[code] if code else backs[int(rng.integers(len(backs)))]
        img, truth = gen.card_patch(rng, face, hand_corner=hand, code=code)
        cands, _ = detect.find_cards(img)
        cands = [c for c in cands if np.linalg.norm(c.quad.mean(axis=0) - truth.centre) < 0.2 * np.linalg.norm(
            truth.quad[1] - truth.quad[0])]  # fmt: skip
        if len(cands) != 1:
            continue
        quad = cands[0].quad
        j = int(np.argmin(np.linalg.norm(truth.quad - quad[0], axis=1)))
        card = index.rectify(img, quad)
        white = index.white_balance(card)
        ink = index.ink_map(card, white)
        for corner in range(4):
            true_corner = (corner + j) % 4
            if truth.occluded_corner is not None and true_corner == truth.occluded_corner:
                continue
            r = index.read_corner(card, ink, white, corner, extras=True)
            positive = code is not None and corner in (0, 2) and j in (0, 2)
            if positive and (r.rank_feat is None or r.suit_feat is None):
                # A jumbo or peek index: read where the recogniser would (its second looks).
                for scale in (index.JUMBO_SCALE, index.PEEK_SCALE):
                    again = index.read_corner(card, ink, white, corner, extras=True, scale=scale)
                    if again.rank_feat is not None and again.suit_feat is not None:
                        r = again
                        break
            if r.rank_feat is None:
                continue
            if positive:
                out.rank(r.rank_feat, RANK_INDEX[code[0]])
                out.suit(r.suit_feat, SUIT_INDEX[code[1]])
            else:
                out.rank(r.rank_feat, REJECT_R)
                out.suit(r.suit_feat, REJECT_S)
            out.suit(r.extra["rank_as_suit"], REJECT_S)
            out.rank(r.extra["suit_as_rank"], REJECT_R)
        if code is not None:
            p = pips.read_pips(ink, card, white)
            if p.kind == "pips":
                for b in p.pips[:4]:
                    raster, _ = pips.pip_raster(ink, b, index.SUIT_SIZE)
                    out.suit(index.glyph_features(raster, b, 4), SUIT_INDEX[code[1]])
                    out.rank(index.glyph_features(pips.pip_raster(ink, b, index.RANK_SIZE)[0], b, 4), REJECT_R)
    return out


def font_decks(n_styles: int = 2) -> list[tuple[str, dict[str, np.ndarray]]]:
    from shoe_daemon.vision.cardart import font_deck

    decks = []
    for i, (family, weight, stretch) in enumerate(TRAIN_FONTS):
        for s in range(n_styles):
            style = 1 + i * 7 + s
            suit_family = SUIT_FONTS[(i + s) % len(SUIT_FONTS)]
            decks.append((f"{family}/{weight}/{stretch}/style{style}",
                          font_deck(family, weight, 360, stretch, style=style, suit_family=suit_family)))  # fmt: skip
    for seed in range(1, STROKE_DESIGNS + 1):
        style = 500 + seed
        suit_family = SUIT_FONTS[seed % len(SUIT_FONTS)]
        decks.append((f"stroke:{seed}/style{style}",
                      font_deck(f"stroke:{seed}", "normal", 360, "normal", style=style, suit_family=suit_family)))
    return decks


def _split(x, y, frac, rng):
    idx = rng.permutation(len(y))
    n_val = int(len(y) * frac)
    return x[idx[n_val:]], y[idx[n_val:]], x[idx[:n_val]], y[idx[:n_val]]


def _weights(y, k):
    counts = np.bincount(y, minlength=k).astype(np.float32)
    w = counts.sum() / (k * np.maximum(counts, 1))
    return np.sqrt(w)


def fit(samples: Samples, seed: int, epochs: int, info: dict) -> GlyphModels:
    rx, ry, sx, sy = samples.arrays()
    rng = np.random.default_rng(seed)
    _log(f"rank samples {len(ry)} {np.bincount(ry, minlength=len(RANK_CLASSES)).tolist()}")
    _log(f"suit samples {len(sy)} {np.bincount(sy, minlength=len(SUIT_CLASSES)).tolist()}")
    rtx, rty, rvx, rvy = _split(rx, ry, 0.15, rng)
    stx, sty, svx, svy = _split(sx, sy, 0.15, rng)
    t0 = time.time()
    rank = train_mlp(rtx, rty, RANK_CLASSES, hidden=96, epochs=epochs, seed=seed,
                     class_weight=_weights(rty, len(RANK_CLASSES)))  # fmt: skip
    rank.temperature = fit_temperature(rank, rvx, rvy)
    suit = train_mlp(stx, sty, SUIT_CLASSES, hidden=64, epochs=epochs, seed=seed + 1,
                     class_weight=_weights(sty, len(SUIT_CLASSES)))  # fmt: skip
    suit.temperature = fit_temperature(suit, svx, svy)
    racc = float((rank.proba(rvx).argmax(axis=1) == rvy).mean())
    sacc = float((suit.proba(svx).argmax(axis=1) == svy).mean())
    _log(f"trained in {time.time() - t0:.0f} s: validation accuracy rank {racc:.4f} suit {sacc:.4f} "
         f"(T rank {rank.temperature:.2f}, suit {suit.temperature:.2f})")  # fmt: skip
    info = dict(info, rank_samples=int(len(ry)), suit_samples=int(len(sy)),
                validation_accuracy={"rank": round(racc, 4), "suit": round(sacc, 4)})  # fmt: skip
    return GlyphModels(rank, suit, {}, info)


def _isotonic(pairs: list[tuple[float, bool]], bins: int = 12) -> list[list[float]]:
    """Raw score -> P(right): equal-count bins, pooled to be non-decreasing, Laplace-smoothed."""
    if not pairs:
        return []
    pairs = sorted(pairs)
    n = len(pairs)
    size = max(1, n // bins)
    blocks = []   # [sum_x, right, count]
    for i in range(0, n, size):
        chunk = pairs[i:i + size]
        blocks.append([sum(x for x, _ in chunk), sum(1 for _, ok in chunk if ok), len(chunk)])
    merged: list[list[float]] = []
    for b in blocks:
        merged.append(list(b))
        while len(merged) > 1 and merged[-2][1] / merged[-2][2] >= merged[-1][1] / merged[-1][2]:
            x, r, c = merged.pop()
            merged[-1][0] += x
            merged[-1][1] += r
            merged[-1][2] += c
    table = [[round(x / c, 5), round((r + 1) / (c + 2), 5)] for x, r, c in merged]
    return table


def calibrate(models_path: Path, decks: list[dict[str, np.ndarray]], backs, frames: int, seed: int) -> dict:
    """Fit the confidence maps of a model file on synthetic frames of ``decks``; writes them in."""
    from shoe_daemon.game.cards import RANK_VALUES
    from shoe_daemon.vision import recognizer as recmod
    from shoe_daemon.vision.model import GlyphModels, load_models
    from shoe_daemon.vision.synth import FrameGenerator

    load_models.cache_clear()
    models = GlyphModels.load(models_path)
    models.calibration = {}
    models.save(models_path)
    load_models.cache_clear()
    rec = recmod.Recognizer({}, model_path=str(models_path))
    pairs: dict[str, list[tuple[float, bool]]] = {"card": [], "value": [], "unknown": []}
    conds = ["nominal", "stress", "small", "hand"]
    n = 0
    for d, faces in enumerate(decks):
        for c, cond in enumerate(conds):
            gen = FrameGenerator(faces, backs, cond, seed=seed + 100 * d + c)
            for i in range(frames):
                f = gen.frame(i)
                res = rec.recognize(f.image)
                for t in f.face_up:
                    w = float(np.linalg.norm(t.quad[1] - t.quad[0]))
                    near = [r for r in res.cards if np.hypot(r.centre[0] - t.centre[0], r.centre[1] - t.centre[1]) < 0.3 * w]
                    if not near:
                        continue
                    r = near[0]
                    true_value = RANK_VALUES[t.code[0]]
                    # The raw score behind the decision is the uncalibrated confidence here.
                    if r.status == "ok":
                        pairs["card"].append((r.confidence, r.card == t.code))
                    elif r.status == "partial":
                        pairs["value"].append((r.confidence, r.value == true_value))
                    else:
                        vp = np.bincount(recmod.VALUES, weights=r.rank_probs, minlength=10)
                        pairs["unknown"].append((r.confidence, int(vp.argmax()) == true_value))
                    n += 1
    cal = {k: _isotonic(v) for k, v in pairs.items()}
    cal["fitted_on"] = {"cards": n, "ok": len(pairs["card"]), "partial": len(pairs["value"]),
                        "unknown": len(pairs["unknown"]), "decks": len(decks), "conditions": conds,
                        "frames_per_condition": frames, "seed": seed}  # fmt: skip
    models.calibration = cal
    models.save(models_path)
    load_models.cache_clear()
    _log(f"calibrated {models_path.name} on {n} cards: {cal['fitted_on']}")
    return cal


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m shoe_daemon.vision.train", description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=MODELS_DIR)
    ap.add_argument("--per-card", type=int, default=5, help="photos of each face of each deck")
    ap.add_argument("--styles", type=int, default=2, help="layouts per training font")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--seed", type=int, default=20250101)
    ap.add_argument("--calibrate-only", action="store_true", help="refit the confidence maps of the models in --out")
    ap.add_argument("--calibration-frames", type=int, default=25, help="frames per deck and condition")
    args = ap.parse_args(argv)
    from shoe_daemon.vision.cardart import cardsjs_backs, cardsjs_faces

    t0 = time.time()
    backs = cardsjs_backs()
    if args.calibrate_only:
        _calibrate_both(args, backs)
        return 0
    decks = font_decks(args.styles)
    _log(f"{len(decks)} font decks rendered in {time.time() - t0:.0f} s")
    fonts = Samples()
    for i, (_name, faces) in enumerate(decks):
        fonts.extend(collect(faces, backs, args.per_card, args.seed + i))
        if i % 6 == 5:
            _log(f"  {i + 1}/{len(decks)} decks, {len(fonts.ry)} rank samples, {time.time() - t0:.0f} s")
    cj = collect(cardsjs_faces(), backs, args.per_card * 4, args.seed + 999)
    _log(f"cardsJS: {len(cj.ry)} rank samples; collected in {time.time() - t0:.0f} s")
    base_info = {"fonts": [f"{f} {w} {s}" for f, w, s in TRAIN_FONTS], "styles_per_font": args.styles,
                 "stroke_designs": STROKE_DESIGNS,
                 "suit_fonts": SUIT_FONTS, "held_out_fonts": HELD_OUT_FONTS, "per_card": args.per_card,
                 "seed": args.seed}  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    only = fit(fonts, args.seed, args.epochs, dict(base_info, decks="fonts only (cardsJS held out)"))
    only.save(args.out / "glyphs-fonts-only.json")
    both = Samples()
    both.extend(fonts)
    both.extend(cj)
    full = fit(both, args.seed, args.epochs, dict(base_info, decks="fonts + cardsJS 1.1.1"))
    full.save(args.out / "glyphs.json")
    _calibrate_both(args, backs)
    _log(f"wrote {args.out}/glyphs.json and glyphs-fonts-only.json in {time.time() - t0:.0f} s")
    return 0


def _calibrate_both(args, backs) -> None:
    """Confidence maps: each model on decks of its own training kind, never the benchmark's seeds.

    fonts-only: two training-font decks (cardsJS stays unseen); shipped: those and cardsJS.
    """
    from shoe_daemon.vision.cardart import cardsjs_faces, font_deck

    fonts = [font_deck(f, w, 360, st, style=1 + i * 7, suit_family=SUIT_FONTS[i % len(SUIT_FONTS)])
             for i, (f, w, st) in enumerate(TRAIN_FONTS) if i in (3, 10)]  # fmt: skip
    calibrate(args.out / "glyphs-fonts-only.json", fonts, backs, args.calibration_frames, args.seed + 5000)
    calibrate(args.out / "glyphs.json", fonts + [cardsjs_faces()], backs, args.calibration_frames, args.seed + 6000)


if __name__ == "__main__":
    raise SystemExit(main())

