"""How one card's readings count as evidence (:mod:`shoe_daemon.vision.recognizer` combines them):
a glyph's probabilities given it is a glyph, the suit of the centre's pips, of the two index
corners and of a court's picture, the odds the index ink's colour gives, and the card a whole clear
index names on its own."""

from __future__ import annotations

import math

import numpy as np

from shoe_daemon.game.cards import RANKS, SUITS

MAX_CLUTTER = 0.12     # share of ink around an index's glyphs beyond which it is not an index
RETRY_REJECT = 0.1     # "not a glyph" probability under which a corner's second reading counts
# Index ink whose redness (red less the larger of green and blue, against the card's white) is
# below this is of another colour than red or black (blue, green). Black ink reads ~0 (1 % of the
# cardsJS corners of nominal frames below -0.12); the kennard-4colour deck's blue and green ink
# -0.16 to -0.84 (seed 777, nominal frames; not the benchmark's).
OTHER_INK = -0.15
SUIT_DOUBT = 0.4        # a pip's "not a pip" probability above which it is doubt, not dropped
# A court's two index pips combine as two readings (index_suit) only when each is a sure pip, its
# "not a pip" share at most this: a kennard 3H's pips read D in both corners (0.92 and 0.98 of the
# suits), the one at 0.34 "not a pip" (own seed 880101, frame 50). Of the 3,658 pairs of sure,
# agreeing pips of seeds 880100-880105 (the six registry and peek designs, nominal) none named a
# wrong suit at 0.99 or more (product, with the ink's colour); five at 0.93-0.98 did.
SURE_PIP = 0.2


def rank_q(p: np.ndarray) -> np.ndarray:
    """Rank probabilities of one glyph, given it is a rank glyph (its "not a rank" share dropped)."""
    return p[:13] / max(1e-9, 1.0 - p[13])


def suit_q(p: np.ndarray) -> np.ndarray:
    """Suit probabilities of one pip, given it is a pip (its "not a pip" share dropped).

    A blob the classifier half refuses (0.56 club, 0.44 "not a pip": a speck under a small
    court's rank) is no sure club: above SUIT_DOUBT that share is doubt, spread over the suits.
    """
    if p[4] > SUIT_DOUBT:
        return p[:4] + p[4] / 4.0
    return p[:4] / max(1e-9, 1.0 - p[4])


def centre_suit(slots, sp: np.ndarray, reject: float) -> np.ndarray | None:
    """The suit the centre's pips read (the mean of those clearly a pip), or None."""
    q = [suit_q(sp[i]) for i in slots["pip"] if sp[i][4] <= reject]
    return np.mean(q, axis=0) if q else None


def index_suit(suits: list[np.ndarray], court: bool) -> np.ndarray:
    """The index corners' suit, one piece of evidence (the floor ``log(0.01 + p)`` is applied to
    it once): the two corners print one glyph and can fail together, so they never count twice.

    Their mean, except when ``court`` (a court whose two index pips are each a sure pip, SURE_PIP)
    and both corners name the same suit: their product, normalised. A court's suit rests on its
    index alone (no centre pips; the picture's symbols mostly hidden), and the mean of two
    agreeing corners at 0.99 stayed under the ``ok`` threshold however sure both were (a peek
    deck's 5-7 px pips read 0.93-0.99: its black courts gave the value only). The product is still
    capped by the floor at ~100:1, like one corner's; only two agreeing corners each fairly sure
    (0.95 and 0.96 within the ink's colour) reach it. A pip card keeps the mean: its centre pips
    are its second source.
    """
    if court and len(suits) == 2 and int(suits[0].argmax()) == int(suits[1].argmax()):
        both = suits[0] * suits[1]
        return both / both.sum()
    return np.mean(suits, axis=0)


def court_suit(court, sp: np.ndarray) -> np.ndarray | None:
    """A court picture's suit, from the symbols in its corners: ``court`` = [(row of ``sp``, turned)].

    Evidence of its own, like a pip card's centre pips, only when each half of the picture shows
    a symbol clearly a pip and every such symbol gives one suit (the picture is printed twice, so
    a piece of the figure taken for a pip in one half is refused, or reads alike, in the other).
    """
    sure = [(sp[i], turned) for i, turned in court if sp[i][4] <= RETRY_REJECT]
    if {turned for _p, turned in sure} != {False, True}:
        return None
    q = [p[:4] / (1.0 - p[4]) for p, _t in sure]
    if len({int(x.argmax()) for x in q}) != 1:
        return None
    return np.mean(q, axis=0)


def ink_colour(red: float) -> np.ndarray | None:
    """The odds of the suits S, H, D, C that the index ink's redness ``red`` gives (floored at
    0.002), or None when it gives none.

    Red or black ink tells the suit's colour. Ink of another colour tells nothing: a four-colour
    deck's blue diamonds and green clubs, or black or red ink under a strong colour cast (blurred
    into a blue felt: it reads green or blue as much as they do, so the hue is no hint of the suit
    either; taken as one, a KS read KC). Nor does ink not measured (nan).
    """
    if not red >= OTHER_INK:
        return None
    p_red = 1.0 / (1.0 + math.exp(-(red - 0.3) / 0.05))
    return 0.002 + np.array([1 - p_red, p_red, p_red, 1 - p_red])


def clear_corner_guess(corners, slots, rp, sp, reject: float) -> tuple[str, float, int] | None:
    """The card a whole clear index names (rank and suit each clearly a glyph, in clean paper), its
    probability and its corner (0: top left, 1: bottom right): a card whose other corner and
    centre lie under a sleeve or a hand shows only this; each corner's suit is its pip's with its
    ink's colour (:func:`ink_colour`). None when no corner is clear, or a glyph of another corner
    (not rejected: ``reject``) reads another rank or suit."""
    ranks, suits, whole = set(), set(), []
    for k, r in enumerate(corners):
        i, j = slots["rank"][k], slots["suit"][k]
        if i is None or rp[i][13] > reject or r.clutter > MAX_CLUTTER:
            continue
        rank = rank_q(rp[i])
        ranks.add(int(rank.argmax()))
        if j is None or sp[j][4] > reject:
            continue
        # Its suit with the index ink's colour, as a card read whole has it (Recognizer._decide):
        # a peek index's 5-7 px suit pip alone read a red 7H and 9D as spades (0.73, 0.72) and a
        # 4D D at only 0.75, their ink clearly red (0.43-0.63), so the corner model's right
        # reading found no agreement; a 7D's two corners read S and D, and no guess was made
        # (own seeds 889305 frame 78, 889309 frame 91, 884000 frame 402, 889316 frame 28;
        # font-peek nominal, a sleeve over the rest of the card).
        suit = suit_q(sp[j])
        colour = ink_colour(r.red)
        if colour is not None:
            suit = (0.01 + suit) * colour
            suit /= suit.sum()
        suits.add(int(suit.argmax()))
        if rp[i][13] <= RETRY_REJECT and sp[j][4] <= RETRY_REJECT:
            whole.append((int(rank.argmax()), int(suit.argmax()), float(rank.max() * suit.max()), k))
    if not whole or len(ranks) != 1 or len(suits) != 1:
        return None
    r, s, p, k = max(whole, key=lambda g: g[2])
    return RANKS[r] + SUITS[s], p, k
