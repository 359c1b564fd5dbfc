"""Card recognition in one overhead frame: ``Recognizer(config).recognize(frame_bgr)``.

Per card found on the felt (:mod:`shoe_daemon.vision.detect`) the card is rectified and three
independent readings are made (:mod:`shoe_daemon.vision.index`, :mod:`shoe_daemon.vision.pips`):

* the top-left index (rank glyph + suit pip), classified by small MLPs trained on glyphs
  printed in many fonts (never whole faces), each with a "not a glyph" class;
* the bottom-right index, turned upright: the same again, from other pixels;
* the centre: the pip count (1-10) or a picture (J Q K), and each pip's suit; and the
  colour (red / black) of the ink.

They are combined (:mod:`shoe_daemon.vision.decision`) as independent evidence (a product of
probabilities) into a posterior over the 13 ranks and one over the 4 suits. A card is reported
``ok`` when the posterior of its exact identity clears a high threshold, ``partial`` (card null,
value given) when only the baccarat value does (e.g. a K, Q, J or 10 whose rank glyph is hidden:
all four count 0), and ``unknown`` otherwise; the confidence is calibrated (empirical probability
of being right, fitted on held-out synthetic frames). A white quadrilateral with no readable index
in either corner (a card back, a chip's label, a face hidden by hands) is reported only when the
face itself shows (:mod:`shoe_daemon.vision.presence`), as ``unknown``: no card is ever made up.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np

from shoe_daemon.vision import evidence
from shoe_daemon.vision.decision import (
    CLEAR_INDEX,
    CORNER_AGAINST_CENTRE,
    MAX_RANK_H,
    NO_INDEX,
    NOT_SURE,
    Thresholds,
    decide,
)
from shoe_daemon.vision.detect import (
    CARD_MAX_SIZE,
    CARD_MIN_SIZE,
    LOOSE_AGREE,
    LOOSE_FILL,
    LOOSE_MAX_SIZE,
    TOO_LARGE_SPLIT,
)
from shoe_daemon.vision.evidence import RETRY_REJECT
from shoe_daemon.vision.result import CardResult, FrameResult
from shoe_daemon.vision.zones import Zone, parse_zones, zone_of

MAX_SIZE_RATIO = CARD_MAX_SIZE   # a "card" this much larger (linearly) than the frame's median is two cards
MIN_SIZE_RATIO = CARD_MIN_SIZE   # and one this much smaller is no card (detection sizes cards alike)
# A "card" whose white neither fills it nor lies along its outline (fill < 0.85, outline < 0.7) and
# this much larger is a card and the glare round it: its quadrilateral follows the glare (a 61-px QC
# in an 81x144-px one, 1.2x the frame's cards; own seed 884010, table stress, frame 82).
MAX_LOOSE_SIZE_RATIO = LOOSE_MAX_SIZE
# A card-shaped outline this large against the frame's other cards (sqrt of area; two cards side
# by side are 1.41x) may be two cards lying long side to long side (Recognizer._two_side_by_side).
# Larger, it is three cards or more (two side by side and one against them: 1.75-1.81x on own seed
# 882020), whose halves are no cards. Own seeds 882020-882224.
PAIR_SIZE = (1.2, 1.6)
# A quadrilateral with an unconfirmed index glyph is still reported (``unknown``) as a face-up card
# when this share of its inner area is solid ink and this share paper (glare, a white cuff or a
# chip's label has next to no solid ink; a back is caught before, by its texture). Set on frames
# of seeds 7, 11 and 12 (empty, stress, table-stress), not the benchmark's.
FACE_MIN_INK = 0.03
FACE_MIN_PAPER = 0.2


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """A setting from a config section or a dict like it; unset (None) gives ``default``."""
    value = obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
    return default if value is None else value


def _quad_area(q: np.ndarray) -> float:
    d1, d2 = q[2] - q[0], q[3] - q[1]
    return abs(float(d1[0] * d2[1] - d1[1] * d2[0])) / 2


def _large_index_boxes(corners, every: bool = False) -> tuple:
    """The glyph boxes (card coordinates) of the corners read at a scale larger than standard
    (``every``: of every corner that gave a glyph, at any scale)."""
    from shoe_daemon.vision.index import CH, CW, Blob

    boxes = []
    for c, r in zip((0, 2), corners, strict=True):
        if not every and (r.scale <= 1.0 or r.suit_box is None):
            continue
        for b in (r.rank_box, r.suit_box):
            if b is None:
                continue
            # the bottom-right corner is read turned half round: back to card coordinates
            boxes.append(b if c == 0 else Blob(CW - b.x1, CH - b.y1, b.w, b.h, b.area))
    return tuple(boxes)


def _sure_only(res):
    """A reading of half a two-card outline: ``ok`` as read, ``partial`` made ``unknown`` (no value)."""
    if not isinstance(res, CardResult) or res.status != "partial":
        return res
    return replace(res, value=None, status="unknown", reason=res.reason + "; half of two cards side by side: no value")


def _pair_sized_no_value(res):
    """A pair-sized outline's ``partial`` reading with an index corner ignored against the centre,
    made ``unknown``: its corners are likely two cards' (a TS and the KS half over it, 1.35x the
    frame's other cards, read T and Q, the T ignored against the KS's picture: value 0; own seed
    889904, responsive, table stress, frame 58), and their value no card's. Not corners that
    named two courts under a picture: a single court's Q read K is the classifier's known slip (a
    KD 1.22x its frame's cards by perspective, read K and Q, value 0 right; own seed 889944 frame
    103)."""
    if not isinstance(res, CardResult) or res.status != "partial" or CORNER_AGAINST_CENTRE not in res.reason:
        return res
    return replace(res, value=None, status="unknown",
                   reason=res.reason + "; the size of two cards side by side, a corner against its centre: no value")


def _halves(cand) -> list:
    """The two card-shaped halves of a card-shaped candidate, cut across its long sides."""
    from shoe_daemon.vision.quad import Candidate, order_corners

    q = order_corners(cand.quad)
    mid_right, mid_left = (q[1] + q[2]) / 2, (q[3] + q[0]) / 2
    return [Candidate(order_corners(np.array(h)), cand.fill, cand.agree, cand.ratio)
            for h in ([q[0], q[1], mid_right, mid_left], [mid_left, mid_right, q[2], q[3]])]


def cand_width(quad: np.ndarray) -> float:
    """A card's width (its shorter side) in pixels."""
    q = np.asarray(quad, np.float32)
    return float(min(np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[2] - q[1])))


class Recognizer:
    """Reads every face-up card in a BGR frame. Thread-compatible: one instance per thread.

    ``config`` is the daemon's :class:`~shoe_daemon.config.Config`, its ``camera`` section, or a
    dict like it: ``zones`` ([{name, polygon}]), optionally ``model`` (an enrolled deck model,
    :mod:`shoe_daemon.vision.deck`) and ``recognizer`` = {``model``: a glyph model path,
    ``ok_threshold``, ``partial_threshold``}. ``model_path`` may name either kind of model file;
    ``deck`` gives a loaded deck model. ``workers`` (else the config's ``recognizer.workers``,
    default 0): 1 reads part of each frame's cards in a second process (:meth:`close` stops it).
    """

    def __init__(self, config: Any = None, *, zones: list[Zone] | None = None, model_path: str | None = None,
                 thresholds: Thresholds | None = None, deck: Any = None, workers: int | None = None):  # fmt: skip
        import cv2  # noqa: F401  (fail here, not in the first frame, when OpenCV is missing)

        from shoe_daemon.vision.model import load_models

        if isinstance(config, dict):
            camera = config.get("camera", config)
        elif config is not None and hasattr(config, "camera"):
            camera = config.camera
        else:
            camera = config
        self.zones = zones if zones is not None else parse_zones(_get(camera, "zones", []) or [])
        from shoe_daemon.vision.deck import is_deck_model, load_deck_model

        opts = _get(camera, "recognizer", {})
        deck_path = _get(camera, "model")
        if model_path and is_deck_model(model_path):
            deck_path, model_path = model_path, None
        self.deck = deck if deck is not None else (load_deck_model(deck_path) if deck_path else None)
        model_path = model_path or _get(opts, "model")
        self.models = load_models(str(model_path) if model_path else None)
        self._scratch: np.ndarray | None = None     # the frame with a fourth channel, for index.rectify
        t = thresholds or Thresholds()
        self.thresholds = Thresholds(ok=float(_get(opts, "ok_threshold", t.ok)),
                                     partial=float(_get(opts, "partial_threshold", t.partial)),
                                     corner_reject=t.corner_reject)  # fmt: skip
        # [camera.recognizer] workers = 1: a second process reads part of each frame's cards
        # (vision.cardpool); 0, the default, reads them all here.
        workers = _get(opts, "workers", 0) if workers is None else workers
        if workers not in (0, 1):
            raise ValueError(f"camera.recognizer.workers: 0 or 1 (got {workers!r})")
        self._worker = None
        if workers:
            from shoe_daemon.vision.cardpool import CardWorker

            self._worker = CardWorker((self.models, self.deck, self.thresholds))

    @classmethod
    def reader(cls, models, deck, thresholds: Thresholds) -> Recognizer:
        """A recogniser with these models, for reading cards only (:mod:`~shoe_daemon.vision.cardpool`'s worker)."""
        rec = cls.__new__(cls)
        rec.zones, rec.models, rec.deck, rec.thresholds = [], models, deck, thresholds
        rec._scratch, rec._worker = None, None
        return rec

    @property
    def worker(self):
        """The card-reading process (:class:`~shoe_daemon.vision.cardpool.CardWorker`) with
        ``workers = 1``, else None: for timing it (its CPU) and for waiting until it is ready."""
        return self._worker

    def close(self) -> None:
        """Stop the card-reading process, if one was started (``workers = 1``); reading goes on in this one."""
        if self._worker is not None:
            self._worker.close()

    # ------------------------------------------------------------------ the frame

    def recognize(self, frame_bgr: np.ndarray, zones: list[Zone] | None = None) -> FrameResult:
        import cv2

        # OpenCV on one thread while a frame is read: its calls here are on small images (a card, a
        # corner, a strip of the frame), where handing half the work to a second thread costs more
        # than it saves, the more so on a shared 2-core host. Same answers; OpenCV's setting is
        # given back after the frame.
        threads = cv2.getNumThreads()
        cv2.setNumThreads(1)
        try:
            return self._recognize(frame_bgr, zones)
        finally:
            cv2.setNumThreads(threads)

    def _recognize(self, frame_bgr: np.ndarray, zones: list[Zone] | None) -> FrameResult:
        from shoe_daemon.vision import detect

        t0 = time.perf_counter()
        if frame_bgr is None or frame_bgr.ndim != 3 or frame_bgr.shape[2] != 3:
            raise ValueError("expected a BGR image (height x width x 3)")
        zones = self.zones if zones is None else zones
        early = self._early(frame_bgr, zones)
        cands, shapes = detect.find_cards(frame_bgr, early) if early is not None else detect.find_cards(frame_bgr)
        # (Of detection's rejections, a card cut by the frame's edge and a "card" too large, whose
        # cards were found from its corners: white card-shaped things, not reported.)
        rejected = [(np.round(q, 1).tolist(), r) for q, r in shapes if r == "out of frame" or r == TOO_LARGE_SPLIT]
        # Every card on the table has one size (perspective aside): a much larger "card" among
        # three or more is two cards touching, side by side; a much smaller one is something
        # else (a chip's white ring, a patch of glare).
        too_large = []
        if len(cands) >= 3:
            sizes = np.array([math.sqrt(_quad_area(c.quad)) for c in cands])
            med = float(np.median(sizes))
            keep = []
            for c, sz in zip(cands, sizes, strict=True):
                loose = c.fill < LOOSE_FILL and c.agree < LOOSE_AGREE
                if sz > (MAX_LOOSE_SIZE_RATIO if loose else MAX_SIZE_RATIO) * med:
                    rejected.append((np.round(c.quad, 1).tolist(), f"too large for a card here ({sz / med:.2f}x)"))
                    too_large.append(c)
                elif sz < MIN_SIZE_RATIO * med:
                    rejected.append((np.round(c.quad, 1).tolist(), f"too small for a card here ({sz / med:.2f}x)"))
                else:
                    keep.append(c)
            cands = keep
        outcomes = self._read_split(frame_bgr, cands, zones, early.given if early is not None else [])
        cands, outcomes = self._two_side_by_side(frame_bgr, cands, outcomes, too_large, zones, rejected)
        # Cards that are backs first, then every other card's outcome, each in detection order.
        rejected += [(np.round(c.quad, 1).tolist(), res) for c, (back, res, _dr) in zip(cands, outcomes, strict=True) if back]
        results, deck_readings = [], []
        for c, (back, res, dr) in zip(cands, outcomes, strict=True):
            if back:
                continue
            if dr is not None:
                deck_readings.append((np.round(c.quad, 1).tolist(), dr))
            if isinstance(res, str):
                rejected.append((np.round(c.quad, 1).tolist(), res))
            else:
                results.append(res)
        # Reading order: by zone, then left to right.
        results.sort(key=lambda c: (c.zone is None, c.zone or "", *c.centre))
        h, w = frame_bgr.shape[:2]
        return FrameResult(results, (time.perf_counter() - t0) * 1000.0, rejected, (w, h), deck_readings)

    def _two_side_by_side(self, frame_bgr: np.ndarray, cands: list, outcomes: list, too_large: list,
                          zones: list[Zone], rejected: list) -> tuple[list, list]:  # fmt: skip
        """Candidates that are two cards lying long side to long side, replaced by those two cards.

        Two such cards make one white outline of a card's proportions (2 x 1.4 card widths), 1.4
        times a card's size, which no size rule tells from a card (true cards reach 1.31-1.35x their
        neighbours): it was read as one card, a false card, or dropped as too large with both cards
        (own seed 881108, kennard, table stress, frame 46: two 6C, 1.33x the frame's other cards).
        Its halves (cut across its long sides) are those two cards, each turned a quarter against
        it: each half is read as a card. The two cards stand when both halves are faces and one of
        them is read ``ok`` (the outline PAIR_SIZE times the frame's other cards, when there are two
        or more to size it by); a half read ``partial`` is reported ``unknown``. A card's own
        halves show its blank border and the side of its pips where their indices would be: on own
        seeds 882020-882224 (table stress, and cards laid side by side) no card's halves were two
        faces with one read, and none 1.1x or more its frame's other cards gave two faces.
        A quadrilateral read ``ok`` or as a back is left alone. One kept as a card at that size with an
        index corner against its centre gives no value (:func:`_pair_sized_no_value`).
        """
        # Sized against the candidates kept as cards and those too large, not what is too small for a
        # card (a 48-px piece of white beside a 128-px 9H and a 116-px 2C made the 9H 1.56x "the
        # others"; own seed 881800, kennard, table stress, frame 53).
        sized = list(cands) + list(too_large)
        sizes = {id(c): math.sqrt(_quad_area(c.quad)) for c in sized}
        # (Not one dropped as too large: that reported no false card, and cards overlapping or offset,
        # not side by side, make such outlines, whose halves are no cards: one half of a 3S under a
        # 7C read value 0; own seed 881502, kennard-jumbo, table stress, frame 69.)
        suspects = [(c, k) for k, (c, (back, res, _dr)) in enumerate(zip(cands, outcomes, strict=True))
                    if not back and not (isinstance(res, CardResult) and res.status == "ok")]
        drop, add = set(), []
        for c, k in suspects:
            others = [sizes[id(o)] for o in sized if o is not c]
            ratio = sizes[id(c)] / float(np.median(others)) if len(others) >= 2 else None
            if ratio is not None and not PAIR_SIZE[0] <= ratio <= PAIR_SIZE[1]:
                continue
            halves = _halves(c)
            read = self._read_cards(frame_bgr, halves, zones)[0]
            faces = [res for back, res, _dr in read if not back and isinstance(res, CardResult)]
            # One half read ok, whatever the size: a single card's halves are faces often enough (its
            # pips turn half round into themselves) that two `unknown` halves made two false cards
            # of one true card (a 6H, 2D, 4S, 3S and 6C of own seeds 883501-883502, font-peek, table
            # stress: 10 false cards in 600 frames). So two cards that are both unknown stay one.
            if len(faces) < 2 or all(r.status != "ok" for r in faces):
                # Kept as one card: when its size says two side by side, a corner against the centre
                # is likely the other card's (the size measured, not guessed: two others or more).
                if ratio is not None:
                    back, res, dr = outcomes[k]
                    outcomes[k] = (back, _pair_sized_no_value(res), dr)
                continue
            drop.add(k)
            rejected.append((np.round(c.quad, 1).tolist(), "two cards side by side: read as its halves"))
            # A half's value without its exact card is not given: a half is a card only as nearly
            # as the two lie side by side.
            add += [(h, (back, _sure_only(res), dr)) for h, (back, res, dr) in zip(halves, read, strict=True)]
        if not add:
            return cands, outcomes
        keep = [(c, o) for k, (c, o) in enumerate(zip(cands, outcomes, strict=True)) if k not in drop] + add
        return [c for c, _ in keep], [o for _, o in keep]

    def _early(self, frame_bgr: np.ndarray, zones: list[Zone]) -> _Early | None:
        """With a card-reading process ready: what hands it cards of the detection's first pass
        while the later passes run (:func:`detect.find_cards`' ``early``)."""
        worker = self._worker
        if worker is None or frame_bgr.dtype != np.uint8 or not worker.available():
            return None
        return _Early(worker, frame_bgr, zones)

    def _read_split(self, frame_bgr: np.ndarray, cands: list, zones: list[Zone], given: list = ()) -> list[tuple]:
        """:meth:`_read_cards` of every candidate, part by the card-reading process when there is one
        ready, the others here (all here when it fails them). ``given``: the cards it was handed
        during detection (:class:`_Early`); else it gets every second card now."""
        worker = self._worker
        if given:
            if worker.failed is not None:
                return self._read_cards(frame_bgr, cands, zones)[0]
            kept, handed = {id(c) for c in cands}, {id(c) for c in given}
            mine = [c for c in cands if id(c) not in handed]
            theirs = [c for c in given if id(c) in kept]
        else:
            if worker is None or len(cands) < 2 or frame_bgr.dtype != np.uint8 or not worker.available():
                return self._read_cards(frame_bgr, cands, zones)[0]
            mine, theirs = cands[0::2], cands[1::2]
            if not worker.submit(frame_bgr, theirs, zones):
                return self._read_cards(frame_bgr, cands, zones)[0]
        mine_out, mine_found = self._read_cards(frame_bgr, mine, zones)
        got = worker.result()
        if got is None:
            other, other_found = self._read_cards(frame_bgr, theirs, zones)
        else:
            other, other_found = got
            if len(theirs) < len(given):
                # A card it read was dropped later (inside another card): the glyphs it found may
                # have been that card's, so its share's own are worked out here (a rare frame).
                place = {id(c): k for k, c in enumerate(given)}
                other = [other[place[id(c)]] for c in theirs]
                if other_found != (False, False) and other_found != mine_found:
                    other, other_found = self._read_cards(frame_bgr, theirs, zones)
        # A share whose cards gave no glyph of a kind at first, where the frame's did, is read
        # again as part of that frame (see _read_cards' ``found``): a few frames under stress.
        found = (mine_found[0] or other_found[0], mine_found[1] or other_found[1])
        if mine_found != found:
            mine_out = self._read_cards(frame_bgr, mine, zones, found)[0]
        if other_found != found:
            other = self._read_cards(frame_bgr, theirs, zones, found)[0]
        by_card = dict(zip((id(c) for c in theirs), other, strict=True))
        by_card.update(zip((id(c) for c in mine), mine_out, strict=True))
        return [by_card[id(c)] for c in cands]

    def _read_cards(self, frame_bgr: np.ndarray, cands: list, zones: list[Zone],
                    found: tuple[bool, bool] = (False, False)) -> tuple[list[tuple], tuple[bool, bool]]:  # fmt: skip
        """Each candidate read, in order: (a card back?, CardResult or why not, the deck's reading or
        None); and whether they gave any rank glyph, any suit glyph at the first reading.

        A candidate's outcome rests on its own pixels (the classifiers' batches give each row the
        same numbers whatever else is in them) and on one thing of the frame's: when no card gave a
        glyph of a kind at first, that kind's probabilities are worked out in float64 (an empty
        float64 array, the later readings' float32 appended to it), else in float32; ``found``
        says the cards read with these gave one. So any share of a frame's cards may be read here
        and the rest elsewhere (:mod:`shoe_daemon.vision.cardpool`), and a share read again when
        its ``found`` is not the frame's.
        """
        batch = CardBatch(self)
        for cand in cands:
            batch.add(frame_bgr, cand)
        return batch.finish(zones, found)

    @property
    def index_scale(self) -> float:
        """Where the corners are read first: the enrolled deck's index scale, else the standard."""
        return self.deck.index_scale if self.deck is not None else 1.0

    def _retries(self) -> list[dict]:
        """The second readings of a corner with no whole index, in order (``read_corner`` options)."""
        from shoe_daemon.vision.index import JUMBO_SCALE, PEEK_SCALE

        first = self.index_scale
        # Last, a small index whose rank and suit run together at the faint threshold, cut apart
        # (index.split_merged): at the peek scale, then the standard.
        return [{"faint": True, "scale": first}] + [{"scale": s} for s in (1.0, JUMBO_SCALE, PEEK_SCALE) if s != first] \
            + [{"faint": True, "split": True, "scale": s} for s in (PEEK_SCALE, 1.0)]

    def _retry(self, per_card, rp, sp, rank_r, rank_b, suit_r, suit_b, add, attempt: dict):
        """One round of second readings (``attempt``) of every corner still without a whole index."""
        from shoe_daemon.vision import index

        n_r, n_s = len(rank_r), len(suit_r)
        retries = []
        for k, (_cand, corners, _pip, slots, (card, ink, white)) in enumerate(per_card):
            for c in range(len(corners)):
                i, j = slots["rank"][c], slots["suit"][c]
                # A glyph taller than any trained index (a piece of a jumbo index read at the
                # standard scale: a jumbo 9 without its stem reads Q) is no whole index either.
                r = corners[c]
                tall = r.rank_box is not None and r.rank_box.h / r.scale > MAX_RANK_H
                rank_ok = i is not None and rp[i][13] <= self.thresholds.corner_reject and not tall
                suit_ok = j is not None and sp[j][4] <= self.thresholds.corner_reject
                if rank_ok and suit_ok:
                    continue
                again = index.read_corner(card, ink, white, (0, 2)[c], features=False, **attempt)
                if again.rank_raster is None or again.suit_raster is None:
                    continue
                extra = {"rank": [], "suit": []}
                add([again], extra)
                retries.append((k, c, again, extra, rank_ok))
        if not retries:
            return rp, sp
        rp = np.concatenate([rp, self.models.rank.proba(index.glyph_features_batch(rank_r[n_r:], rank_b[n_r:], 4))])
        sp = np.concatenate([sp, self.models.suit.proba(index.glyph_features_batch(suit_r[n_s:], suit_b[n_s:], 4))])
        for k, c, again, extra, rank_ok in retries:
            i, j = extra["rank"][0], extra["suit"][0]
            first = per_card[k][3]["rank"][c]
            # At the same scale, the two segmentations must read the rank alike (else the first
            # stands); at another scale the first "rank" was a piece of a larger glyph or a speck.
            # A cut glyph (split) is only a rank glyph and suit pip run together: never against a
            # rank the first reading gave.
            same = again.scale == per_card[k][1][c].scale or attempt.get("split", False)
            if rank_ok and same and int(rp[i][:13].argmax()) != int(rp[first][:13].argmax()):
                continue
            # A second try is believed only as a whole index, each glyph clearly one.
            if rp[i][13] <= RETRY_REJECT and sp[j][4] <= RETRY_REJECT:
                _cand, corners, _pip, slots, _img = per_card[k]
                corners[c] = again
                slots["rank"][c], slots["suit"][c] = i, j
        return rp, sp

    def _recount_beside_large_index(self, per_card, sp, suit_r, suit_b):
        """The centre counted again, without the index's ink, on a card whose index is larger than
        standard (a jumbo index's glyphs reach in among the pips' columns)."""
        from shoe_daemon.vision import index, pips

        n_s = len(suit_r)
        for k, (cand, corners, pip, slots, (card, ink, white)) in enumerate(per_card):
            boxes = _large_index_boxes(corners)
            if pip.kind == "pips" or not boxes or pip.index_boxes == boxes:
                continue
            again = pips.read_pips(ink, card, white, boxes)
            if again.kind == "unclear":
                continue
            slots["pip"] = []
            for b in again.pips[:4] if again.kind == "pips" else []:
                raster, _ = pips.pip_raster(ink, b, index.SUIT_SIZE)
                slots["pip"].append(len(suit_r))
                suit_r.append(raster)
                suit_b.append(b)
            per_card[k] = (cand, corners, again, slots, (card, ink, white))
        if len(suit_r) > n_s:
            sp = np.concatenate([sp, self.models.suit.proba(index.glyph_features_batch(suit_r[n_s:], suit_b[n_s:], 4))])
        return sp

    def _court_symbols(self, per_card, sp, suit_r, suit_b):
        """The suit symbols of a court picture's corners (:func:`pips.picture_suit_blobs`), classified
        like pips: ``slots["court"]`` = [(row of ``sp``, in the picture's turned half)]."""
        from shoe_daemon.vision import index, pips

        n_s = len(suit_r)
        for _cand, corners, pip, slots, (_card, ink, _white) in per_card:
            slots["court"] = []
            if pip.kind != "picture":
                continue
            for b in pips.picture_suit_blobs(ink, _large_index_boxes(corners, every=True)):
                raster, turned = pips.pip_raster(ink, b, index.SUIT_SIZE)
                slots["court"].append((len(suit_r), turned))
                suit_r.append(raster)
                suit_b.append(b)
        if len(suit_r) > n_s:
            sp = np.concatenate([sp, self.models.suit.proba(index.glyph_features_batch(suit_r[n_s:], suit_b[n_s:], 4))])
        return sp

    # ------------------------------------------------------------------ one card

    def _face_unread(self, cand, card, ink, why: str, zones, glyphs: bool = True) -> CardResult | str:
        """A face-up card whose index is there but unreadable (blur, glare): ``unknown``, or no card.

        ``glyphs``: it had a rank-like glyph in both index corners (not confirmed, so not read) and,
        unlike glare or a blank white thing, solid ink on paper in its inner area. Otherwise (no
        reading at all) the face itself must show: :func:`presence.face_evidence`. Either way it
        is reported as a card with neither card nor value, so a person knows a card lies there;
        never when its paper is far darker than its border's stock (a back's pattern:
        :func:`presence.paper_of_border` of ``card``, the rectified card).
        """
        from shoe_daemon.vision.presence import (
            MIN_PAPER_OF_BORDER,
            MIN_SOLID,
            face_evidence,
            margin_on_a_side,
            paper_of_border,
            pip_ink,
        )

        inner = ink[int(0.1 * ink.shape[0]): int(0.9 * ink.shape[0]), int(0.1 * ink.shape[1]): int(0.9 * ink.shape[1])]
        solid = float((inner > 0.4).mean())
        paper = float((inner < 0.2).mean())
        if glyphs:
            # The ink must lie in blobs a pip wide: a back's fine lines, blurred, pass the share.
            # One corner's whole, clear index is a face too: the other corner and the centre may
            # be under the dealer's sleeve or hand, which breaks the face test below.
            ok = ("rank glyphs in 2 corners" in why or CLEAR_INDEX in why) and solid >= FACE_MIN_INK \
                and paper >= FACE_MIN_PAPER
            # A face's paper margin shows along a side at least: a back's pattern reaches them all.
            face, measured = ok and pip_ink(inner) >= MIN_SOLID and margin_on_a_side(ink), ""
        else:   # the face itself: a paper margin, pips or a picture laid out alike both ways up
            face, measured = face_evidence(ink)
        if face and paper_of_border(card) < MIN_PAPER_OF_BORDER:
            return why + "; its paper far darker than its border: a back"
        if not face:
            return why
        zone = zone_of(zones, cand.quad.mean(axis=0)) if zones else None
        why = why.removeprefix(NOT_SURE + " ") + (f"; a face ({measured})" if measured else "")
        return CardResult(None, None, "unknown", 0.0, np.round(cand.quad, 1).tolist(), zone,
                          "a face-up card, not read: " + why)  # fmt: skip

    def _decide(self, cand, corners, pip, slots, rp, sp, zones, ink: np.ndarray) -> CardResult | str:
        """:func:`decision.decide` with this recogniser's thresholds and calibration."""
        return decide(cand, corners, pip, slots, rp, sp, zones, ink, self.thresholds, self.models.calibration)


class _Early:
    """Hands the card-reading process cards of the detection's first pass as they are found (the
    first two, then every second: the caller still has the later passes to run, about one card's
    reading), so it reads them, and decides them once the first pass is over, while the caller
    detects. ``given``: the cards handed, in order.

    Of six cards it gets four, as it did with two of every three; of five or seven, three or four
    (not four or five): the frame with seven cards (one beside the boxes) waited for the process's
    fifth card (own seeds 886200 and 886300, latency-pass frames: mean critical path -0.4 ms).
    """

    GIVE_FIRST = 2      # the first-pass cards handed before the caller keeps every second one

    def __init__(self, worker, frame_bgr: np.ndarray, zones: list[Zone]):
        self.worker, self.frame, self.zones = worker, frame_bgr, zones
        self.seen = 0
        self.given: list = []

    def __call__(self, cand) -> None:
        if cand is None:    # the first pass is over: the process finishes its cards meanwhile
            if self.given:
                self.worker.end()
            return
        self.seen += 1
        if (self.seen > self.GIVE_FIRST and (self.seen - self.GIVE_FIRST) % 2 == 1) or self.worker.failed is not None:
            return
        if not self.given and not self.worker.begin(self.frame, self.zones):
            return
        if self.worker.add(self.frame, cand):
            self.given.append(cand)


class CardBatch:
    """One share of a frame's cards being read (:meth:`Recognizer._read_cards`): each card's pixels
    worked out as it is added (:meth:`add`: rectified, its corners, its centre, an enrolled deck's
    features), then :meth:`finish` classifies all their glyphs in one batch per classifier,
    reads again the corners without a whole index and decides each card. The card-reading
    process adds a frame's first cards while the caller is still detecting the others."""

    def __init__(self, rec: Recognizer):
        self.rec = rec
        self.outcomes: list[tuple | None] = []
        self.order: list[int] = []      # per_card's candidates (not backs), by their place in outcomes
        self.per_card: list[tuple] = []
        # rasters and blobs, classified in one batch
        self.rank_r, self.rank_b, self.suit_r, self.suit_b = [], [], [], []

    def add_corners(self, corners, slots) -> None:
        """The corners' glyphs to be classified, their rows in ``slots``."""
        from shoe_daemon.vision import index

        for r in corners:
            slots["rank"].append(None if r.rank_raster is None else
                                 self._queue(self.rank_r, self.rank_b, r.rank_raster, index.norm_box(r.rank_box, r.scale)))
            slots["suit"].append(None if r.suit_raster is None else
                                 self._queue(self.suit_r, self.suit_b, r.suit_raster, index.norm_box(r.suit_box, r.scale)))

    @staticmethod
    def _queue(rasters: list, boxes: list, raster, box) -> int:
        """A glyph (``raster``, its ``box``) queued for its classifier's batch: its row there."""
        rasters.append(raster)
        boxes.append(box)
        return len(rasters) - 1

    def add(self, frame_bgr: np.ndarray, cand) -> None:
        """Candidate ``cand`` of ``frame_bgr``: everything of it that needs no classifier."""
        from shoe_daemon.vision import deck as deck_features
        from shoe_daemon.vision import index, pips

        rec = self.rec
        if rec._scratch is None or rec._scratch.shape[:2] != frame_bgr.shape[:2]:
            # Kept from frame to frame: a new one each frame is faulted in page by page.
            rec._scratch = np.empty((*frame_bgr.shape[:2], 4), np.uint8)
        n = len(self.outcomes)
        self.outcomes.append(None)
        card = index.rectify(frame_bgr, cand.quad, rec._scratch)
        white = index.white_balance(card)
        ink = index.ink_map(card, white)
        back = pips.back_texture(ink)
        if back is not None:
            self.outcomes[n] = (True, back, None)
            return
        corners = [index.read_corner(card, ink, white, c, features=False, scale=rec.index_scale) for c in (0, 2)]
        pip = pips.read_pips(ink, card, white, _large_index_boxes(corners))
        slots = {"rank": [], "suit": [], "pip": []}
        if rec.deck is not None:
            slots["deck"] = deck_features.features(card, ink, white)
        self.add_corners(corners, slots)
        if pip.kind == "pips":
            for b in pip.pips[:4]:
                raster, _ = pips.pip_raster(ink, b, index.SUIT_SIZE)
                slots["pip"].append(self._queue(self.suit_r, self.suit_b, raster, b))
        self.per_card.append((cand, corners, pip, slots, (card, ink, white)))
        self.order.append(n)

    def finish(self, zones: list[Zone],
               found: tuple[bool, bool] = (False, False)) -> tuple[list[tuple], tuple[bool, bool]]:  # fmt: skip
        """What :meth:`Recognizer._read_cards` gives for the cards added, in order."""
        from shoe_daemon.vision import enrolled, index

        rec, per_card, outcomes, order = self.rec, self.per_card, self.outcomes, self.order
        rank_r, rank_b, suit_r, suit_b = self.rank_r, self.rank_b, self.suit_r, self.suit_b
        first = (bool(rank_r), bool(suit_r))
        rp = rec.models.rank.proba(index.glyph_features_batch(rank_r, rank_b, 4)) if rank_r else \
            np.zeros((0, 14), np.float32 if found[0] else np.float64)
        sp = rec.models.suit.proba(index.glyph_features_batch(suit_r, suit_b, 4)) if suit_r else \
            np.zeros((0, 5), np.float32 if found[1] else np.float64)
        # A corner that gave no whole index (no glyph, a rejected one, no suit) is read again: first
        # segmented at a lower ink threshold (thin strokes of a small or blurred index fall under
        # the first), then at the jumbo and the peek index scales (index.JUMBO_SCALE, index.PEEK_SCALE). A second reading
        # replaces the first only where it gives what the first did not.
        for attempt in rec._retries():
            rp, sp = rec._retry(per_card, rp, sp, rank_r, rank_b, suit_r, suit_b, self.add_corners, attempt)
        sp = rec._recount_beside_large_index(per_card, sp, suit_r, suit_b)
        sp = rec._court_symbols(per_card, sp, suit_r, suit_b)
        readings = rec.deck.read([x[3]["deck"] for x in per_card]) if rec.deck is not None else []
        for k, (cand, corners, pip, slots, _ink) in enumerate(per_card):
            dr = None
            res = rec._decide(cand, corners, pip, slots, rp, sp, zones, _ink[1])
            if isinstance(res, str) and res.startswith(NOT_SURE):
                res = rec._face_unread(cand, _ink[0], _ink[1], res, zones)
            if readings:
                guess = evidence.clear_corner_guess(corners, slots, rp, sp, rec.thresholds.corner_reject)
                deck_corner = (rec.deck.read_corner(slots["deck"], guess[2], _ink, corners[guess[2]].index_box)
                               if guess is not None else None)  # fmt: skip
                dr = enrolled.with_generic_guess(readings[k], res, guess, deck_corner)
                res = enrolled.decide(rec.deck, cand, pip, res, dr, zones,
                                      evidence.centre_suit(slots, sp, rec.thresholds.corner_reject), _ink[1], slots["deck"])  # fmt: skip
            # No reading at all, but a face lies there: reported, with neither card nor value.
            if isinstance(res, str) and res.startswith((NOT_SURE, NO_INDEX)):
                res = rec._face_unread(cand, _ink[0], _ink[1], res, zones, glyphs=False)
            outcomes[order[k]] = (False, res, dr)
        return outcomes, first
