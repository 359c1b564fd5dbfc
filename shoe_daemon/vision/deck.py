"""An enrolled deck: a classifier of one deck's 52 faces, made by ``shoe-daemon camera enroll``.

The glyph models read any standard index; a casino's own deck (a jumbo or peek index, four-colour
suits, courts of its own style) is read far better by a model of that deck. An enrolled deck model
classifies the whole rectified card (:mod:`shoe_daemon.vision.index`, 160 x 224) among the 52
faces from features of the whole face and of both index corners, whichever way up it lies:

* the ink map (1 - darkest channel / the card's white) at 24 x 32, the index corners at 12 x 20;
* the colours of the ink (red, blue, green against the card's white) at 12 x 16.

A small MLP (:class:`~shoe_daemon.vision.model.MLP`, numpy) gives the 52 probabilities; both
orientations of the card are classified and averaged. A reading is believed only when it is also
*close to what that card looks like* (the correlation of its standardised features, ink and
colours, with that card's mean training features, :attr:`DeckModel.min_match`): a face of another deck, a chip or a back that the MLP would
put somewhere anyway is not this deck's card. The thresholds are set by ``enroll`` on frames of
its own (see :mod:`shoe_daemon.vision.enroll`) and stored in the file with the validation figures.

A second, small MLP (:attr:`DeckModel.corner_mlp`) reads one index corner's ink map alone (each
corner of the training samples a sample of its own): a card whose centre and other corner lie under
the dealer's sleeve or hand shows one clear index, and the whole-face classifier, whose features
include the covered part, reads it unsure or as another suit. That corner reading counts only
where it agrees with the generic reader's reading of the same clear index, each above floors
``enroll`` sets (:attr:`DeckModel.corner_agree`). The corner model of a deck with a standard or
peek index also reads the index close up, in ink and red (:func:`index_maps`). Models enrolled
before have neither and read as before.

The file is JSON (``"format": "deck"``); loading it needs numpy only, not OpenCV.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from shoe_daemon.game.cards import ALL_CODES, RANK_VALUES
from shoe_daemon.vision.model import MLP, _dec, _enc

FORMAT = "deck"
GRID = (24, 32)          # whole-card ink map (w, h)
CORNER = (12, 20)        # each index corner's ink map
CORNER_BOX = (0.32, 0.38)  # the corner region, fractions of the card's width and height (jumbo indices too)
COLOUR = (12, 16)        # each colour map
# An index close up (index_maps): its ink and red ink at CORNER's size each, framed by the index
# itself where the generic reader found it, else this part of the card (fractions of its width
# and height, from the corner: a peek index's). In the corner box at 12 x 20 a peek index is 4 x 6
# cells, its suit pip one or two, and the ink map knows no red: font-peek's corner model read 2D
# as 2S, TD and TS as TC (own seeds 880650-880653). Under a sleeve the outline may be a fifth
# short, which stretches the corner box: kennard's read a 6S as QS at 0.94 (880660, frame 108).
INDEX_BOX = (0.18, 0.21)
FEATURES = GRID[0] * GRID[1] + 2 * CORNER[0] * CORNER[1] + 3 * COLOUR[0] * COLOUR[1]    # a row of :func:`features`
CORNER_INPUTS = CORNER[0] * CORNER[1]        # the corner model's: one corner's ink map
INDEX_INPUTS = 2 * CORNER[0] * CORNER[1]     # and one corner's index_maps (a standard or peek index)
VALUES = np.array([RANK_VALUES[c[0]] for c in ALL_CODES])
SMALL_WIDTH = 100.0      # px in the frame: a card this narrow has its own threshold (blur takes suits first)
# And never below this: enrolled models read 3 small, blurred cards (S for C, D for H) at 0.9968-0.9998
# on table-stress frames of seeds 901-902, which no calibration (150 frames) had shown.
SMALL_FLOOR = 0.9999


class DeckModelError(ValueError):
    """A file that is no usable deck model."""


def features(card: np.ndarray, ink: np.ndarray, white: np.ndarray) -> np.ndarray:
    """Features of a rectified card (BGR ``card``, its ``ink`` map and ``white``), both ways up: (2, D)."""
    import cv2

    from shoe_daemon.vision.index import scaled

    # Each channel against the card's white; red, blue and green ink: the channel over the larger
    # of the other two, clipped to 0..1 (per plane with OpenCV: the same floats, 2.5x faster).
    inv = (1.0 / np.maximum(white, 1.0)).astype(np.float32)
    b, g, r = (scaled(plane, inv[k]) for k, plane in enumerate(cv2.split(card)))
    colours = []
    for x, y, z in ((r, g, b), (b, g, r), (g, r, b)):
        d = cv2.subtract(x, cv2.max(y, z))
        # Clipped to 0..1 by two thresholds in place (above 1: 1; 0 or below: 0): np.clip's floats, sooner.
        cv2.threshold(d, 1.0, 1.0, cv2.THRESH_TRUNC, dst=d)
        colours.append(cv2.threshold(d, 0.0, 0.0, cv2.THRESH_TOZERO, dst=d)[1])
    h, w = ink.shape
    cw, ch = int(CORNER_BOX[0] * w), int(CORNER_BOX[1] * h)
    # Area resizing commutes with a half turn, so the turned card's maps are the upright ones
    # turned (and its two corners swapped): one resize each, not two.
    area = cv2.INTER_AREA
    grid = cv2.resize(ink, GRID, interpolation=area)
    # Maps of one size resized at once, as the channels of one image: each channel comes out as
    # it does alone (the same floats), in a third of the time.
    corners = cv2.resize(cv2.merge([ink[:ch, :cw], cv2.flip(ink[h - ch:, w - cw:], -1)]), CORNER, interpolation=area)
    merged = cv2.resize(cv2.merge(colours), COLOUR, interpolation=area)
    # Written into their places in the two rows (upright, turned): no concatenated copies.
    out = np.empty((2, FEATURES), np.float32)
    n_grid, n_corner = GRID[0] * GRID[1], CORNER[0] * CORNER[1]
    for row, (g_map, cols) in enumerate(((grid, merged), (grid[::-1, ::-1], merged[::-1, ::-1]))):
        out[row, :n_grid] = g_map.ravel()
        # the upright card's top-left corner then its bottom right; the turned card's the other way
        out[row, n_grid:n_grid + 2 * n_corner].reshape(2, CORNER[1], CORNER[0])[:] = \
            corners.transpose(2, 0, 1)[::1 if row == 0 else -1]
        out[row, n_grid + 2 * n_corner:].reshape(len(colours), COLOUR[1], COLOUR[0])[:] = cols.transpose(2, 0, 1)
    return out


def index_maps(card: np.ndarray, ink: np.ndarray, white: np.ndarray, boxes=(None, None)) -> np.ndarray:
    """Both index corners close up (0: top left, 1: bottom right turned upright), each its ink map
    and its red ink map (the red channel over the larger of the other two, against the card's
    white, 0..1) at :data:`CORNER`'s size: (2, INDEX_INPUTS).

    ``boxes``: where the generic reader found each corner's index (rank and suit together, a
    :class:`~shoe_daemon.vision.index.Blob` in that corner's own coordinates, the bottom right's
    turned; None where it found none): the maps are of the index itself then, framed by its box
    (:func:`index_frame`), so an outline fitted a fifth short or long (a card under a sleeve: its
    hidden end set at a card's proportions) shows the index as a well fitted one does. Else the
    corner's :data:`INDEX_BOX`."""
    import cv2

    h, w = ink.shape
    b, g, r = (card[..., k].astype(np.float32) / max(float(white[k]), 1.0) for k in range(3))
    red = np.clip(r - np.maximum(g, b), 0.0, 1.0)
    rows = []
    for k, box in enumerate(boxes):
        x0, y0, x1, y1 = index_frame(box) if box is not None else (0, 0, int(INDEX_BOX[0] * w), int(INDEX_BOX[1] * h))
        maps = []
        for m in (ink, red):
            m = m if k == 0 else m[::-1, ::-1]
            # The frame may reach past the card's edge (an index close to it): paper there.
            part = np.zeros((y1 - y0, x1 - x0), np.float32)
            ys, xs = slice(max(y0, 0), min(y1, h)), slice(max(x0, 0), min(x1, w))
            part[ys.start - y0: ys.stop - y0, xs.start - x0: xs.stop - x0] = m[ys, xs]
            maps.append(cv2.resize(part, CORNER, interpolation=cv2.INTER_AREA).ravel())
        rows.append(np.concatenate(maps))
    return np.stack(rows).astype(np.float32)


def index_frame(box) -> tuple[int, int, int, int]:
    """(x0, y0, x1, y1): the part of a corner that shows the index in ``box`` close up: the box and
    a sixth of its size beyond each side (resized to CORNER, the index fills the map whatever the
    outline's error, as the glyph classifiers' rasters do)."""
    px, py = max(1, round(box.w / 6)), max(1, round(box.h / 6))
    return box.x - px, box.y - py, box.x + box.w + px, box.y + box.h + py


def corner_part(x: np.ndarray, corner: int) -> np.ndarray:
    """Index corner ``corner``'s ink map (0: top left, 1: bottom right turned upright) of upright feature rows."""
    start = GRID[0] * GRID[1] + corner * CORNER[0] * CORNER[1]
    return x[..., start: start + CORNER[0] * CORNER[1]]


def colour_part(x: np.ndarray) -> np.ndarray:
    """The red, blue and green ink maps of feature rows (a view: writing it writes the rows)."""
    return x[..., GRID[0] * GRID[1] + 2 * CORNER[0] * CORNER[1]:]


def grid_part(x: np.ndarray) -> np.ndarray:
    """The whole-card ink map of feature rows."""
    return x[..., : GRID[0] * GRID[1]]


def _corr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of a with each row of b: (len(a), len(b))."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    a /= np.linalg.norm(a, axis=1, keepdims=True) + 1e-6
    b /= np.linalg.norm(b, axis=1, keepdims=True) + 1e-6
    return np.einsum("ik,jk->ij", a, b)


@dataclass
class DeckReading:
    card: str                 # the most probable card
    p_card: float             # its probability
    value: int                # the most probable baccarat value
    p_value: float
    match: float              # correlation of the card's ink map with that card's own
    probs: np.ndarray = field(repr=False)
    # The generic reader's best guess at the same card (index glyphs, centre), and its probability,
    # when it found an index there: filled in by the recogniser (see DeckModel.agree).
    generic: str | None = None
    p_generic: float = 0.0
    # When that guess is a whole clear index's alone (the centre hidden): the deck's corner model's
    # reading of that corner (DeckModel.read_corner), filled in by the recogniser.
    corner: str | None = None
    p_corner: float = 0.0


@dataclass
class DeckModel:
    mlp: MLP
    centroids: np.ndarray             # (52, 2, D): each card's mean standardised features, each way up
    min_p: float = 0.995              # an exact card needs this probability
    min_match: float = 0.5            # and this correlation with its own ink map
    info: dict[str, Any] = field(default_factory=dict)
    min_p_small: float | None = None  # an exact card under SMALL_WIDTH px wide needs this (default min_p)
    index_scale: float = 1.0          # the deck's index scale (index.roi_size), measured by enroll on its faces
    # Two readers agreeing: the deck model's card is also taken when the generic reader's best guess
    # is the same card, the generic at least agree[0] sure and the deck at least agree[1], whatever
    # the likeness (set by enroll on its calibration frames; None: not used, as in older models).
    agree: tuple[float, float] | None = None
    # One index corner's classifier (52 cards from corner_part), and the floors (generic reader,
    # corner model) at which the two readings of one clear index agreeing make the card (enroll;
    # None: not used, as in older models).
    corner_mlp: MLP | None = None
    corner_agree: tuple[float, float] | None = None

    def read_corner(self, feats: np.ndarray, corner: int, rectified: tuple | None = None,
                    box=None) -> tuple[str, float] | None:  # fmt: skip
        """The card index corner ``corner`` of a card's (2, D) :func:`features` shows, and its
        probability, by the corner model; None without one. A corner model of a standard or peek
        index also reads
        the index close up (:func:`index_maps` of the ``rectified`` card: (card, ink, white);
        ``box``: where the generic reader found that corner's index)."""
        if self.corner_mlp is None:
            return None
        x = corner_part(feats[:1], corner)
        if self.corner_reads_index():
            if rectified is None:
                return None
            boxes = (box, None) if corner == 0 else (None, box)
            x = np.concatenate([x, index_maps(*rectified, boxes)[corner: corner + 1]], axis=1)
        p = self.corner_mlp.proba(x)[0]
        k = int(p.argmax())
        return ALL_CODES[k], float(p[k])

    def corner_reads_index(self) -> bool:
        """Does the corner model read the index close up too (:func:`index_maps`; a standard or peek index's)?"""
        return self.corner_mlp is not None and self.corner_mlp.w1.shape[0] == CORNER_INPUTS + INDEX_INPUTS

    def card_threshold(self, width: float) -> float:
        small = self.min_p_small if self.min_p_small is not None else self.min_p
        return max(self.min_p, small, SMALL_FLOOR) if width < SMALL_WIDTH else self.min_p

    def read(self, feats: list[np.ndarray]) -> list[DeckReading]:
        """Readings of cards, each given as its (2, D) :func:`features`."""
        if not feats:
            return []
        x = np.concatenate(feats)
        p = self.mlp.proba(x).reshape(len(feats), 2, -1).mean(axis=1)
        z = self.standardise(x).reshape(len(feats), 2, -1)
        out = []
        for i in range(len(feats)):
            k = int(p[i].argmax())
            vp = np.bincount(VALUES, weights=p[i], minlength=10)
            v = int(vp.argmax())
            match = float(_corr(z[i, :1], self.centroids[k]).max())
            out.append(DeckReading(ALL_CODES[k], float(p[i, k]), v, float(vp[v]), match, p[i]))
        return out

    def read_faded(self, feats: np.ndarray, fade: float = 0.5) -> str:
        """The card a card's (2, D) :func:`features` show with the ink's colour maps at ``fade``
        of their strength: what its ink map and fainter colours name."""
        x = feats.copy()
        colour_part(x)[:] *= fade
        return ALL_CODES[int(self.mlp.proba(x).mean(axis=0).argmax())]

    def standardise(self, x: np.ndarray) -> np.ndarray:
        """Feature rows on the classifier's scale (each feature's training mean 0, spread 1)."""
        return (x - self.mlp.mean) * self.mlp.scale

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": 1, "codes": list(ALL_CODES), "mlp": self.mlp.to_json(),
                "centroids": _enc(self.centroids), "min_p": self.min_p, "min_match": self.min_match,
                "min_p_small": self.min_p_small, "index_scale": self.index_scale,
                "agree": list(self.agree) if self.agree is not None else None, "info": self.info,
                "corner_mlp": self.corner_mlp.to_json() if self.corner_mlp is not None else None,
                "corner_agree": list(self.corner_agree) if self.corner_agree is not None else None}  # fmt: skip

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), separators=(",", ":")) + "\n")

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str = "model") -> DeckModel:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DeckModelError(f"{where}: not a deck model (no \"format\": \"deck\"; make one with "
                                 "`shoe-daemon camera enroll`)")  # fmt: skip
        if data.get("version") != 1:
            raise DeckModelError(f"{where}: deck model version {data.get('version')!r} is not supported")
        if data.get("codes") != list(ALL_CODES):
            raise DeckModelError(f"{where}: the model's cards are not the 52 of a standard deck")
        try:
            mlp = MLP.from_json(data["mlp"])
            cents = _dec(data["centroids"])
            min_p, min_match = float(data["min_p"]), float(data["min_match"])
        except (KeyError, TypeError, ValueError) as exc:
            raise DeckModelError(f"{where}: damaged deck model ({type(exc).__name__}: {exc})") from None
        dim = GRID[0] * GRID[1] + 2 * CORNER[0] * CORNER[1] + 3 * COLOUR[0] * COLOUR[1]
        if mlp.w1.shape[0] != dim or mlp.w2.shape[1] != 52 or cents.shape != (52, 2, dim):
            raise DeckModelError(f"{where}: damaged deck model (its arrays have the wrong shapes)")
        if not 0.5 < min_p <= 1.0 or not -1.0 <= min_match <= 1.0:
            raise DeckModelError(f"{where}: damaged deck model (thresholds out of range)")
        small = data.get("min_p_small")
        if small is not None and not 0.5 < float(small) <= 1.0:
            raise DeckModelError(f"{where}: damaged deck model (thresholds out of range)")
        scale = data.get("index_scale", 1.0)
        if not isinstance(scale, int | float) or not 0.3 <= float(scale) <= 3.0:
            raise DeckModelError(f"{where}: damaged deck model (index_scale {scale!r} out of range)")
        agree = data.get("agree")
        if agree is not None and not _are_floors(agree):
            raise DeckModelError(f"{where}: damaged deck model (agree {agree!r}: two probabilities 0.5-1)")
        corner_mlp, corner_agree = _corner_part_of(data, where)
        return cls(mlp, cents, min_p, min_match, dict(data.get("info", {})), None if small is None else float(small),
                   float(scale), None if agree is None else (float(agree[0]), float(agree[1])),
                   corner_mlp, corner_agree)  # fmt: skip


def _are_floors(value: Any) -> bool:
    """A pair of agreement floors as a model file stores them: two probabilities 0.5-1."""
    return isinstance(value, list) and len(value) == 2 and all(isinstance(v, int | float) and 0.5 <= v <= 1.0 for v in value)


def _corner_part_of(data: dict[str, Any], where: str) -> tuple[MLP | None, tuple[float, float] | None]:
    """A model file's corner model and its floors (both absent in models enrolled before them)."""
    raw, agree = data.get("corner_mlp"), data.get("corner_agree")
    if agree is not None and (raw is None or not _are_floors(agree)):
        raise DeckModelError(f"{where}: damaged deck model (corner_agree {agree!r}: two probabilities 0.5-1, "
                             "with a corner model)")  # fmt: skip
    if raw is None:
        return None, None
    try:
        mlp = MLP.from_json(raw)
    except (KeyError, TypeError, ValueError) as exc:
        raise DeckModelError(f"{where}: damaged deck model (corner model: {type(exc).__name__}: {exc})") from None
    if mlp.w1.shape[0] not in (CORNER_INPUTS, CORNER_INPUTS + INDEX_INPUTS) or mlp.w2.shape[1] != 52:
        raise DeckModelError(f"{where}: damaged deck model (the corner model's arrays have the wrong shapes)")
    return mlp, None if agree is None else (float(agree[0]), float(agree[1]))


def is_deck_model(path: str | Path) -> bool:
    """Does the file say it is a deck model (not a glyph model)? Reads only its start."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return False
    return b'"format":"deck"' in head.replace(b" ", b"")


def load_deck_model(path: str | Path) -> DeckModel:
    """Load (and check) a deck model; :class:`DeckModelError` with one line saying what is wrong."""
    return _load(str(Path(path).resolve()), Path(path).stat().st_mtime_ns if Path(path).exists() else 0)


@lru_cache(maxsize=4)
def _load(path: str, _mtime: int) -> DeckModel:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise DeckModelError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DeckModelError(f"{path}: not a deck model (not JSON: {exc})") from None
    return DeckModel.from_json(data, path)
