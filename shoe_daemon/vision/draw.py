"""Overlays for technicians: the configured zones, and what the recogniser saw."""

from __future__ import annotations

import cv2
import numpy as np

from shoe_daemon.vision.recognizer import FrameResult
from shoe_daemon.vision.zones import Zone

ZONE_COLOURS = [(0, 220, 255), (255, 160, 0), (200, 0, 255), (0, 255, 120), (255, 255, 255)]
STATUS_COLOURS = {"ok": (0, 200, 0), "partial": (0, 200, 255), "unknown": (0, 0, 255)}


def _label(img: np.ndarray, text: str, org: tuple[int, int], colour) -> None:
    x, y = org
    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.6, 2)
    x = int(min(max(x, 0), img.shape[1] - tw - 4))
    y = int(min(max(y, th + 4), img.shape[0] - base - 2))
    cv2.rectangle(img, (x, y - th - 4), (x + tw + 4, y + base), (0, 0, 0), -1)
    cv2.putText(img, text, (x + 2, y - 2), cv2.FONT_HERSHEY_SIMPLEX, 0.6, colour, 2, cv2.LINE_AA)


def draw_zones(img: np.ndarray, zones: list[Zone]) -> np.ndarray:
    """A copy of ``img`` with each zone's polygon, corner coordinates and name drawn on it."""
    out = img.copy()
    for i, z in enumerate(zones):
        colour = ZONE_COLOURS[i % len(ZONE_COLOURS)]
        pts = np.round(np.array(z.polygon, np.float32) * 4).astype(np.int32)
        overlay = out.copy()
        cv2.fillPoly(overlay, [pts], colour, cv2.LINE_AA, shift=2)
        cv2.addWeighted(overlay, 0.15, out, 0.85, 0, dst=out)
        cv2.polylines(out, [pts], True, colour, 2, cv2.LINE_AA, shift=2)
        for x, y in z.polygon:
            cv2.circle(out, (int(round(x)), int(round(y))), 4, colour, -1, cv2.LINE_AA)
            cv2.putText(out, f"{x:.0f},{y:.0f}", (int(x) + 5, int(y) - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                        colour, 1, cv2.LINE_AA)  # fmt: skip
        c = np.array(z.polygon).mean(axis=0)
        _label(out, z.name, (int(c[0]) - 20, int(c[1])), colour)
    return out


def draw_result(img: np.ndarray, result: FrameResult) -> np.ndarray:
    """Draw each card's quadrilateral and reading (in place) and return the image."""
    for c in result.cards:
        colour = STATUS_COLOURS.get(c.status, (255, 255, 255))
        q = np.round(np.array(c.quad, np.float32) * 4).astype(np.int32)
        cv2.polylines(img, [q], True, colour, 2, cv2.LINE_AA, shift=2)
        text = c.card if c.card else (f"value {c.value}" if c.value is not None else "?")
        _label(img, f"{text} {c.confidence:.2f}", (int(q[:, 0].min() / 4), int(q[:, 1].min() / 4) - 4), colour)
    for q, _reason in result.rejected:
        cv2.polylines(img, [np.round(np.array(q, np.float32)).astype(np.int32)], True, (128, 128, 128), 1)
    return img
