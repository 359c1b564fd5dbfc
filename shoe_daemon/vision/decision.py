"""One card's answer from its readings: ``ok``, ``partial`` or ``unknown``, or why it is no card.

The recogniser (:mod:`shoe_daemon.vision.recognizer`) reads a card's two index corners and its
centre; :func:`decide` weighs them as independent evidence. The corners' ranks, less one the
centre contradicts, and the centre's pip count or picture give a posterior over the 13 ranks; the
index pips, the centre's pips, a court's symbols and the ink's colour one over the 4 suits. Any
answer needs the centre's support, and every reading made must agree on the value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from shoe_daemon.game.cards import RANK_VALUES, RANKS, SUITS
from shoe_daemon.vision import evidence
from shoe_daemon.vision.evidence import MAX_CLUTTER, RETRY_REJECT, SURE_PIP
from shoe_daemon.vision.index import smear
from shoe_daemon.vision.pips import PICTURE_FROM_EDGE
from shoe_daemon.vision.presence import no_face_ink
from shoe_daemon.vision.result import CardResult
from shoe_daemon.vision.zones import zone_of

RANK_OF_COUNT = {1: "A", **{n: str(n) for n in range(2, 10)}, 10: "T"}
VALUES = np.array([RANK_VALUES[r] for r in RANKS])
NOT_SURE = "not sure it is a face-up card"
NO_INDEX = "no readable index: "
# The tallest rank glyph (px of the 224-px rectified card) a court's J/Q/K is believed from: the
# trained indices are 13-24 px tall; a jumbo index's glyphs are 30-45 (or split into pieces).
MAX_RANK_H = 28
# A rank glyph whose edges run this much one way is motion blur's streaks (index.smear): on a
# court the index alone names J, Q or K, and streaks are believed for none (a smeared QS read K in
# both corners, 0.81 and 0.86; own seed 884002 table-stress frame 2). Court glyphs read right
# reach 0.65 in both corners (0.74 in one) on own seed 886500's nominal kennard frames, not the
# benchmark's.
SMEARED = 0.75
# A corner whose rank and suit are each clearly a glyph ("not a glyph" <= RETRY_REJECT), in clean
# paper: a face-up card's index, reported (``unknown``) even when nothing else of the face reads.
CLEAR_INDEX = "a whole clear index"
# What decide says when one index corner named a rank the centre contradicts (ignored): a
# pair-sized outline saying so gives no value (Recognizer._two_side_by_side).
CORNER_AGAINST_CENTRE = "against the centre: ignored"

@dataclass(frozen=True)
class Thresholds:
    ok: float = 0.985          # raw posterior of the exact card for "ok"
    partial: float = 0.985     # raw posterior of the value for "partial"
    corner_reject: float = 0.5  # a corner whose "not a glyph" probability is above this is ignored

def _calibrate(table: list[list[float]] | None, raw: float) -> float:
    """Piecewise-linear map raw score -> probability of being right (identity if no table)."""
    if not table:
        return raw
    xs = [p[0] for p in table]
    ys = [p[1] for p in table]
    return float(np.interp(raw, xs, ys))


def decide(cand, corners, pip, slots, rp, sp, zones, ink: np.ndarray, th: Thresholds,
           calibration: dict) -> CardResult | str:  # fmt: skip
    """One card from its readings (index ``corners``, centre ``pip``, classifier rows ``rp``,
    ``sp``; ``th`` the recogniser's thresholds, ``calibration`` its models' score-to-probability
    tables): a :class:`CardResult`, or why it is no card (no index corner read, or no sign of a
    face-up card). The corners' ranks, less one the centre contradicts, are weighed with the
    centre's; the suit with every source of it.
    """
    read = _read_corners(corners, slots, rp, sp, th.corner_reject)
    if not read.ranks:
        return NO_INDEX + "; ".join(read.reasons)
    support = _centre_support(pip)
    _ignore_corner_against_centre(read, corners, pip, support)
    rank = _rank_evidence(read, pip, support)
    court_unread = _court_unread(corners, pip, read.reasons)
    no_face = _not_face_up(read, pip, support, rank.agree, ink)
    if no_face is not None:
        return no_face
    suit_post = _suit_posterior(read, pip, slots, sp, th.corner_reject)
    return _verdict(cand, zones, pip, support, rank, suit_post, court_unread, read.reasons, th, calibration)


def _verdict(cand, zones, pip, support, rank: _RankEvidence, suit_post: np.ndarray, court_unread: bool,
             reasons: list[str], th: Thresholds, cal: dict) -> CardResult:  # fmt: skip
    """``ok`` when the exact card is sure, ``partial`` when its value is, else ``unknown``."""
    quad = np.round(cand.quad, 1).tolist()
    zone = zone_of(zones, cand.quad.mean(axis=0)) if zones else None
    rank_post, agree, veto = rank.post, rank.agree, rank.veto
    r_best = int(rank_post.argmax())
    s_best = int(suit_post.argmax())
    value_post = np.bincount(VALUES, weights=rank_post, minlength=10)
    v_best = int(value_post.argmax())
    p_value = float(value_post[v_best])
    p_card = float(rank_post[r_best] * suit_post[s_best])
    code = RANKS[r_best] + SUITS[s_best]
    # Every reading that was made must agree on the value for any answer at all.
    seen_values = {RANK_VALUES[RANKS[i]] for i in rank.picks}
    if support is not None:
        seen_values |= {RANK_VALUES[RANKS[i]] for i in support} if pip.kind == "pips" else {0}
    value_agreed = len(seen_values) == 1
    # Any answer needs the centre's support: the index corners share the design's glyphs, and a
    # classifier's error on an unseen design repeats in both (a "3" read "5" twice).
    corroborated = support is not None and not veto
    if agree and not veto and corroborated and p_card >= th.ok and not court_unread:
        return CardResult(code, RANK_VALUES[RANKS[r_best]], "ok", _calibrate(cal.get("card"), p_card), quad, zone,
                          "", rank_post, suit_post)  # fmt: skip
    if value_agreed and p_value >= th.partial and (corroborated or veto):
        if agree and not veto and rank_post[r_best] >= th.ok and not court_unread:
            why = f"rank {RANKS[r_best]} sure, suit not"
        else:
            why = f"value {v_best} sure, exact rank not"
        return CardResult(None, v_best, "partial", _calibrate(cal.get("value"), p_value), quad, zone,
                          "; ".join([why] + reasons), rank_post, suit_post)  # fmt: skip
    if support is None:
        reasons.append(f"centre: {pip.reason or 'unclear'}")
    why = f"unsure: best guess {code} ({p_card:.2f}), value {v_best} ({p_value:.2f})"
    return CardResult(None, None, "unknown", _calibrate(cal.get("unknown"), p_value), quad, zone,
                      "; ".join([why] + reasons), rank_post, suit_post)  # fmt: skip


@dataclass
class _CornerReadings:
    """The index corners a card's rank was read from, in order (a corner read, ``_read_corners``).

    Per corner read: ``ranks`` its rank's probabilities, ``suits`` its suit's (None when its suit
    pip was not read), ``reds`` its ink's redness, ``doubts`` its suit pip's "not a pip" share (1
    when no pip was read). ``clear``: the corners with a whole index, rank and suit each clearly a
    glyph. ``reasons``: why a corner or a reading gave less, in order, for the card's reason.
    """

    ranks: list = field(default_factory=list)
    suits: list = field(default_factory=list)
    reds: list = field(default_factory=list)
    doubts: list = field(default_factory=list)
    clear: int = 0
    reasons: list[str] = field(default_factory=list)


@dataclass
class _RankEvidence:
    """The rank: ``post`` its posterior over the 13 ranks, ``picks`` the ranks the index corners
    named, ``agree`` whether they named one, ``veto`` whether the centre contradicts the index."""

    post: np.ndarray
    picks: set[int]
    agree: bool
    veto: bool


def _read_corners(corners, slots, rp, sp, reject: float) -> _CornerReadings:
    """Each index corner's rank and suit (rows of ``rp``, ``sp``), or why it gave none: a corner
    whose rank glyph is no glyph (above ``reject``) or lies in ink all round gives nothing."""
    read = _CornerReadings()
    for k, r in enumerate(corners):
        name = "top-left" if k == 0 else "bottom-right"
        i = slots["rank"][k]
        if i is None:
            read.reasons.append(f"{name} index: {r.reason}")
            continue
        p = rp[i]
        if p[13] > reject:
            read.reasons.append(f"{name} index: not a rank glyph")
            continue
        if r.clutter > MAX_CLUTTER:
            read.reasons.append(f"{name} index: ink all around the glyphs (pattern, not an index)")
            continue
        read.ranks.append(evidence.rank_q(p))
        j = slots["suit"][k]
        suit_q = None
        if j is None:
            read.reasons.append(f"{name} index: {r.reason or 'no suit pip'}")
        elif sp[j][4] <= reject:
            suit_q = evidence.suit_q(sp[j])
            read.clear += p[13] <= RETRY_REJECT and sp[j][4] <= RETRY_REJECT
        else:
            read.reasons.append(f"{name} index: suit pip not recognised")
        read.suits.append(suit_q)
        read.doubts.append(1.0 if suit_q is None else float(sp[j][4]))
        read.reds.append(r.red)
    return read


def _centre_support(pip) -> set[int] | None:
    """The ranks (indices into RANKS) the centre shows, independent evidence: a pip count's one, a
    picture's J, Q and K; None when the centre is unclear."""
    support = None
    if pip.kind == "pips":
        support = {RANKS.index(RANK_OF_COUNT[pip.count])}
    elif pip.kind == "picture":
        support = {RANKS.index(r) for r in "JQK"}
    return support


def _ignore_corner_against_centre(read: _CornerReadings, corners, pip, support: set[int] | None) -> None:
    """Drop from ``read`` an index corner the centre contradicts while the other corner's rank,
    which the centre confirms, differs (saying so in ``read.reasons``)."""
    # When the corners disagree and the centre contradicts one of them, that one is misread
    # (a blurred or half-hidden glyph): the other corner, which the centre confirms, stands.
    # Not by a picture when the corners were read at two index scales: a card's two indices are
    # of one size, so one of them is a piece taken at the wrong scale, and a picture (any of
    # J, Q, K) may be as wrong (a hand over a 9C's pips taken for one, its other corner read
    # "Q" at the peek scale). A pip count names one rank: it still settles them. Nor by a
    # "picture" that is partly a hand or a sleeve from the card's edge: a 9C's clear "9" was
    # ignored against a dark palm over its pips and the fingers its other corner read Q.
    ranks = read.ranks
    if (len(ranks) == 2 and support is not None and pip.edge_ink < PICTURE_FROM_EDGE
            and (pip.kind == "pips" or corners[0].scale == corners[1].scale)):
        keep = [q for q in ranks if int(q.argmax()) in support]
        if len(keep) == 1 and int(ranks[0].argmax()) != int(ranks[1].argmax()):
            bad = 0 if int(ranks[0].argmax()) not in support else 1
            read.reasons.append(f"one index corner read {RANKS[int(ranks[bad].argmax())]}, {CORNER_AGAINST_CENTRE}")
            # All of that corner goes: its suit pip and ink colour were read from the same
            # misplaced or half-hidden blobs.
            read.ranks, read.suits, read.reds, read.doubts = (
                [x for i, x in enumerate(v) if i != bad] for v in (read.ranks, read.suits, read.reds, read.doubts))


def _index_rank(ranks: list, pip, support: set[int] | None) -> np.ndarray:
    """The index corners' ranks combined into one distribution over the 13 ranks."""
    # The two corners show the same glyph (same design, same light): their errors go together,
    # so they are averaged, not multiplied; each must agree with the other to be believed.
    # Except when both name the rank the centre's pip count shows: a shared error is what the
    # count would veto, so one sure corner and one fair one (0.99 and 0.54 "5", five pips) are
    # a sure rank, not their mean's 0.77 (a peek deck's blurred small ranks: 9 more cards on
    # own seeds 880100-880105, none wrong).
    idx_rank = np.mean(ranks, axis=0)
    if pip.kind == "pips" and len(ranks) == 2 and {int(q.argmax()) for q in ranks} == support:
        idx_rank = ranks[0] * ranks[1]
    idx_rank /= idx_rank.sum()
    return idx_rank


def _rank_evidence(read: _CornerReadings, pip, support: set[int] | None) -> _RankEvidence:
    """The rank's posterior: the index corners' ranks times the centre's support (a rank it does
    not show 0.05 as likely); the corners' disagreement and the centre's veto go to ``read.reasons``."""
    idx_rank = _index_rank(read.ranks, pip, support)
    picks = {int(q.argmax()) for q in read.ranks}
    agree = len(picks) == 1
    if not agree:
        read.reasons.append("the two index corners read " + " and ".join(sorted(RANKS[i] for i in picks)))
    lik = np.ones(13)
    if support is not None:
        lik = np.full(13, 0.05)
        lik[list(support)] = 1.0
    rank_post = idx_rank * lik
    rank_post /= rank_post.sum()
    veto = support is not None and int(idx_rank.argmax()) not in support
    if veto:
        what = f"{pip.count} pips" if pip.kind == "pips" else "a picture"
        read.reasons.append(f"the index reads {RANKS[int(idx_rank.argmax())]}, the centre shows {what}")
    return _RankEvidence(rank_post, picks, agree, veto)


def _court_unread(corners, pip, reasons: list[str]) -> bool:
    """Whether a court card's J, Q or K is not to be believed (its value 0 still is); why, to ``reasons``."""
    # On a court card the rank rests on the index glyph alone (the picture says J, Q or K, not
    # which): a glyph taller than any index the classifiers were trained on (a jumbo index, or
    # a piece of one) is out of their experience, and its J/Q/K is not believed (value 0 is).
    # Nor when every rank glyph is motion blur's streaks (index.smear): value 0, not which court.
    if pip.kind != "picture":
        return False
    glyphs = [r.rank_raster for r in corners if r.rank_raster is not None]
    if any(r.rank_box is not None and r.rank_box.h / r.scale > MAX_RANK_H for r in corners):
        reasons.append("index glyph larger than any trained index: which court is not read")
        return True
    if glyphs and min(smear(g) for g in glyphs) >= SMEARED:
        reasons.append("index glyphs smeared by motion: which court is not read")
        return True
    return False


def _not_face_up(read: _CornerReadings, pip, support: set[int] | None, agree: bool, ink: np.ndarray) -> str | None:
    """Why the readings may be of no face-up card (``ink``: the card's ink map), or None."""
    # Is it a face-up card at all? A whole index (rank and suit) in a corner, or a rank glyph that
    # the centre confirms. A glyph-like blob on a card back alone is not enough.
    # With the centre unclear, a whole index and the other corner reading alike.
    confirmed = support is not None and any(int(q.argmax()) in support for q in read.ranks)
    full_index = any(q is not None for q in read.suits)
    # Every face has ink in its centre (an ace its pip): a blank centre is a back's plain
    # middle or no card, whatever glyph-like specks its corners show.
    if pip.kind == "unclear" and pip.reason == "no ink in the centre":
        return "no ink in the centre: no face; " + "; ".join(read.reasons)
    if not confirmed and not (full_index and len(read.ranks) == 2 and agree):
        return NOT_SURE + f" (no index the centre confirms; rank glyphs in {len(read.ranks)} corners" \
            + (f", {CLEAR_INDEX}" if read.clear else "") + "): " + "; ".join(read.reasons)
    # Two alike corners alone (the centre neither pips nor a picture) need the face's pip or
    # picture ink, as a deck's lone reading does (enrolled.decide). A back blurred to one flat
    # colour, which its own white balance takes for paper, has none, yet its border lines gave
    # two "T" (or "3") glyphs with a suit pip: enrolled font-peek backs read `unknown` (own
    # seeds 889202 frame 50, 889208 frame 107, table stress: solid ink 0.00, paper 1.00).
    if support is None and no_face_ink(ink):
        return NOT_SURE + " (two index corners alike, but no pip or picture ink): " + "; ".join(read.reasons)
    return None


def _suit_posterior(read: _CornerReadings, pip, slots, sp, reject: float) -> np.ndarray:
    """The suit's posterior over the 4 suits: index pips, centre pips, a court picture's corner
    symbols and the ink's colour, as independent evidence."""
    suits = [q for q in read.suits if q is not None]
    reds = [x for x in read.reds if not math.isnan(x)]
    log_suit = np.zeros(4)
    if suits:
        log_suit += np.log(0.01 + evidence.index_suit(suits, pip.kind == "picture" and max(read.doubts) <= SURE_PIP))
    pip_q = evidence.centre_suit(slots, sp, reject)
    if pip_q is not None:
        log_suit += np.log(0.01 + pip_q)
    court = evidence.court_suit(slots.get("court", ()), sp)
    if court is not None:
        log_suit += np.log(0.01 + court)
    colour = evidence.ink_colour(float(np.mean(reds)) if reds else math.nan)
    if colour is not None:
        log_suit += np.log(colour)
    suit_post = np.exp(log_suit - log_suit.max())
    suit_post /= suit_post.sum()
    return suit_post
