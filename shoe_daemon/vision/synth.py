"""A seeded generator of overhead table frames, for the tests and the benchmark.

Card faces (BGRA, e.g. :func:`shoe_daemon.vision.cardart.cardsjs_faces`) are warped onto a green
felt at 1280x720 with the layout of a Punto Banco table: a Punto box and a Banco box, two cards
side by side in each and the third card dealt sideways below them. The camera looks down at a
slight angle (keystone perspective). Then, as a camera would see it: light gradient, glare, motion
blur or defocus, gain / gamma / white balance, sensor noise and JPEG compression; and, on the felt,
chips, face-down cards, cards outside the boxes and a dealer's hand over one corner of a card.

``FrameGenerator(faces, backs, CONDITIONS["nominal"], seed).frame(i)`` is a pure function of
``(seed, i)`` and the condition: the same frame every run. The conditions are documented in
docs/camera.md ("Frame generator"); their numbers are the ranges each frame draws from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from shoe_daemon.game.cards import ALL_CODES

FRAME_W, FRAME_H = 1280, 720
CARD_ASPECT = 1.397  # 88 / 63 mm


@dataclass(frozen=True)
class Condition:
    """Ranges one frame draws from (uniform unless said)."""

    name: str
    card_width: tuple[float, float] = (100.0, 200.0)    # px, the frame's card width before perspective
    keystone: float = 0.12          # up to this much narrower at the far edge (perspective)
    rotation: float = 5.0           # degrees of jitter of each card in its box
    frame_rotation: float = 4.0     # degrees of the whole table in the image
    motion_blur: tuple[float, float] = (0.0, 3.0)   # kernel length, px
    motion_p: float = 0.5           # probability of motion blur (else defocus)
    defocus: tuple[float, float] = (0.0, 1.0)       # disk radius, px
    gain: tuple[float, float] = (0.8, 1.2)
    gamma: tuple[float, float] = (0.85, 1.2)
    white_balance: float = 0.08     # each of B, G, R gains in 1 +- this
    gradient: float = 0.25          # light falls off by up to this fraction across the frame
    glare_p: float = 0.3            # probability of a glare spot
    glare: tuple[float, float] = (20.0, 70.0)       # its peak, grey levels added
    noise: tuple[float, float] = (1.0, 4.0)         # Gaussian sensor noise sigma
    jpeg: tuple[int, int] = (70, 95)                # JPEG quality
    hand_p: float = 0.15            # probability of a hand over one corner of one card
    chips: tuple[int, int] = (0, 5)
    others: tuple[int, int] = (0, 2)  # extra cards outside the boxes (face up or down)
    backs_p: float = 0.5            # an extra card is face down with this probability
    third_p: float = 0.5            # each box has a third (sideways) card with this probability
    empty: bool = False             # no face-up card at all: felt, chips, backs, hands
    white_sleeves: bool = False     # the dealer's cuff may be white (merges with a card it touches)
    felts: tuple[str, ...] = ("green",)   # felt colours a frame draws from (FELTS)
    touch_p: float = 0.0            # a box's later cards are pushed against the earlier ones
    overlap: tuple[float, float] = (0.0, 0.0)   # then overlapping them by this share of a width
    glare_index_p: float = 0.0      # a glare spot is centred on a face-up card's index corner


CONDITIONS: dict[str, Condition] = {
    "nominal": Condition("nominal"),
    "stress": Condition(
        "stress", card_width=(60.0, 200.0), keystone=0.2, rotation=12.0, frame_rotation=10.0,
        motion_blur=(2.0, 9.0), motion_p=0.5, defocus=(1.0, 3.0), gain=(0.5, 1.6),
        gamma=(0.6, 1.6), white_balance=0.2, gradient=0.5, glare_p=0.7, glare=(60.0, 200.0),
        noise=(3.0, 10.0), jpeg=(30, 70), hand_p=0.4, chips=(2, 10), others=(1, 3), white_sleeves=True,
    ),
    # The "stress" of a real table: small cards any way round, strong motion blur, poor
    # JPEG, green, red or blue felt, glare, hands.
    "table-stress": Condition(
        "table-stress", card_width=(60.0, 110.0), keystone=0.2, rotation=180.0, frame_rotation=10.0,
        motion_blur=(5.0, 15.0), motion_p=0.7, defocus=(1.0, 3.0), gain=(0.6, 1.5), gamma=(0.7, 1.5),
        white_balance=0.2, gradient=0.5, glare_p=0.7, glare=(60.0, 200.0), noise=(3.0, 10.0), jpeg=(30, 60),
        hand_p=0.4, chips=(2, 10), others=(1, 3), white_sleeves=True, felts=("green", "red", "blue"),
        touch_p=0.5, overlap=(0.0, 0.2), glare_index_p=0.5,
    ),
    # Nominal in every respect but the size: the smallest cards the camera may see.
    "small": Condition("small", card_width=(60.0, 100.0)),
    # Nominal, and a hand over one corner of a card in every frame.
    "hand": Condition("hand", hand_p=1.0),
    # No face-up card: for false cards. Backs, chips and hands on a nominal felt.
    "empty": Condition("empty", empty=True, chips=(2, 10), others=(1, 4), backs_p=1.0, hand_p=0.5),
}  # fmt: skip
# The same, through the table-stress camera (blurred backs lose their pattern).
CONDITIONS["table-empty"] = replace(CONDITIONS["table-stress"], name="table-empty", empty=True, others=(1, 4),
                                    backs_p=1.0, hand_p=0.5, touch_p=0.0)  # fmt: skip


# Base felt colours (BGR ranges): casino felts are green, red or blue.
FELTS = {
    "green": ((30, 60), (95, 140), (20, 50)),
    "red": ((25, 50), (25, 45), (110, 160)),
    "blue": ((110, 160), (55, 85), (15, 40)),
}


@dataclass
class TrueCard:
    code: str | None                 # None for a card face down
    quad: np.ndarray                 # (4, 2) image points of the face's TL, TR, BR, BL as printed
    zone: str | None
    occluded_corner: int | None = None   # 0-3 (as in quad) under a hand, if any
    deal: int | None = None          # dealing order of a card in a box (0 = P1, 1 = B1, ...)
    touching: bool = False           # lies against another card (or on it, or under it)
    covered: float = 0.0             # share of its width under a card dealt after it
    glare_index: bool = False        # a glare spot sits on one of its index corners

    @property
    def centre(self) -> np.ndarray:
        return self.quad.mean(axis=0)


@dataclass
class SynthFrame:
    image: np.ndarray                # BGR uint8, 720 x 1280, after JPEG
    jpeg: bytes
    cards: list[TrueCard]            # face up AND face down (code None)
    zones: list[dict[str, Any]]      # [{"name", "polygon"}] in image coordinates
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def face_up(self) -> list[TrueCard]:
        return [c for c in self.cards if c.code is not None]

    def tags(self, card: TrueCard) -> list[str]:
        """The stress conditions one face-up card is seen under (the benchmark's breakdown)."""
        p = self.params
        width = float(np.linalg.norm(card.quad[1] - card.quad[0]))
        out = [f"felt {p.get('felt', 'green')}", "motion blur" if "motion_blur" in p else "defocus",
               "width < 85 px" if width < 85 else "width >= 85 px"]  # fmt: skip
        if p.get("jpeg", 100) <= 45:
            out.append("JPEG q <= 45")
        if card.glare_index:
            out.append("glare on an index")
        if card.occluded_corner is not None:
            out.append("hand over a corner")
        if card.covered > 0:
            out.append("overlapped by another card")
        elif card.touching:
            out.append("touching another card")
        return out


def _rot(theta: float) -> np.ndarray:
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s], [s, c]])


def _apply_h(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.hstack([pts, np.ones((len(pts), 1))]) @ h.T
    return p[:, :2] / p[:, 2:3]


def _inside(quad: np.ndarray, p: np.ndarray) -> bool:
    """Is point p inside the convex polygon quad (either winding)?"""
    n = len(quad)
    signs = []
    for i in range(n):
        e, r = quad[(i + 1) % n] - quad[i], p - quad[i]
        signs.append(e[0] * r[1] - e[1] * r[0])
    return all(s >= 0 for s in signs) or all(s <= 0 for s in signs)


def _poly_overlap(a: np.ndarray, b: np.ndarray, margin: float) -> bool:
    """True when convex polygons a and b come closer than ``margin`` (separating-axis test)."""
    for poly in (a, b):
        n = len(poly)
        for i in range(n):
            e = poly[(i + 1) % n] - poly[i]
            axis = np.array([-e[1], e[0]])
            axis /= np.linalg.norm(axis) + 1e-9
            pa, pb = a @ axis, b @ axis
            if pa.max() + margin < pb.min() or pb.max() + margin < pa.min():
                return False
    return True


def _clear(quad: np.ndarray, others: list[np.ndarray]) -> bool:
    """In the frame and clear (3 px) of every polygon in ``others``."""
    if quad[:, 0].min() < 2 or quad[:, 1].min() < 2 or quad[:, 0].max() > FRAME_W - 3 or quad[:, 1].max() > FRAME_H - 3:
        return False
    return not any(_poly_overlap(quad, p, 3.0) for p in others)


def _covered(lower: np.ndarray, upper: np.ndarray) -> float:
    """How deep (share of ``lower``'s width) ``upper`` reaches into it; < 0 when they do not overlap."""
    import cv2

    inter, _ = cv2.intersectConvexConvex(np.float32(lower), np.float32(upper))
    if inter <= 0:
        return -1.0
    width = float(np.linalg.norm(lower[1] - lower[0]))
    height = float(np.linalg.norm(lower[2] - lower[1]))
    return float(inter) / max(height, 1.0) / max(width, 1.0)


# ------------------------------------------------------------------ FrameGenerator.frame's steps


@dataclass
class _Table:
    """A frame's table as it is laid (``FrameGenerator.frame``'s steps share it): ``w``, ``h`` a
    card's size and ``k``, ``a`` the camera's keystone and rotation (radians), as drawn; ``hom``
    the camera (table plane, origin at the frame centre, to image); ``boxes`` the Punto and Banco
    boxes' centres on the table plane, ``zones`` their image polygons; ``placed`` the image
    polygons of everything flat on the felt (no overlap); ``cards`` the cards laid so far.
    """

    w: float
    h: float
    k: float
    a: float
    hom: np.ndarray
    boxes: dict[str, np.ndarray]
    zones: list[dict[str, Any]]
    placed: list[np.ndarray] = field(default_factory=list)
    cards: list[TrueCard] = field(default_factory=list)

    def card_quad(self, pos: np.ndarray, theta: float) -> np.ndarray:
        """The image quad of a card at ``pos`` on the table plane, turned by ``theta``."""
        centre = np.array([FRAME_W / 2, FRAME_H / 2])
        corners = np.array([[-self.w / 2, -self.h / 2], [self.w / 2, -self.h / 2], [self.w / 2, self.h / 2],
                            [-self.w / 2, self.h / 2]])  # fmt: skip
        return _apply_h(self.hom, corners @ _rot(theta).T + pos + centre)

    def fits(self, quad: np.ndarray, margin: float = 4.0) -> bool:
        """In the frame, and ``margin`` px clear of everything placed."""
        if quad[:, 0].min() < 2 or quad[:, 1].min() < 2 or quad[:, 0].max() > FRAME_W - 3 \
                or quad[:, 1].max() > FRAME_H - 3:
            return False
        return not any(_poly_overlap(quad, p, margin) for p in self.placed)


def _box_slots(third: dict[str, bool]) -> list[tuple[str, int]]:
    """The boxes' cards in dealing order, (box, card 0-2): P1 B1 P2 B2, then the third cards ``third`` has."""
    slots = []
    for i in range(3):
        for name in ("punto", "banco"):
            if i == 2 and not third[name]:
                continue
            slots.append((name, i))
    return slots


def _mark_glare_on_index(params: dict[str, Any], targets: list[tuple[TrueCard, np.ndarray]]) -> None:
    """Mark the cards whose index corner (``targets``) lies under the glare spot, taking its place
    out of the camera's ``params``."""
    if "glare_at" in params:
        gx, gy, sig = params.pop("glare_at")
        for c, p in targets:
            if math.hypot(p[0] - gx, p[1] - gy) < sig:
                c.glare_index = True


class FrameGenerator:
    """Seeded overhead frames of a Punto Banco table (see the module doc)."""

    def __init__(self, faces: dict[str, np.ndarray], backs: list[np.ndarray],
                 condition: Condition | str = "nominal", seed: int = 0):  # fmt: skip
        self.faces = faces
        self.backs = backs
        self.condition = CONDITIONS[condition] if isinstance(condition, str) else condition
        self.seed = seed
        self.codes = [c for c in ALL_CODES if c in faces]
        self._scaled: dict[tuple[object, int], np.ndarray] = {}

    # ------------------------------------------------------------------ layout

    def frame(self, index: int, codes: list[str] | None = None, *, layout: int | None = None,
              visible: int | None = None, hand: bool | None = None) -> SynthFrame:  # fmt: skip
        """Frame number ``index``.

        ``codes`` forces the cards dealt in the boxes (dealing order P1 B1 P2 B2 [P3 B3]);
        ``layout`` draws the table (camera geometry, felt, cards, chips) from that number instead
        of ``index`` - frames of one layout are the same table seen at different moments, with
        their own light, noise and hands; ``visible`` shows only the first N dealt cards;
        ``hand`` forces a hand over a card (True) or none (False).
        """
        table_no = index if layout is None else layout
        rng = np.random.default_rng([self.seed, table_no, 0x5EED])
        rng_cam = np.random.default_rng([self.seed, index, 0xCA3])
        t = self._table(rng)
        if not self.condition.empty:
            self._deal_boxes(t, rng, table_no, list(codes) if codes is not None else None)
        self._other_cards(t, rng)
        chips = self._chips(t, rng)
        cards = t.cards
        if visible is not None:   # the same table before the later cards land (their places kept)
            cards = [c for c in cards if c.deal is None or c.deal < visible]
        hand_at = self._hand_over(rng_cam, cards, t.placed, visible, hand)
        img, felt = self._render(rng, rng_cam, cards, chips, hand_at, t.w)
        # Index corners (a little in from the printed top-left and bottom-right): where glare hurts.
        targets = [(c, c.quad[k] + (c.centre - c.quad[k]) * 0.15) for c in cards if c.code is not None for k in (0, 2)]
        img, jpeg, params = self._camera(rng_cam, img, t.w, targets)
        _mark_glare_on_index(params, targets)
        params.update(card_width=round(t.w, 1), keystone=round(t.k, 3), frame_rotation=round(math.degrees(t.a), 2),
                      chips=len(chips), hand=hand_at is not None, felt=felt)  # fmt: skip
        return SynthFrame(img, jpeg, cards, t.zones, params)

    def _table(self, rng: np.random.Generator) -> _Table:
        """The frame's card size and camera (the table's offset and rotation in the image, then
        keystone), and the Punto and Banco boxes: an empty table."""
        cond = self.condition
        w = rng.uniform(*cond.card_width)
        h = w * CARD_ASPECT
        cx, cy = FRAME_W / 2 + rng.uniform(-0.1, 0.1) * w, FRAME_H / 2 + rng.uniform(-0.15, 0.15) * w
        # Camera: rotation of the table in the image, then keystone about the frame centre.
        a = math.radians(rng.uniform(-cond.frame_rotation, cond.frame_rotation))
        k = rng.uniform(-cond.keystone, cond.keystone)
        ky = k / (FRAME_H / 2)   # 1 + ky*y: the far edge (y = -H/2) shrinks by about k
        persp = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -ky, 1.0]])
        c = np.array([[1.0, 0, FRAME_W / 2], [0, 1.0, FRAME_H / 2], [0, 0, 1.0]])
        ci = np.linalg.inv(c)
        r = np.eye(3)
        r[:2, :2] = _rot(a)
        t = np.array([[1.0, 0, cx - FRAME_W / 2], [0, 1.0, cy - FRAME_H / 2], [0, 0, 1.0]])
        hom = c @ persp @ ci @ t @ c @ r @ ci
        # Table plane (pixels before perspective), origin at the frame centre.
        gap = 1.45 * w
        boxes = {"punto": np.array([-gap - 0.05 * w, 0.0]), "banco": np.array([gap + 0.05 * w, 0.0])}
        bw, bh = 2.75 * w, 2.8 * w
        zones = []
        centre = np.array([FRAME_W / 2, FRAME_H / 2])
        for name, bc in boxes.items():
            poly = np.array([[-bw / 2, -bh / 2], [bw / 2, -bh / 2], [bw / 2, bh / 2], [-bw / 2, bh / 2]]) + bc
            zones.append({"name": name, "polygon": np.round(_apply_h(hom, poly + centre), 1).tolist()})
        return _Table(w, h, k, a, hom, boxes, zones)

    def _deal_boxes(self, t: _Table, rng: np.random.Generator, table_no: int, deal: list[str] | None) -> None:
        """Deal the boxes' cards onto ``t`` in dealing order (a third card in a box as drawn, or as
        ``deal`` has one): each in its place, jittered and clear of everything on the felt, or, in a
        box drawn to touch, pushed against (and over) the box's earlier cards."""
        cond = self.condition
        third = {b: rng.random() < cond.third_p for b in t.boxes}
        # Touching and overlapping cards draw from their own stream: the rest of the table
        # is the same as without them.
        rng_t = np.random.default_rng([self.seed, table_no, 0x70C4])
        touch = {b: cond.touch_p > 0 and rng_t.random() < cond.touch_p for b in t.boxes}
        box_pos: dict[int, np.ndarray] = {}
        if deal is not None:
            third = {"punto": len(deal) > 4, "banco": len(deal) > 5}
        for n, (name, i) in enumerate(_box_slots(third)):
            code = deal[n] if deal is not None and n < len(deal) else self.codes[int(rng.integers(len(self.codes)))]
            mine = [(k, c) for k, c in enumerate(t.cards) if c.zone == name and c.deal is not None]
            spot = self._box_spot(t, rng, name, i, touch[name] and bool(mine))
            if spot is None:
                continue
            pos, theta, quad = spot
            card = TrueCard(code, quad, name, deal=n)
            if touch[name] and mine:
                pos = self._push_onto(t, rng_t, card, pos, theta, mine, box_pos)
                if pos is None:
                    continue
            t.placed.append(card.quad)
            box_pos[len(t.cards)] = pos
            t.cards.append(card)

    def _box_spot(self, t: _Table, rng: np.random.Generator, name: str, i: int,
                  will_push: bool) -> tuple[np.ndarray, float, np.ndarray] | None:  # fmt: skip
        """Where box ``name``'s card ``i`` (0 and 1 side by side, 2 sideways below) lies: its
        position, angle and image quad, jittered - the first drawn when it is to be pushed against
        the box's cards, else the first of 30 clear of everything on the felt (None if none is)."""
        cond = self.condition
        bc = t.boxes[name]
        if i < 2:
            base = bc + np.array([(-0.6 if i == 0 else 0.6) * t.w, -0.55 * t.w])
            theta0 = 0.0
        else:
            base = bc + np.array([0.0, 0.78 * t.w])
            theta0 = math.pi / 2
        for _ in range(30):
            pos = base + rng.uniform(-0.05, 0.05, 2) * t.w
            theta = theta0 + math.radians(rng.uniform(-cond.rotation, cond.rotation))
            if rng.random() < 0.5:
                theta += math.pi          # upside down: same index, other way up
            quad = t.card_quad(pos, theta)
            if will_push or t.fits(quad, 3.0):
                return pos, theta, quad
        return None

    def _push_onto(self, t: _Table, rng_t: np.random.Generator, card: TrueCard, pos: np.ndarray, theta: float,
                   mine: list[tuple[int, TrueCard]], box_pos: dict[int, np.ndarray]) -> np.ndarray | None:  # fmt: skip
        """Push ``card`` against its box's earlier cards ``mine`` and over them by a drawn overlap,
        marking those it touches or covers: its new position, or None when it cannot lie there
        (in the frame, clear of everything else)."""
        pushed = self._push(pos, theta, [box_pos[k] for k, _ in mine], [c.quad for _, c in mine],
                            t.card_quad, float(rng_t.uniform(*self.condition.overlap)) * t.w)  # fmt: skip
        others = [q for q in t.placed if not any(q is c.quad for _, c in mine)]
        if pushed is None or not _clear(pushed[1], others):
            return None
        pos, card.quad = pushed
        card.touching = True
        for _, c in mine:
            share = _covered(c.quad, card.quad)
            if share >= 0 or _poly_overlap(c.quad, card.quad, 1.5):
                c.touching = True
                c.covered = max(c.covered, round(max(share, 0.0), 3))
        return pos

    def _other_cards(self, t: _Table, rng: np.random.Generator) -> None:
        """Extra cards outside the boxes onto ``t``: face up (zone None) or face down."""
        cond = self.condition
        n_other = int(rng.integers(cond.others[0], cond.others[1] + 1))
        for _ in range(n_other):
            face_down = rng.random() < cond.backs_p
            for _ in range(40):
                if cond.empty and rng.random() < 0.4:   # a face-down card in a box
                    bc = t.boxes[list(t.boxes)[int(rng.integers(2))]]
                    pos = bc + rng.uniform(-0.7, 0.7, 2) * t.w
                else:
                    pos = rng.uniform([-FRAME_W / 2 + t.w, -FRAME_H / 2 + t.w], [FRAME_W / 2 - t.w, FRAME_H / 2 - t.w])
                theta = rng.uniform(0, 2 * math.pi)
                quad = t.card_quad(pos, theta)
                if t.fits(quad, 6.0):
                    zone = None
                    if not face_down:
                        from shoe_daemon.vision.zones import Zone, zone_of
                        zone = zone_of([Zone.from_config(z) for z in t.zones], quad.mean(axis=0))
                    t.placed.append(quad)
                    code = None if face_down else self.codes[int(rng.integers(len(self.codes)))]
                    t.cards.append(TrueCard(code, quad, zone))
                    break

    def _chips(self, t: _Table, rng: np.random.Generator) -> list[tuple[np.ndarray, float]]:
        """Chips on the felt of ``t``, clear of everything on it: (centre, radius) each."""
        # Chips: circles of radius ~0.31 w (39 mm chips, 63 mm cards).
        cond = self.condition
        chips = []
        n_chips = int(rng.integers(cond.chips[0], cond.chips[1] + 1))
        for _ in range(n_chips):
            rad = 0.31 * t.w * rng.uniform(0.9, 1.1)
            for _ in range(40):
                p = rng.uniform([rad + 3, rad + 3], [FRAME_W - rad - 3, FRAME_H - rad - 3])
                ang = np.linspace(0, 2 * math.pi, 12, endpoint=False)
                poly = np.stack([p[0] + rad * np.cos(ang), p[1] + rad * np.sin(ang)], axis=1)
                if t.fits(poly, 2.0):
                    t.placed.append(poly)
                    chips.append((p, rad))
                    break
        return chips

    def _hand_over(self, rng_cam: np.random.Generator, cards: list[TrueCard], placed: list[np.ndarray],
                   visible: int | None, hand: bool | None) -> tuple | None:  # fmt: skip
        """Where the dealer's hand lies, if anywhere (as drawn, or as ``hand`` forces): over a
        corner of a face-up card (the last dealt when ``visible`` is given), marked on that card,
        as (its quad, the corner); (None, None) with no face-up card to cover."""
        hand_at = None
        want_hand = (rng_cam.random() < self.condition.hand_p) if hand is None else hand
        if want_hand and placed:
            face_up = [c for c in cards if c.code is not None] or cards
            if face_up:
                target = face_up[-1] if visible is not None else face_up[int(rng_cam.integers(len(face_up)))]
                # Mostly an index corner (0 = TL, 2 = BR as printed): the hard case.
                corner = int(rng_cam.choice([0, 2, 1, 3], p=[0.35, 0.35, 0.15, 0.15]))
                target.occluded_corner = corner
                hand_at = (target.quad, corner)
            else:
                hand_at = (None, None)
        return hand_at

    @staticmethod
    def _push(pos, theta, mates_pos, mates_quads, card_quad, depth: float):
        """Slide a card from ``pos`` towards the nearest of its box's cards until it touches one,
        then ``depth`` px further (overlapping it, on top). None when it cannot be done."""
        near = min(range(len(mates_pos)), key=lambda k: float(np.linalg.norm(mates_pos[k] - pos)))
        d = pos - mates_pos[near]
        dist = float(np.linalg.norm(d))
        if dist < 1.0:
            return None
        d = d / dist

        def clear(s):
            q = card_quad(pos - d * s, theta)
            return not any(_poly_overlap(q, m, 0.0) for m in mates_quads)

        if not clear(0.0):
            return None
        lo, hi = 0.0, dist
        for _ in range(18):          # the furthest slide that still leaves them apart: touching
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if clear(mid) else (lo, mid)
        new = pos - d * (lo + depth)
        return new, card_quad(new, theta)

    def laying(self, codes: list[str], per_card: int = 4, seed: int = 0) -> list[np.ndarray]:
        """Frames of a technician laying ``codes`` one after another on one spot (deck enrolment).

        For each card: a frame with the card still in the hand (moving, a hand over it), then
        ``per_card`` frames of it at rest (each with its own light and noise). Nominal optics,
        cards about 220 px wide, upright or turned, a few degrees off square.
        """
        rng = np.random.default_rng([self.seed, seed, 0x1A7])
        out = []
        w = 220.0
        h = w * CARD_ASPECT
        centre = np.array([FRAME_W / 2, FRAME_H / 2])
        for code in codes:
            theta = math.radians(rng.uniform(-6, 6)) + (math.pi if rng.random() < 0.5 else 0.0)
            pos = centre + rng.uniform(-20, 20, 2)
            corners = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]]) @ _rot(theta).T
            for k in range(per_card + 1):
                moving = k == 0
                quad = corners + pos + (rng.uniform(-60, 60, 2) if moving else 0.0)
                canvas = self._felt(np.random.default_rng([self.seed, 7]), FRAME_W, FRAME_H)
                self._paste(canvas, self.faces[code], quad, code)
                if moving:
                    self._hand(rng, canvas, quad, int(rng.integers(4)), w, [quad])
                img, _, _ = self._camera(rng, canvas, w)
                out.append(img)
        return out

    def card_patch(self, rng: np.random.Generator, face: np.ndarray, hand_corner: int | None = None,
                   code: str | None = None) -> tuple[np.ndarray, TrueCard]:  # fmt: skip
        """One card, any way round, alone on a patch of felt, through the same camera model.

        Fast training and test data: the frame generator's optics and sensor at the size of a card.
        """
        cond = self.condition
        w = rng.uniform(*cond.card_width)
        h = w * CARD_ASPECT
        size = int(1.7 * h) + 16
        theta = rng.uniform(0, 2 * math.pi)
        corners = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]]) @ _rot(theta).T
        corners = corners * rng.uniform(0.93, 1.0, (4, 1))      # mild perspective
        corners += size / 2 + rng.uniform(-0.06, 0.06, 2) * w
        card = TrueCard(code, corners, None, hand_corner)
        canvas = self._felt(rng, size, size)
        self._paste(canvas, face, corners, (code, id(face)))
        if hand_corner is not None:
            self._hand(rng, canvas, corners, hand_corner, w, [corners])
        img, _, _ = self._camera(rng, canvas, w)
        return img, card

    # ------------------------------------------------------------------ drawing

    def _face(self, img: np.ndarray, key: object, width: int) -> np.ndarray:
        import cv2

        ck = (key, width)
        out = self._scaled.get(ck)
        if out is None:
            hh = int(round(img.shape[0] * width / img.shape[1]))
            out = cv2.resize(img, (width, hh), interpolation=cv2.INTER_AREA)
            if len(self._scaled) > 600:
                self._scaled.clear()
            self._scaled[ck] = out
        return out

    def _paste(self, canvas: np.ndarray, face: np.ndarray, quad: np.ndarray, key: object) -> None:
        import cv2

        width = float(np.linalg.norm(quad[1] - quad[0]))
        src_w = int(min(face.shape[1], max(32, 2 ** math.ceil(math.log2(max(width, 1) * 1.5)))))
        f = self._face(face, key, src_w)
        fh, fw = f.shape[:2]
        src = np.float32([[0, 0], [fw, 0], [fw, fh], [0, fh]])
        x0, y0 = np.floor(quad.min(axis=0)).astype(int) - 1
        x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 2
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, canvas.shape[1]), min(y1, canvas.shape[0])
        if x1 <= x0 or y1 <= y0:
            return
        m = cv2.getPerspectiveTransform(src, np.float32(quad - [x0, y0]))
        warped = cv2.warpPerspective(f, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))  # fmt: skip
        alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
        roi = canvas[y0:y1, x0:x1]
        roi[:] = (warped[:, :, :3] * alpha + roi * (1 - alpha)).astype(np.float32)

    def _felt(self, rng, width: int, height: int) -> np.ndarray:
        return self._felt_named(rng, width, height)[0]

    def _felt_named(self, rng, width: int, height: int) -> tuple[np.ndarray, str]:
        import cv2

        # A base colour (green unless the condition says otherwise), a low-frequency mottle, a weave.
        felts = self.condition.felts
        name = felts[0] if len(felts) == 1 else felts[int(rng.integers(len(felts)))]
        base = np.array([rng.uniform(*r) for r in FELTS[name]], np.float32)
        low = cv2.resize(rng.normal(0, 1, (9, 16)).astype(np.float32), (width, height),
                         interpolation=cv2.INTER_CUBIC)  # fmt: skip
        fine = rng.standard_normal((height, width), dtype=np.float32)
        fine = cv2.GaussianBlur(fine, (0, 0), 0.8)
        canvas = base[None, None, :] * (1 + 0.06 * low[..., None] + 0.05 * fine[..., None])
        return canvas.astype(np.float32), name

    def _render(self, rng, rng_cam, cards, chips, hand, w) -> tuple[np.ndarray, str]:
        canvas, felt = self._felt_named(rng, FRAME_W, FRAME_H)
        for card in cards:
            if card.code is None:
                b = int(rng.integers(len(self.backs)))
                self._paste(canvas, self.backs[b], card.quad, ("back", b))
            else:
                self._paste(canvas, self.faces[card.code], card.quad, card.code)
        for p, rad in chips:
            self._chip(rng, canvas, p, rad)
        if hand is not None:
            self._hand(rng_cam, canvas, hand[0], hand[1], w, [c.quad for c in cards])
        return canvas, felt

    def _chip(self, rng, canvas, p, rad) -> None:
        import cv2

        colours = [(40, 40, 200), (200, 90, 30), (30, 30, 30), (40, 140, 40), (200, 200, 200), (30, 120, 230)]
        col = colours[int(rng.integers(len(colours)))]
        c = (int(round(p[0] * 4)), int(round(p[1] * 4)))
        r4 = int(round(rad * 4))
        cv2.circle(canvas, c, r4, col, -1, cv2.LINE_AA, shift=2)
        # Edge spots, an inner ring, a centre label.
        spot = (235, 235, 235)
        n = int(rng.choice([4, 6, 8]))
        off = rng.uniform(0, 360)
        for i in range(n):
            a0 = off + i * 360 / n
            cv2.ellipse(canvas, c, (int(r4 * 0.86), int(r4 * 0.86)), 0, a0, a0 + 360 / n / 2.5, spot,
                        max(2, int(rad * 0.28)), cv2.LINE_AA, shift=2)  # fmt: skip
        cv2.circle(canvas, c, int(r4 * 0.62), spot, max(1, int(rad * 0.06)), cv2.LINE_AA, shift=2)
        label = tuple(int(min(255, v * 0.5 + 120)) for v in col)
        cv2.circle(canvas, c, int(r4 * 0.5), label, -1, cv2.LINE_AA, shift=2)

    def _hand(self, rng, canvas, quad, corner, w, quads) -> None:
        import cv2

        tones = [(150, 180, 225), (120, 150, 205), (95, 125, 175), (60, 85, 125), (45, 60, 90)]
        skin = np.array(tones[int(rng.integers(len(tones)))], np.float32) * rng.uniform(0.9, 1.1)
        if quad is None:   # a hand on the empty felt
            tip = rng.uniform([200, 150], [FRAME_W - 200, FRAME_H - 150])
            direction = rng.normal(0, 1, 2)
        else:
            cen = quad.mean(axis=0)
            tip = quad[corner] + (cen - quad[corner]) * rng.uniform(0.08, 0.18)
            out = quad[corner] - cen
            out = out / (np.linalg.norm(out) + 1e-9)
            # The arm comes from off the card, the way that crosses the fewest other cards.
            best, best_cost = out, None
            others = [q for q in quads if q is not quad]
            for _ in range(12):
                d = _rot(math.radians(rng.uniform(-50, 50))) @ out
                pts = [tip + d * t * w for t in np.linspace(0.6, 3.5, 12)]
                cost = sum(_inside(q, p) for q in others for p in pts)
                if best_cost is None or cost < best_cost:
                    best, best_cost = d, cost
            direction = best
        direction = direction / (np.linalg.norm(direction) + 1e-9)
        normal = np.array([-direction[1], direction[0]])
        finger_len = 0.55 * w
        palm_c = tip + direction * (finger_len + 0.3 * w)
        sleeve_dir = direction
        # Sleeve: a wide band from behind the palm to far off the frame.
        sleeve_cols = [(20, 20, 20), (40, 30, 110), (90, 40, 30), (60, 60, 60)]
        if self.condition.white_sleeves:
            sleeve_cols.append((215, 215, 210))
        sc = sleeve_cols[int(rng.integers(len(sleeve_cols)))]
        s0 = palm_c + sleeve_dir * 0.45 * w
        s1 = s0 + sleeve_dir * 3 * w
        sw = 0.45 * w
        sleeve = np.array([s0 + normal * sw, s1 + normal * sw, s1 - normal * sw, s0 - normal * sw])
        cv2.fillConvexPoly(canvas, np.int32(np.round(sleeve * 4)), sc, cv2.LINE_AA, shift=2)
        # Palm.
        ang = math.degrees(math.atan2(direction[1], direction[0]))
        cv2.ellipse(canvas, (int(palm_c[0] * 4), int(palm_c[1] * 4)), (int(0.42 * w * 4), int(0.36 * w * 4)),
                    ang, 0, 360, skin.tolist(), -1, cv2.LINE_AA, shift=2)  # fmt: skip
        # Four fingers fanning out towards the corner, and a thumb.
        for i, spread in enumerate((-0.22, -0.07, 0.08, 0.22)):
            base = palm_c - direction * 0.25 * w + normal * spread * w
            end = tip + normal * spread * 0.6 * w - direction * (0.05 * abs(i - 1.5) * w)
            cv2.line(canvas, (int(base[0] * 4), int(base[1] * 4)), (int(end[0] * 4), int(end[1] * 4)),
                     (skin * rng.uniform(0.92, 1.05)).tolist(), max(2, int(0.13 * w)), cv2.LINE_AA, shift=2)  # fmt: skip
        thumb = palm_c + normal * 0.45 * w - direction * 0.2 * w
        cv2.line(canvas, (int(palm_c[0] * 4), int(palm_c[1] * 4)), (int(thumb[0] * 4), int(thumb[1] * 4)),
                 skin.tolist(), max(2, int(0.15 * w)), cv2.LINE_AA, shift=2)  # fmt: skip

    # ------------------------------------------------------------------ camera

    def _camera(self, rng, img: np.ndarray, w: float, targets=()) -> tuple[np.ndarray, bytes, dict[str, Any]]:
        import cv2

        cond = self.condition
        params: dict[str, Any] = {}
        fh, fw = img.shape[:2]
        # Light: a linear falloff in a random direction, then a glare spot (added light).
        d = rng.uniform(0, 2 * math.pi)
        g = rng.uniform(0, cond.gradient) * min(1.0, fw / FRAME_W)   # a patch sees part of it
        xs = (np.arange(fw, dtype=np.float32) - fw / 2) / FRAME_W
        ys = (np.arange(fh, dtype=np.float32) - fh / 2) / FRAME_W
        ramp = math.cos(d) * xs[None, :] + math.sin(d) * ys[:, None]
        light = 1.0 - g * (ramp - ramp.min()) / max(float(ramp.max() - ramp.min()), 1e-6)
        img = img * light[..., None]
        params["gradient"] = round(g, 3)
        if rng.random() < cond.glare_p:
            amp = rng.uniform(*cond.glare)
            sig = rng.uniform(0.25, 0.7) * w
            gx, gy = rng.uniform(0, fw), rng.uniform(0, fh)
            if cond.glare_index_p > 0 and targets and rng.random() < cond.glare_index_p:
                gx, gy = targets[int(rng.integers(len(targets)))][1] + rng.normal(0, 0.1 * w, 2)
            params["glare_at"] = (float(gx), float(gy), float(sig))
            blob = np.exp(-(((np.arange(fw) - gx) ** 2)[None, :] + ((np.arange(fh) - gy) ** 2)[:, None])
                          / (2 * sig * sig)).astype(np.float32)  # fmt: skip
            img = img + amp * blob[..., None]
            params["glare"] = round(amp, 1)
        img = np.clip(img, 0, 255)
        # Optics and motion.
        if rng.random() < cond.motion_p:
            length = rng.uniform(*cond.motion_blur)
            if length >= 1.0:
                k = int(math.ceil(length)) | 1
                kern = np.zeros((k, k), np.float32)
                ang = rng.uniform(0, math.pi)
                c = (k - 1) / 2
                for t in np.linspace(-length / 2, length / 2, 4 * k):
                    x, y = c + t * math.cos(ang), c + t * math.sin(ang)
                    kern[int(round(y)), int(round(x))] += 1
                img = cv2.filter2D(img, -1, kern / kern.sum())
            params["motion_blur"] = round(length, 2)
        else:
            rad = rng.uniform(*cond.defocus)
            if rad >= 0.5:
                k = int(math.ceil(rad)) * 2 + 1
                kern = np.zeros((k, k), np.float32)
                cv2.circle(kern, (k // 2 * 8, k // 2 * 8), int(rad * 8), 1.0, -1, cv2.LINE_AA, shift=3)
                img = cv2.filter2D(img, -1, kern / kern.sum())
            params["defocus"] = round(rad, 2)
        # Exposure, white balance, gamma (one LUT per channel), sensor noise, JPEG.
        gain = rng.uniform(*cond.gain)
        wb = 1 + rng.uniform(-cond.white_balance, cond.white_balance, 3)
        gamma = rng.uniform(*cond.gamma)
        sigma = rng.uniform(*cond.noise)
        img = img + np.float32(sigma) * rng.standard_normal(img.shape, dtype=np.float32)
        img = np.clip(img, 0, 255).astype(np.uint8)
        levels = np.arange(256, dtype=np.float32)
        for ch in range(3):
            lut = np.clip(255 * (np.clip(levels * gain * wb[ch], 0, 255) / 255) ** (1 / gamma), 0, 255)
            img[:, :, ch] = cv2.LUT(img[:, :, ch], lut.astype(np.uint8))
        q = int(rng.integers(cond.jpeg[0], cond.jpeg[1] + 1))
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
        assert ok
        jpeg = buf.tobytes()
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        params.update(gain=round(gain, 3), gamma=round(gamma, 3), wb=[round(float(v), 3) for v in wb],
                      noise=round(sigma, 2), jpeg=q)  # fmt: skip
        return out, jpeg, params


def with_overrides(cond: Condition, **kw: Any) -> Condition:
    return replace(cond, **kw)
