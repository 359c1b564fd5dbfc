"""Card art for tests, the benchmark and training: the vendored cardsJS faces and font decks.

Nothing here runs on a table PC. Faces are rendered from SVG with Debian's ``rsvg-convert``
(package ``librsvg2-bin``) and cached as PNG under ``$SHOE_DAEMON_CACHE`` (default
``~/.cache/shoe-daemon``), keyed by a hash of the SVG text and the width, so a second run
costs a PNG read. Images are BGRA ``uint8`` (alpha 0 outside the rounded card).

* :func:`cardsjs_faces` — the 52 faces of the vendored cardsJS 1.1.1 deck (a vectorised scan of
  a real deck; LGPL-3.0 art, see assets/cardsjs/README.md) and :func:`cardsjs_backs`.
* :func:`font_deck` — a *procedural* deck drawn from a system font: index (rank + suit) in two
  corners, pips in the standard layout, abstract pictures on J Q K. With a font the classifiers
  never saw (Liberation Serif, held out of training) it is a second, unseen card design.
* :func:`glyph_sheet` — one font's rank and suit glyphs, each cropped to its ink, for training.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from shoe_daemon.game.cards import ALL_CODES

REPO_ROOT = Path(__file__).resolve().parents[2]
CARDSJS_DIR = REPO_ROOT / "assets" / "cardsjs" / "cards"
ASSETS = REPO_ROOT / "assets"
# Vendored designs that no shipped model was trained on (assets/LICENSES.md): name -> (folder, back).
DESIGNS = {
    "kennard": (ASSETS / "kennard" / "2color", ASSETS / "kennard" / "back.svg"),
    "kennard-jumbo": (ASSETS / "kennard" / "2color-bf", ASSETS / "kennard" / "back.svg"),
    "kennard-4colour": (ASSETS / "kennard" / "4color", ASSETS / "kennard" / "back.svg"),
    "kennard-4colour-jumbo": (ASSETS / "kennard" / "4color-bf", ASSETS / "kennard" / "back.svg"),
    "responsive": (ASSETS / "responsive" / "cards", ASSETS / "responsive" / "cards" / "back.svg"),
}
# Synthetic designs: the procedural deck in a font held out of training (train.TEST_FONT), with
# the index of another kind than the vendored designs show. name -> (family, weight, index layout).
SYNTHETIC = {"font-peek": ("Liberation Serif", "bold", "peek")}
RENDER_VERSION = "1"            # bump to invalidate every cached render

# Index text of each rank as printed on a card.
RANK_TEXT = {"A": "A", "T": "10", "J": "J", "Q": "Q", "K": "K", **{str(n): str(n) for n in range(2, 10)}}
SUIT_CHAR = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
RED_SUITS = "HD"
RED = "#c8102e"
BLACK = "#111111"

# Card size of the procedural deck (cardsJS units: 224 x 313, poker size 63 x 88 mm).
CARD_W, CARD_H = 224.0, 313.0


class RenderError(RuntimeError):
    """rsvg-convert is missing or failed."""


def rsvg_available() -> bool:
    return shutil.which("rsvg-convert") is not None


def cache_dir() -> Path:
    root = os.environ.get("SHOE_DAEMON_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "shoe-daemon")
    path = Path(root) / "cardart"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:   # no writable home: a per-user folder under the temporary directory
        path = Path(tempfile.gettempdir()) / f"shoe-daemon-cardart-{os.getuid()}"
        path.mkdir(parents=True, exist_ok=True)
    return path


def render_svg(svg: str | bytes, width: int) -> np.ndarray:
    """Render SVG text to a BGRA image ``width`` pixels wide (height from the aspect)."""
    import cv2

    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise RenderError("rsvg-convert not found: install Debian's librsvg2-bin (scripts/system-deps.sh)")
    data = svg.encode() if isinstance(svg, str) else svg
    proc = subprocess.run([exe, "-w", str(int(width)), "-f", "png"], input=data,
                          capture_output=True, timeout=120)  # fmt: skip
    if proc.returncode != 0:
        raise RenderError(f"rsvg-convert failed: {proc.stderr.decode(errors='replace').strip()}")
    img = cv2.imdecode(np.frombuffer(proc.stdout, np.uint8), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise RenderError("rsvg-convert produced no image")
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGRA)
    elif img.shape[2] == 3:
        img = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
    return img


def _cached_render(svgs: dict[str, str | bytes], width: int, tag: str) -> dict[str, np.ndarray]:
    """Render many SVGs (name -> text) through the PNG cache, in parallel."""
    import cv2

    h = hashlib.sha256(f"{RENDER_VERSION}/{width}/{tag}".encode())
    for name in sorted(svgs):
        text = svgs[name]
        h.update(name.encode())
        h.update(text.encode() if isinstance(text, str) else text)
    folder = cache_dir() / f"{tag}-{width}-{h.hexdigest()[:16]}"
    out: dict[str, np.ndarray] = {}
    missing = []
    for name in svgs:
        path = folder / f"{name}.png"
        img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED) if path.exists() else None
        if img is None:
            missing.append(name)
        else:
            out[name] = img
    if missing:
        folder.mkdir(parents=True, exist_ok=True)
        with ThreadPoolExecutor(max_workers=4) as pool:
            rendered = list(pool.map(lambda n: render_svg(svgs[n], width), missing))
        for name, img in zip(missing, rendered, strict=True):
            out[name] = img
            fd, tmp = tempfile.mkstemp(suffix=".png", dir=folder)
            os.close(fd)
            cv2.imwrite(tmp, img)
            os.replace(tmp, folder / f"{name}.png")   # atomic: parallel test workers share it
    return out


# --------------------------------------------------------------------------- cardsJS


def cardsjs_faces(width: int = 360, codes: Iterable[str] = ALL_CODES) -> dict[str, np.ndarray]:
    """The vendored cardsJS faces, ``code -> BGRA`` image ``width`` pixels wide."""
    codes = list(codes)
    svgs = {c: (CARDSJS_DIR / f"{c}.svg").read_bytes() for c in codes}
    return _cached_render(svgs, width, "cardsjs")


def cardsjs_backs(width: int = 360) -> list[np.ndarray]:
    svgs = {n: (CARDSJS_DIR / f"{n}.svg").read_bytes() for n in ("Blue_Back", "Red_Back")}
    out = _cached_render(svgs, width, "cardsjs")
    return [out["Blue_Back"], out["Red_Back"]]


def design_faces(name: str, width: int = 360) -> dict[str, np.ndarray]:
    """The 52 faces of a vendored design of :data:`DESIGNS` (``"cardsjs"`` too): ``code -> BGRA``."""
    if name == "cardsjs":
        return cardsjs_faces(width)
    if name in SYNTHETIC:
        family, weight, layout = SYNTHETIC[name]
        return font_deck(family, weight, width, index=layout)
    folder, _ = DESIGNS[name]
    return _cached_render({c: (folder / f"{c}.svg").read_bytes() for c in ALL_CODES}, width, name)


def design_back(name: str, width: int = 360) -> np.ndarray:
    if name == "cardsjs" or name in SYNTHETIC:
        return cardsjs_backs(width)[0]
    _, back = DESIGNS[name]
    return _cached_render({"back": back.read_bytes()}, width, name + "-back")["back"]


# --------------------------------------------------------------------------- procedural decks

# Pip centres (fractions of width, height) of the standard layouts, 2-10.
_PIPS = {
    "2": [(0.5, 0.2), (0.5, 0.8)],
    "3": [(0.5, 0.2), (0.5, 0.5), (0.5, 0.8)],
    "4": [(0.3, 0.2), (0.7, 0.2), (0.3, 0.8), (0.7, 0.8)],
    "5": [(0.3, 0.2), (0.7, 0.2), (0.5, 0.5), (0.3, 0.8), (0.7, 0.8)],
    "6": [(0.3, 0.2), (0.7, 0.2), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)],
    "7": [(0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)],
    "8": [(0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.5, 0.65), (0.3, 0.8), (0.7, 0.8)],
    "9": [(0.3, 0.2), (0.7, 0.2), (0.3, 0.4), (0.7, 0.4), (0.5, 0.5), (0.3, 0.6), (0.7, 0.6),
          (0.3, 0.8), (0.7, 0.8)],
    "T": [(0.3, 0.2), (0.7, 0.2), (0.5, 0.3), (0.3, 0.4), (0.7, 0.4), (0.3, 0.6), (0.7, 0.6),
          (0.5, 0.7), (0.3, 0.8), (0.7, 0.8)],
}  # fmt: skip


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


_EXTENTS: dict[tuple[str, str, str], dict[str, tuple[float, float]]] = {}


def _text_row(texts: list[str], family: str, weight: str, stretch: str, size: int, kind: str) -> np.ndarray:
    """``texts`` in one font, each centred in its own square cell (2 x ``size``) on one row, baseline
    at 0.7 of the cell: a grey image (255 = paper), rendered once and cached under ``kind``."""
    import cv2

    cell = size * 2
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cell * len(texts)}" height="{cell}">',
             f'<rect width="{cell * len(texts)}" height="{cell}" fill="#fff"/>']
    for i, t in enumerate(texts):
        parts.append(f'<text x="{cell * i + cell / 2}" y="{cell * 0.7}" font-family="{_esc(family)}" '
                     f'font-weight="{weight}" font-stretch="{stretch}" font-size="{size}" '
                     f'text-anchor="middle" fill="#000">{_esc(t)}</text>')  # fmt: skip
    parts.append("</svg>")
    tag = f"{kind}-" + "".join(ch for ch in f"{family}-{weight}-{stretch}" if ch.isalnum() or ch == "-")
    img = _cached_render({"sheet": "".join(parts)}, cell * len(texts), tag)["sheet"]
    return cv2.cvtColor(img, cv2.COLOR_BGRA2GRAY)


def ink_extents(family: str, weight: str = "normal", stretch: str = "normal") -> dict[str, tuple[float, float]]:
    """Vertical ink extent (top, bottom) of each index text and suit of a font, relative to the
    baseline, in font sizes (top < 0: above the baseline): for placing glyphs by their ink."""

    key = (family, weight, stretch)
    if key in _EXTENTS:
        return _EXTENTS[key]
    texts = list(RANK_TEXT.values()) + list(SUIT_CHAR.values())
    size, cell = 100, 200
    ink = _text_row(texts, family, weight, stretch, size, "extents") < 128
    out = {}
    for i, t in enumerate(texts):
        rows = np.nonzero(ink[:, cell * i: cell * (i + 1)].any(axis=1))[0]
        if len(rows):
            out[t] = ((rows[0] - cell * 0.7) / size, (rows[-1] + 1 - cell * 0.7) / size)
        else:
            out[t] = (-0.7, 0.0)
    _EXTENTS[key] = out
    return out


def _text(x, y, size, s, family, weight, fill, stretch="normal", ext=None) -> str:
    """``s`` centred on (x, y) by its ink (``ext``: its ink_extents entry)."""
    top, bottom = ext if ext is not None else (-0.7, 0.0)
    base = y - (top + bottom) / 2 * size
    return (f'<text x="{x:.2f}" y="{base:.2f}" font-family="{_esc(family)}" font-weight="{weight}" '
            f'font-stretch="{stretch}" font-size="{size:.2f}" fill="{fill}" text-anchor="middle">'
            f"{_esc(s)}</text>")  # fmt: skip


def font_deck_svg(code: str, family: str, weight: str = "bold", stretch: str = "condensed",
                  seed: int = 0, style: int = 0, suit_family: str = "DejaVu Sans", index: str = "standard") -> str:  # fmt: skip
    """SVG text of one card of a procedural deck in ``family``.

    ``style`` 0 is the standard layout; another number varies the index position and sizes, the
    gap between rank and suit and the pip size (a different design, for training). ``index``
    "peek" prints a small index close to the corner (rank 4 mm tall on a 88 mm card, as casino
    peek decks do) instead of the standard one.
    """
    rng = np.random.default_rng(zlib.crc32(f"{code}/{family}/{seed}".encode()))
    srng = np.random.default_rng(style)
    rank, suit = code[0], code[1]
    fill = RED if suit in RED_SUITS else BLACK
    W, H = CARD_W, CARD_H
    rext = None if family.startswith("stroke:") else ink_extents(family, weight, stretch)
    sext = ink_extents(suit_family)
    sch = SUIT_CHAR[suit]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">',
             f'<rect x="0.5" y="0.5" width="{W - 1}" height="{H - 1}" rx="11" ry="11" fill="#fdfdf8"/>']
    # The index: rank above suit, top left and (turned) bottom right, placed by their ink.
    rank_txt = RANK_TEXT[rank]
    ix, top, rank_h, suit_h, gap, pip_scale = 0.095 * W, 0.045 * H, 0.075 * H, 0.05 * H, 0.015 * H, 1.0
    if style:
        ix = srng.uniform(0.075, 0.115) * W
        top = srng.uniform(0.03, 0.06) * H
        rank_h = srng.uniform(0.06, 0.1) * H
        suit_h = srng.uniform(0.04, 0.065) * H
        gap = srng.uniform(0.005, 0.03) * H
        pip_scale = srng.uniform(0.8, 1.3)
    if index == "peek":
        ix, top, rank_h, suit_h, gap = 0.07 * W, 0.022 * H, 0.046 * H, 0.032 * H, 0.008 * H
    # Suit symbols of other designs are wider or narrower than any font's: stretch them across.
    suit_sx = float(srng.uniform(0.8, 1.25)) if style else 1.0

    def suit_text(x, y, size):
        t = _text(x, y, size, sch, suit_family, "normal", fill, "normal", s_ext)
        return t if suit_sx == 1.0 else f'<g transform="translate({x:.2f} 0) scale({suit_sx:.3f} 1) translate({-x:.2f} 0)">{t}</g>'

    stroke = family.startswith("stroke:")    # procedural stroke-drawn ranks (strokefont)
    if stroke:
        r_bottom = top + rank_h
    else:
        k_top, k_bot = rext["K"]
        rs = rank_h / (k_bot - k_top)            # font size giving a capital this tall
        r_ext = rext[rank_txt]
        r_bottom = top + (r_ext[1] - r_ext[0]) * rs
    s_ext = sext[sch]
    ss = suit_h / (s_ext[1] - s_ext[0])
    for rot in (False, True):
        if rot:
            parts.append(f'<g transform="rotate(180 {W / 2} {H / 2})">')
        if stroke:
            from shoe_daemon.vision.strokefont import glyph_svg

            parts.append(glyph_svg(rank_txt, int(family.split(":")[1]), ix, top, rank_h, fill))
        else:
            parts.append(_text(ix, (top + r_bottom) / 2, rs, rank_txt, family, weight, fill, stretch, r_ext))
        parts.append(suit_text(ix, r_bottom + gap + suit_h / 2, ss))
        if rot:
            parts.append("</g>")
    pip_h = 0.085 * H * pip_scale
    ps = pip_h / (s_ext[1] - s_ext[0])
    if rank in _PIPS:
        turned = []
        for fx, fy in _PIPS[rank]:
            if fy > 0.5:   # drawn upright at the opposite place, in a group turned about the centre
                turned.append(suit_text((1 - fx) * W, (0.13 + 0.74 * (1 - fy)) * H, ps))
            else:
                parts.append(suit_text(fx * W, (0.13 + 0.74 * fy) * H, ps))
        if turned:
            parts.append(f'<g transform="rotate(180 {W / 2} {H / 2})">' + "".join(turned) + "</g>")
    elif rank == "A":
        parts.append(suit_text(W / 2, H / 2, ps * 2.2))
    else:
        # A face card: a framed abstract picture in card colours (no letter, no portrait).
        x0, y0, x1, y1 = 0.19 * W, 0.1 * H, 0.81 * W, 0.9 * H
        parts.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" '
                     f'fill="#f3e3a0" stroke="#1c2a6b" stroke-width="2"/>')  # fmt: skip
        colours = ["#c8102e", "#1c2a6b", "#e8b92f", "#111111", "#2a7a3a"]
        for _ in range(14):
            cx, cy = rng.uniform(x0 + 8, x1 - 8), rng.uniform(y0 + 8, (y0 + y1) / 2)
            w, h = rng.uniform(8, 40), rng.uniform(8, 40)
            c = colours[int(rng.integers(len(colours)))]
            for flip in (False, True):
                px, py = (W - cx, H - cy) if flip else (cx, cy)
                parts.append(f'<ellipse cx="{px:.1f}" cy="{py:.1f}" rx="{w / 2:.1f}" ry="{h / 2:.1f}" '
                             f'fill="{c}" opacity="0.9"/>')  # fmt: skip
        corner = [_text(x0 + 14, y0 + 16, ss * 1.2, sch, suit_family, "normal", fill, "normal", s_ext)]
        parts += corner
        parts.append(f'<g transform="rotate(180 {W / 2} {H / 2})">' + "".join(corner) + "</g>")
    parts.append("</svg>")
    return "".join(parts)


def font_deck(family: str = "Liberation Serif", weight: str = "bold", width: int = 360,
              stretch: str = "condensed", style: int = 0,
              suit_family: str = "DejaVu Sans", index: str = "standard") -> dict[str, np.ndarray]:  # fmt: skip
    """The 52 faces of a procedural deck printed in ``family``: ``code -> BGRA``."""
    svgs = {c: font_deck_svg(c, family, weight, stretch, style=style, suit_family=suit_family, index=index)
            for c in ALL_CODES}  # fmt: skip
    return _cached_render(svgs, width, "fontdeck")


# --------------------------------------------------------------------------- glyphs for training


def glyph_sheet(family: str, weight: str = "normal", stretch: str = "normal",
                glyphs: Iterable[str] = (), size: int = 96) -> dict[str, np.ndarray]:  # fmt: skip
    """Render ``glyphs`` (strings like "10", "Q", "\u2660") of one font; each cropped to its ink.

    Returns ``glyph -> uint8`` ink map (255 = ink, 0 = paper), about ``size`` pixels tall.
    """

    glyphs = list(glyphs)
    cell = size * 2
    ink = 255 - _text_row(glyphs, family, weight, stretch, size, "glyphs")
    out = {}
    for i, g in enumerate(glyphs):
        part = ink[:, cell * i: cell * (i + 1)]
        ys, xs = np.nonzero(part > 40)
        if len(xs) == 0:
            continue
        out[g] = np.ascontiguousarray(part[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1])
    return out
