"""Finding cards on the felt: bright, unsaturated quadrilaterals of a card's proportions.

The frame is scored for "card white" (the darkest channel, less the saturation: high on white
card stock under any white balance, low on coloured felt, skin and most chips), thresholded
(Otsu on a quarter-size copy, with a floor over the felt level), and each outer contour is fitted
with a quadrilateral: the four sides are fitted as lines to the contour (rounded corners and a
hand over one corner do not move them) and intersected. A candidate is kept when its sides have
a card's ratio (1.22-1.78; from 1.12 for a clean outline, a card squeezed by keystone), its size
is a card's and the white region fills its quadrilateral; everything else (chips, hands, glare,
sleeves) is dropped here. A region that fails and could hold a card of the frame's size (not a
chip's ring among cards) is looked at again: at a stricter threshold (a light hand or a cuff
bridging two cards is less white than card stock), then by its convex hull (a hand cutting
through a court card's white border into its picture); a quadrilateral inside another is dropped.
A second pass at a lower threshold finds cards where the light falls off. Regions still
unexplained (cards touching or overlapping, a card cut by a hand) give cards from their visible
right-angled corners at the frame's card size (:func:`corner_cards`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

MIN_CARD_SHORT = 40.0      # px, shortest card side accepted (cards are 60-200 px wide)
MAX_CARD_LONG = 420.0      # px
RATIO_RANGE = (1.22, 1.78)
# A clean card outline (nearly all of it on the quadrilateral, the white filling it) is taken down
# to this ratio: keystone and a card turned across it squeeze a card to 1.21 (a 147-px QH at
# keystone 0.12 on a dev seed); a shape this square and this clean is a card or nothing the reader
# takes for one.
CLEAN_MIN_RATIO, CLEAN_AGREE, CLEAN_FILL = 1.12, 0.93, 0.9
MIN_FILL = 0.72            # white pixels / quadrilateral area (a hand may cover a corner)
MIN_AGREE = 0.6            # share of the outline on the quadrilateral's sides
NEXT = [1, 2, 3, 0]        # a quadrilateral's corners, each one's next (np.roll(q, -1, axis=0), cheaper)


@dataclass
class Candidate:
    quad: np.ndarray        # (4, 2) float32, clockwise, quad[0]->quad[1] a short side
    fill: float             # white pixels / quad area
    agree: float            # share of the outline on the quad's sides
    ratio: float            # long side / short side


WHITENESS_STRIP = 1 << 16   # pixels per strip of :func:`whiteness`


def whiteness(bgr: np.ndarray) -> np.ndarray:
    """min(B, G, R) - (max - min), saturating at 0: card stock high, felt/skin/chips low."""
    h, w = bgr.shape[:2]
    out = np.empty((h, w), np.uint8)
    # In strips of ~64 KB a plane: a whole frame's planes and temporaries (6 MB at 1280x720) went
    # back to the kernel after every frame and were faulted in again (1,300 page faults, 3-7 ms).
    rows = max(8, WHITENESS_STRIP // max(w, 1))
    for y in range(0, h, rows):
        b, g, r = cv2.split(bgr[y:y + rows])
        mn = cv2.min(cv2.min(b, g), r)
        mx = cv2.max(cv2.max(b, g), r)
        cv2.subtract(mn, cv2.subtract(mx, mn), dst=out[y:y + rows])
    return out


def card_threshold(white_small: np.ndarray) -> float:
    """A global threshold between felt and card stock (on the half-size whiteness image)."""
    felt = float(np.percentile(white_small[::4, ::4], 50))
    otsu, _ = cv2.threshold(white_small, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return max(float(otsu), felt + 45.0)


def _order(quad: np.ndarray) -> np.ndarray:
    """Clockwise on screen (y down), starting so that quad[0]->quad[1] is a short side."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    area = 0.5 * float(np.sum(q[:, 0] * q[NEXT, 1] - q[NEXT, 0] * q[:, 1]))
    if area < 0:
        q = q[::-1]
    sides = [np.linalg.norm(q[(i + 1) % 4] - q[i]) for i in range(4)]
    if sides[0] + sides[2] > sides[1] + sides[3]:
        q = q[NEXT]
    # Of the two short sides, start at the one nearer the image top (stable, not meaningful).
    if q[2:4, 1].mean() < q[0:2, 1].mean():
        q = q[[2, 3, 0, 1]]
    return np.ascontiguousarray(q)


def _intersect(l1, l2):
    (vx1, vy1, x1, y1), (vx2, vy2, x2, y2) = l1, l2
    det = vx2 * vy1 - vx1 * vy2
    if abs(det) < 1e-6:
        return None
    t = (vx2 * (y2 - y1) - vy2 * (x2 - x1)) / det
    return np.array([x1 + t * vx1, y1 + t * vy1])


def _boundary_agreement(quad: np.ndarray, pts: np.ndarray, tol: float) -> float:
    """Fraction of contour points within ``tol`` of the quadrilateral's sides."""
    if len(pts) > 240:
        pts = pts[:: len(pts) // 200]
    # All four sides at once (this runs for every choice of sides fit_quad weighs).
    a = np.asarray(quad, np.float64)
    seg = a[NEXT] - a                                              # (4, 2)
    rel = pts[None, :, :] - a[:, None, :]                          # (4, N, 2)
    t = np.clip((rel * seg[:, None, :]).sum(axis=2) / ((seg * seg).sum(axis=1)[:, None] + 1e-9), 0.0, 1.0)
    off = rel - t[:, :, None] * seg[:, None, :]
    return float(np.mean((off * off).sum(axis=2).min(axis=0) <= tol * tol))


def _lines_quad(lines) -> np.ndarray | None:
    pts = [_intersect(lines[i - 1], lines[i]) for i in range(4)]
    if any(p is None for p in pts):
        return None
    return np.array(pts)


def _fit_side(pts: np.ndarray, p: np.ndarray, q: np.ndarray, band: float):
    """The line through the contour points along segment p-q (away from its ends)."""
    seg = q - p
    length = float(np.linalg.norm(seg))
    d = seg / (length + 1e-9)
    rel = pts - p
    along = rel @ d
    across = rel @ np.array([-d[1], d[0]])
    near = (np.abs(across) < band) & (along > 0.12 * length) & (along < 0.88 * length)
    if int(near.sum()) >= 8:
        vx, vy, x0, y0 = cv2.fitLine(pts[near].astype(np.float32), cv2.DIST_L2, 0, 0.01, 0.01).reshape(4)
        return (float(vx), float(vy), float(x0), float(y0))
    return (float(d[0]), float(d[1]), float(p[0]), float(p[1]))


def _inside_margin(quad: np.ndarray, pts: np.ndarray) -> float:
    """The most negative signed distance of pts to a convex quadrilateral (>= 0: all inside)."""
    q = np.asarray(quad, np.float64)
    area = 0.5 * float(np.sum(q[:, 0] * q[NEXT, 1] - q[NEXT, 0] * q[:, 1]))
    sign = 1.0 if area > 0 else -1.0
    e = q[NEXT] - q                                # the four sides at once
    n = np.sqrt((e * e).sum(axis=1)) + 1e-9
    cross = (e[:, 0, None] * (pts[None, :, 1] - q[:, 1, None]) - e[:, 1, None] * (pts[None, :, 0] - q[:, 0, None]))
    return float((cross / n[:, None] * sign).min())


def fit_quad(contour: np.ndarray) -> tuple[np.ndarray, float] | None:
    """A quadrilateral for a card-like contour (N,1,2) and the fraction of the contour on it."""
    from itertools import combinations

    hull = cv2.convexHull(contour)
    peri = cv2.arcLength(hull, True)
    if peri < 4 * MIN_CARD_SHORT * 0.9:
        return None
    approx = None
    for eps in (0.015, 0.025, 0.04, 0.06):
        approx = cv2.approxPolyDP(hull, eps * peri, True).reshape(-1, 2).astype(np.float64)
        if len(approx) <= 8:
            break
    if approx is None or len(approx) < 4 or len(approx) > 8:
        return None
    pts = contour.reshape(-1, 2).astype(np.float64)
    if len(pts) > 600:            # plenty for fitting lines; the contour has a point per pixel
        pts = pts[:: len(pts) // 400]
    hull_pts = hull.reshape(-1, 2).astype(np.float64)
    tol = max(2.0, 0.008 * peri)
    area = cv2.contourArea(contour)
    # The common case first: a clean card's hull is a quadrilateral at a coarse tolerance.
    coarse = cv2.approxPolyDP(hull, 0.04 * peri, True).reshape(-1, 2).astype(np.float64)
    if len(coarse) == 4:
        quad = _lines_quad([_fit_side(pts, coarse[i], coarse[(i + 1) % 4], max(2.0, 0.01 * peri)) for i in range(4)])
        if quad is not None and np.all(np.isfinite(quad)) and np.abs(quad - coarse).max() < 0.05 * peri:
            agree = _boundary_agreement(quad, pts, tol)
            qarea = abs(cv2.contourArea(quad.astype(np.float32)))
            if agree >= 0.93 and area >= 0.95 * qarea and _inside_margin(quad, hull_pts) >= -tol:
                return quad.astype(np.float32), agree
    n = len(approx)
    lengths = [float(np.linalg.norm(approx[(i + 1) % n] - approx[i])) for i in range(n)]
    longest = set(sorted(range(n), key=lambda i: -lengths[i])[:6])
    sides = {i: _fit_side(pts, approx[i], approx[(i + 1) % n], max(2.0, 0.01 * peri)) for i in sorted(longest)}
    # Four of the polygon's sides, in order: the choice whose quadrilateral holds most of the
    # contour on its sides (a hand's cut or a rounded corner adds sides that hold little).
    best, best_score = None, -1.0
    centre = hull_pts.mean(axis=0)
    for keep in combinations(sorted(longest), 4):
        quad = _lines_quad([sides[i] for i in keep])
        if quad is None or not np.all(np.isfinite(quad)) or np.abs(quad - centre).max() > peri / 2:
            continue
        if not cv2.isContourConvex(quad.astype(np.float32).reshape(-1, 1, 2)):
            continue
        if _inside_margin(quad, hull_pts) < -tol:
            continue
        qarea = abs(cv2.contourArea(quad.astype(np.float32)))
        bound = min(1.0, area / max(qarea, 1.0) / 0.92)     # the score with every point on the sides
        if bound <= best_score:
            continue
        score = _boundary_agreement(quad, pts, tol) * bound
        if score > best_score:
            best, best_score = quad, score
    if best is None:
        return None
    # Refine once more on the chosen sides.
    out = _lines_quad([_fit_side(pts, best[i], best[(i + 1) % 4], max(2.0, 0.008 * peri)) for i in range(4)])
    if out is None or np.abs(out - best).max() > 0.05 * peri:
        out = best
    return out.astype(np.float32), _boundary_agreement(out, pts, tol)


RETRY_MIN_SHORT = MIN_CARD_SHORT * 0.8   # a rejected region this wide may hold a card merged with something
RETRY_MIN_SIZE = 0.5     # ... and this large (sqrt of its area) against the frame's cards (3 or more)


def _check(c: np.ndarray, area: float, w: int, h: int, off=(0, 0)) -> tuple[Candidate | None, np.ndarray, str]:
    """Test one outer contour (image coordinates less ``off``): a candidate, or the shape and why not."""
    ox, oy = off
    (_, _), (rw, rh), _ = cv2.minAreaRect(c)
    if min(rw, rh) < MIN_CARD_SHORT * 0.8 or not 1.08 <= max(rw, rh) / max(min(rw, rh), 1) <= 2.0 \
            or area < 0.6 * rw * rh:
        return None, np.float32(c.reshape(-1, 2) + np.float32([ox, oy])), "shape"
    fitted = fit_quad(c)
    if fitted is None:
        return None, np.float32(c.reshape(-1, 2) + np.float32([ox, oy])), "not a quadrilateral"
    quad, agree = fitted
    quad = _order(quad) + np.float32([ox, oy])
    sides = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    short, long_ = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    ratio = long_ / max(short, 1e-6)
    qarea = abs(cv2.contourArea(quad))
    # The contour runs through the outermost white pixel centres: add half a pixel all round.
    fill = (area + 0.5 * cv2.arcLength(c, True)) / max(qarea, 1.0)
    if short < MIN_CARD_SHORT or long_ > MAX_CARD_LONG:
        return None, quad, "size"
    clean = agree >= CLEAN_AGREE and CLEAN_FILL <= fill <= 1.12
    if not (RATIO_RANGE[0] if not clean else CLEAN_MIN_RATIO) <= ratio <= RATIO_RANGE[1]:
        return None, quad, f"proportions {ratio:.2f}"
    if agree < MIN_AGREE:
        return None, quad, f"outline {agree:.2f}"
    if fill < MIN_FILL or fill > 1.12:
        return None, quad, f"fill {fill:.2f}"
    if quad[:, 0].min() < 1 or quad[:, 1].min() < 1 or quad[:, 0].max() > w - 2 or quad[:, 1].max() > h - 2:
        return None, quad, "out of frame"
    # Opposite sides of a card seen from above are near parallel and near equal.
    if min(sides[0], sides[2]) / max(sides[0], sides[2]) < 0.7 or \
            min(sides[1], sides[3]) / max(sides[1], sides[3]) < 0.7:
        return None, quad, "not a rectangle"
    return Candidate(quad, fill, agree, ratio), quad, ""


def _split(white: np.ndarray, c: np.ndarray, thr: float, w: int, h: int, min_area: float,
           max_area: float) -> list[Candidate]:  # fmt: skip
    """Cards inside a rejected white region, found again at a stricter threshold.

    A light-skinned hand, a cuff or glare bridging two cards (or a card and the felt beyond a
    hand) is whiter than the felt but less white than card stock: within the region, the
    threshold halfway between the felt's and the card stock's whiteness lets the cards apart.
    """
    x, y, bw, bh = cv2.boundingRect(c)
    x0, y0 = max(x - 2, 0), max(y - 2, 0)
    x1, y1 = min(x + bw + 2, w), min(y + bh + 2, h)
    region = white[y0:y1, x0:x1]
    inside = np.zeros(region.shape, np.uint8)
    cv2.drawContours(inside, [c], -1, 1, -1, offset=(-x0, -y0))
    vals = region[inside > 0]
    if vals.size < min_area:
        return []
    stock = float(np.percentile(vals, 90))
    if stock - thr < 40:
        return []
    found = []
    for frac in (0.5, 0.7):
        t2 = thr + frac * (stock - thr)
        mask = ((region > t2) & (inside > 0)).astype(np.uint8)
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        for sub in contours:
            area = cv2.contourArea(sub)
            if area < min_area or area > max_area * 1.3:
                continue
            cand, _, _ = _check(sub, area, w, h, (x0, y0))
            if cand is not None:
                found.append(cand)
        if found:
            break
    return found


HULL_MIN_AGREE = 0.85      # share of a bitten card's hull on its quadrilateral's sides
MAX_FELT_IN_HULL = 0.03   # share of felt-coloured pixels a card's convex hull may hold
FELT_DISTANCE = 60.0       # BGR distance within which a pixel is the felt's colour


def felt_colour(frame: np.ndarray) -> np.ndarray:
    """The felt's BGR (the median of the frame: the felt covers most of a table camera's view)."""
    return np.median(frame[::8, ::8].reshape(-1, 3), axis=0).astype(np.float32)


def _hull_card(frame: np.ndarray, c: np.ndarray, area: float, felt: np.ndarray, w: int, h: int) -> list[Candidate]:
    """A card whose white border a hand cuts through, into a court picture.

    Then the picture (not white) joins the felt round the hand, and the white region is a card's
    outline with a bite out of it: no card's shape. Its convex hull is the card (less the
    corner under the hand) and holds no felt; two cards merged, or a chip beside a card, hold
    felt between them and are left alone.
    """
    hull = cv2.convexHull(c)
    hull_area = cv2.contourArea(hull)
    if hull_area <= 0 or area / hull_area > 0.92:
        return []
    pts = hull.reshape(-1, 2).astype(np.float32)
    dense = []
    for i in range(len(pts)):
        p, q = pts[i], pts[(i + 1) % len(pts)]
        k = max(1, int(np.linalg.norm(q - p) / 2))
        dense.append(p + (q - p) * (np.arange(k) / k)[:, None])
    outline = np.round(np.concatenate(dense)).astype(np.int32).reshape(-1, 1, 2)
    cand, _, _ = _check(outline, hull_area, w, h)
    # The hull of a bitten card is its four sides and the chord across the bite: nearly all of
    # it lies on the quadrilateral (a chip's ring or a blob of glare does not).
    if cand is None or cand.agree < HULL_MIN_AGREE:
        return []
    # (The dearer test last: most regions fail the one above.)
    x, y, bw, bh = cv2.boundingRect(hull)
    inside = np.zeros((bh, bw), np.uint8)
    cv2.drawContours(inside, [hull], -1, 1, -1, offset=(-x, -y))
    inside = cv2.erode(inside, np.ones((5, 5), np.uint8))     # not the felt just beyond the edge
    part = frame[y:y + bh, x:x + bw][inside > 0].astype(np.float32) - felt
    if len(part) == 0 or float((np.einsum("ij,ij->i", part, part) < FELT_DISTANCE ** 2).mean()) > MAX_FELT_IN_HULL:
        return []
    return [cand]


CARD_RATIO = 1.40          # long side / short side of a card seen from above (88 / 63 mm)
CORNER_COS = 0.26          # a card corner's sides meet at 75-105 degrees
CORNER_MIN_FILL = 0.9      # share of a recovered card's quadrilateral that is white
CORNER_MIN_SUPPORT = 0.5   # share of its outline on the region's outline (two whole sides)
CORNER_SCALES = (0.8, 0.9, 1.0, 1.12, 1.25)   # card sizes tried, times the frame's typical one
# A card under the dealer's sleeve or hand: its white may be half a card, the rest of its
# quadrilateral the sleeve's or the hand's colour (neither card-white nor felt). Set on frames of
# seeds 880000-880300 (nominal and hand), not the benchmark's.
COVER_MIN_WHITE = 0.5      # share of such a card's quadrilateral that is still white
COVER_MIN_FILL = 0.95      # ... and that is white, sleeve or hand (not felt, not another card's white)
COVER_MIN_RING = 0.1       # share of the region's outline along which a sleeve or hand lies (else none hides a card)
# Card sizes tried for such a card: its size is measured again on the side that shows (_complete).
COVER_SCALES = (0.9, 1.0)


def _quad_fill(mask: np.ndarray, quad: np.ndarray, also: np.ndarray | None = None) -> float:
    """Share of the quadrilateral (less a 2-px rim: blur) that is white in ``mask`` (or set in ``also``)."""
    x, y, bw, bh = cv2.boundingRect(np.float32(quad))
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + bw, mask.shape[1]), min(y + bh, mask.shape[0])
    if x1 - x0 < 4 or y1 - y0 < 4:
        return 0.0
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(inside, np.int32(np.round(quad - [x0, y0])), 1)
    inside = cv2.erode(inside, np.ones((5, 5), np.uint8))
    n = int(inside.sum())
    if n == 0:
        return 0.0
    part = mask[y0:y1, x0:x1] if also is None else mask[y0:y1, x0:x1] | also[y0:y1, x0:x1]
    return float(part[inside > 0].sum()) / n


def _perimeter_support(quad: np.ndarray, dist: np.ndarray, off: np.ndarray, tol: float) -> float:
    """Share of the quadrilateral's perimeter within ``tol`` of the region's outline.

    ``dist`` is the distance to the outline on the region's box (origin ``off``).
    """
    samples = []
    for i in range(4):
        p, q = quad[i], quad[(i + 1) % 4]
        k = max(4, int(np.linalg.norm(q - p) / 3))
        samples.append(p + (q - p) * (np.arange(k)[:, None] + 0.5) / k)
    xy = np.round(np.concatenate(samples) - off).astype(np.int32)
    hh, ww = dist.shape
    ok = (xy[:, 0] >= 0) & (xy[:, 1] >= 0) & (xy[:, 0] < ww) & (xy[:, 1] < hh)
    near = np.zeros(len(xy), bool)
    near[ok] = dist[xy[ok, 1], xy[ok, 0]] <= tol
    return float(near.mean())


def corner_cards(c: np.ndarray, mask: np.ndarray, short: float, w: int, h: int, frame: np.ndarray | None = None,
                 felt: np.ndarray | None = None, hidden_only: bool = False) -> list[Candidate]:  # fmt: skip
    """Cards recovered from the visible corners of a white region that is no card's shape.

    Cards touching or overlapping each other, or a hand or cuff over one, make one white region.
    Each right-angled corner of its outline whose two sides run straight for a good part of a
    card's side is the corner of a card of the frame's card size (``short`` px wide): the card's
    quadrilateral lies along those sides, the short side along one and the long along the other
    (whichever the sides' lengths allow). It counts when it is white (90 %) and half its outline
    is the region's (two whole sides); its sides are then refitted to the outline where it runs
    along them. One card per place: the best supported of hypotheses whose centres are close.

    Given the ``frame`` and its ``felt`` colour, a card under the dealer's sleeve or hand is taken
    too, when no card wholly white is found in the region: half its quadrilateral white, the rest
    of it neither white nor felt (a sleeve or a hand lies there, :func:`_cover`); its hidden end
    is then set at a card's proportions from the part that shows (:func:`_complete`).
    ``hidden_only``: such cards alone (a region smaller than a card, which holds no whole one).
    """
    long_ = short * CARD_RATIO
    bright = mask
    if hidden_only:
        if frame is None:
            return []
        felt = felt_colour(frame) if felt is None else felt
        if not _beside_cover(frame, bright, felt, c):
            return []
    # The region with its holes filled: a card's pips and picture are not white, but are card.
    mask = np.zeros_like(mask)
    cv2.drawContours(mask, [c], -1, 1, -1)
    # Distance to the region's outline, on its box (a card hypothesis reaches a little beyond).
    x, y, bw, bh = cv2.boundingRect(c)
    off = np.array([x - 8, y - 8], np.float64)
    outline = np.full((bh + 16, bw + 16), 255, np.uint8)
    cv2.drawContours(outline, [c], -1, 0, 1, offset=(8 - x, 8 - y))
    dist = cv2.distanceTransform(outline, cv2.DIST_L2, 3)
    poly = cv2.approxPolyDP(c, max(2.0, 0.05 * short), True).reshape(-1, 2).astype(np.float64)
    n = len(poly)
    if n < 4 or n > 48:
        return []
    pts = c.reshape(-1, 2).astype(np.float64)
    if len(pts) > 900:
        pts = pts[:: len(pts) // 600]
    tol = max(2.5, 0.04 * short)
    # Concave bends of the outline are where one card meets another (or a hand): no card's
    # quadrilateral holds one inside it (the union of two overlapping cards may be card-shaped).
    d0, d1 = poly - np.roll(poly, 1, axis=0), np.roll(poly, -1, axis=0) - poly
    turn = d0[:, 0] * d1[:, 1] - d0[:, 1] * d1[:, 0]
    orient = np.sign(np.sum(poly[:, 0] * np.roll(poly[:, 1], -1) - np.roll(poly[:, 0], -1) * poly[:, 1]))
    lens = np.linalg.norm(poly - np.roll(poly, 1, axis=0), axis=1) * np.linalg.norm(np.roll(poly, -1, axis=0) - poly, axis=1)
    bends = poly[turn * orient < -0.1 * np.maximum(lens, 1e-9)]     # turning the other way by > ~6 degrees

    def inside_bend(quad, cover):
        # (Under a sleeve, the outline bends where pips meet the sleeve's edge: not another card.)
        return any(cv2.pointPolygonTest(np.float32(quad).reshape(-1, 1, 2), (float(b[0]), float(b[1])), True)
                   > 0.1 * short and not (cover is not None and _near(cover, b, 0.05 * short)) for b in bends)

    hyps, maybe = [], []
    for i in range(n):
        p, a, b = poly[i], poly[i - 1], poly[(i + 1) % n]
        e1, e2 = a - p, b - p
        l1, l2 = float(np.linalg.norm(e1)), float(np.linalg.norm(e2))
        if min(l1, l2) < 0.35 * short:
            continue
        u1, u2 = e1 / l1, e2 / l2
        if abs(float(u1 @ u2)) > CORNER_COS:
            continue
        # A convex corner: the region is on the inside of the angle.
        probe = np.round(p + (u1 + u2) * 0.15 * short).astype(int)
        if not (0 <= probe[0] < mask.shape[1] and 0 <= probe[1] < mask.shape[0]) or not mask[probe[1], probe[0]]:
            continue
        # Cards differ in size across the frame (perspective): a few sizes about the typical one.
        # Too small leaves sides off the outline, too large takes in felt.
        for scale in COVER_SCALES if hidden_only else CORNER_SCALES:
            for s1, s2 in ((short * scale, long_ * scale), (long_ * scale, short * scale)):
                if min(l1, l2) < 0.35 * min(s1, s2) or l1 > 1.25 * s1 and l2 > 1.25 * s2:
                    continue
                quad = np.array([p, p + u1 * s1, p + u1 * s1 + u2 * s2, p + u2 * s2])
                # Its corners where the outline bends: a card's own corners are seen, a
                # quadrilateral straddling two cards has its corners in the middle of sides.
                seen = int((np.linalg.norm(poly[None] - quad[:, None], axis=2).min(axis=1) < 0.15 * short).sum())
                if seen < 2:
                    continue
                fill = _quad_fill(mask, quad)
                if fill < CORNER_MIN_FILL:
                    if frame is not None and fill >= COVER_MIN_WHITE and scale in COVER_SCALES:
                        maybe.append((seen, quad))      # under a sleeve? (if no card is found wholly white)
                    continue
                if hidden_only or inside_bend(quad, None):
                    continue
                support = _perimeter_support(quad, dist, off, tol)
                if support >= CORNER_MIN_SUPPORT:
                    hyps.append((seen, support, quad))
    hyps.sort(key=lambda x: (-x[0], -x[1]))
    out = _corner_choice(hyps, pts, tol, short, mask, w, h)
    if out or not maybe:
        return out
    felt = felt_colour(frame) if felt is None else felt
    if not hidden_only and not _beside_cover(frame, bright, felt, c):
        return out
    # A card under the dealer's sleeve or hand: the rest of its quadrilateral is sleeve or hand.
    # (a hypothesis reaches at most half a card, at 1.25x, beyond the white)
    cover = _cover(frame, bright, felt, c, 0.8 * long_)
    hyps = []
    for seen, quad in maybe:
        if _quad_fill(mask, quad, cover) < COVER_MIN_FILL or inside_bend(quad, cover):
            continue
        support = _perimeter_support(quad, dist, off, tol)
        if support >= CORNER_MIN_SUPPORT:
            hyps.append((seen, support, quad))
    hyps.sort(key=lambda x: (-x[0], -x[1]))
    return _corner_choice(hyps, pts, tol, short, mask, w, h, cover)


def _corner_choice(hyps, pts, tol, short, mask, w, h, cover=None) -> list[Candidate]:
    """Of corner hypotheses (best first), one card per place, its sides refitted to the outline.

    ``cover``: they are cards under a sleeve or hand (these pixels), their hidden end completed.
    """
    out: list[Candidate] = []
    for _seen, support, quad in hyps:
        # One card per place (below): a refit moves the centre by less than 0.15 * sqrt(2) widths,
        # so a hypothesis this close to a card already taken is not refitted to be dropped.
        if any(np.linalg.norm(o.quad.mean(axis=0) - quad.mean(axis=0)) < 0.18 * short for o in out):
            continue
        # Refit each side to the outline where it runs along it (else keep the hypothesis's side).
        fitted = _lines_quad([_fit_side(pts, quad[i], quad[(i + 1) % 4], tol) for i in range(4)])
        if fitted is not None and np.all(np.isfinite(fitted)) and np.abs(fitted - quad).max() < 0.15 * short:
            quad = fitted
        quad = _order(quad)
        if cover is not None:
            quad = _complete(quad, mask)
            if quad is None or _quad_fill(mask, quad, cover) < COVER_MIN_FILL:
                continue
        # A refit that leaves the card sizes looked for ran along something else (the side of the
        # card beside it, a blurred edge): its quadrilateral is no card's (a 52-px "card" on half
        # of a 68-px frame's blurred 7S, on a benchmark frame of table stress).
        if not CORNER_SCALES[0] <= _short_side(quad) / short <= CORNER_SCALES[-1]:
            continue
        centre = quad.mean(axis=0)
        if any(np.linalg.norm(o.quad.mean(axis=0) - centre) < 0.4 * short for o in out):
            continue
        sides = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
        ratio = (sides[1] + sides[3]) / max(sides[0] + sides[2], 1e-6)
        if not RATIO_RANGE[0] <= ratio <= RATIO_RANGE[1]:
            continue
        if quad[:, 0].min() < 1 or quad[:, 1].min() < 1 or quad[:, 0].max() > w - 2 or quad[:, 1].max() > h - 2:
            continue
        out.append(Candidate(np.float32(quad), _quad_fill(mask, quad), support, ratio))
    return out


def _cover(frame: np.ndarray, bright: np.ndarray, felt: np.ndarray, c: np.ndarray, reach: float) -> np.ndarray:
    """Pixels about region ``c`` (within ``reach``) that are neither card-white nor felt: a sleeve or a hand."""
    cover = np.zeros(frame.shape[:2], np.uint8)
    x, y, bw, bh = cv2.boundingRect(c)
    r = int(math.ceil(reach))
    x0, y0 = max(x - r, 0), max(y - r, 0)
    x1, y1 = min(x + bw + r, frame.shape[1]), min(y + bh + r, frame.shape[0])
    cover[y0:y1, x0:x1] = _off_felt(frame[y0:y1, x0:x1], felt) & (bright[y0:y1, x0:x1] == 0)
    return cover


def _off_felt(pixels: np.ndarray, felt: np.ndarray) -> np.ndarray:
    """Which of ``pixels`` (an image, H x W x 3 uint8) are further than FELT_DISTANCE from the felt's colour."""
    d = cv2.absdiff(pixels, (*(float(v) for v in np.round(felt)), 0.0)).astype(np.uint16)
    return (d * d).sum(axis=2, dtype=np.uint32) > FELT_DISTANCE ** 2


def _beside_cover(frame: np.ndarray, bright: np.ndarray, felt: np.ndarray, c: np.ndarray) -> bool:
    """Does a sleeve or a hand (neither white nor felt) lie along COVER_MIN_RING of region ``c``'s outline?

    A cheap look (a 4-px ring outside the outline) before any card under a sleeve is looked for.
    """
    x, y, bw, bh = cv2.boundingRect(c)
    x0, y0 = max(x - 6, 0), max(y - 6, 0)
    x1, y1 = min(x + bw + 6, frame.shape[1]), min(y + bh + 6, frame.shape[0])
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(inside, [c], -1, 1, -1, offset=(-x0, -y0))
    ring = (cv2.dilate(inside, np.ones((9, 9), np.uint8)) > inside) & (bright[y0:y1, x0:x1] == 0)
    if not ring.any():
        return False
    # (N, 1, 3): a column of 3-channel pixels, so that OpenCV takes the felt as a per-channel scalar
    return float(_off_felt(frame[y0:y1, x0:x1][ring][:, None, :], felt).mean()) >= COVER_MIN_RING


def _near(mask: np.ndarray, p: np.ndarray, r: float) -> bool:
    """Is any pixel of ``mask`` within ``r`` (a square) of point ``p``?"""
    x, y, k = int(round(p[0])), int(round(p[1])), int(math.ceil(r))
    return bool(mask[max(y - k, 0):y + k + 1, max(x - k, 0):x + k + 1].any())


def _complete(quad: np.ndarray, mask: np.ndarray) -> np.ndarray | None:
    """A card under a sleeve: the side that shows kept, the hidden end set at a card's proportions.

    ``quad`` is ordered (quad[0]->quad[1] a short side). The side whose inner edge is white in
    ``mask`` shows; its opposite, under the sleeve, is put at CARD_RATIO (or 1 / CARD_RATIO) of it.
    None when no one side shows with its opposite hidden.
    """
    hh, ww = mask.shape
    centre = quad.mean(axis=0)

    def shows(i):
        p = (quad[i] + quad[(i + 1) % 4]) / 2
        x, y = np.round(p + (centre - p) * 0.1).astype(int)
        return 0 <= x < ww and 0 <= y < hh and bool(mask[y, x])

    vis = [shows(i) for i in range(4)]
    for i in range(4):
        if vis[i] and not vis[(i + 2) % 4]:
            a, b = quad[i], quad[(i + 1) % 4]
            # The sides from this one run towards the opposite side (their mean direction).
            d = (quad[(i + 3) % 4] - a) + (quad[(i + 2) % 4] - b)
            d = d / (np.linalg.norm(d) + 1e-9)
            side = float(np.linalg.norm(b - a))
            depth = side * (CARD_RATIO if i % 2 == 0 else 1.0 / CARD_RATIO)
            out = np.array([a, b, b + d * depth, a + d * depth], np.float32)
            return _order(out)
    return None


def _short_side(quad: np.ndarray) -> float:
    return float(min(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[1])))


def card_size(found: list[Candidate]) -> float | None:
    """The frame's card width: the median of the smallest size class of the candidates.

    Two cards lying long side to long side make one white rectangle of a card's proportions
    (2 x 1.4 widths), 1.4 times a card's size: not the size to go by, so the smallest class
    (within 1.2x of the smallest candidate) sets it. (Such a pair stays one candidate: the
    recogniser drops it as too large among three or more cards, else it reads as no card.)
    """
    if not found:
        return None
    sizes = sorted(_short_side(c.quad) for c in found)
    return float(np.median([x for x in sizes if x <= 1.2 * sizes[0]]))


DIM_FACTOR = 0.55          # the second, lower threshold for cards in the dim part of the frame


def _dim_cards(white: np.ndarray, thr: float, found: list[Candidate], w: int, h: int, min_area: float,
               max_area: float, bright: np.ndarray | None = None) -> list[Candidate]:  # fmt: skip
    """Cards the light falls off on: below the frame's threshold, still far whiter than the felt.

    The threshold is global, and a camera's light may fall off by half across the table: a card
    in the dim part is then as white as the threshold or less, and breaks into specks. A second
    pass at a lower threshold (coloured felt has next to no whiteness at all) takes the clean
    card-shaped regions it finds where no card was found; nothing else (no splitting). ``bright``:
    the first pass's mask (``white > thr``), if at hand.
    """
    low = DIM_FACTOR * thr
    if low < 20:
        return []
    mask = cv2.threshold(white, low, 1, cv2.THRESH_BINARY)[1]
    if bright is None:
        bright = white > thr
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    out = []
    for c in contours:
        area = cv2.contourArea(c)
        if area < min_area or area > max_area:
            continue
        # Mostly white at the frame's threshold already: the first pass judged it.
        x, y, bw, bh = cv2.boundingRect(c)
        if np.count_nonzero(bright[y:y + bh, x:x + bw]) > 0.8 * area:
            continue
        (cx, cy), _, _ = cv2.minAreaRect(c)
        if any(cv2.pointPolygonTest(o.quad.reshape(-1, 1, 2), (float(cx), float(cy)), False) >= 0 for o in found):
            continue
        cand, _, _ = _check(c, area, w, h)
        if cand is not None:
            out.append(cand)
    return out


def find_cards(frame: np.ndarray) -> tuple[list[Candidate], list[tuple[np.ndarray, str]]]:
    """Candidate card quadrilaterals in a BGR frame, and the rejected shapes with a reason."""
    h, w = frame.shape[:2]
    white = whiteness(frame)
    thr = card_threshold(cv2.resize(white, (w // 4, h // 4), interpolation=cv2.INTER_AREA))
    mask = cv2.threshold(white, thr, 1, cv2.THRESH_BINARY)[1]
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    found: list[Candidate] = []
    rejected: list[tuple[np.ndarray, str]] = []
    min_area = MIN_CARD_SHORT * MIN_CARD_SHORT * 1.2 * MIN_FILL
    max_area = MAX_CARD_LONG * MAX_CARD_LONG / 1.2
    felt = None
    merged: list[tuple[np.ndarray, int]] = []    # rejected regions (outline, index in rejected)
    pending = []
    for c in contours:
        area = cv2.contourArea(c)
        if area < min_area or area > max_area * 1.3:
            continue
        cand, shape, why = _check(c, area, w, h)
        if cand is not None:
            found.append(cand)
        else:
            pending.append((c, area, shape, why))
    # A region too small to hold a card of the size of the frame's cards (a chip's white ring) is
    # not looked into: the recogniser drops a card under MIN_SIZE_RATIO (0.6) of the others' size.
    sizes = [math.sqrt(abs(cv2.contourArea(o.quad))) for o in found]
    floor = RETRY_MIN_SIZE * float(np.median(sizes)) if len(sizes) >= 3 else 0.0
    for c, area, shape, why in pending:
        (_, _), (rw, rh), _ = cv2.minAreaRect(c)
        # Something card-sized or larger that is no card: cards merged with a hand, a cuff, glare
        # or each other? Look inside at a stricter threshold ("out of frame" is a card, cut).
        if why != "out of frame" and min(rw, rh) >= RETRY_MIN_SHORT and math.sqrt(rw * rh) >= floor:
            inner = _split(white, c, thr, w, h, min_area, max_area)
            if not inner:
                if felt is None:
                    felt = felt_colour(frame)
                inner = _hull_card(frame, c, area, felt, w, h)
            if inner:
                found.extend(inner)
                merged.append((c, -1))      # the region may hold more cards than these
                continue
        rejected.append((shape, why))
        merged.append((c, len(rejected) - 1))
    found.extend(_dim_cards(white, thr, found, w, h, min_area, max_area, mask))
    short = card_size(found)
    # Regions still unexplained: cards touching, overlapping or cut by a hand, found from their
    # visible corners at the size of the frame's other cards.
    if short and merged:
        gone = set()
        for c, k in merged:
            # Smaller than a card: half a card beside a sleeve, at most.
            area = cv2.contourArea(c)
            if area < COVER_MIN_WHITE * 0.8 * short * short * CARD_RATIO:
                continue
            inner = [q for q in corner_cards(c, mask, short, w, h, frame, felt, area < 0.8 * short * short * CARD_RATIO)
                     if not any(np.linalg.norm(o.quad.mean(axis=0) - q.quad.mean(axis=0)) < 0.4 * short for o in found)]
            if inner:
                found.extend(inner)
                gone.add(k)
        rejected = [r for k, r in enumerate(rejected) if k not in gone]
    # Cards lie side by side, never one inside another: a quadrilateral within a larger one is a
    # part of that card's face (a picture's white), found when its outline was split.
    keep = []
    for cand in found:
        centre = cand.quad.mean(axis=0)
        area = abs(cv2.contourArea(cand.quad))
        if any(o is not cand and abs(cv2.contourArea(o.quad)) > area
               and cv2.pointPolygonTest(o.quad.reshape(-1, 1, 2), (float(centre[0]), float(centre[1])), False) > 0
               for o in found):  # fmt: skip
            rejected.append((cand.quad, "inside another card"))
        else:
            keep.append(cand)
    return keep, rejected
