"""Procedural stroke-drawn rank glyphs, for training decks (a developer's tool).

System fonts give the classifiers some thirty designs of each rank glyph, but card indices are
often drawn, not typeset, and use shapes no installed font has (a flat-topped 3, an open 4, a
7 with a curved stem, a J with a top bar...). :func:`glyph_paths` draws each rank as strokes
whose shape, width and variant are drawn from a seeded generator, so every "stroke deck" is
another design. Nothing here runs on a table PC.

Coordinates are in cap heights: the glyph's strokes run from y = 0 (top) to y = 1 (baseline),
x from 0 to its width; stroke ink extends half the stroke width beyond.
"""

from __future__ import annotations

import math

import numpy as np

Stroke = list[tuple[float, float]]


def _arc(cx: float, cy: float, rx: float, ry: float, a0: float, a1: float, n: int = 20) -> Stroke:
    """Points of an ellipse arc from angle a0 to a1 (degrees; 0 = right, 90 = down)."""
    return [(cx + rx * math.cos(math.radians(a)), cy + ry * math.sin(math.radians(a)))
            for a in np.linspace(a0, a1, n)]  # fmt: skip


def _turn(strokes: list[Stroke], wd: float) -> list[Stroke]:
    return [[(wd - x, 1 - y) for x, y in s] for s in strokes]


def _digit(ch: str, wd: float, rng: np.random.Generator) -> list[Stroke]:
    m = wd / 2
    v = int(rng.integers(3))     # the variant of this glyph in this design
    if ch == "A":
        bar = rng.uniform(0.6, 0.72)
        top = [(m, 0.0)] if v < 2 else [(m - 0.07, 0.0), (m + 0.07, 0.0)]
        legs = [(0.0, 1.0)] + top + [(wd, 1.0)]
        return [legs, [(m * (1 - bar), bar), (wd - m * (1 - bar), bar)]]
    if ch == "2":
        ry = rng.uniform(0.24, 0.3)
        head = _arc(m, ry, m * 0.95, ry, 190, 380 if v else 360)
        if v == 2:   # a curved neck
            return [head + _arc(m, 1.0, m * 1.1, 1.0 - 2 * ry, 300, 200, 10)[1:] + [(wd, 1.0)]]
        return [head + [(0.0, 1.0), (wd, 1.0)]]
    if ch == "3":
        if v == 0:   # two bowls
            up = _arc(m, 0.25, m * 0.85, 0.25, 200, 450)
            low = _arc(m, 0.74, m, 0.26, 270, 520)
            return [up, low]
        # flat top: a bar, a diagonal to the bowl
        y = rng.uniform(0.36, 0.46)
        low = _arc(m, 0.5 + y / 2 + 0.02, m, 0.5 - y / 2, 250, 520)
        return [[(0.04 * wd, 0.0), (0.96 * wd, 0.0), low[0]] + low[1:]]
    if ch == "4":
        bar = rng.uniform(0.64, 0.74)
        if v == 0:   # closed
            return [[(0.72 * wd, 1.0), (0.72 * wd, 0.0), (0.0, bar), (wd, bar)]]
        if v == 1:   # open
            return [[(0.35 * wd, 0.0), (0.0, bar), (wd, bar)], [(0.72 * wd, 0.3), (0.72 * wd, 1.0)]]
        return [[(0.72 * wd, 1.0), (0.72 * wd, 0.0), (0.0, bar), (wd, bar)], [(0.5 * wd, 1.0), (0.95 * wd, 1.0)]]
    if ch == "5":
        bowl = _arc(m, 0.66, m, 0.34, 215 if v else 200, 510)
        top = [(0.92 * wd, 0.0), (0.12 * wd, 0.0), bowl[0]]
        return [top + bowl[1:]]
    if ch in "69":
        if v == 0:   # a curved stem
            stem = _arc(wd * 0.98, 0.6, wd * 0.95, 0.6, 265, 180, 12)
        else:        # a straight one
            stem = [(0.8 * wd, 0.0), (0.02 * wd, 0.62)]
        bowl = _arc(m, 0.68, m, 0.32, 180, 540)
        strokes = [stem + bowl]
        return strokes if ch == "6" else _turn(strokes, wd)
    if ch == "7":
        if v == 0:
            return [[(0.0, 0.0), (wd, 0.0), (0.28 * wd, 1.0)]]
        if v == 1:   # curved stem
            return [[(0.0, 0.0), (wd, 0.0)] + _arc(wd * 1.05, 1.0, wd * 0.75, 1.0, 270, 180, 10)[1:]]
        return [[(0.0, 0.14), (0.0, 0.0), (wd, 0.0), (0.35 * wd, 1.0)]]
    if ch == "8":
        split = rng.uniform(0.42, 0.5)
        up = _arc(m, split / 2, m * rng.uniform(0.75, 0.9), split / 2, 0, 360)
        low = _arc(m, (1 + split) / 2, m, (1 - split) / 2, 0, 360)
        return [up, low]
    if ch == "0":
        return [_arc(m, 0.5, m, 0.5, 0, 360, 28)]
    if ch == "1":
        s = [[(0.0, 0.22), (m, 0.0), (m, 1.0)]]
        if v == 2:
            s.append([(0.0, 1.0), (wd, 1.0)])
        return s
    if ch == "J":
        hook = [(0.78 * wd, 0.0), (0.78 * wd, 0.68)] + _arc(0.42 * wd, 0.68, 0.36 * wd, 0.32, 0, 165, 12)[1:]
        if v == 1:
            return [hook, [(0.35 * wd, 0.0), (wd, 0.0)]]
        return [hook]
    if ch == "Q":
        oval = _arc(m, 0.47, m, 0.47, 0, 360, 28)
        tail = [(0.55 * wd, 0.72), (1.05 * wd, 1.05)] if v else [(0.5 * wd, 0.85), (0.8 * wd, 1.08), (1.05 * wd, 1.0)]
        return [oval, tail]
    if ch == "K":
        join = rng.uniform(0.55, 0.65)
        if v == 2:
            return [[(0.0, 0.0), (0.0, 1.0)], [(wd, 0.0), (0.0, join)], [(0.0, join), (wd, 1.0)]]
        return [[(0.0, 0.0), (0.0, 1.0)], [(wd, 0.0), (0.0, join)], [(0.32 * wd, join - 0.13), (wd, 1.0)]]
    raise ValueError(f"no stroke glyph for {ch!r}")


def glyph_paths(text: str, seed: int) -> tuple[list[Stroke], float, float]:
    """The strokes of an index text ("A", "2".."10", "J", "Q", "K") in design ``seed``.

    Returns (strokes, total width, stroke width), all in cap heights. The same seed gives the same
    design for every rank: one width, one weight, one variant choice per glyph.
    """
    design = np.random.default_rng(seed)
    sw = float(design.uniform(0.09, 0.19))
    wd = float(design.uniform(0.48, 0.72))
    gap = float(design.uniform(0.04, 0.14))
    strokes: list[Stroke] = []
    x = 0.0
    for i, ch in enumerate(text):
        rng = np.random.default_rng([seed, ord(ch)])
        w = wd * (0.55 if ch == "1" else 1.0) * (1.1 if ch in "QKA" else 1.0)
        for s in _digit(ch, w, rng):
            strokes.append([(px + x, py) for px, py in s])
        x += w + (gap + sw if i + 1 < len(text) else 0.0)
    return strokes, x, sw


def glyph_svg(text: str, seed: int, cx: float, top: float, height: float, fill: str) -> str:
    """SVG paths drawing ``text`` centred on x = ``cx``, its ink from ``top``, ``height`` tall."""
    strokes, width, sw = glyph_paths(text, seed)
    scale = height / (1.0 + sw)
    ox, oy = cx - width / 2 * scale, top + sw / 2 * scale
    cap = "round" if seed % 2 else "butt"
    parts = []
    for s in strokes:
        d = "M" + " L".join(f"{ox + px * scale:.2f},{oy + py * scale:.2f}" for px, py in s)
        parts.append(f'<path d="{d}" fill="none" stroke="{fill}" stroke-width="{sw * scale:.2f}" '
                     f'stroke-linecap="{cap}" stroke-linejoin="round"/>')  # fmt: skip
    return "".join(parts)
