"""Matching recognised cards to the generator's truth."""

from __future__ import annotations

import numpy as np


def match(result, truth):
    """The CardResult whose centre is within 0.3 card widths of the true card's, or None."""
    w = float(np.linalg.norm(truth.quad[1] - truth.quad[0]))
    best, best_d = None, 0.3 * w
    for r in result.cards:
        d = float(np.hypot(r.centre[0] - truth.centre[0], r.centre[1] - truth.centre[1]))
        if d < best_d:
            best, best_d = r, d
    return best


def table_with_a_sleeve(faces_or_images, under, sleeve=((690, 250), (1400, 80), 170), width=150):
    """A drawn 1280x720 green table: images (BGRA faces or backs) laid upright in a row at x 150,
    330, 510 and ``under`` at 700 (all ``width`` px wide, y 300), then a dark sleeve (a band from
    p0 to p1, ``w`` px wide) over ``under``'s top-right corner and half its right side.
    Returns (frame, the quadrilateral of ``under``)."""
    import cv2

    img = np.zeros((720, 1280, 3), np.float32)
    img[:] = (40, 110, 30)
    h = width * 1.4

    def lay(face, cx):
        quad = np.float32([[cx - width / 2, 300 - h / 2], [cx + width / 2, 300 - h / 2],
                           [cx + width / 2, 300 + h / 2], [cx - width / 2, 300 + h / 2]])  # fmt: skip
        fh, fw = face.shape[:2]
        m = cv2.getPerspectiveTransform(np.float32([[0, 0], [fw, 0], [fw, fh], [0, fh]]), quad)
        warped = cv2.warpPerspective(face, m, (1280, 720), flags=cv2.INTER_AREA)
        alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
        img[:] = warped[:, :, :3] * alpha + img * (1 - alpha)
        return quad

    for face, cx in zip(faces_or_images, (150, 330, 510), strict=True):
        lay(face, cx)
    quad = lay(under, 700)
    (x0, y0), (x1, y1), w = sleeve
    d = np.float64([x1 - x0, y1 - y0])
    d /= np.linalg.norm(d)
    n = np.array([-d[1], d[0]]) * w / 2
    p0, p1 = np.float64([x0, y0]), np.float64([x1, y1])
    cv2.fillConvexPoly(img, np.int32(np.round([p0 + n, p1 + n, p1 - n, p0 - n])), (30, 28, 25), lineType=cv2.LINE_AA)
    return np.clip(img, 0, 255).astype(np.uint8), quad


def read_codes(recognizer, design, seed, frames, codes, cast=None):
    """[(true code, CardResult or None)] of the cards ``codes`` on ``frames`` nominal frames of a
    registry ``design`` (``cast``: each BGR plane multiplied, a coloured light)."""
    from shoe_daemon.vision.cardart import design_back, design_faces
    from shoe_daemon.vision.synth import FrameGenerator
    from shoe_daemon.vision.zones import parse_zones

    gen = FrameGenerator(design_faces(design), [design_back(design)], "nominal", seed=seed)
    out = []
    for i in range(frames):
        f = gen.frame(i, codes=codes)
        image = f.image if cast is None else np.clip(f.image * np.float32(cast), 0, 255).astype(np.uint8)
        res = recognizer.recognize(image, zones=parse_zones(f.zones))
        out += [(t.code, match(res, t)) for t in f.face_up if t.code in codes]
    return out


def court_tally(read):
    """(found, wrong, right) of :func:`read_codes`' courts: the cards reported; those given another
    card or a value other than 0; how many given their own card."""
    found = [(code, r) for code, r in read if r is not None]
    wrong = [(code, r.card) for code, r in found if r.card not in (None, code) or r.value not in (None, 0)]
    return found, wrong, sum(r.card == code for code, r in found)
