"""The centre of a rectified card: how many pips, or a picture (J Q K).

Standard designs lay out 1 to 10 pips of one size in the centre, or a framed picture on the face
cards. The count is an evidence of the rank independent of the index (and the pips, upright in
the top half and turned in the bottom half, are more samples of the suit), so a misread index
glyph that the pips contradict is never reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from shoe_daemon.vision.index import CH, CW, Blob, scaled, share

X0, X1 = int(0.1 * CW), int(0.9 * CW)
Y0, Y1 = int(0.035 * CH), int(0.965 * CH)
# Pips in the middle column and in the two side columns, by count (French-suited layouts).
# Share of the pip area that ink from beyond the card's edge (a hand, a sleeve) may cover: the
# pips left must still make a standard, symmetric layout that the index agrees with. 0.12 before;
# 0.3 read 5 more of 1,600 cards under a hand exactly and none wrong (own seeds 880100 'hand',
# 880700 'stress'; not the benchmark's).
MAX_INTRUSION = 0.3
# Share of a "picture"'s ink that may come from beyond the card's edge (set on seeds 880100-880300).
PICTURE_FROM_EDGE = 0.25
# A picture in pieces (blurred, or a jumbo-index deck's small one) fills the middle third of the
# centre with ink at least this much; pips leave it mostly paper (0.15-0.36 on the kennard and
# kennard-jumbo pip cards, seed 777 frames; pictures 0.49-0.77).
PICTURE_MIDDLE_INK = 0.45
# Coloured pips are one ink: a four-colour deck's blue diamonds or green clubs are 1.0 in their
# hue family; the Kennard courts' gold and blue 0.5-0.8 (seed 779 frames, not the benchmark's).
ONE_INK = 0.9
# The core of the ink (ink map above this; blurred edges mix with paper and felt) and the
# saturation above which it counts as coloured, for the "picture" in one ink (picture_in_one_ink).
INK_CORE = 0.6
CORE_COLOURED = 0.1
# A court picture's suit symbol stands alone: at most this share of the box around it (3 px
# wider) is other ink.
SYMBOL_RING_INK = 0.1
# No pip of a 2-10 is taller than this share of the card (the largest measured: cardsJS's 0.19;
# Kennard 0.17, Responsive 0.19, font decks 0.07-0.11, on the clean faces): the two halves of a
# small court picture are (a jumbo-index QD's 0.29 and 0.33, counted "2 pips" against its index;
# own seed 880001's frame 59, not the benchmark's). An ace's single pip may be larger.
MAX_PIP_H = 0.26
LAYOUTS = {2: (2, 0), 3: (3, 0), 4: (0, 4), 5: (1, 4), 6: (0, 6), 7: (1, 6), 8: (2, 6), 9: (1, 8), 10: (2, 8)}


@dataclass
class PipReading:
    kind: str                        # "pips", "picture" or "unclear"
    count: int = 0
    pips: list[Blob] = field(default_factory=list)   # in card coordinates
    centre_ink: float = 0.0
    reason: str = ""
    index_boxes: tuple = ()          # the index glyphs left out of the count (read_pips)
    edge_ink: float = 0.0            # share of a picture's ink that comes from beyond the card's edge


def colourful(card: np.ndarray, white: np.ndarray) -> float:
    """Share of the centre in ink that is neither black/grey nor red (gold, blue, green...)."""
    # The middle of the card only: a misfitted edge lets felt (coloured) into the outer parts.
    part = card[int(0.2 * CH):int(0.8 * CH):2, int(0.25 * CW):int(0.75 * CW):2]
    return share(_coloured(part, white))


def _planes(part: np.ndarray, white: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The B, G and R of ``part`` (pixels of a card, ``white`` its white) against the white, as
    float32 planes: the same floats as the image's at once, and numpy works on whole planes
    several times sooner than on every third float."""
    inv = 1.0 / white
    return tuple(scaled(part[..., k], inv[k]) for k in range(3))


def _coloured(part: np.ndarray, white: np.ndarray) -> np.ndarray:
    """Which pixels of ``part`` (BGR, ``white`` the card's white) are neither black/grey nor red."""
    b, g, r = _planes(part, white)
    mx = np.maximum(np.maximum(b, g), r)
    sat = mx - np.minimum(np.minimum(b, g), r)
    # Red ink, however the light shifts it towards pink or orange: hue within 30 degrees of red.
    hue = 60.0 * (g - b) / np.maximum(sat, 1e-6)
    red = (r >= mx - 1e-6) & (np.abs(hue) < 30.0)
    return (sat > 0.25) & ~red


def one_ink(part: np.ndarray, white: np.ndarray) -> float:
    """Share of the coloured (saturated, not red) ink of ``part`` in its main hue family (gold,
    green or blue): ~1 for a four-colour deck's pips, less for a picture in several inks."""
    fam = _hue_families(*(p.ravel() for p in _planes(part, white)), min_sat=0.25)
    if fam.sum() < 20:
        return 1.0
    # Purple (270-330) is no pip's ink but a picture's red and blue blurred together: it counts
    # against one ink (a jumbo-index KC's small court, all purple, was "1 pip in a colour ink"
    # and read as an ace; own seed 885000 table-stress frame 95, not the benchmark's).
    return float(fam[:3].max() / fam.sum())


def _hue_families(b: np.ndarray, g: np.ndarray, r: np.ndarray, min_sat: float) -> np.ndarray:
    """How many of the pixels (``b``, ``g``, ``r``: against the white) more saturated than
    ``min_sat`` lie in each hue family: gold (30-90 degrees), green, blue, purple (270-330); red,
    within 30 degrees of 0, is left out."""
    mx = np.maximum(np.maximum(b, g), r)
    sat = mx - np.minimum(np.minimum(b, g), r)
    d = np.maximum(sat, 1e-6)
    hue = np.where(mx == r, (60 * (g - b) / d) % 360, np.where(mx == g, 60 * (b - r) / d + 120, 60 * (r - g) / d + 240))
    hue = hue[(sat > min_sat) & (hue >= 30) & (hue < 330)]
    return np.bincount(np.digitize(hue, [90, 180, 270]), minlength=4)


def picture_in_one_ink(region: np.ndarray, part: np.ndarray, white: np.ndarray) -> float:
    """Share of the centre's ink core (``region``: the ink map of ``part``, the centre's pixels) in
    one hue family (gold, green, blue or purple), black, grey and red counted against it.

    A court picture is printed in several inks, its black outlines and red among them: 0.60 at
    most on the four-colour Kennard courts, 0.87 on the font decks' pale gold ones (own seeds
    884060-884070, table stress and stress). A four-colour deck's clubs or diamonds run together
    by blur are one ink all through, 0.81-1.00: a blurred 9C's green columns of clubs, taken for a
    picture, let a stray index glyph read a court (value 0; own seed 884000 table stress frame 63).
    :func:`one_ink` leaves red and black out (it tells pips from a picture's coloured pieces), so
    it cannot see that a picture has them.
    """
    core = region > INK_CORE
    n = int(np.count_nonzero(core))
    if n < 20:
        return 0.0
    fam = _hue_families(*(p[core] for p in _planes(part, white)), min_sat=CORE_COLOURED)   # grey left out
    return float(fam.max() / n)


def _colour_share(part: np.ndarray, white: np.ndarray, mask: np.ndarray) -> float:
    """Share of the ``mask`` pixels of ``part`` in ink that is neither black/grey nor red."""
    px = part[mask]
    if not len(px):
        return 0.0
    return float(_coloured(px, white).mean())


def back_texture(ink: np.ndarray) -> str | None:
    """Why the card looks like a back (a fine pattern, or solid ink all over), or None.

    Faces are paper with sparse ink: even a court card's picture leaves some ninth of the inner
    area with an edge density under ~0.35 and the ink under ~0.7; a back's lattice or solid colour
    does not.
    """
    inner = ink[int(0.1 * CH): int(0.9 * CH), int(0.1 * CW): int(0.9 * CW)]
    dense = share(inner > 0.4)
    if dense > 0.85:
        return f"card back (ink all over: {dense:.2f})"
    gx = cv2.Sobel(inner, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(inner, cv2.CV_32F, 0, 1)
    edges = (cv2.magnitude(gx, gy) > 0.8).view(np.uint8)
    # A back's pattern is everywhere; a face has plain paper somewhere (around the index, the pips,
    # the picture's margin): the least busy ninth of the inner area tells them apart.
    h, w = edges.shape
    rows, cols = [i * h // 3 for i in range(4)], [j * w // 3 for j in range(4)]
    # The edge pixels of each ninth (a ninth's share: its count / its size), counted by OpenCV:
    # numpy's sums over the ninths took longer than the edges.
    counts = np.array([[cv2.countNonZero(edges[rows[i]:rows[i + 1], cols[j]:cols[j + 1]]) for j in range(3)]
                       for i in range(3)])
    least = float((counts / np.outer(np.diff(rows), np.diff(cols))).min())
    if least > 0.42:
        return f"card back (fine pattern everywhere: edge density >= {least:.2f})"
    return None


def read_pips(ink: np.ndarray, card: np.ndarray | None = None, white: np.ndarray | None = None,
              index_boxes: tuple[Blob, ...] = ()) -> PipReading:  # fmt: skip
    """The centre's pips or picture. ``index_boxes`` (card coordinates) are the index glyphs found
    in the corners: a jumbo index reaches past the side strips where pips never lie, and is no pip.
    """
    if index_boxes:
        ink = ink.copy()
        for b in index_boxes:
            ink[max(b.y - 2, 0): b.y1 + 2, max(b.x - 2, 0): b.x1 + 2] = 0
    region = ink[Y0:Y1, X0:X1]
    binary = (region > 0.4).view(np.uint8)      # (a mask's bytes are 0 and 1: no copy needed)
    first = _read(binary, card, white)
    if first.kind == "picture" and card is not None and white is not None:
        one = picture_in_one_ink(region, card[Y0:Y1, X0:X1], white)
        if one >= ONE_INK:
            first = PipReading("unclear", centre_ink=first.centre_ink,
                               reason=f"a picture all in one ink ({one:.2f}): pips run together?")
    first.index_boxes = index_boxes
    if first.kind == "pips" or first.reason == "no ink in the centre":
        return first
    # Ink that reaches the card's edge (a hand or a sleeve over a corner, felt along a misfitted
    # edge) is no pip: no standard layout prints one there. Set aside, the rest may count. A pip
    # it hides (or touches, and goes with it) breaks the layout or its symmetry, and the count
    # fails: it never passes for another standard count (and the index must agree with it).
    from_edge = _from_edge(ink)
    if from_edge is None:
        return first
    if first.kind == "picture":
        # A court's picture is printed inside the card's margin: ink from the edge in it is a hand
        # or a sleeve over the card, over the picture or over pips (a dark hand's palm over a 9C
        # read as a picture). Such a picture confirms a court, never overrules an index.
        first.edge_ink = float(from_edge.sum()) / max(float(binary.sum()), 1.0)
        if first.edge_ink >= PICTURE_FROM_EDGE:
            first.reason = "a picture with ink from the card's edge (a hand or a sleeve?)"
        return first
    if not from_edge.any() or share(from_edge) > MAX_INTRUSION:
        return first
    binary[from_edge] = 0
    second = _read(binary, card, white)
    second.index_boxes = index_boxes
    if second.kind == "pips":
        second.reason = "ink from the card's edge set aside"
        return second
    return first


def _from_edge(ink: np.ndarray) -> np.ndarray | None:
    """Which pixels of the centre region (Y0:Y1, X0:X1) are ink of a blob that reaches the card's
    edge; None when no blob does."""
    n, labels = cv2.connectedComponents((ink > 0.4).view(np.uint8), connectivity=8, ltype=cv2.CV_16U)
    edge = np.unique(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]))
    edge = edge[edge > 0]
    if not len(edge):
        return None
    # Each blob's "reaches the edge" looked up per pixel: np.isin's answer, several times sooner.
    reaches = np.zeros(n, bool)
    reaches[edge] = True
    return reaches[labels[Y0:Y1, X0:X1]]


def _read(binary: np.ndarray, card: np.ndarray | None, white: np.ndarray | None) -> PipReading:
    h, w = binary.shape
    # The middle third (across and along): pictures fill it, pips leave it mostly paper.
    mid = binary[h // 3: 2 * h // 3, w // 4: 3 * w // 4]
    centre_ink = share(mid)
    # 16-bit labels (a card's centre has far fewer than 65,536 blobs): ~40 % faster.
    n, labels, stats, _ = cv2.connectedComponentsWithStats(binary, connectivity=8, ltype=cv2.CV_16U)
    # Blobs centred near the long sides are the index's (or a misfit edge), not pips.
    cx = stats[:, 0] + X0 + stats[:, 2] / 2
    ok = (stats[:, 4] >= 20) & (0.15 * CW <= cx) & (cx <= 0.85 * CW)
    ok[0] = False   # the background
    keep = np.flatnonzero(ok).tolist()
    blobs = [Blob(x + X0, y + Y0, bw, bh, a) for x, y, bw, bh, a in stats[keep].tolist()]
    if not blobs:
        return PipReading("unclear", centre_ink=centre_ink, reason="no ink in the centre")
    k_big = int(np.argmax([b.area for b in blobs]))
    biggest = blobs[k_big]
    colour = colourful(card, white) if card is not None and white is not None else 0.0
    large = biggest.w > 0.35 * w and biggest.h > 0.25 * h
    inside = biggest.x > X0 + 1 and biggest.x1 < X1 - 1 and biggest.y > Y0 + 1 and biggest.y1 < Y1 - 1
    if colour <= 0.08 and large and inside and card is not None and white is not None:
        # A small picture (a jumbo-index deck's) leaves the middle mostly paper: its own ink,
        # not the middle's, says whether it is coloured (pips run together are red or black).
        # Not a blob from the card's edge: another card's back or a sleeve over a corner.
        colour = max(colour, _colour_share(card[Y0:Y1, X0:X1], white, labels == keep[k_big]))
    # Court pictures are printed in several inks (gold, blue...): a large blob in red or black
    # alone is pips run together by blur, not a picture. But pips in a standard layout are pips
    # whatever their ink: a four-colour deck prints diamonds blue and clubs green.
    if colour > 0.08:
        counted = _count(binary, blobs, biggest, centre_ink, w, h)
        # ... in *one* ink: a picture is printed in several (gold and blue), and its pieces may
        # pass for one or two pips.
        if counted.kind == "pips" and one_ink(card[Y0:Y1, X0:X1], white) >= ONE_INK:
            counted.reason = f"pips in a colour ink ({colour:.2f})"
            return counted
        # A picture is one large figure, or (blurred, a small one) pieces spanning as much that
        # fill the middle third with ink or a coloured ground; coloured pips that did not count
        # (a jumbo index reaching into the centre) are neither: they leave the middle mostly paper.
        big = [b for b in blobs if b.area >= 0.1 * biggest.area]
        span = big[0]
        for b in big[1:]:
            span = span.union(b)
        spans = span.w > 0.35 * w and span.h > 0.25 * h
        if large or (spans and _middle_filled(binary, card, white) >= PICTURE_MIDDLE_INK):
            return PipReading("picture", centre_ink=centre_ink, reason=f"colour {colour:.2f}")
        return PipReading("unclear", centre_ink=centre_ink, reason=f"colour {colour:.2f} but no picture, no pip layout")
    return _count(binary, blobs, biggest, centre_ink, w, h)


def _middle_filled(binary: np.ndarray, card: np.ndarray, white: np.ndarray) -> float:
    """Share of the centre's middle third (``_read``'s centre_ink) that is ink or a coloured ground.

    A picture printed on a pale coloured ground fills it though its figures, as ink, do not: the
    held-out font deck's QD, QS and JH (small figures on pale gold, 0.24-0.37 of it ink) were read
    "colour but no picture" and withheld (own seed 884500 nominal: 24 of 1,589 cards); its ground
    filled 0.88-1.00 of it on 884600. Pip cards leave it mostly paper (0.00-0.29 on four-colour
    jumbo pip cards under stress, 884600, whose coloured pips did not count).
    """
    h, w = binary.shape
    rows, cols = slice(h // 3, 2 * h // 3), slice(w // 4, 3 * w // 4)
    ground = _coloured(card[Y0:Y1, X0:X1][rows, cols], white)
    return share((binary[rows, cols] > 0) | ground)


def _count(binary, blobs, biggest, centre_ink, w, h) -> PipReading:
    """The pip count of the centre's blobs in a standard layout, or "unclear" and why."""
    if biggest.w > 0.45 * w and biggest.h > 0.3 * h:
        return PipReading("unclear", centre_ink=centre_ink, reason="a large blob in one ink (pips run together?)")
    big = [b for b in blobs if b.area >= 0.45 * biggest.area]
    # A pip is compact: a long thin blob is a frame line or an edge.
    if any(not 0.45 <= b.w / max(b.h, 1) <= 2.2 for b in big):
        return PipReading("unclear", len(big), big, centre_ink, reason="blobs that are no pips")
    if len(big) == 1:
        b = big[0]
        cx, cy = (b.x + b.x1) / 2, (b.y + b.y1) / 2
        if abs(cx - CW / 2) < 0.12 * CW and abs(cy - CH / 2) < 0.12 * CH:
            return PipReading("pips", 1, big, centre_ink)
        return PipReading("unclear", centre_ink=centre_ink, reason="one pip off centre")
    if max(b.h for b in big) > MAX_PIP_H * CH:
        return PipReading("unclear", len(big), big, centre_ink, reason="blobs too tall for pips (pieces of a picture?)")
    areas = np.array([b.area for b in big], np.float32)
    hs = np.array([b.h for b in big], np.float32)
    ws = np.array([b.w for b in big], np.float32)
    if len(big) > 10 or areas.std() / areas.mean() > 0.3 or hs.std() / hs.mean() > 0.2 or ws.std() / ws.mean() > 0.2:
        return PipReading("unclear", len(big), big, centre_ink, reason="pips of different sizes")
    # Smaller blobs of some size that are not pips: merged or broken pips make the count unsure.
    odd = [b for b in blobs if 0.12 * biggest.area <= b.area < 0.45 * biggest.area]
    if odd:
        return PipReading("unclear", len(big), big, centre_ink, reason="broken or merged pips")
    # The standard layouts: so many pips in the middle column, so many in each side column.
    cx = np.array([(b.x + b.x1) / 2 for b in big], np.float32)
    mid = int((np.abs(cx - CW / 2) < 0.09 * CW).sum())
    left = int((cx < CW / 2 - 0.09 * CW).sum())
    right = len(big) - mid - left
    if LAYOUTS.get(len(big)) != (mid, left + right) or left != right:
        return PipReading("unclear", len(big), big, centre_ink, reason="pips not in a standard layout")
    # Standard layouts are symmetric under a half turn: so are the pip centres.
    cs = np.array([[(b.x + b.x1) / 2, (b.y + b.y1) / 2] for b in big], np.float32)
    turned = np.array([CW, CH], np.float32) - cs
    d = np.sqrt(((turned[:, None, :] - cs[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    if len(big) not in (3, 5, 7, 9) and d.max() > 1.0 * hs.mean():
        return PipReading("unclear", len(big), big, centre_ink, reason="pips not symmetric")
    return PipReading("pips", len(big), big, centre_ink)


def picture_suit_blobs(ink: np.ndarray, index_boxes: tuple[Blob, ...] = ()) -> list[Blob]:
    """Suit symbols printed in a court picture's top-left corner and, turned, its bottom right.

    Most court designs (cardsJS, Kennard, Responsive, the procedural decks) print the suit beside
    the figure's head: a compact blob alone on paper (or on the picture's plain ground), away from
    the index column. Blobs of a pip's size and proportions, with no other ink around them, are
    returned (card coordinates), for the suit classifier; the index glyphs (``index_boxes``) are
    left out. What they are is the classifier's business (a piece of the figure is mostly refused).
    """
    binary = (ink > 0.4).view(np.uint8)
    for b in index_boxes:
        binary[max(b.y - 2, 0): b.y1 + 2, max(b.x - 2, 0): b.x1 + 2] = 0
    out = []
    for turned in (False, True):
        x0, x1, y0, y1 = int(0.12 * CW), int(0.55 * CW), int(0.035 * CH), int(0.45 * CH)
        if turned:
            x0, x1, y0, y1 = CW - x1, CW - x0, CH - y1, CH - y0
        part = binary[y0:y1, x0:x1]
        n, labels, stats, _ = cv2.connectedComponentsWithStats(part, connectivity=8, ltype=cv2.CV_16U)
        ph, pw = part.shape
        x, y, w, h, a = stats.T.astype(np.float32)
        cx = x0 + x + w / 2
        cx = CW - cx if turned else cx
        # Shape first, all at once (a picture leaves hundreds of specks).
        keep = ((0.16 * CW <= cx) & (cx <= 0.5 * CW) & (0.03 * CH <= h) & (h <= 0.2 * CH) & (0.55 * h <= w)
                & (w <= 1.5 * h) & (a >= 0.35 * w * h) & (x > 0) & (y > 0) & (x + w < pw) & (y + h < ph))
        keep[0] = False
        for k in np.flatnonzero(keep):
            bx, by, bw, bh, ba = (int(v) for v in stats[k])
            # Alone: the ring around it holds (next to) no other ink.
            ry0, ry1, rx0, rx1 = max(by - 3, 0), min(by + bh + 3, ph), max(bx - 3, 0), min(bx + bw + 3, pw)
            ring = (labels[ry0:ry1, rx0:rx1] != k) & (part[ry0:ry1, rx0:rx1] > 0)
            if share(ring) > SYMBOL_RING_INK:
                continue
            out.append(Blob(x0 + bx, y0 + by, bw, bh, ba))
    if not out:
        return out
    # A court prints its symbol once a half: blobs alike all over the centre are a pip card's pips
    # (a hand over a 9C's centre once passed it for a picture, and its pips for a court's clubs).
    # (16-bit labels, as in _read: the same blobs, sooner; a picture leaves hundreds of specks.)
    _n, _l, stats, _c = cv2.connectedComponentsWithStats(binary[Y0:Y1, X0:X1], connectivity=8, ltype=cv2.CV_16U)
    _x, _y, w, h, a = stats[1:].T.astype(np.float32)

    def alike(b: Blob) -> int:
        return int(((0.6 * b.area <= a) & (a <= 1.6 * b.area) & (0.75 * b.w <= w) & (w <= 1.33 * b.w)
                    & (0.75 * b.h <= h) & (h <= 1.33 * b.h)).sum())  # fmt: skip

    return [b for b in out if alike(b) <= 2]


def pip_raster(ink: np.ndarray, b: Blob, size: tuple[int, int]) -> tuple[np.ndarray, bool]:
    """The ink raster of one pip, turned upright if it sits in the card's bottom half."""
    crop = ink[max(b.y - 1, 0): b.y1 + 1, max(b.x - 1, 0): b.x1 + 1]
    turned = (b.y + b.y1) / 2 > 0.56 * CH
    if turned:
        crop = crop[::-1, ::-1]
    out = cv2.resize(np.ascontiguousarray(crop), size, interpolation=cv2.INTER_AREA)
    hi = float(out.max())
    return (out / hi if hi > 1e-3 else out), turned
