"""Detection and enrolment rules in isolation: drawn shapes and made-up readings, no generator.

(Issue 15: a clean card squeezed by keystone, regions too small to hold a card of the frame,
the exact percentile of the white balance, and enrolment's per-size thresholds.)
"""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")


def _felt() -> np.ndarray:
    img = np.zeros((720, 1280, 3), np.uint8)
    img[:] = (40, 110, 30)
    return img


def _card(img, centre, w, ratio, angle=0.0):
    box = cv2.boxPoints(((float(centre[0]), float(centre[1])), (float(w), float(w * ratio)), angle))
    cv2.fillConvexPoly(img, np.int32(np.round(box)), (235, 238, 240), lineType=cv2.LINE_AA)
    return box


def test_a_clean_card_squeezed_by_keystone_is_found_a_ragged_shape_is_not():
    from shoe_daemon.vision import detect

    img = _felt()
    _card(img, (300, 300), 150, 1.18, 20)             # a card seen squeezed: 1.18, clean outline
    found, _ = detect.find_cards(img)
    assert len(found) == 1 and 1.15 < found[0].ratio < 1.22
    # The same proportions with a bite out of one side (no clean card outline): not taken.
    img = _felt()
    _card(img, (300, 300), 150, 1.18, 20)
    cv2.circle(img, (300, 300 - 88), 40, (40, 110, 30), -1)
    found, rejected = detect.find_cards(img)
    assert not found
    # And a square is no card, however clean.
    img = _felt()
    _card(img, (300, 300), 150, 1.05, 20)
    assert not detect.find_cards(img)[0]


def test_a_region_too_small_for_the_frames_cards_is_not_looked_into(monkeypatch):
    from shoe_daemon.vision import detect

    img = _felt()
    for x in (200, 450, 700):
        _card(img, (x, 300), 150, 1.4)
    cv2.circle(img, (1000, 300), 30, (235, 238, 240), -1)     # a chip's white disc, 60 px
    cv2.circle(img, (1000, 300), 14, (30, 30, 200), -1)
    looked = []
    real = detect._split
    monkeypatch.setattr(detect, "_split", lambda white, c, *a: looked.append(cv2.boundingRect(c)) or real(white, c, *a))
    found, _ = detect.find_cards(img)
    assert len(found) == 3 and looked == []
    # Alone (no cards to size it by), the same disc is looked into as before.
    img = _felt()
    cv2.circle(img, (1000, 300), 30, (235, 238, 240), -1)
    cv2.circle(img, (1000, 300), 14, (30, 30, 200), -1)
    assert not detect.find_cards(img)[0] and len(looked) == 1


def test_percentile_by_counting_is_numpys():
    from shoe_daemon.vision.index import percentile_u8

    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 5040):
        v = rng.integers(0, 256, n).astype(np.uint8)
        for q in (0, 10, 50, 90, 100):
            assert percentile_u8(v, q) == pytest.approx(float(np.percentile(v, q)), abs=1e-9)


def test_whiteness_in_strips_is_the_whole_frames():
    """Whiteness is computed in strips (no frame-sized temporaries): every pixel as the formula
    says, whatever the frame's size (a last strip shorter than the others, a narrow frame)."""
    from shoe_daemon.vision import detect

    rng = np.random.default_rng(5)
    for h, w in ((720, 1280), (301, 97), (5, 3000)):
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        mn, mx = img.min(axis=2).astype(int), img.max(axis=2).astype(int)
        want = np.clip(mn - (mx - mn), 0, 255).astype(np.uint8)
        assert np.array_equal(detect.whiteness(img), want)


def test_enrolment_thresholds_per_card_size():
    from shoe_daemon.vision.enroll import choose_thresholds

    right = [(0.97, 0.8, False)] * 50 + [(0.9995, 0.8, True)] * 20 + [(0.999, 0.8, True)] * 20
    # Sure wrong readings only of small cards; as like their cards as the right ones (likeness 0.8),
    # so only the probability tells them apart.
    wrong = [(0.9990, 0.8, True), (0.93, 0.8, False)]
    other = [0.3, 0.35]
    min_p, min_match, stats = choose_thresholds(right, wrong, other)
    # Large cards: the step above their own worst wrong reading (0.93 -> 0.95 is clear, then 0.98).
    assert min_p == 0.98
    assert stats["min_p_small"] == 0.9999                   # above 0.999, then a step stricter
    assert min_match > max(other)
    assert stats["max_wrong_p_large"] == 0.93 and stats["max_wrong_p"] == 0.999
    # A large card read wrong at 0.97 raises the large cards' threshold, not to the small one's.
    min_p, _, _ = choose_thresholds(right, wrong + [(0.97, 0.8, False)], other)
    assert min_p == 0.99


def test_a_card_recovered_from_its_corners_keeps_a_card_size_of_the_frame():
    """Two 60-px cards overlapping make one white region; each is recovered from its corners at
    the frame's card size. A refit that shrinks a hypothesis below the sizes looked for (0.8x)
    ran along something else, and gives no card (it gave a 52-px "card" on half of a 68-px one)."""
    from shoe_daemon.vision import detect, partial, quad

    img = _felt()
    for cx, cy in ((300, 300), (345, 330)):
        _card(img, (cx, cy), 60, 1.4)
    mask = (detect.whiteness(img) > 120).astype(np.uint8)
    region = max(cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)[0], key=cv2.contourArea)
    both = partial.corner_cards(region, mask, 72.0, 1280, 720)
    assert sorted(round(float(c.quad[:, 0].mean()) / 10) for c in both) == [30, 34]
    for short in (72.0, 76.0, 80.0):
        for c in partial.corner_cards(region, mask, short, 1280, 720):
            assert 0.8 <= quad.short_side(c.quad) / short <= 1.25


def _band(img, p0, p1, width, colour):
    """A sleeve: a band from p0 to p1 (and beyond the frame), ``width`` px wide."""
    p0, p1 = np.float64(p0), np.float64(p1)
    d = (p1 - p0) / np.linalg.norm(p1 - p0)
    n = np.array([-d[1], d[0]]) * width / 2
    cv2.fillConvexPoly(img, np.int32(np.round([p0 + n, p1 + n, p1 - n, p0 - n])), colour, lineType=cv2.LINE_AA)


@pytest.mark.parametrize("sleeve", [((560, 380), (1400, 380), 110), ((680, 240), (1400, 100), 160)])
def test_a_card_under_a_sleeve_is_found_at_its_place(sleeve):
    """The dealer's sleeve across a third of a card (its lower end, or a corner and half a side):
    the white left is no card's shape, and the rest of a card-sized quadrilateral there is the
    sleeve, not felt. The card comes back at its place, at the frame's card size; the same white
    with felt round it (nothing over it) is no card."""
    from shoe_daemon.vision import detect

    def table(colour):
        img = _felt()
        for x in (150, 330, 510):
            _card(img, (x, 300), 120, 1.4)
        box = _card(img, (700, 300), 120, 1.4)
        p0, p1, width = sleeve
        _band(img, p0, p1, width, colour)
        return img, box

    img, box = table((30, 28, 25))
    hidden = 1.0 - float((detect.whiteness(img)[216:385, 640:761] > 120).mean())
    assert 0.25 < hidden < 0.45                      # a third of the card or more is under the sleeve
    found, _ = detect.find_cards(img)
    near = [c for c in found if np.linalg.norm(c.quad.mean(axis=0) - box.mean(axis=0)) < 0.3 * 120]
    assert len(near) == 1, [c.quad.mean(axis=0) for c in found]
    assert max(np.linalg.norm(near[0].quad - p, axis=1).min() for p in box) < 8, (near[0].quad, box)
    # The same white with felt where the sleeve was: nothing hides a card there. (The lower end's
    # 120 x 109 white rectangle is a clean outline of 1.12, which detection takes for a card seen
    # squeezed by keystone: the corner's pentagon is the test.)
    if sleeve[2] != 160:
        return
    img, box = table((40, 110, 30))
    found, _ = detect.find_cards(img)
    assert not [c for c in found if np.linalg.norm(c.quad.mean(axis=0) - box.mean(axis=0)) < 0.5 * 120]


def test_a_bitten_court_is_found_though_its_picture_holds_felt_green():
    """A hand's fingers across a court's corner cut its white border into the picture: the white
    left is a broken ring, its convex hull the card. Patches of the picture as green as the felt
    (a peek deck's courts, 3.5-5 % of the hull) lie walled in by the picture: the card is found.
    Felt reaching in from the hull's edge (a notch of felt, nothing over it) is still no card."""
    from shoe_daemon.vision import detect

    def table(bite):
        img = _felt()
        for x in (150, 330, 510):
            _card(img, (x, 300), 150, 1.4)
        box = _card(img, (800, 300), 150, 1.4)          # x 725-875, y 195-405
        cv2.rectangle(img, (741, 211), (859, 389), (90, 190, 225), -1)      # the picture
        for cx, cy in ((770, 250), (830, 300), (775, 350), (830, 365), (790, 300)):
            cv2.ellipse(img, (cx, cy), (16, 11), 0, 0, 360, (40, 110, 30), -1)
        cv2.line(img, (835, 235), (940, 130), bite, 44, cv2.LINE_AA)       # over the top-right corner
        return img, box

    img, box = table((120, 150, 205))                   # fingers
    found, _ = detect.find_cards(img)
    near = [c for c in found if np.linalg.norm(c.quad.mean(axis=0) - box.mean(axis=0)) < 0.3 * 150]
    assert len(near) == 1, [c.quad.mean(axis=0) for c in found]
    assert max(np.linalg.norm(near[0].quad - p, axis=1).min() for p in box) < 8, (near[0].quad, box)
    img, box = table((40, 110, 30))                     # felt where the fingers were
    found, _ = detect.find_cards(img)
    assert not [c for c in found if np.linalg.norm(c.quad.mean(axis=0) - box.mean(axis=0)) < 0.3 * 150]


# Faster ways to the same numbers (issue 15, latency): each against the plain formula it replaced.


def test_off_felt_by_opencv_is_the_squared_distance():
    """A pixel is off the felt when its squared BGR distance passes FELT_DISTANCE ** 2, whatever the
    distance (up to 3 * 255 ** 2, past the 16-bit sum's ceiling), for an image or a column of pixels."""
    from shoe_daemon.vision.partial import FELT_DISTANCE, _off_felt

    rng = np.random.default_rng(7)
    for shape in ((301, 97, 3), (500, 1, 3)):
        px = rng.integers(0, 256, shape, dtype=np.uint8)
        px[:3] = (0, 0, 0)
        px[3:6] = (255, 255, 255)
        for felt in (np.float32([40.4, 110.6, 30.0]), np.float32([0, 0, 0]), np.float32([255, 128, 3])):
            d = px.astype(int) - np.round(felt).astype(int)
            want = (d * d).sum(axis=2) > FELT_DISTANCE ** 2
            got = _off_felt(px, felt)
            assert got.shape == want.shape and got.dtype == bool and np.array_equal(got, want)


def test_sleeve_cover_is_worked_out_where_looked_at_as_over_the_whole_region():
    """The cover (neither white nor felt, within reach of a region) read through any window, inside,
    across the reach's edge, or past the frame's, is the whole computation's window."""
    from shoe_daemon.vision.partial import _Cover, _off_felt

    rng = np.random.default_rng(3)
    frame = rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)
    bright = (rng.random((300, 400)) > 0.7).astype(np.uint8)
    felt = np.float32([40, 110, 30])
    c = np.int32([[150, 100], [250, 100], [250, 180], [150, 180]]).reshape(-1, 1, 2)
    want = np.zeros((300, 400), np.uint8)
    y0, y1, x0, x1 = 100 - 60, 181 + 60, 150 - 60, 251 + 60     # the region's box and a reach of 60
    want[y0:y1, x0:x1] = _off_felt(frame[y0:y1, x0:x1], felt) & (bright[y0:y1, x0:x1] == 0)
    windows = ((slice(120, 160), slice(170, 230)), (slice(20, 60), slice(70, 120)), (slice(100, 200), slice(100, 260)),
               (slice(280, 330), slice(350, 450)), (slice(0, 10), slice(0, 10)), (slice(200, 190), slice(5, 9)),
               (slice(0, 300), slice(0, 400)))  # fmt: skip
    cover = _Cover(frame, bright, felt, c, 59.5)    # one for all the windows: tiles worked out once
    for ys, xs in windows:
        for got in (cover[ys, xs], _Cover(frame, bright, felt, c, 59.5)[ys, xs]):
            assert got.dtype == np.uint8 and np.array_equal(got, want[ys, xs]), (ys, xs)
    assert want.any() and not want[:y0].any()


def test_felt_colour_is_the_median():
    from shoe_daemon.vision.partial import felt_colour

    rng = np.random.default_rng(4)
    for h, w in ((720, 1280), (17, 9), (8, 8)):
        frame = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        want = np.median(frame[::8, ::8].reshape(-1, 3), axis=0).astype(np.float32)
        got = felt_colour(frame)
        assert got.dtype == np.float32 and np.array_equal(got, want)


def test_boundary_agreement_is_the_formula():
    """The share of contour points near a quadrilateral's sides, x and y apart: the same floats as
    the vector formula (each point's distance to each side), so the same share."""
    from shoe_daemon.vision.quad import NEXT, _boundary_agreement

    def formula(quad, pts, tol):
        if len(pts) > 240:
            pts = pts[:: len(pts) // 200]
        a = np.asarray(quad, np.float64)
        seg = a[NEXT] - a
        rel = pts[None, :, :] - a[:, None, :]
        t = np.clip((rel * seg[:, None, :]).sum(axis=2) / ((seg * seg).sum(axis=1)[:, None] + 1e-9), 0.0, 1.0)
        off = rel - t[:, :, None] * seg[:, None, :]
        return float(np.mean((off * off).sum(axis=2).min(axis=0) <= tol * tol))

    rng = np.random.default_rng(6)
    seen = set()
    for _ in range(500):
        quad = np.float32(rng.random((4, 2)) * 300)
        pts = np.round(rng.random((int(rng.integers(8, 700)), 2)) * 300)
        tol = float(rng.uniform(2.0, 40.0))
        got = _boundary_agreement(quad, pts, tol)
        assert got == formula(quad, pts, tol)
        seen.add(0.0 < got < 1.0)
    assert seen == {True, False}


def test_deck_features_are_each_maps_own_resize():
    """An enrolled deck's features resize maps of one size together (as one image's channels):
    the same floats as each map resized alone."""
    from shoe_daemon.vision import deck

    def formula(card, ink, white):
        inv = (1.0 / np.maximum(white, 1.0)).astype(np.float32)
        b, g, r = (plane.astype(np.float32) * inv[k] for k, plane in enumerate(cv2.split(card)))
        colours = [np.clip(cv2.subtract(x, cv2.max(y, z)), 0, 1) for x, y, z in ((r, g, b), (b, g, r), (g, r, b))]
        h, w = ink.shape
        cw, ch = int(deck.CORNER_BOX[0] * w), int(deck.CORNER_BOX[1] * h)
        area = cv2.INTER_AREA
        grid = cv2.resize(ink, deck.GRID, interpolation=area)
        tl = cv2.resize(np.ascontiguousarray(ink[:ch, :cw]), deck.CORNER, interpolation=area)
        br = cv2.resize(np.ascontiguousarray(ink[h - ch:, w - cw:][::-1, ::-1]), deck.CORNER, interpolation=area)
        cols = [cv2.resize(c, deck.COLOUR, interpolation=area) for c in colours]
        return np.stack([np.concatenate([grid.ravel(), tl.ravel(), br.ravel()] + [c.ravel() for c in cols]),
                         np.concatenate([grid[::-1, ::-1].ravel(), br.ravel(), tl.ravel()]
                                        + [c[::-1, ::-1].ravel() for c in cols])]).astype(np.float32)  # fmt: skip

    rng = np.random.default_rng(8)
    for _ in range(20):
        card = rng.integers(0, 256, (224, 160, 3), dtype=np.uint8)
        ink = rng.random((224, 160), dtype=np.float32)
        white = np.float32(rng.uniform(150, 255, 3))
        assert np.array_equal(deck.features(card, ink, white), formula(card, ink, white))


def test_quad_fill_counts_the_set_pixels_inside():
    """The share of a quadrilateral (less its rim) set in a 0/1 mask, or in it or a second one,
    counted by OpenCV: the sum the plain formula takes."""
    from shoe_daemon.vision.partial import _quad_fill

    def formula(mask, quad, also=None):
        x, y, bw, bh = cv2.boundingRect(np.float32(quad))
        x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + bw, mask.shape[1]), min(y + bh, mask.shape[0])
        if x1 - x0 < 4 or y1 - y0 < 4:
            return 0.0
        inside = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(inside, np.int32(np.round(quad - [x0, y0])), 1)
        inside = cv2.erode(inside, np.ones((5, 5), np.uint8))
        part = mask[y0:y1, x0:x1] if also is None else mask[y0:y1, x0:x1] | also[y0:y1, x0:x1]
        return float(part[inside > 0].sum()) / int(inside.sum()) if inside.any() else 0.0

    rng = np.random.default_rng(9)
    for _ in range(300):
        mask = (rng.random((200, 300)) > rng.random()).astype(np.uint8)
        also = (rng.random((200, 300)) > 0.8).astype(np.uint8)
        quad = rng.random((4, 2)) * [340, 240] - 20
        quad = quad[np.argsort(np.arctan2(quad[:, 1] - quad[:, 1].mean(), quad[:, 0] - quad[:, 0].mean()))]
        for a in (None, also):
            assert _quad_fill(mask, quad, a) == formula(mask, quad, a)


def test_share_by_counting_is_the_masks_mean():
    from shoe_daemon.vision.index import share

    rng = np.random.default_rng(10)
    for n in (1, 3, 35840, 7001):
        mask = rng.random(n) > rng.random()
        for m in (mask, mask.astype(np.uint8).reshape(-1, 1)):
            assert share(m) == float(m.mean()) and type(share(m)) is float


def test_reflect_pad_is_numpys():
    from shoe_daemon.vision.index import reflect_pad

    x = np.random.default_rng(11).random((5, 24, 16), dtype=np.float32)
    for a in (x, x[:1, :3, :2]):
        assert np.array_equal(reflect_pad(a), np.pad(a, ((0, 0), (1, 1), (1, 1)), mode="reflect"))


def test_ink_from_the_edge_is_numpys_isin():
    """The centre's pixels of blobs reaching the card's edge, by a look-up per label: what
    np.isin of the edge's labels gives (blobs from every side, none, and ink all over)."""
    from shoe_daemon.vision.index import CH, CW
    from shoe_daemon.vision.pips import X0, X1, Y0, Y1, _from_edge

    rng = np.random.default_rng(12)
    seen = set()
    for k in range(60):
        ink = cv2.GaussianBlur((rng.random((CH, CW)) ** rng.uniform(1, 8)).astype(np.float32), (0, 0), rng.uniform(0.5, 3))
        if k % 4 == 0:
            ink[:12], ink[-12:], ink[:, :12], ink[:, -12:] = 0, 0, 0, 0
        got = _from_edge(ink)
        _, labels = cv2.connectedComponents((ink > 0.4).astype(np.uint8), connectivity=8)
        edge = set(np.concatenate([labels[0], labels[-1], labels[:, 0], labels[:, -1]]).tolist()) - {0}
        seen.add(got is None)
        if not edge:
            assert got is None
            continue
        want = np.isin(labels[Y0:Y1, X0:X1], sorted(edge))
        assert got.dtype == bool and np.array_equal(got, want)
    assert seen == {True, False}
