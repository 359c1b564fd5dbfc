"""Finding cards on the felt: bright, unsaturated quadrilaterals of a card's proportions.

The frame is scored for "card white" (the darkest channel, less the saturation: high on white
card stock under any white balance, low on coloured felt, skin and most chips), thresholded
(Otsu on a quarter-size copy, with a floor over the felt level), and each outer contour is fitted
with a quadrilateral and judged (:mod:`shoe_daemon.vision.quad`); everything that is no card's
shape (chips, hands, glare, sleeves) is dropped here. A region that fails and could hold a card
of the frame's size (not a chip's ring among cards) is looked at again: at a stricter threshold
(a light hand or a cuff bridging two cards is less white than card stock), then by its convex
hull (a hand cutting through a court card's white border into its picture); a quadrilateral
inside another is dropped. A second pass at a lower threshold finds cards where the light falls
off. Regions still unexplained (cards touching or overlapping, a card cut by a hand or under a
sleeve) give cards from their visible right-angled corners at the frame's card size
(:mod:`shoe_daemon.vision.partial`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from shoe_daemon.vision.index import np_percentile_u8
from shoe_daemon.vision.partial import (
    CARD_RATIO,
    COVER_MIN_WHITE,
    FELT_DISTANCE,
    corner_cards,
    felt_colour,
    felt_reaching_in,
    hull_card,
    overlap_share,
)
from shoe_daemon.vision.quad import (
    CLEAN_AGREE,
    MAX_CARD_LONG,
    MIN_CARD_SHORT,
    MIN_FILL,
    RATIO_RANGE,
    Candidate,
    check_outline,
    order_corners,
    short_side,
)

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
    felt = np_percentile_u8(white_small[::4, ::4], 50)
    otsu, _ = cv2.threshold(white_small, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return max(float(otsu), felt + 45.0)


RETRY_MIN_SHORT = MIN_CARD_SHORT * 0.8   # a rejected region this wide may hold a card merged with something
RETRY_MIN_SIZE = 0.5     # ... and this large (sqrt of its area) against the frame's cards (3 or more)


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
    stock = np_percentile_u8(vals, 90)
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
            cand, _, _ = check_outline(sub, area, w, h, (x0, y0))
            if cand is not None:
                found.append(cand)
        if found:
            break
    return found


CARD_MIN_SIZE = 0.6   # a candidate this much smaller than the frame's cards is no card (the recogniser drops it)


# A candidate this much larger (sqrt of area) than the frame's median, three or more candidates, is
# two cards or more touching or overlapping (the recogniser drops it); one whose white neither fills
# it nor lies along its outline (fill < LOOSE_FILL, outline < LOOSE_AGREE) is a card and the glare
# round it from LOOSE_MAX_SIZE (a 61-px QC in an 81x144-px one, 1.2x the frame's cards; own seed
# 884010, table stress, frame 82).
CARD_MAX_SIZE = 1.3
LOOSE_MAX_SIZE, LOOSE_FILL, LOOSE_AGREE = 1.15, 0.85, 0.7
TOO_LARGE_SPLIT = "too large for a card: its cards found from its corners"   # (find_cards' rejection)


def too_large(cand: Candidate, med: float) -> bool:
    """Is ``cand`` too large for a card among cards of size ``med`` (sqrt of area; see CARD_MAX_SIZE)?"""
    loose = cand.fill < LOOSE_FILL and cand.agree < LOOSE_AGREE
    return math.sqrt(_area(cand)) > (LOOSE_MAX_SIZE if loose else CARD_MAX_SIZE) * med


def median_size(found: list[Candidate]) -> float | None:
    """The frame's cards' size (the median of the candidates' square roots of area) when there are
    three or more to judge by, else None."""
    return float(np.median([math.sqrt(_area(c)) for c in found])) if len(found) >= 3 else None


def card_size(found: list[Candidate]) -> float | None:
    """The frame's card width: the median of the smallest size class of the candidates.

    Two cards lying long side to long side make one white rectangle of a card's proportions
    (2 x 1.4 widths), 1.4 times a card's size: not the size to go by, so the smallest class
    (within 1.2x of the smallest candidate) sets it. (Such a pair stays one candidate: the
    recogniser drops it as too large among three or more cards, else it reads as no card.)
    """
    if not found:
        return None
    # A quadrilateral squarer than a card's proportions (a clean outline, taken down to
    # CLEAN_MIN_RATIO) sets it only when nothing else does: a back's inner panel, 47x55 px in a
    # 109-px back, made the frame's cards 47 px and two pieces of a 101-px KD "cards" (own seed
    # 881118, responsive, table stress, frame 74).
    found = [c for c in found if c.ratio >= RATIO_RANGE[0]] or found
    # Nor does one under CARD_MIN_SIZE of the frame's median (three or more candidates), which the
    # recogniser drops as too small: a back's card-shaped inner panel, 63 px among 94-112-px cards,
    # made two 70-px "cards" from the corners of a 101-px TH and a 97-px AD (own seed 881209,
    # responsive, table stress, frame 53).
    med = median_size(found)
    if med is not None:
        found = [c for c in found if math.sqrt(_area(c)) >= CARD_MIN_SIZE * med]
    sizes = sorted(short_side(c.quad) for c in found)
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
        cand, _, _ = check_outline(c, area, w, h)
        if cand is not None:
            out.append(cand)
    return out


# Two cards side by side (long side to long side) make a quadrilateral 1.4 card widths wide: each
# card's width is 0.71 of its short side. So do two pieces of one card, 0.71 of it (a 101-px AS and
# two 70-px pieces of it, seed 41 of tests/vision/test_stress_detection.py): the frame's other cards
# tell them apart, at the geometric means (1.19 and 0.84 of their size). Set on own seeds 884010,
# 887001-887002 (table stress).
TWO_MIN_SHORT = 0.62    # each of two cards inside a larger quadrilateral: this share of its short side, or more
TWO_MIN_APART = 0.5     # ... and their centres apart by this share of it
TWO_MIN_OUTER = 1.18    # the quadrilateral round them this large (sqrt area) against the frame's other cards
TWO_MIN_INNER = 0.84    # ... and each of the two this large


def _area(cand: Candidate) -> float:
    return abs(cv2.contourArea(cand.quad))


def _holds_two(cand: Candidate, found: list[Candidate]) -> bool:
    """Does ``cand``, not a clean outline and larger than the frame's cards, hold two of them side by side?

    No card holds two card-sized quadrilaterals side by side; a card whose outline is clean (its
    white filling it, the outline on its sides) is one card, whatever white lies within; and
    without two other cards to size them by, nothing is judged.
    """
    if cand.agree >= CLEAN_AGREE:
        return False
    short = short_side(cand.quad)
    poly = cand.quad.reshape(-1, 1, 2)
    inner = [o for o in found
             if o is not cand and short_side(o.quad) >= TWO_MIN_SHORT * short
             and cv2.pointPolygonTest(poly, tuple(float(v) for v in o.quad.mean(axis=0)), False) > 0]
    pairs = [(a, b) for k, a in enumerate(inner) for b in inner[k + 1:]
             if np.linalg.norm(a.quad.mean(axis=0) - b.quad.mean(axis=0)) >= TWO_MIN_APART * short]
    others = [math.sqrt(_area(o)) for o in found if o is not cand and not any(o is i for i in inner)]
    if not pairs or len(others) < 2:
        return False
    med = float(np.median(others))
    if math.sqrt(_area(cand)) < TWO_MIN_OUTER * med:
        return False
    return any(min(_area(a), _area(b)) >= (TWO_MIN_INNER * med) ** 2 for a, b in pairs)


def _rectangle_round(a: Candidate, b: Candidate) -> tuple[np.ndarray, float, float] | None:
    """The rectangle round two candidates (its corners ordered as a card's, its two sides), or
    None unless it has a card's proportions (RATIO_RANGE)."""
    rect = cv2.minAreaRect(np.concatenate([a.quad, b.quad]))
    rw, rh = rect[1]
    if min(rw, rh) < 1 or not RATIO_RANGE[0] <= max(rw, rh) / min(rw, rh) <= RATIO_RANGE[1]:
        return None
    return order_corners(cv2.boxPoints(rect)), rw, rh


PIECES_MIN_FILL = 0.85   # share of the rectangle round two pieces of a card that the two cover


def _join_pieces(found: list[Candidate]) -> list[Candidate]:
    """Two pieces of one card, side by side, taken as two smaller cards: joined into that card.

    Halves of a card (cut across its long sides) are card-shaped at 0.71 of its size; a card
    touching another, recovered from its corners at the smaller cards' size, came back as two
    (a 108-px AH as two 75-px "cards", seed 41 of tests/vision/test_stress_detection.py). The
    mirror of :func:`_holds_two`, by the frame's other cards' size: two candidates, neither a clean
    outline, each under TWO_MIN_INNER of it, that together fill a card's rectangle of no more than
    TWO_MIN_OUTER of it are that card.
    """
    out = list(found)
    loose = [c for c in found if c.agree < CLEAN_AGREE]
    for k, a in enumerate(loose):
        for b in loose[k + 1:]:
            if not any(a is o for o in out) or not any(b is o for o in out):
                continue
            others = [math.sqrt(_area(o)) for o in out if o is not a and o is not b]
            if len(others) < 2:
                continue
            med = float(np.median(others))
            area_a, area_b = _area(a), _area(b)
            if max(area_a, area_b) >= (TWO_MIN_INNER * med) ** 2:
                continue
            round_both = _rectangle_round(a, b)
            if round_both is None:
                continue
            quad, rw, rh = round_both
            if not TWO_MIN_INNER * med <= math.sqrt(rw * rh) <= TWO_MIN_OUTER * med:
                continue
            inter, _ = cv2.intersectConvexConvex(a.quad, b.quad)
            fill = (area_a + area_b - float(inter)) / (rw * rh)
            if fill < PIECES_MIN_FILL:
                continue
            out = [o for o in out if o is not a and o is not b]
            out.append(Candidate(quad, fill, min(a.agree, b.agree), max(rw, rh) / min(rw, rh)))
    return out


# A card found from its corners is a piece of a larger card when, past one of its sides, the same
# face runs on: card white beyond it (PIECE_BEYOND of the paper inside, out to PIECE_OUT of its
# width) and no seam about it (nowhere within PIECE_IN inside to PIECE_OUT outside darker than
# PIECE_SEAM of that paper: where two cards touch, or one lies on another within a fifth of a width,
# the upper card's edge shows as a dark line). A 113-px 2D whose frame's card size an 84-px card
# set came back as its two ends, each card-shaped turned a quarter: one a false card (own seed
# 883501, font-peek, table stress, frame 292).
PIECE_IN, PIECE_OUT, PIECE_BEYOND, PIECE_SEAM = 0.3, 0.12, 0.8, 0.85


def _sides_outward(quad) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``quad``'s four sides as (start, end, unit normal pointing away from its centre)."""
    quad = np.asarray(quad, np.float64).reshape(4, 2)
    centre = quad.mean(axis=0)
    sides = []
    for k in range(4):
        a, b = quad[k], quad[(k + 1) % 4]
        d = (b - a) / max(float(np.linalg.norm(b - a)), 1e-9)
        outward = np.array([-d[1], d[0]])
        sides.append((a, b, -outward if outward @ (a - centre) < 0 else outward))
    return sides


def _side_profile(white: np.ndarray, a: np.ndarray, b: np.ndarray, outward: np.ndarray,
                  offsets: np.ndarray) -> np.ndarray:
    """Whiteness along side a-b (its middle 70 %, the median: a pip across it does not count), moved
    by each of ``offsets`` px along ``outward``."""
    ts = np.linspace(0.15, 0.85, 25)
    line = a + (b - a) * ts[:, None]
    pts = (line[None] + offsets[:, None, None] * outward).astype(np.float32)
    vals = cv2.remap(white, pts[..., 0], pts[..., 1], cv2.INTER_LINEAR, borderValue=0.0)
    return np.median(vals, axis=1)


def _runs_on(white: np.ndarray, a: np.ndarray, b: np.ndarray, outward: np.ndarray, short: float) -> bool:
    """Does the face inside side a-b run on past it, with no seam (see PIECE_SEAM; ``short`` the
    frame's card size)?"""
    offsets = np.arange(-round(PIECE_IN * short), round(PIECE_OUT * short) + 1, dtype=np.float64)
    beyond = offsets >= 0.5 * PIECE_OUT * short
    inside = offsets <= 0
    prof = _side_profile(white, a, b, outward, offsets)
    paper = float(np.median(prof[inside]))
    return paper > 0 and prof[beyond].min() >= PIECE_BEYOND * paper and prof.min() >= PIECE_SEAM * paper


def piece_of_larger(white: np.ndarray, quad: np.ndarray, short: float) -> bool:
    """Does the face of ``quad`` (a card found from its corners, ``short`` the frame's card size) run
    on past one of its sides, with no seam (see PIECE_SEAM)?"""
    return any(_runs_on(white, a, b, outward, short) for a, b, outward in _sides_outward(quad))


# A card taken from a region that is no card (a light hand merged with it: at a stricter threshold,
# or by its hull), this much smaller than the frame's first-pass cards (sqrt of area, three or
# more), with a hand or sleeve (neither card-white nor felt) along HAND_ALONG of one of its sides,
# is the part of a card that shows beside the hand, card-shaped by chance: a 118-px TH, its end
# under a hand, gave a 101-px "card" off its centre, a false card (own seed 884100, cardsJS, stress,
# frame 770; a 128-px 4C, 884101, font deck, frame 1075). The region is looked into for the card
# under the hand instead (its corners).
HAND_PART_SIZE, HAND_ALONG = 0.8, 0.7


def _white_past(mask: np.ndarray, a: np.ndarray, b: np.ndarray, outward: np.ndarray, reach: int) -> np.ndarray:
    """How far the white (``mask``) runs on past side a-b, up to ``reach`` px, at 15 points of its middle 80 %."""
    h, w = mask.shape
    line = a + (b - a) * np.linspace(0.1, 0.9, 15)[:, None]
    out = np.round(line[None] + np.arange(reach + 1)[:, None, None] * outward).astype(int)
    ends = mask[np.clip(out[..., 1], 0, h - 1), np.clip(out[..., 0], 0, w - 1)] == 0
    return np.where(ends.any(axis=0), ends.argmax(axis=0), reach)


def _hand_past(frame: np.ndarray, mask: np.ndarray, a: np.ndarray, b: np.ndarray, outward: np.ndarray,
               felt: np.ndarray, start: np.ndarray | int = 0, cards: list[np.ndarray] = (),
               mixed: bool = False) -> bool:  # fmt: skip
    """Is a strip 3-6 px outside side a-b (its middle 80 %; past ``start`` px more, per point of
    :func:`_white_past`) mostly neither white (``mask``) nor the ``felt``'s colour, nor inside one of
    ``cards`` (quadrilaterals)? ``mixed``: nor a mix of the felt and white (glare)."""
    h, w = mask.shape
    line = a + (b - a) * np.linspace(0.1, 0.9, 15)[:, None]
    start = np.reshape(start, (-1, 1))
    xy = np.round(np.concatenate([line + (start + o) * outward for o in (3, 4, 5, 6)])).astype(int)
    ok = (xy[:, 0] >= 0) & (xy[:, 1] >= 0) & (xy[:, 0] < w) & (xy[:, 1] < h)
    if ok.sum() < 0.5 * len(xy):
        return False
    x, y = xy[ok, 0], xy[ok, 1]
    px = frame[y, x].astype(np.float64)
    if mixed:   # less the nearest mix of the felt and white: its distance from the felt is the pixel's from the mix
        span = 255.0 - np.float64(felt)
        px -= np.clip((px - felt) @ span / (span @ span), 0.0, 1.0)[:, None] * span
    hand = (np.linalg.norm(px - felt, axis=1) > FELT_DISTANCE) & (mask[y, x] == 0)
    for quad in cards:
        poly = np.float32(quad).reshape(-1, 1, 2)
        hand &= [cv2.pointPolygonTest(poly, (float(u), float(v)), False) < 0 for u, v in zip(x, y, strict=True)]
    return float(np.mean(hand)) >= HAND_ALONG


def hand_along_side(frame: np.ndarray, mask: np.ndarray, quad: np.ndarray, felt: np.ndarray) -> bool:
    """Is a strip 3-6 px outside one of ``quad``'s sides (its middle 80 %) mostly neither white
    (``mask``) nor the ``felt``'s colour?"""
    return any(_hand_past(frame, mask, a, b, outward, felt) for a, b, outward in _sides_outward(quad))


def inside_pattern(frame: np.ndarray, mask: np.ndarray, quad: np.ndarray, felt: np.ndarray) -> bool:
    """Is every one of ``quad``'s sides lined outside (a strip 3-6 px out, HAND_ALONG of it) by what
    is neither white (``mask``) nor the ``felt``'s colour?

    A card on the table has felt, or another card, beyond some side: a hand that bites one covers
    a corner or a side or two (the hulls of bitten courts on own seed 889720, table stress: 0.33 of
    a side at most). A white shape with a pattern beyond every side lies inside something: the
    white four-pointed star inside a responsive back's blue circle, whose hull (its tips) is a
    card-shaped quadrilateral (every side 1.0 on 889720). Taken for a card, it set the frame's card
    size to 66 px and made a false 60-px piece of a 100-px 4D (own seed 889206, table stress,
    frame 13).
    """
    return all(_hand_past(frame, mask, a, b, outward, felt) for a, b, outward in _sides_outward(quad))


# A card found from a region's corners whose face runs on past a side (no seam, :func:`_runs_on`) to
# a hand or sleeve within BESIDE_REACH of the frame's card width is the part of a card that shows
# beside it, card-shaped by chance: the lower two thirds of a 108-px 2S that a dark sleeve cut
# straight across gave a 75-px "card" (the frame's card size set by a 93-px back), its side 25-33 px
# short of the sleeve, a false card (own seed 888501, font-peek, table stress, frame 193).
BESIDE_REACH = 0.5


def piece_beside_hand(frame: np.ndarray, white: np.ndarray, mask: np.ndarray, quad: np.ndarray, short: float,
                      felt: np.ndarray, cards: list[np.ndarray] = ()) -> bool:  # fmt: skip
    """Does the face of ``quad`` (a card found from its corners) run on past one of its sides to a hand
    or sleeve (see BESIDE_REACH; ``short`` the frame's card size)? The white must run on past the side
    (beyond the hidden end of a card under a sleeve the sleeve runs on, no seam either); what lies in
    one of the frame's other ``cards`` is no hand (a JS's picture past its white border and the 4H
    it touches, own seed 889103, font-peek, table stress, frame 54: the 4H was dropped), nor is glare,
    a mix of the felt and white (a QH's face running on into the glare round it, pink on red felt:
    own seed 889106, frame 118)."""
    for a, b, outward in _sides_outward(quad):
        if not _runs_on(white, a, b, outward, short):
            continue
        run = _white_past(mask, a, b, outward, round(BESIDE_REACH * short))
        if np.median(run) >= 0.5 * PIECE_OUT * short and _hand_past(frame, mask, a, b, outward, felt, run, cards, mixed=True):
            return True
    return False


# Two cards on a table share a strip at most (a fifth of a width under another: 0.2 of its area;
# partial.RIVAL_OVERLAP): two pieces sharing more are one card's two ends. Touching cards blurred
# show no seam either, and their corner cards share a little: 0-0.13 of the smaller in 13 pairs of
# own seeds 884300-884304 (table stress; each pair two cards lost), the 2D's two ends 0.25.
ENDS_MIN_SHARED = 0.2


def _not_two_ends(cards: list[Candidate], white: np.ndarray, short: float) -> list[Candidate]:
    """Cards found from one region's corners, any two that are one larger card's two ends (each a
    piece, :func:`piece_of_larger`, sharing more than ENDS_MIN_SHARED) taken as that card: the rectangle round
    both, when it has a card's proportions, else neither. (One piece alone stays: in an over-exposed
    frame two cards, one half on the other, show no seam either; own seed 884010,
    kennard-4colour-jumbo, table stress, frame 104.)"""
    pieces = [q for q in cards if piece_of_larger(white, q.quad, short)]
    out = list(cards)
    for k, a in enumerate(pieces):
        for b in pieces[k + 1:]:
            if not any(a is o for o in out) or not any(b is o for o in out):
                continue
            if overlap_share(a, b) <= ENDS_MIN_SHARED:
                continue
            out = [o for o in out if o is not a and o is not b]
            round_both = _rectangle_round(a, b)
            if round_both is not None:
                quad, rw, rh = round_both
                out.append(Candidate(quad, min(a.fill, b.fill), min(a.agree, b.agree), max(rw, rh) / min(rw, rh)))
    return out


# A candidate this much larger than the frame's card size (its short side) with felt reaching in
# over FELT_CORNER of it (a corner of its quadrilateral no white fills) is cards fitted with one
# quadrilateral, when too few candidates size it as too large (too_large): a KC lying over the end of
# an 8C, both 94 px, made one 123-px outline round the two, felt in one corner, read `partial` at
# neither card's place (own seed 888500, responsive, table stress, frame 180; felt 0.12 of it). On own
# seed 889215 (table stress) such outlines held 0.06-0.19 felt, cards 0-0.05 (their blurred corners).
FELT_CORNER_SIZE, FELT_CORNER = 1.15, 0.08


def felt_in_corner(frame: np.ndarray, felt: np.ndarray, cand: Candidate, short: float) -> bool:
    """Is ``cand`` larger than a card of the frame's card size ``short`` with felt reaching into it?"""
    if short_side(cand.quad) < FELT_CORNER_SIZE * short:
        return False
    share = felt_reaching_in(frame, cand.quad, felt)
    return share is not None and share > FELT_CORNER


def find_cards(frame: np.ndarray, early: Callable[[Candidate | None], Any] | None = None,
               ) -> tuple[list[Candidate], list[tuple[np.ndarray, str]]]:  # fmt: skip
    """Candidate card quadrilaterals in a BGR frame, and the rejected shapes with a reason.

    ``early``: called with each card of the first pass as soon as it is found, then with None when
    that pass is over (the later passes' cards come only in the answer): the recogniser's second
    process reads them while the later passes run. A card given early may still be dropped later
    (inside another card).
    """
    s, contours = _card_regions(frame)
    pending = _first_pass(s, contours, early)
    _look_inside(s, pending)
    s.found.extend(_dim_cards(s.white, s.thr, s.found, s.w, s.h, s.min_area, s.max_area, s.mask))
    s.short = card_size(s.found)
    if s.short:
        _split_too_large(s)
        _cards_from_corners(s)
    found = _join_pieces(_drop_two_in_one(s.found, s.rejected))
    found = _drop_parts(found, s.rejected)
    return _drop_inside_another(found, s.rejected), s.rejected


# --------------------------------------------------------------------------- find_cards' steps


@dataclass
class _Search:
    """One frame's card search (:func:`find_cards`): the frame, its whiteness ``white``, the card
    threshold ``thr`` and the mask it gives, the areas a card's region may have, and what the steps
    have found so far.

    ``found``: the cards so far. ``rejected``: the shapes that are no card, with why. ``merged``: the
    regions that were no card's shape (outline, index in ``rejected``, or -1 when cards were found
    inside). ``outline``: the first pass's cards' regions' outlines (by ``id`` of the card). ``felt``:
    the felt's colour, measured when first needed. ``short``: the frame's card size (:func:`card_size`).
    """

    frame: np.ndarray
    white: np.ndarray
    thr: float
    mask: np.ndarray
    w: int
    h: int
    min_area: float
    max_area: float
    found: list[Candidate] = field(default_factory=list)
    rejected: list[tuple[np.ndarray, str]] = field(default_factory=list)
    merged: list[tuple[np.ndarray, int]] = field(default_factory=list)
    outline: dict[int, np.ndarray] = field(default_factory=dict)
    felt: np.ndarray | None = None
    short: float | None = None

    def known_felt(self) -> np.ndarray:
        """The felt's colour, measured now if not yet."""
        if self.felt is None:
            self.felt = felt_colour(self.frame)
        return self.felt

    def is_piece(self, quad: np.ndarray) -> bool:
        """For the corner search: is ``quad`` a part of a larger card?"""
        return piece_of_larger(self.white, quad, self.short)


def _card_regions(frame: np.ndarray) -> tuple[_Search, list[np.ndarray]]:
    """The frame's card-white mask (whiteness over the frame's card threshold) and its regions'
    outer outlines."""
    h, w = frame.shape[:2]
    white = whiteness(frame)
    thr = card_threshold(cv2.resize(white, (w // 4, h // 4), interpolation=cv2.INTER_AREA))
    mask = cv2.threshold(white, thr, 1, cv2.THRESH_BINARY)[1]
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    min_area = MIN_CARD_SHORT * MIN_CARD_SHORT * 1.2 * MIN_FILL
    max_area = MAX_CARD_LONG * MAX_CARD_LONG / 1.2
    return _Search(frame, white, thr, mask, w, h, min_area, max_area), contours


def _first_pass(s: _Search, contours: list[np.ndarray], early: Callable[[Candidate | None], Any] | None,
                ) -> list[tuple[np.ndarray, float, np.ndarray, str]]:  # fmt: skip
    """The regions of a card's area and shape, as cards (each given to ``early`` as it is found,
    then None); the others of a card's area as (outline, area, shape, why not a card)."""
    pending = []
    for c in contours:
        area = cv2.contourArea(c)
        if area < s.min_area or area > s.max_area * 1.3:
            continue
        cand, shape, why = check_outline(c, area, s.w, s.h)
        if cand is not None:
            s.found.append(cand)
            s.outline[id(cand)] = c
            if early is not None:
                early(cand)
        else:
            pending.append((c, area, shape, why))
    if early is not None:
        early(None)
    return pending


def _look_inside(s: _Search, pending: list[tuple[np.ndarray, float, np.ndarray, str]]) -> None:
    """Cards inside the regions of the first pass that are no card but could hold one; the
    others are rejected. Each goes to ``s.merged``."""
    # A region too small to hold a card of the size of the frame's cards (a chip's white ring) is
    # not looked into: the recogniser drops a card under CARD_MIN_SIZE (0.6) of the others' size.
    med = median_size(s.found)
    floor = RETRY_MIN_SIZE * med if med is not None else 0.0
    for c, area, shape, why in pending:
        (_, _), (rw, rh), _ = cv2.minAreaRect(c)
        # Something card-sized or larger that is no card: cards merged with a hand, a cuff, glare
        # or each other? Look inside at a stricter threshold ("out of frame" is a card, cut).
        if why != "out of frame" and min(rw, rh) >= RETRY_MIN_SHORT and math.sqrt(rw * rh) >= floor:
            inner = _cards_inside(s, c, area, med)
            if inner:
                s.found.extend(inner)
                s.merged.append((c, -1))      # the region may hold more cards than these
                continue
        s.rejected.append((shape, why))
        s.merged.append((c, len(s.rejected) - 1))


def _cards_inside(s: _Search, c: np.ndarray, area: float, med: float | None) -> list[Candidate]:
    """The cards in a region that is no card: at a stricter threshold, else its convex hull; less a
    small one with a hand along a side (among cards of size ``med``)."""
    inner = _split(s.white, c, s.thr, s.w, s.h, s.min_area, s.max_area)
    if not inner:
        felt = s.known_felt()
        inner = [q for q in hull_card(s.frame, c, area, felt, s.w, s.h)
                 if not inside_pattern(s.frame, s.mask, q.quad, felt)]
    if inner and med is not None:
        felt = s.known_felt()
        inner = [q for q in inner if math.sqrt(_area(q)) >= HAND_PART_SIZE * med
                 or not hand_along_side(s.frame, s.mask, q.quad, felt)]
    return inner


def _split_too_large(s: _Search) -> None:
    """A first-pass card too large for one (or larger than the frame's card size with felt in a
    corner) gives way to the cards found from its corners, when there are any."""
    # A "card" the recogniser drops as too large (three or more candidates) is a region still
    # unexplained too: two or more cards touching or overlapping whose outline was fitted with one
    # quadrilateral (a TD and an AH touching, own seed 881300, cardsJS, table stress, frame 101:
    # neither card found). Its cards are looked for from its corners, and it goes when they are found.
    # Not a clean outline (CLEAN_AGREE): that is one card, whatever the frame's other candidates (a
    # 92-px 6S among the 48-px inner panels of backs, own seed 881301, responsive, frame 58, gave a
    # 59-px piece), or two cards long side to long side, which the recogniser reads as its halves.
    # So is one larger than the frame's card size with felt in a corner (felt_in_corner), however few
    # candidates there are.
    short = s.short
    med = median_size(s.found)
    if any(short_side(c.quad) >= FELT_CORNER_SIZE * short for c in s.found):
        s.known_felt()
    large = [(cand, s.outline[id(cand)]) for cand in s.found
             if id(cand) in s.outline and cand.agree < CLEAN_AGREE
             and (med is not None and too_large(cand, med) or felt_in_corner(s.frame, s.felt, cand, short))]
    for cand, c in large:
        # Cards of the frame's other cards' size (TWO_MIN_INNER of their median, as in _holds_two):
        # the frame's card size may be set too small by a misfit card (a 49-px AS of 77 px made
        # 55-px pieces of a 78-px AH; own seed 881802, font-peek, frame 84).
        others = [math.sqrt(_area(o)) for o in s.found if o is not cand]
        least = TWO_MIN_INNER * float(np.median(others)) if len(others) >= 2 else 0.0
        cards = corner_cards(c, s.mask, short, s.w, s.h, s.frame, s.felt, piece=s.is_piece)
        inner = [q for q in _not_two_ends(cards, s.white, short)
                 if math.sqrt(_area(q)) >= least and not _found_already(q, s.found, short, but=cand)]
        if inner:
            s.found = [o for o in s.found if o is not cand] + inner
            s.rejected.append((cand.quad, TOO_LARGE_SPLIT))


def _cards_from_corners(s: _Search) -> None:
    """Cards from the visible corners of the regions that were no card: a rejected region that
    gives any is no longer rejected."""
    # Regions still unexplained: cards touching, overlapping or cut by a hand, found from their
    # visible corners at the size of the frame's other cards.
    if not s.merged:
        return
    short = s.short
    gone = set()
    for c, k in s.merged:
        # Smaller than a card: half a card beside a sleeve, at most.
        area = cv2.contourArea(c)
        if area < COVER_MIN_WHITE * 0.8 * short * short * CARD_RATIO:
            continue
        cards = corner_cards(c, s.mask, short, s.w, s.h, s.frame, s.felt, area < 0.8 * short * short * CARD_RATIO,
                             piece=s.is_piece)
        inner = [q for q in _not_two_ends(cards, s.white, short) if not _found_already(q, s.found, short)]
        if inner:
            felt = s.known_felt()
            inner = [q for q in inner if not piece_beside_hand(
                s.frame, s.white, s.mask, q.quad, short, felt, [o.quad for o in s.found + inner if o is not q])]
        if inner:
            s.found.extend(inner)
            gone.add(k)
    s.rejected = [r for k, r in enumerate(s.rejected) if k not in gone]


def _found_already(q: Candidate, found: list[Candidate], short: float, but: Candidate | None = None) -> bool:
    """Whether a card of ``found`` (other than ``but``) lies at ``q``: centres within 0.4 of the
    frame's card size ``short``."""
    centre = q.quad.mean(axis=0)
    return any(o is not but and np.linalg.norm(o.quad.mean(axis=0) - centre) < 0.4 * short for o in found)


def _drop_two_in_one(found: list[Candidate], rejected: list[tuple[np.ndarray, str]]) -> list[Candidate]:
    """``found`` less the quadrilaterals that hold two of its cards (to ``rejected``)."""
    # A quadrilateral that holds two cards (each card-wide, their centres apart) is those two
    # cards' outline, not a card: two cards half one under the other made one 188x130-px "card"
    # (own seed 884010, table stress, frame 104) that hid both.
    two = [cand for cand in found if _holds_two(cand, found)]
    rejected += [(cand.quad, "two cards in one outline") for cand in two]
    return [cand for cand in found if not any(cand is t for t in two)]


def _drop_parts(found: list[Candidate], rejected: list[tuple[np.ndarray, str]]) -> list[Candidate]:
    """``found`` less the parts of larger cards left unjoined (to ``rejected``)."""
    # A part of a larger card (its whole no card of the corner search's sizes), not joined with
    # another piece of it, is no card: the left end of an 83-px 2D lying across, its whole refitted
    # 1.31x the frame's 67-px card size, was reported `unknown` (own seed 889804, font-peek, frame 78).
    rejected += [(cand.quad, "part of a larger card") for cand in found if cand.part]
    return [cand for cand in found if not cand.part]


def _drop_inside_another(found: list[Candidate], rejected: list[tuple[np.ndarray, str]]) -> list[Candidate]:
    """``found`` less each card whose centre lies inside a larger one (to ``rejected``)."""
    # Cards lie side by side, never one inside another: a quadrilateral within a larger one is a
    # part of that card's face (a picture's white), found when its outline was split.
    keep = []
    for cand in found:
        centre = cand.quad.mean(axis=0)
        area = _area(cand)
        if any(o is not cand and _area(o) > area
               and cv2.pointPolygonTest(o.quad.reshape(-1, 1, 2), (float(centre[0]), float(centre[1])), False) > 0
               for o in found):  # fmt: skip
            rejected.append((cand.quad, "inside another card"))
        else:
            keep.append(cand)
    return keep
