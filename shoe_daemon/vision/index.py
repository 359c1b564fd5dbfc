"""Reading a rectified card: its index corners (rank glyph + suit pip) and its centre pips.

A card is rectified to a canonical portrait (:data:`CW` x :data:`CH`). Standard-index designs
print the index (rank above suit) in the top-left corner and, turned 180 degrees, the bottom
right; the two are read separately (:func:`read_corner`), so a hand over one corner leaves the
other. Segmentation is by connected components of the "ink" (the darkest channel against the
card's own white, so red and black ink alike), after removing long straight lines (a picture's
frame, a sliver of felt along a badly fitted edge). The rank is the topmost glyph-sized blob
(blobs side by side on its line join it: "10"), the suit the next blob under it.

Indices come in several sizes: standard, jumbo (glyphs twice as tall, reaching further into the
card) and peek (small, near the very corner). A corner is read at an index *scale*
(:data:`JUMBO_SCALE`, :data:`PEEK_SCALE`): the searched region, the glyph sizes and places looked for and the length of a
"long line" all grow with it, and the glyph's size given to the classifiers is divided by it, so a
jumbo or peek glyph is described like a standard one.

Features (:func:`glyph_features`) are the normalised ink raster plus gradient-orientation
histograms, and the blob's proportions: nothing specific to one card design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

CW, CH = 160, 224                   # canonical rectified card (portrait, 63 x 88 mm)
ROI_W, ROI_H = int(0.30 * CW), int(0.40 * CH)
RANK_SIZE = (16, 24)                # (w, h) of the normalised rank raster
SUIT_SIZE = (20, 20)
# Index scales tried on a corner that gave no whole index at the standard one: jumbo, then peek.
JUMBO_SCALE, PEEK_SCALE = 2.0, 0.6


_CARD_CORNERS = np.float32([[0, 0], [CW, 0], [CW, CH], [0, CH]])   # the rectified card's, clockwise


def rectify(frame: np.ndarray, quad: np.ndarray, scratch: np.ndarray | None = None) -> np.ndarray:
    """The card inside ``quad`` (clockwise, quad[0]->quad[1] a short side) as a CW x CH image.

    ``scratch``: a 4-channel uint8 array of the frame's size, kept from frame to frame (what it
    holds does not matter). The card's part of the frame is copied into it with a fourth channel
    and warped from there: OpenCV warps 4 channels ~2.5x faster than 3, to the same pixels.
    """
    m = cv2.getPerspectiveTransform(np.float32(quad), _CARD_CORNERS)
    if scratch is None:
        return cv2.warpPerspective(frame, m, (CW, CH), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    x0, y0, x1, y1 = warp_box(frame.shape, quad)
    cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2BGRA, dst=scratch[y0:y1, x0:x1])
    card = cv2.warpPerspective(scratch, m, (CW, CH), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cv2.cvtColor(card, cv2.COLOR_BGRA2BGR)


def warp_box(shape: tuple, quad: np.ndarray) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1): the part of a frame of ``shape`` that :func:`rectify` reads for ``quad``."""
    # The warp reads the quadrilateral and the pixel beyond (bilinear): a margin of 3 is plenty.
    q = np.asarray(quad)
    h, w = shape[:2]
    x0, y0 = max(math.floor(q[:, 0].min()) - 3, 0), max(math.floor(q[:, 1].min()) - 3, 0)
    return x0, y0, min(math.ceil(q[:, 0].max()) + 4, w), min(math.ceil(q[:, 1].max()) + 4, h)


def share(mask: np.ndarray) -> float:
    """``float(mask.mean())`` of a mask of 0s and 1s (or bools), by counting: the same float, a few
    microseconds sooner (it is taken some hundred times a frame)."""
    return int(np.count_nonzero(mask)) / mask.size


def percentile_u8(values: np.ndarray, q: float) -> float:
    """``np.percentile(values, q)`` (linear interpolation) of uint8 values, by counting: ~3x faster."""
    counts = np.cumsum(np.bincount(values, minlength=256))
    pos = q / 100.0 * (len(values) - 1)
    lo = int(pos)
    a = int(np.searchsorted(counts, lo + 1))
    b = int(np.searchsorted(counts, min(lo + 2, len(values))))
    return a + (pos - lo) * (b - a)


def np_percentile_u8(values: np.ndarray, q: float) -> float:
    """``float(np.percentile(values, q))`` of uint8 values, the very same float, by counting
    (several times sooner on a large region). Unlike :func:`percentile_u8`, it interpolates as
    numpy does: from the upper value when the position lies nearer to it."""
    values = values.ravel()
    counts = np.cumsum(np.bincount(values, minlength=256))
    n = len(values)
    pos = (n - 1) * (q / 100)
    lo = int(pos)
    a = int(np.searchsorted(counts, lo + 1))
    b = int(np.searchsorted(counts, min(lo + 2, n)))
    t = pos - lo
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def white_balance(card: np.ndarray) -> np.ndarray:
    """Per-channel white of the card (a high percentile of its inner part), float32 (3,)."""
    inner = card[CH // 8: CH - CH // 8: 2, CW // 8: CW - CW // 8: 2]
    # Each channel taken out on its own (not the pixels' copy, then every third value of it): sooner.
    white = np.float32([percentile_u8(inner[..., c].ravel(), 90) for c in range(3)])
    return np.maximum(white, 20.0)


def _lut(white: float) -> np.ndarray:
    # (A white is 20 or more: no product is below 0, and np.clip's lower bound is never needed.)
    return np.minimum(_RAMP * (255.0 / white), 255.0).astype(np.uint8)


_RAMP = np.arange(256, dtype=np.float32)


def ink_map(card: np.ndarray, white: np.ndarray) -> np.ndarray:
    """0 (paper) .. 1 (ink) for a BGR card image; red and black ink alike (darkest channel)."""
    b, g, r = cv2.split(card)
    b = cv2.LUT(b, _lut(float(white[0])))
    g = cv2.LUT(g, _lut(float(white[1])))
    r = cv2.LUT(r, _lut(float(white[2])))
    mn = cv2.min(cv2.min(b, g), r)
    return cv2.LUT(mn, _INK)      # (255 - mn) / 255 as float32, in one pass


_INK = (255 - np.arange(256)).astype(np.float32) * np.float32(1.0 / 255.0)


def redness(card_part: np.ndarray, white: np.ndarray, weight: np.ndarray, box: Blob | None = None) -> float:
    """Ink-weighted red against the card's white: ~1 for red ink, ~0 for black, below for blue or
    green (nan if no ink). ``box``: where ``weight`` may be non-zero (the index's glyphs)."""
    if box is not None:
        # Only the box is worked out; its products are summed in place among the zeros of the
        # rest (the same sums, in the same order: the same floats).
        sub = np.s_[box.y:box.y1, box.x:box.x1]
        wi, wr = np.zeros(weight.shape, np.float32), np.zeros(weight.shape, np.float32)
        wi[sub], wr[sub] = _ink_red(card_part[sub], white, weight[sub])
    else:
        wi, wr = _ink_red(card_part, white, weight)
    wsum = float(wi.sum())
    if wsum < 1.0:
        return float("nan")
    return float(wr.sum() / wsum)


def _ink_red(card_part: np.ndarray, white: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``weight`` times the ink, and times the red, of each pixel of ``card_part``."""
    # Each channel against its white as a plane of its own (the same floats as the BGR image's
    # at once; numpy's work on whole planes is several times quicker than on every third float).
    inv = 1.0 / white
    b, g, r = (scaled(plane, inv[k]) for k, plane in enumerate(cv2.split(card_part)))
    red = r - np.maximum(g, b)
    ink = 1.0 - np.minimum(np.minimum(b, g), r)
    return weight * ink, weight * red


def scaled(plane: np.ndarray, factor: np.float32) -> np.ndarray:
    """``plane.astype(np.float32) * factor`` of a uint8 ``plane`` by OpenCV: the same floats (each
    product of a byte and the float32 ``factor`` is rounded once either way), ~3x sooner."""
    if plane.ndim != 2 or not plane.size:
        return plane.astype(np.float32) * factor
    return cv2.multiply(plane, 1.0, scale=float(factor), dtype=cv2.CV_32F)


@dataclass
class Blob:
    x: int
    y: int
    w: int
    h: int
    area: int

    @property
    def x1(self) -> int:
        return self.x + self.w

    @property
    def y1(self) -> int:
        return self.y + self.h

    def union(self, other: Blob) -> Blob:
        x, y = min(self.x, other.x), min(self.y, other.y)
        x1, y1 = max(self.x1, other.x1), max(self.y1, other.y1)
        return Blob(x, y, x1 - x, y1 - y, self.area + other.area)


@dataclass
class CornerReading:
    """What one index corner gave: the rank and suit rasters (None if not found) and colour."""

    rank_feat: np.ndarray | None
    suit_feat: np.ndarray | None
    red: float                      # redness of the index ink (nan if none)
    rank_box: Blob | None
    suit_box: Blob | None
    reason: str = ""
    extra: dict | None = None
    clutter: float = 0.0            # ink around the index glyphs (paper on a face: ~0)
    rank_raster: np.ndarray | None = None
    suit_raster: np.ndarray | None = None
    scale: float = 1.0              # the index scale it was read at (see :func:`roi_size`)

    @property
    def index_box(self) -> Blob | None:
        """Where the index lies (its rank and suit together; None without both), in the corner's coordinates."""
        if self.rank_box is None or self.suit_box is None:
            return None
        return self.rank_box.union(self.suit_box)


def roi_size(scale: float = 1.0) -> tuple[int, int]:
    """(w, h) of the corner region searched for an index of ``scale`` (at most a quarter card)."""
    return min(int(ROI_W * scale), CW // 2), min(int(ROI_H * scale), CH // 2)


def norm_box(box: Blob, scale: float) -> Blob:
    """``box`` as the classifiers see it: its size divided by the index scale."""
    if scale == 1.0:
        return box
    return Blob(box.x, box.y, max(1, round(box.w / scale)), max(1, round(box.h / scale)), box.area)


def _binarise(ink: np.ndarray, faint: bool = False, scale: float = 1.0) -> np.ndarray:
    hi = float(ink.max())
    if hi < 0.3:
        return np.zeros(ink.shape, np.uint8)
    thr = max(0.25, min(0.5, 0.5 * hi))
    if faint:   # thin strokes washed out by blur or light, beside solid ink that sets ``hi``
        thr = max(0.22, 0.5 * thr)
    binary = (ink > thr).view(np.uint8)     # (a mask's bytes are 0 and 1: no copy needed)
    # Long straight lines are no glyph: a picture's frame, felt along a misfitted edge. "Long" is
    # longer than any glyph of an index of this scale (a jumbo "1" is a straight line 45 px long).
    vlen, hlen = int(ROI_H * 0.42 * scale), int(ROI_W * 0.6 * scale)
    vert, horiz = _opened(binary, _line(1, vlen)), _opened(binary, _line(hlen, 1))
    if vert is None and horiz is None:      # no long line (most corners): nothing to take out
        return binary
    lines = vert if horiz is None else horiz if vert is None else vert | horiz
    lines = cv2.dilate(lines, _SQUARE3)
    return binary & (1 - lines)


def _opened(binary: np.ndarray, line: np.ndarray) -> np.ndarray | None:
    """``cv2.morphologyEx(binary, cv2.MORPH_OPEN, line)``, or None where that is all 0. An opening
    is an erosion, then a dilation: a corner with no line as long as ``line`` erodes to nothing,
    and its dilation (half the work) is not needed."""
    eroded = cv2.erode(binary, line)
    if not cv2.countNonZero(eroded):
        return None
    return cv2.dilate(eroded, line)


@lru_cache(maxsize=32)
def _line(w: int, h: int) -> np.ndarray:
    """A w x h rectangle's structuring element (a few lengths, made once each)."""
    el = cv2.getStructuringElement(cv2.MORPH_RECT, (w, h))
    el.flags.writeable = False
    return el


_SQUARE3 = np.ones((3, 3), np.uint8)


def _blobs(binary: np.ndarray) -> list[Blob]:
    # 16-bit labels (a corner has far fewer than 65,536 blobs): the statistics come ~40 % faster.
    n, _, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8, ltype=cv2.CV_16U)
    stats = stats[1:]
    return [Blob(x, y, w, h, a) for x, y, w, h, a in stats[stats[:, 4] >= 6].tolist()]


STROKE_ASPECT, STROKE_MAX_W = 6.0, 2   # a blob this many times as tall as wide, and this narrow, is a stroke (find_index)


def find_index(blobs: list[Blob], roi_w: int, roi_h: int,
               scale: float = 1.0) -> tuple[Blob | None, Blob | None, str]:  # fmt: skip
    """The rank and suit blobs of an index corner of index scale ``scale``, from its ink blobs."""
    min_h, max_h, max_w = 0.04 * CH * scale, 0.20 * CH * scale, 0.2 * CW * scale
    # A blob in the very corner is the card's edge or the felt beyond it, not a glyph.
    blobs = [b for b in blobs if b.x > 0 or b.y > 0]
    cands = [b for b in blobs if min_h <= b.h <= max_h and b.w <= max_w and b.y < 0.22 * CH * scale
             and b.x < 0.2 * CW * scale and b.area >= 0.25 * b.h]  # fmt: skip
    # A hairline stroke (STROKE_MAX_W px wide at most, STROKE_ASPECT times as tall or more) is no
    # glyph by itself (a narrow "1" or "J" is wider: at 6x alone, 16 more stress cards of own seed
    # 886100 went unread): a blurred QH's "Q" broke up, its 2x17-px left stroke was taken for the
    # rank and read "J" (0.985), which the picture confirmed: JH `ok` (own seed 884100, cardsJS,
    # stress, frame 1445). It may join a glyph beside it, not start one.
    cands = [b for b in cands if b.w > STROKE_MAX_W or b.h < STROKE_ASPECT * b.w]
    if not cands:
        return None, None, "no rank glyph"
    first = min(cands, key=lambda b: b.y)
    rank = first
    # Join the blobs on the same line beside it ("10", a glyph broken by blur). A part of the
    # line's glyphs shares its top and baseline, or lies within it and has some weight; a stroke
    # starting halfway down and running below the line (what is left of a picture's frame) is
    # no part of it.
    for b in sorted(blobs, key=lambda b: abs(b.x - first.x)):
        if b is first:
            continue
        overlap = min(rank.y1, b.y1) - max(rank.y, b.y)
        gap = max(b.x - rank.x1, rank.x - b.x1)
        tol = 0.25 * first.h
        aligned = abs(b.y - first.y) <= tol and abs(b.y1 - first.y1) <= tol
        within = b.y >= first.y - tol and b.y1 <= first.y1 + tol and b.area >= 0.3 * first.area
        # A large index has the centre's pips beside it, within its line: only the glyph's own
        # parts (sharing its top and baseline, close) join it.
        if scale > 1.0:
            within = False
        if overlap >= 0.5 * min(b.h, rank.h) and gap <= 0.45 * rank.h / max(scale, 1.0) and b.h >= 0.3 * rank.h \
                and rank.union(b).w <= max_w and (aligned or within):
            rank = rank.union(b)
    # The suit: the first blob under the rank, in its column.
    below = [b for b in blobs
             if b.y >= rank.y1 - 0.15 * rank.h and b.y <= rank.y1 + 0.9 * rank.h
             and abs((b.x + b.x1) / 2 - (rank.x + rank.x1) / 2) <= 0.6 * max(rank.w, b.w)
             and b.h >= 0.25 * rank.h and b.h <= 1.4 * rank.h and b.w <= max_w]  # fmt: skip
    if not below:
        return rank, None, "no suit pip"
    suit = min(below, key=lambda b: b.y)
    for b in below:
        if b is not suit and b.y < suit.y1 and b.y1 <= suit.y1 + 0.4 * suit.h and \
                min(suit.x1, b.x1) - max(suit.x, b.x) > -2:
            suit = suit.union(b)
    return rank, suit, ""


def split_merged(ink: np.ndarray, binary: np.ndarray, blob: Blob) -> tuple[Blob, Blob | None]:
    """A rank glyph and the suit pip under it run together into one blob, cut apart: (rank, suit),
    or (``blob``, None) when it has no waist. A small blurred peek index's thin rank strokes need
    the faint threshold, at which the narrow gap to its solid pip fills in (own seed 880100: 25
    of 240 frames' pip cards had neither corner's index). The cut is the row of least ink in the
    blob's middle, with at most half the ink of the fullest rows above and below it."""
    if blob.h < 2.2 * blob.w or blob.h < 10:      # a glyph alone is not this tall for its width
        return blob, None
    rows = ink[blob.y:blob.y1, blob.x:blob.x1].sum(axis=1)
    lo, hi = int(0.35 * blob.h), int(0.7 * blob.h)
    cut = lo + int(np.argmin(rows[lo:hi + 1]))
    if rows[cut] > 0.5 * min(rows[:cut].max(), rows[cut + 1:].max()):
        return blob, None
    parts = []
    for y0, y1 in ((blob.y, blob.y + cut), (blob.y + cut + 1, blob.y1)):
        ys, xs = np.nonzero(binary[y0:y1, blob.x:blob.x1])
        if len(ys) == 0:
            return blob, None
        parts.append(Blob(blob.x + int(xs.min()), y0 + int(ys.min()), int(xs.max() - xs.min()) + 1,
                          int(ys.max() - ys.min()) + 1, len(ys)))  # fmt: skip
    rank, suit = parts
    if not 0.4 * rank.h <= suit.h <= 1.4 * rank.h:
        return blob, None
    return rank, suit


def _raster(ink: np.ndarray, box: Blob, size: tuple[int, int]) -> np.ndarray:
    pad = 1
    y0, y1 = max(box.y - pad, 0), min(box.y1 + pad, ink.shape[0])
    x0, x1 = max(box.x - pad, 0), min(box.x1 + pad, ink.shape[1])
    crop = ink[y0:y1, x0:x1]
    out = cv2.resize(crop, size, interpolation=cv2.INTER_AREA if crop.shape[0] > size[1] else cv2.INTER_LINEAR)
    hi = float(out.max())
    return out / hi if hi > 1e-3 else out


def smear(raster: np.ndarray) -> float:
    """How much of a glyph raster's edges run one way (structure tensor coherence): a glyph's run
    every way (~0.15-0.65); motion blur's streaks, all that is left of a smeared glyph, one (> 0.8)."""
    img = raster.astype(np.float32)
    gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3)
    jxx, jyy, jxy = float((gx * gx).sum()), float((gy * gy).sum()), float((gx * gy).sum())
    return math.sqrt((jxx - jyy) ** 2 + 4 * jxy * jxy) / max(jxx + jyy, 1e-9)


def _hog(img: np.ndarray, cell: int) -> np.ndarray:
    gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3)
    mag = np.sqrt(gx * gx + gy * gy)
    ang = (np.arctan2(gy, gx) + np.pi) * (8 / (2 * np.pi))
    b0 = np.floor(ang).astype(np.int32) % 8
    frac = ang - np.floor(ang)
    h, w = img.shape
    ch, cw = h // cell, w // cell
    cy = (np.arange(h) // cell).clip(max=ch - 1)
    cx = (np.arange(w) // cell).clip(max=cw - 1)
    cell_idx = ((cy[:, None] * cw + cx[None, :]) * 8).reshape(-1)
    b0 = b0.reshape(-1)
    frac = frac.reshape(-1)
    mag = mag.reshape(-1)
    hist = np.bincount(cell_idx + b0, mag * (1 - frac), minlength=ch * cw * 8)
    hist += np.bincount(cell_idx + (b0 + 1) % 8, mag * frac, minlength=ch * cw * 8)
    hist = hist.astype(np.float32)
    hist = hist.reshape(-1)
    return hist / (np.linalg.norm(hist) + 1e-6)


def glyph_features(raster: np.ndarray, box: Blob, cell: int) -> np.ndarray:
    """The feature vector of one normalised glyph raster (float32)."""
    geo = np.array([box.w / max(box.h, 1), box.h / CH * 10.0], np.float32)
    return np.concatenate([raster.reshape(-1) - 0.5, 2.0 * _hog(raster, cell), geo]).astype(np.float32)


def reflect_pad(x: np.ndarray) -> np.ndarray:
    """``np.pad(x, ((0, 0), (1, 1), (1, 1)), mode="reflect")`` (OpenCV's BORDER_REFLECT_101) of a
    stack of images, copied in place: np.pad's own takes longer than the histograms it is for."""
    n, h, w = x.shape
    pad = np.empty((n, h + 2, w + 2), x.dtype)
    pad[:, 1:-1, 1:-1] = x
    pad[:, 0, 1:-1], pad[:, -1, 1:-1] = x[:, 1], x[:, -2]
    pad[:, :, 0], pad[:, :, -1] = pad[:, :, 2], pad[:, :, -3]
    return pad


def glyph_features_batch(rasters: list[np.ndarray], boxes: list[Blob], cell: int) -> np.ndarray:
    """:func:`glyph_features` of many same-size rasters at once (identical values, faster)."""
    if not rasters:
        return np.zeros((0, 0), np.float32)
    x = np.stack(rasters).astype(np.float32)                     # (n, h, w)
    n, h, w = x.shape
    pad = reflect_pad(x)
    # Sobel 3x3: derivative [-1, 0, 1] across, smoothing [1, 2, 1] along.
    dx = pad[:, :, 2:] - pad[:, :, :-2]
    gx = dx[:, :-2, :] + 2 * dx[:, 1:-1, :] + dx[:, 2:, :]
    dy = pad[:, 2:, :] - pad[:, :-2, :]
    gy = dy[:, :, :-2] + 2 * dy[:, :, 1:-1] + dy[:, :, 2:]
    mag = np.sqrt(gx * gx + gy * gy)
    ang = (np.arctan2(gy, gx) + np.pi) * (8 / (2 * np.pi))
    fl = np.floor(ang)
    b0 = fl.astype(np.int64) % 8
    frac = ang - fl
    ch, cw = h // cell, w // cell
    cy = (np.arange(h) // cell).clip(max=ch - 1)
    cx = (np.arange(w) // cell).clip(max=cw - 1)
    cell_idx = ((cy[:, None] * cw + cx[None, :]) * 8)[None, :, :] + (np.arange(n) * ch * cw * 8)[:, None, None]
    size = n * ch * cw * 8
    hist = np.bincount((cell_idx + b0).reshape(-1), (mag * (1 - frac)).reshape(-1), minlength=size)
    hist += np.bincount((cell_idx + (b0 + 1) % 8).reshape(-1), (mag * frac).reshape(-1), minlength=size)
    hist = hist.reshape(n, -1).astype(np.float32)
    hist /= np.linalg.norm(hist, axis=1, keepdims=True) + 1e-6
    geo = np.array([[b.w / max(b.h, 1), b.h / CH * 10.0] for b in boxes], np.float32)
    return np.concatenate([x.reshape(n, -1) - 0.5, 2.0 * hist, geo], axis=1).astype(np.float32)


RANK_DIM = RANK_SIZE[0] * RANK_SIZE[1] + (RANK_SIZE[0] // 4) * (RANK_SIZE[1] // 4) * 8 + 2
SUIT_DIM = SUIT_SIZE[0] * SUIT_SIZE[1] + (SUIT_SIZE[0] // 4) * (SUIT_SIZE[1] // 4) * 8 + 2


def corner_roi(card: np.ndarray, ink: np.ndarray, corner: int, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The BGR part and ink of index corner ``corner`` turned to read like the top left.

    0 = top left, 2 = bottom right (turned half round), 1 = top right and 3 = bottom left
    (mirrored: what a standard design leaves empty of an index; used as negatives).
    """
    rw, rh = roi_size(scale)
    if corner == 0:
        return np.ascontiguousarray(card[:rh, :rw]), np.ascontiguousarray(ink[:rh, :rw])
    # Turned or mirrored by OpenCV: the same pixels, ~5x sooner than numpy's copy of a reversed view.
    if corner == 2:
        part, inkp, flip = card[CH - rh:, CW - rw:], ink[CH - rh:, CW - rw:], -1
    elif corner == 1:
        part, inkp, flip = card[:rh, CW - rw:], ink[:rh, CW - rw:], 1
    else:
        part, inkp, flip = card[CH - rh:, :rw], ink[CH - rh:, :rw], 0
    return cv2.flip(part, flip), cv2.flip(inkp, flip)


def read_corner(card: np.ndarray, ink: np.ndarray, white: np.ndarray, corner: int,
                extras: bool = False, features: bool = True, faint: bool = False,
                scale: float = 1.0, split: bool = False) -> CornerReading:  # fmt: skip
    """Read index corner ``corner`` (see :func:`corner_roi`) for an index of ``scale``.

    ``faint`` segments at a lower ink threshold: a second try for a corner whose glyphs the first
    did not give (thin strokes of a small, blurred or over-exposed index fall under the usual one).
    ``split``: a "rank" with no suit under it is cut in two at its waist (:func:`split_merged`).

    ``extras`` also gives the rank blob rastered as a suit and the suit blob as a rank (in
    ``.extra``), the negatives that teach each classifier to refuse the other's glyph.
    """
    part, inkp = corner_roi(card, ink, corner, scale)
    binary = _binarise(inkp, faint, scale)
    rank, suit, reason = find_index(_blobs(binary), *roi_size(scale), scale=scale)
    if split and rank is not None and suit is None:
        rank, suit = split_merged(inkp, binary, rank)
        reason = reason if suit is None else ""
    if rank is None:
        return CornerReading(None, None, float("nan"), None, None, reason, scale=scale)
    rank_raster = _raster(inkp, rank, RANK_SIZE)
    rank_feat = glyph_features(rank_raster, norm_box(rank, scale), 4) if features else None
    weight = np.zeros(inkp.shape, np.float32)
    weight[rank.y:rank.y1, rank.x:rank.x1] = binary[rank.y:rank.y1, rank.x:rank.x1]
    suit_feat = suit_raster = None
    if suit is not None:
        suit_raster = _raster(inkp, suit, SUIT_SIZE)
        suit_feat = glyph_features(suit_raster, norm_box(suit, scale), 4) if features else None
        weight[suit.y:suit.y1, suit.x:suit.x1] = binary[suit.y:suit.y1, suit.x:suit.x1]
    box = rank if suit is None else rank.union(suit)
    red = redness(part, white, weight, box)
    # Paper around the index: ink in the index's box outside the rank and suit blobs (a back's
    # pattern, a picture running into the corner) means these are no index glyphs.
    y0, y1 = max(box.y - 2, 0), min(box.y1 + 2, binary.shape[0])
    x0, x1 = max(box.x - 2, 0), min(box.x1 + 2, binary.shape[1])
    around = binary[y0:y1, x0:x1].copy()
    for b in (rank, suit):
        if b is not None:
            around[b.y - y0:b.y1 - y0, b.x - x0:b.x1 - x0] = 0
    clutter = share(around)
    out = CornerReading(rank_feat, suit_feat, red, rank, suit, reason, clutter=clutter,
                        rank_raster=rank_raster, suit_raster=suit_raster, scale=scale)
    if extras:
        nr = norm_box(rank, scale)
        out.extra = {"rank_as_suit": glyph_features(_raster(inkp, rank, SUIT_SIZE), nr, 4),
                     "suit_as_rank": None if suit is None else glyph_features(
                         _raster(inkp, suit, RANK_SIZE), norm_box(suit, scale), 4)}  # fmt: skip
    return out
