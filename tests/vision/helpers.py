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
