"""A card's outline as a quadrilateral: fitting one to a white region's contour, and judging it.

The four sides are fitted as lines to the contour (rounded corners and a hand over one corner do
not move them) and intersected. A region is a card when its quadrilateral has a card's ratio
(1.22-1.78; from 1.12 for a clean outline, a card squeezed by keystone), its size is a card's, its
opposite sides are near equal and the white region fills it (:func:`check_outline`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from shoe_daemon.vision.index import share

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
    part: bool = False      # a part of a larger card, taken as placed (partial._corner_choice)


def order_corners(quad: np.ndarray) -> np.ndarray:
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
    # All four sides at once (this runs for every choice of sides fit_quad weighs), x and y apart:
    # numpy sums over a 2-long axis slowly, and x * x + y * y is the same float.
    a = np.asarray(quad, np.float64)
    seg = a[NEXT] - a                                              # (4, 2)
    sx, sy = seg[:, 0, None], seg[:, 1, None]
    rx, ry = pts[None, :, 0] - a[:, 0, None], pts[None, :, 1] - a[:, 1, None]   # (4, N)
    t = np.clip((rx * sx + ry * sy) / ((seg * seg).sum(axis=1)[:, None] + 1e-9), 0.0, 1.0)
    ox, oy = rx - t * sx, ry - t * sy
    return share((ox * ox + oy * oy).min(axis=0) <= tol * tol)


def lines_quad(lines) -> np.ndarray | None:
    pts = [_intersect(lines[i - 1], lines[i]) for i in range(4)]
    if any(p is None for p in pts):
        return None
    return np.array(pts)


def fit_side(pts: np.ndarray, p: np.ndarray, q: np.ndarray, band: float):
    """The line through the contour points along segment p-q (away from its ends)."""
    seg = q - p
    length = float(np.linalg.norm(seg))
    d = seg / (length + 1e-9)
    rel = pts - p
    along = rel @ d
    across = rel @ np.array([-d[1], d[0]])
    near = (np.abs(across) < band) & (along > 0.12 * length) & (along < 0.88 * length)
    if np.count_nonzero(near) >= 8:
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
        quad = lines_quad([fit_side(pts, coarse[i], coarse[(i + 1) % 4], max(2.0, 0.01 * peri)) for i in range(4)])
        if quad is not None and np.all(np.isfinite(quad)) and np.abs(quad - coarse).max() < 0.05 * peri:
            agree = _boundary_agreement(quad, pts, tol)
            qarea = abs(cv2.contourArea(quad.astype(np.float32)))
            if agree >= 0.93 and area >= 0.95 * qarea and _inside_margin(quad, hull_pts) >= -tol:
                return quad.astype(np.float32), agree
    n = len(approx)
    lengths = [float(np.linalg.norm(approx[(i + 1) % n] - approx[i])) for i in range(n)]
    longest = set(sorted(range(n), key=lambda i: -lengths[i])[:6])
    sides = {i: fit_side(pts, approx[i], approx[(i + 1) % n], max(2.0, 0.01 * peri)) for i in sorted(longest)}
    # Four of the polygon's sides, in order: the choice whose quadrilateral holds most of the
    # contour on its sides (a hand's cut or a rounded corner adds sides that hold little).
    best, best_score = None, -1.0
    centre = hull_pts.mean(axis=0)
    meets: dict[tuple[int, int], np.ndarray | None] = {}    # two sides' corner: each is in several choices

    def corner(i: int, j: int) -> np.ndarray | None:
        if (i, j) not in meets:
            meets[i, j] = _intersect(sides[i], sides[j])
        return meets[i, j]

    for keep in combinations(sorted(longest), 4):
        corners = [corner(keep[k - 1], keep[k]) for k in range(4)]     # lines_quad's, the same floats
        quad = None if any(p is None for p in corners) else np.array(corners)
        if quad is None or not np.all(np.isfinite(quad)) or np.abs(quad - centre).max() > peri / 2:
            continue
        qarea = abs(cv2.contourArea(quad.astype(np.float32)))
        bound = min(1.0, area / max(qarea, 1.0) / 0.92)     # the score with every point on the sides
        # A choice that cannot beat the best so far is not weighed further (nor tested, first: these
        # tests only leave choices out, in any order).
        if bound <= best_score:
            continue
        if not cv2.isContourConvex(quad.astype(np.float32).reshape(-1, 1, 2)):
            continue
        if _inside_margin(quad, hull_pts) < -tol:
            continue
        score = _boundary_agreement(quad, pts, tol) * bound
        if score > best_score:
            best, best_score = quad, score
    if best is None:
        return None
    # Refine once more on the chosen sides.
    out = lines_quad([fit_side(pts, best[i], best[(i + 1) % 4], max(2.0, 0.008 * peri)) for i in range(4)])
    if out is None or np.abs(out - best).max() > 0.05 * peri:
        out = best
    return out.astype(np.float32), _boundary_agreement(out, pts, tol)


def check_outline(c: np.ndarray, area: float, w: int, h: int, off=(0, 0)) -> tuple[Candidate | None, np.ndarray, str]:
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
    quad = order_corners(quad) + np.float32([ox, oy])
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


def short_side(quad: np.ndarray) -> float:
    return float(min(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[1])))
