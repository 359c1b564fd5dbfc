"""Cards partly seen: bitten by a hand, touching or overlapping others, under a sleeve.

A white region that is no card's shape and holds no card at a stricter threshold
(:func:`shoe_daemon.vision.detect.find_cards` tried that) may still hold cards:
- a hand cutting through a court card's white border into its picture leaves a card's outline
  with a bite out of it; its convex hull is the card when it holds no felt (:func:`hull_card`);
- cards touching or overlapping, or cut by a hand, show right-angled corners of the frame's card
  size; a card is placed on each, kept when it is white and its outline lies on the region's
  (:func:`corner_cards`);
- a card half under the dealer's sleeve or hand is half white and the rest sleeve or hand
  (neither white nor felt); its hidden end is completed at a card's proportions.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from shoe_daemon.vision.index import percentile_u8, share
from shoe_daemon.vision.quad import (
    RATIO_RANGE,
    Candidate,
    check_outline,
    fit_side,
    lines_quad,
    order_corners,
    short_side,
)

HULL_MIN_AGREE = 0.85      # share of a bitten card's hull on its quadrilateral's sides
MAX_FELT_IN_HULL = 0.03   # share of felt-coloured pixels a card's convex hull may hold
FELT_DISTANCE = 60.0       # BGR distance within which a pixel is the felt's colour


def felt_colour(frame: np.ndarray) -> np.ndarray:
    """The felt's BGR (the median of the frame: the felt covers most of a table camera's view)."""
    # Per channel by counting (np.median's value, ~3x faster).
    pixels = frame[::8, ::8].reshape(-1, 3)
    return np.float32([percentile_u8(pixels[:, c], 50) for c in range(3)])


def hull_card(frame: np.ndarray, c: np.ndarray, area: float, felt: np.ndarray, w: int, h: int) -> list[Candidate]:
    """A card whose white border a hand cuts through, into a court picture.

    Then the picture (not white) joins the felt round the hand, and the white region is a card's
    outline with a bite out of it: no card's shape. Its convex hull is the card (less the
    corner under the hand) and holds no felt reaching in from its edge; two cards merged, or a
    chip beside a card, hold felt between them and are left alone.
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
    cand, _, _ = check_outline(outline, hull_area, w, h)
    # The hull of a bitten card is its four sides and the chord across the bite: nearly all of
    # it lies on the quadrilateral (a chip's ring or a blob of glare does not).
    if cand is None or cand.agree < HULL_MIN_AGREE:
        return []
    # (The dearer test last: most regions fail the one above.)
    x, y, bw, bh = cv2.boundingRect(hull)
    inside = np.zeros((bh, bw), np.uint8)
    cv2.drawContours(inside, [hull], -1, 1, -1, offset=(-x, -y))
    inside = cv2.erode(inside, np.ones((5, 5), np.uint8))     # not the felt just beyond the edge
    part = frame[y:y + bh, x:x + bw].astype(np.float32) - felt
    felt_in = ((np.einsum("ijk,ijk->ij", part, part) < FELT_DISTANCE ** 2) & (inside > 0)).astype(np.uint8)
    n = cv2.countNonZero(inside)
    if n == 0:
        return []
    if float(cv2.countNonZero(felt_in)) / n <= MAX_FELT_IN_HULL:
        return [cand]
    # Only felt that reaches in from the hull's edge is felt between things: a court picture's
    # felt-green patches lie inside the card, walled in by the picture and its border (3.5-5 % of
    # the hull of a peek deck's court whose border a hand's fingers cut; own seeds 880600-880603,
    # nominal: 7 of font-peek's 26 cards not read were such courts, not found at all).
    _n, labels = cv2.connectedComponents(felt_in, connectivity=8)
    rim = cv2.subtract(inside, cv2.erode(inside, np.ones((3, 3), np.uint8)))
    reaching = np.unique(labels[(rim > 0) & (felt_in > 0)])
    if float(np.isin(labels, reaching[reaching > 0]).sum()) / n > MAX_FELT_IN_HULL:
        return []
    return [cand]


def felt_reaching_in(frame: np.ndarray, quad: np.ndarray, felt: np.ndarray) -> float | None:
    """The share of ``quad`` (less a 2-px rim) that is the ``felt``'s colour reaching in from its
    edge (as :func:`hull_card` counts it: felt walled in by a card, a picture's green, does not
    count), or None when it has no inside."""
    quad = np.int32(np.round(np.asarray(quad, np.float64))).reshape(-1, 1, 2)
    x, y, bw, bh = cv2.boundingRect(quad)
    # (A margin round it: erosion keeps the pixels on a box's edge, and a card square to the frame
    # lies along its box's.)
    x0, y0 = max(x - 3, 0), max(y - 3, 0)
    x1, y1 = min(x + bw + 3, frame.shape[1]), min(y + bh + 3, frame.shape[0])
    if x1 <= x0 or y1 <= y0:
        return None
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(inside, quad.reshape(-1, 2) - [x0, y0], 1)
    inside = cv2.erode(inside, np.ones((5, 5), np.uint8))     # not the felt just beyond the edge
    n = cv2.countNonZero(inside)
    if n == 0:
        return None
    part = frame[y0:y1, x0:x1].astype(np.float32) - felt
    felt_in = ((np.einsum("ijk,ijk->ij", part, part) < FELT_DISTANCE ** 2) & (inside > 0)).astype(np.uint8)
    if cv2.countNonZero(felt_in) == 0:
        return 0.0
    _n, labels = cv2.connectedComponents(felt_in, connectivity=8)
    rim = cv2.subtract(inside, cv2.erode(inside, np.ones((3, 3), np.uint8)))
    reaching = np.unique(labels[(rim > 0) & (felt_in > 0)])
    return float(np.isin(labels, reaching[reaching > 0]).sum()) / n


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
COVER_TILE = 32            # px: the cover about a region is worked out in tiles of this size, where looked at
# A corner card's inner sides are where the region's outline gave no side: placed at the frame's
# card size, an inner side may lie across a larger card's face (a 70-px "card" on the top of an
# 89-px JH whose own outline a bend beside it broke; own seed 881204, table stress, frame 103).
# Beyond such a side the white ends within a strip narrower than REACH_MAX of a card's width: the
# card reaches to there. Beyond a side that meets another card, the white runs on for a card.
REACH_MAX = 0.7            # widest strip (share of the frame's card width) taken as the rest of the card
REACH_FILL = 0.5           # share of the side (its middle) along which the strip is white, to reach on


def _quad_fill(mask: np.ndarray, quad: np.ndarray, also: np.ndarray | _Cover | None = None) -> float:
    """Share of the quadrilateral (less a 2-px rim: blur) that is white in ``mask`` (or set in ``also``; both 0/1)."""
    x, y, bw, bh = cv2.boundingRect(np.float32(quad))
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + bw, mask.shape[1]), min(y + bh, mask.shape[0])
    if x1 - x0 < 4 or y1 - y0 < 4:
        return 0.0
    inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(inside, np.int32(np.round(quad - [x0, y0])), 1)
    inside = cv2.erode(inside, np.ones((5, 5), np.uint8))
    n = cv2.countNonZero(inside)
    if n == 0:
        return 0.0
    part = mask[y0:y1, x0:x1] if also is None else mask[y0:y1, x0:x1] | also[y0:y1, x0:x1]
    # (Masks of 0 and 1: the pixels set inside are counted.)
    return float(cv2.countNonZero(cv2.bitwise_and(part, inside))) / n


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
    return share(near)


def corner_cards(c: np.ndarray, mask: np.ndarray, short: float, w: int, h: int, frame: np.ndarray | None = None,
                 felt: np.ndarray | None = None, hidden_only: bool = False,
                 piece: Callable[[np.ndarray], bool] | None = None) -> list[Candidate]:  # fmt: skip
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
    of it neither white nor felt (a sleeve or a hand lies there, :class:`_Cover`); its hidden end
    is then set at a card's proportions from the part that shows (:func:`_complete`).
    ``hidden_only``: such cards alone (a region smaller than a card, which holds no whole one).
    ``piece``: is a quadrilateral part of a larger card's face (its face runs on past a side with no
    seam)? Such a hypothesis gives way to a larger one of the same place that holds it
    (:func:`_wholes_round`).
    """
    if hidden_only:
        if frame is None:
            return []
        felt = felt_colour(frame) if felt is None else felt
        if not _beside_cover(frame, mask, felt, c):
            return []
    region = _region(c, mask, short)
    if region is None:
        return []
    hyps, maybe = _corner_hypotheses(region, frame is not None, hidden_only)
    out = _corner_choice(hyps, region.pts, region.tol, short, region.mask, w, h, piece=piece)
    if out or not maybe:
        return out
    felt = felt_colour(frame) if felt is None else felt
    if not hidden_only and not _beside_cover(frame, mask, felt, c):
        return out
    return _cards_under_cover(region, maybe, frame, mask, felt, w, h)


# --------------------------------------------------------------------------- corner_cards' steps


@dataclass
class _Region:
    """A white region as the corner search measures it (:func:`_region`), for cards ``short`` px wide.

    ``c``: its outline; ``mask``: the region with its holes filled (0/1, the frame's size);
    ``dist``: the distance to its outline, on its box (origin ``off``); ``poly``: its outline
    simplified; ``pts``: the outline's points (at most about 900); ``tol``: how near the outline a
    side must lie to run along it; ``bends``: the outline's concave bends.
    """

    c: np.ndarray
    short: float
    mask: np.ndarray
    dist: np.ndarray
    off: np.ndarray
    poly: np.ndarray
    pts: np.ndarray
    tol: float
    bends: np.ndarray


def _region(c: np.ndarray, mask: np.ndarray, short: float) -> _Region | None:
    """The region of outline ``c`` (in the frame's white ``mask``) measured for the corner search;
    None when its simplified outline has fewer than 4 or more than 48 corners."""
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
        return None
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
    return _Region(c, short, mask, dist, off, poly, pts, tol, bends)


def _inside_bend(region: _Region, quad: np.ndarray, cover: _Cover | None) -> bool:
    """Does ``quad`` hold one of the region's concave bends (other than one at the ``cover``'s edge)?"""
    short = region.short
    # (Under a sleeve, the outline bends where pips meet the sleeve's edge: not another card.)
    return any(cv2.pointPolygonTest(np.float32(quad).reshape(-1, 1, 2), (float(b[0]), float(b[1])), True)
               > 0.1 * short and not (cover is not None and _near(cover, b, 0.05 * short)) for b in region.bends)


def _convex_corner(region: _Region, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float] | None:
    """The outline's ``i``-th corner as (point, unit vectors along its two sides, the sides' lengths)
    when it is a card's: both sides long enough, about a right angle, the region inside it."""
    short, poly, mask = region.short, region.poly, region.mask
    n = len(poly)
    p, a, b = poly[i], poly[i - 1], poly[(i + 1) % n]
    e1, e2 = a - p, b - p
    l1, l2 = float(np.linalg.norm(e1)), float(np.linalg.norm(e2))
    if min(l1, l2) < 0.35 * short:
        return None
    u1, u2 = e1 / l1, e2 / l2
    if abs(float(u1 @ u2)) > CORNER_COS:
        return None
    # A convex corner: the region is on the inside of the angle.
    probe = np.round(p + (u1 + u2) * 0.15 * short).astype(int)
    if not (0 <= probe[0] < mask.shape[1] and 0 <= probe[1] < mask.shape[0]) or not mask[probe[1], probe[0]]:
        return None
    return p, u1, u2, l1, l2


def _corner_hypotheses(region: _Region, with_frame: bool, hidden_only: bool) -> tuple[list, list]:
    """Cards placed on the region's corners at a few sizes: ``hyps`` (corners seen, perimeter
    support, quad) white and along the outline, best first; ``maybe`` (corners seen, quad) half
    white, perhaps under a sleeve (only ``with_frame``, to look at the rest of them)."""
    short = region.short
    long_ = short * CARD_RATIO
    hyps, maybe = [], []
    for i in range(len(region.poly)):
        corner = _convex_corner(region, i)
        if corner is None:
            continue
        p, u1, u2, l1, l2 = corner
        # Cards differ in size across the frame (perspective): a few sizes about the typical one.
        # Too small leaves sides off the outline, too large takes in felt.
        for scale in COVER_SCALES if hidden_only else CORNER_SCALES:
            for s1, s2 in ((short * scale, long_ * scale), (long_ * scale, short * scale)):
                if min(l1, l2) < 0.35 * min(s1, s2) or l1 > 1.25 * s1 and l2 > 1.25 * s2:
                    continue
                quad = np.array([p, p + u1 * s1, p + u1 * s1 + u2 * s2, p + u2 * s2])
                # Its corners where the outline bends: a card's own corners are seen, a
                # quadrilateral straddling two cards has its corners in the middle of sides.
                seen = int((np.linalg.norm(region.poly[None] - quad[:, None], axis=2).min(axis=1) < 0.15 * short).sum())
                if seen < 2:
                    continue
                fill = _quad_fill(region.mask, quad)
                if fill < CORNER_MIN_FILL:
                    if with_frame and fill >= COVER_MIN_WHITE and scale in COVER_SCALES:
                        maybe.append((seen, quad))      # under a sleeve? (if no card is found wholly white)
                    continue
                if hidden_only or _inside_bend(region, quad, None):
                    continue
                support = _perimeter_support(quad, region.dist, region.off, region.tol)
                if support >= CORNER_MIN_SUPPORT:
                    hyps.append((seen, support, quad))
    hyps.sort(key=lambda x: (-x[0], -x[1]))
    return hyps, maybe


def _cards_under_cover(region: _Region, maybe: list, frame: np.ndarray, bright: np.ndarray, felt: np.ndarray,
                       w: int, h: int) -> list[Candidate]:  # fmt: skip
    """The cards of the half-white hypotheses ``maybe`` whose rest is sleeve or hand (neither white in
    ``bright`` nor ``felt``), their hidden ends completed."""
    short = region.short
    long_ = short * CARD_RATIO
    # A card under the dealer's sleeve or hand: the rest of its quadrilateral is sleeve or hand.
    # (a hypothesis reaches at most half a card, at 1.25x, beyond the white)
    cover = _Cover(frame, bright, felt, region.c, 0.8 * long_)
    hyps = []
    for seen, quad in maybe:
        if _quad_fill(region.mask, quad, cover) < COVER_MIN_FILL or _inside_bend(region, quad, cover):
            continue
        support = _perimeter_support(quad, region.dist, region.off, region.tol)
        if support >= CORNER_MIN_SUPPORT:
            hyps.append((seen, support, quad))
    hyps.sort(key=lambda x: (-x[0], -x[1]))
    return _corner_choice(hyps, region.pts, region.tol, short, region.mask, w, h, cover)


# A hypothesis this much of whose area lies inside a larger one is held by it.
HELD_INSIDE = 0.9
# A card-shaped part of a card is at most this share of its width: its end turned a quarter is 0.71 of
# it, a part in its own orientation at most 0.8 (the corner search's sizes, 0.8-1.25, are one card's).
# A hypothesis a little larger than a card is that card and a strip of its neighbour (a 66-px one
# round a 63-px 5C and the edge of the KC lying on it, own seed 889500, responsive, frame 293).
PART_MAX_WIDTH = 0.8


def _holds(outer: np.ndarray, quad: np.ndarray) -> bool:
    """Does quadrilateral ``outer``, large enough to be the whole of a card ``quad`` is a part of
    (PART_MAX_WIDTH), hold HELD_INSIDE of ``quad``'s area?"""
    area = abs(cv2.contourArea(np.float32(quad)))
    if abs(cv2.contourArea(np.float32(outer))) * PART_MAX_WIDTH ** 2 < area:
        return False
    inter, _ = cv2.intersectConvexConvex(np.float32(quad), np.float32(outer))
    return float(inter) >= HELD_INSIDE * area


def _wholes_round(k: int, hyps, piece: Callable[[np.ndarray], bool]) -> list[tuple[float, np.ndarray]]:
    """The hypotheses (support, quadrilateral) of which hypothesis ``k`` is a part: larger ones that
    hold it and are no part themselves (``piece``), best first; none when it is no part (its face
    does not run on past a side).

    Cards lie side by side, never one inside another: a card-shaped quadrilateral on a larger
    card's corners whose face runs on past a side with no seam is a part of that card. Ranked by its
    corners seen and outline support alone, the part came first: the upper two thirds of a 93-px 3H
    under a KH's corner, a 64-px hypothesis (the frame's card size 80 px), took the place of the
    whole 3H's and hid it, a false card (own seed 889501, font-peek, table stress, frame 139).
    """
    quad = np.float32(hyps[k][2])
    area = abs(cv2.contourArea(quad))
    centre = quad.mean(axis=0)
    larger = []
    for _s, support, other in hyps:
        other = np.float32(other)
        # (Cheap tests first: most hypotheses are not large enough, or elsewhere.)
        other_area = abs(cv2.contourArea(other))
        if other_area * PART_MAX_WIDTH ** 2 < area or np.linalg.norm(other.mean(axis=0) - centre) > math.sqrt(other_area):
            continue
        if _holds(other, quad):
            larger.append((support, other))
    if not larger or not piece(quad):
        return []
    return [(support, o) for support, o in larger if not piece(o)]


def _corner_choice(hyps, pts, tol, short, mask, w, h, cover=None, piece=None) -> list[Candidate]:
    """Of corner hypotheses (best first), one card per place, its sides refitted to the outline.

    ``cover``: they are cards under a sleeve or hand (these pixels), their hidden end completed.
    ``piece``: see :func:`corner_cards`; a hypothesis that is a part of a larger one gives way to it
    when that one is a card (:func:`_wholes_round`).
    """
    out: list[Candidate] = []
    for i, (_seen, support, quad) in enumerate(hyps):
        # One card per place (below): a refit moves the centre by less than 0.15 * sqrt(2) widths,
        # so a hypothesis this close to a card already taken is not refitted to be dropped.
        if any(np.linalg.norm(o.quad.mean(axis=0) - quad.mean(axis=0)) < 0.18 * short for o in out):
            continue
        if piece is not None and cover is None:
            # A part of a card taken already is no card of its own: the ends of a 192-px 2C, each
            # card-shaped turned a quarter at the frame's 134-px card size, came with the whole 2C,
            # which then went as "two cards in one outline", one end reported `unknown` (own seed
            # 889530, cardsJS, stress, frame 96).
            if any(_holds(o.quad, quad) for o in out) and piece(quad):
                continue
            wholes = _wholes_round(i, hyps, piece)
        else:
            wholes = []
        # An inner side reached out to the end of the card's white first; if that is no card, a part's
        # whole (likewise); else as placed.
        if cover is not None:
            tries = [(support, quad)]
        else:
            reached = _reach(quad, mask, short)
            tries = [] if np.array_equal(reached, quad) else [(support, reached)]
            tries += [(sup, q) for sup, whole in wholes for q in (_reach(whole, mask, short), whole)] + [(support, quad)]
        for k, (sup, q) in enumerate(tries):
            if k and np.array_equal(q, tries[k - 1][1]):
                continue
            cand = _corner_fit(q, sup, pts, tol, short, mask, w, h, out, cover)
            if cand is not None:
                # A part whose wholes are no card of the sizes looked for, as placed: a card only if
                # joined with another piece of it (detect._join_pieces); see detect.find_cards.
                cand.part = bool(wholes) and q is quad
                out.append(cand)
                break
    return _no_rivals(out)


def _corner_fit(quad, support, pts, tol, short, mask, w, h, out, cover) -> Candidate | None:
    """A corner hypothesis refitted to the outline, as a card, or None (no card's size or shape, or a card of ``out``'s place)."""
    # Refit each side to the outline where it runs along it (else keep the hypothesis's side).
    fitted = lines_quad([fit_side(pts, quad[i], quad[(i + 1) % 4], tol) for i in range(4)])
    if fitted is not None and np.all(np.isfinite(fitted)) and np.abs(fitted - quad).max() < 0.15 * short:
        quad = fitted
    quad = order_corners(quad)
    if cover is not None:
        quad = _complete(quad, mask)
        if quad is None or _quad_fill(mask, quad, cover) < COVER_MIN_FILL:
            return None
    # A refit that leaves the card sizes looked for ran along something else (the side of the
    # card beside it, a blurred edge): its quadrilateral is no card's (a 52-px "card" on half
    # of a 68-px frame's blurred 7S, on a benchmark frame of table stress).
    if not CORNER_SCALES[0] <= short_side(quad) / short <= CORNER_SCALES[-1]:
        return None
    centre = quad.mean(axis=0)
    if any(np.linalg.norm(o.quad.mean(axis=0) - centre) < 0.4 * short for o in out):
        return None
    sides = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    ratio = (sides[1] + sides[3]) / max(sides[0] + sides[2], 1e-6)
    if not RATIO_RANGE[0] <= ratio <= RATIO_RANGE[1]:
        return None
    if quad[:, 0].min() < 1 or quad[:, 1].min() < 1 or quad[:, 0].max() > w - 2 or quad[:, 1].max() > h - 2:
        return None
    return Candidate(np.float32(quad), _quad_fill(mask, quad), support, ratio)


def _reach(quad: np.ndarray, mask: np.ndarray, short: float) -> np.ndarray:
    """A corner hypothesis (``quad[0]`` its seen corner; sides 1 and 2 inner) with each inner side
    moved out to where the region's white ends, when that is within REACH_MAX of a card's width."""
    quad = np.array(quad, np.float64)
    hh, ww = mask.shape
    for i in (1, 2):
        a, b = quad[i], quad[(i + 1) % 4]
        # Outward: away from the seen corner's side opposite (quad[i] - quad[i - 1] for side 1).
        out_dir = quad[i] - quad[i - 1]
        out_dir = out_dir / (np.linalg.norm(out_dir) + 1e-9)
        along = a + (b - a) * np.linspace(0.2, 0.8, 9)[:, None]
        end = None
        for t in range(1, int(REACH_MAX * short) + 2):
            xy = np.round(along + out_dir * t).astype(int)
            ok = (xy[:, 0] >= 0) & (xy[:, 1] >= 0) & (xy[:, 0] < ww) & (xy[:, 1] < hh)
            white = np.zeros(len(xy), bool)
            white[ok] = mask[xy[ok, 1], xy[ok, 0]] > 0
            if white.mean() < REACH_FILL:
                end = t - 1
                break
        if end:
            quad[i] = quad[i] + out_dir * end
            quad[(i + 1) % 4] = quad[(i + 1) % 4] + out_dir * end
    return quad


# Cards on a table overlap by a strip at most (a fifth of a card's width lies under another: 0.2 of
# its area); two card hypotheses sharing more than this are one region read two ways.
RIVAL_OVERLAP = 0.3


def overlap_share(a: Candidate, b: Candidate) -> float:
    """The share of the smaller of two cards' quadrilaterals that lies in both."""
    inter, _ = cv2.intersectConvexConvex(a.quad, b.quad)
    return float(inter) / max(min(abs(cv2.contourArea(a.quad)), abs(cv2.contourArea(b.quad))), 1.0)


def _no_rivals(cards: list[Candidate]) -> list[Candidate]:
    """Of cards recovered from one region, none that shares more than RIVAL_OVERLAP of its area with another.

    Two cards side by side, blurred, show no corner where they meet; a card-sized quadrilateral
    placed on each outer corner then straddles both, its inner sides across their faces (own seed
    887001, table stress, frame 53: two such "cards", each half of the 8S and half of the TD,
    sharing 0.46 of their area). Neither is believed.
    """
    def rivals(a: Candidate, b: Candidate) -> bool:
        # (Of one size: a quadrilateral round two cards, 1.4 times their width, is another matter:
        # detect's rule of two cards in one outline.)
        sa, sb = short_side(a.quad), short_side(b.quad)
        return a is not b and max(sa, sb) < 1.2 * min(sa, sb) and overlap_share(a, b) > RIVAL_OVERLAP

    return [c for c in cards if not any(rivals(c, o) for o in cards)]


class _Cover:
    """Pixels about region ``c`` (within ``reach``) that are neither card-white nor felt: a sleeve or a hand.

    Indexed like the frame's mask (``cover[y0:y1, x0:x1]``: uint8, 1 = sleeve or hand), and worked
    out only where it is looked at, once (in tiles of COVER_TILE px): the card hypotheses and bends
    beside a sleeve are a small part of the region's surroundings (the whole of them took 3-9 ms).
    """

    def __init__(self, frame: np.ndarray, bright: np.ndarray, felt: np.ndarray, c: np.ndarray, reach: float):
        self.frame, self.bright, self.felt = frame, bright, felt
        self.shape = frame.shape[:2]
        x, y, bw, bh = cv2.boundingRect(c)
        r = int(math.ceil(reach))
        self.box = (max(y - r, 0), min(y + bh + r, self.shape[0]), max(x - r, 0), min(x + bw + r, self.shape[1]))
        self.values = np.zeros(self.shape, np.uint8)
        t = COVER_TILE
        self.done = np.zeros((-(-self.shape[0] // t), -(-self.shape[1] // t)), bool)

    def __getitem__(self, key: tuple[slice, slice]) -> np.ndarray:
        (y0, y1, _), (x0, x1, _) = key[0].indices(self.shape[0]), key[1].indices(self.shape[1])
        by0, by1, bx0, bx1 = self.box
        iy0, iy1, ix0, ix1 = max(y0, by0), min(y1, by1), max(x0, bx0), min(x1, bx1)
        if iy0 < iy1 and ix0 < ix1:
            t = COVER_TILE
            ty, tx = np.nonzero(~self.done[iy0 // t:(iy1 - 1) // t + 1, ix0 // t:(ix1 - 1) // t + 1])
            if len(ty):
                # The tiles not yet worked out, at once (the box round them; the reach's box bounds it).
                ty0, ty1 = iy0 // t + ty.min(), iy0 // t + ty.max() + 1
                tx0, tx1 = ix0 // t + tx.min(), ix0 // t + tx.max() + 1
                part = np.s_[max(ty0 * t, by0):min(ty1 * t, by1), max(tx0 * t, bx0):min(tx1 * t, bx1)]
                self.values[part] = _off_felt(self.frame[part], self.felt) & (self.bright[part] == 0)
                self.done[ty0:ty1, tx0:tx1] = True
        return self.values[max(y0, 0):max(y1, y0), max(x0, 0):max(x1, x0)]


def _off_felt(pixels: np.ndarray, felt: np.ndarray) -> np.ndarray:
    """Which of ``pixels`` (an image, H x W x 3 uint8) are further than FELT_DISTANCE from the felt's colour."""
    d = cv2.absdiff(pixels, (*(float(v) for v in np.round(felt)), 0.0))
    # The squared distance with OpenCV (a table of squares, the channels summed by a 1x3 transform):
    # ~7x faster than numpy's sum over a 3-long axis, and the same answer. The 16-bit sum saturates
    # at 65,535, far above FELT_DISTANCE ** 2.
    squared = cv2.transform(cv2.LUT(d, _SQUARES), _CHANNEL_SUM)
    return squared.reshape(pixels.shape[:2]) > FELT_DISTANCE ** 2


_SQUARES = (np.arange(256, dtype=np.uint32) ** 2).astype(np.uint16)
_CHANNEL_SUM = np.ones((1, 3), np.float32)


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
    return share(_off_felt(frame[y0:y1, x0:x1][ring][:, None, :], felt)) >= COVER_MIN_RING


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
            return order_corners(out)
    return None
