"""Quicker ways to the same numbers: each gives exactly what the way it replaced gave.

The recogniser's answers (every probability included) are compared with the code before each
speed-up by ``bench._camera_ab same``; these pin the pieces on their own, bit for bit.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from shoe_daemon.vision import index, pips


def _bits(x: float) -> str:
    return float(x).hex()


@pytest.mark.parametrize("q", [50, 90, 0, 100, 37.5])
def test_np_percentile_u8_is_numpys_percentile_to_the_bit(q):
    # percentile_u8 interpolates from the lower value only: on 2 of ~1,500 arrays its 90th
    # percentile was a bit off numpy's, which detection's thresholds are set by.
    rng = np.random.default_rng(880123)
    for n in [*range(1, 400), 3600, 40001]:
        v = rng.integers(0, 256, n, dtype=np.uint8) if n % 2 else rng.integers(120, 140, n, dtype=np.uint8)
        assert _bits(index.np_percentile_u8(v, q)) == _bits(np.percentile(v, q)), (n, q)
    strided = rng.integers(0, 256, (180, 320), dtype=np.uint8)[::4, ::4]
    assert _bits(index.np_percentile_u8(strided, q)) == _bits(np.percentile(strided, q))


def _cards(n: int = 12) -> list[np.ndarray]:
    rng = np.random.default_rng(880124)
    out = []
    for k in range(n):
        card = np.full((index.CH, index.CW, 3), 235 - 5 * k, np.uint8)
        card = cv2.GaussianBlur(rng.integers(0, 256, card.shape, dtype=np.uint8), (0, 0), 1 + k % 3) // 2 + card // 2
        cv2.putText(card, "Q", (10, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (20, 20, 200 if k % 2 else 20), 3)
        out.append(card)
    return out


def test_white_balance_and_ink_map_as_before():
    for card in _cards():
        inner = card[index.CH // 8: index.CH - index.CH // 8: 2, index.CW // 8: index.CW - index.CW // 8: 2].reshape(-1, 3)
        white = np.maximum(np.float32([index.percentile_u8(inner[:, c], 90) for c in range(3)]), 20.0)
        assert index.white_balance(card).tobytes() == white.tobytes()
        luts = [np.clip(np.arange(256, dtype=np.float32) * (255.0 / float(w)), 0, 255).astype(np.uint8) for w in white]
        b, g, r = (cv2.LUT(p, t) for p, t in zip(cv2.split(card), luts, strict=True))
        ink = cv2.LUT(cv2.min(cv2.min(b, g), r), index._INK)
        assert index.ink_map(card, white).tobytes() == ink.tobytes()


def test_colour_tests_on_planes_as_on_the_pixels():
    for card in _cards():
        white = index.white_balance(card)
        px = card.astype(np.float32) * (1.0 / white)
        for got, want in zip(pips._planes(card, white), (px[..., 0], px[..., 1], px[..., 2]), strict=True):
            assert got.tobytes() == np.ascontiguousarray(want).tobytes()
        wi, wr = index._ink_red(card, white, np.ones(card.shape[:2], np.float32))
        b, g, r = px[..., 0], px[..., 1], px[..., 2]
        assert wr.tobytes() == (r - np.maximum(g, b)).tobytes()
        assert wi.tobytes() == (1.0 - np.minimum(np.minimum(b, g), r)).tobytes()


def test_back_texture_counts_the_ninths_as_before():
    rng = np.random.default_rng(880125)
    yy, xx = np.indices((index.CH, index.CW))
    for k in range(12):
        if k % 2:   # a back's fine lattice (some with a plain patch: a face's paper)
            ink = (((yy + xx) // (1 + k % 3)) % 2 * 0.7).astype(np.float32)
            ink[60: 60 + 10 * k, 40: 120] = 0.0
        else:
            ink = cv2.GaussianBlur(rng.random((index.CH, index.CW), np.float32), (0, 0), 0.5 + k / 4) * (0.6 + k / 10)
        inner = ink[int(0.1 * index.CH): int(0.9 * index.CH), int(0.1 * index.CW): int(0.9 * index.CW)]
        edges = cv2.magnitude(cv2.Sobel(inner, cv2.CV_32F, 1, 0), cv2.Sobel(inner, cv2.CV_32F, 0, 1)) > 0.8
        h, w = edges.shape
        rows, cols = [i * h // 3 for i in range(4)], [j * w // 3 for j in range(4)]
        counts = np.add.reduceat(np.add.reduceat(edges, rows[:3], axis=0, dtype=np.int64), cols[:3], axis=1)
        least = float((counts / np.outer(np.diff(rows), np.diff(cols))).min())
        dense = index.share(inner > 0.4)
        want = (f"card back (ink all over: {dense:.2f})" if dense > 0.85 else
                f"card back (fine pattern everywhere: edge density >= {least:.2f})" if least > 0.42 else None)
        assert pips.back_texture(ink) == want


def test_binarise_takes_out_long_lines_as_two_openings_did():
    """A corner's long straight lines are taken out by two openings; one that erodes to nothing
    is not dilated, and with neither a line the mask is as thresholded: the same mask."""

    def formula(ink, faint=False, scale=1.0):
        hi = float(ink.max())
        if hi < 0.3:
            return np.zeros(ink.shape, np.uint8), False
        thr = max(0.25, min(0.5, 0.5 * hi))
        if faint:
            thr = max(0.22, 0.5 * thr)
        binary = (ink > thr).view(np.uint8)
        vlen, hlen = int(index.ROI_H * 0.42 * scale), int(index.ROI_W * 0.6 * scale)
        vert = cv2.morphologyEx(binary, cv2.MORPH_OPEN, index._line(1, vlen))
        horiz = cv2.morphologyEx(binary, cv2.MORPH_OPEN, index._line(hlen, 1))
        return binary & (1 - cv2.dilate(vert | horiz, np.ones((3, 3), np.uint8))), bool((vert | horiz).any())

    rng = np.random.default_rng(880125)
    seen = set()
    for k in range(300):
        scale = (1.0, 2.0, 0.6)[k % 3]
        w, h = index.roi_size(scale)
        ink = cv2.GaussianBlur(rng.random((h, w), dtype=np.float32), (0, 0), 1.5) * np.float32(rng.uniform(0.2, 2.0))
        for _ in range(int(rng.integers(0, 3))):     # lines, some of them reaching the corner's edges
            x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
            if rng.random() < 0.5:
                ink[y:y + int(rng.integers(5, h)), x:x + 2] = 1.0
            else:
                ink[y:y + 2, x:x + int(rng.integers(5, w))] = 1.0
        want, lines = formula(ink, k % 2 == 1, scale)
        got = index._binarise(ink, k % 2 == 1, scale)
        assert got.dtype == np.uint8 and got.tobytes() == want.tobytes(), k
        seen.add(lines)
    assert seen == {True, False}     # corners with long lines and without


def test_scaled_planes_are_numpys_products_to_the_bit():
    rng = np.random.default_rng(880126)
    every_byte = np.arange(256, dtype=np.uint8).reshape(16, 16)
    card = rng.integers(0, 256, (index.CH, index.CW, 3), dtype=np.uint8)
    for _ in range(300):
        factor = (1.0 / np.maximum(np.float32([rng.uniform(1.0, 300.0)]), 1.0)).astype(np.float32)[0]
        for plane in (every_byte, card[..., 1], card[10:50:2, 7:90:2, 2], card[0, :, 0], card[:0, :, 0]):
            want = plane.astype(np.float32) * factor
            got = index.scaled(plane, factor)
            assert got.dtype == np.float32 and got.shape == want.shape and got.tobytes() == want.tobytes()
