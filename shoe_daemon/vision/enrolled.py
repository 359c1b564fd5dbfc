"""The enrolled deck's reading of a card, checked against the generic reader's.

An enrolled deck (:mod:`shoe_daemon.vision.deck`, written by ``camera enroll``) reads a whole
rectified card with a classifier trained on that deck's own faces. Here its reading meets the
generic reader's (:mod:`shoe_daemon.vision.recognizer`: index glyphs, pip count, picture): the deck
decides where it is sure, two readers naming one card decide together, and the generic reading
may only veto, never be overruled into a wrong card. See docs/camera.md, "Enrolling the deck".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from shoe_daemon.game.cards import RANK_VALUES, RANKS, SUITS
from shoe_daemon.vision.decision import RANK_OF_COUNT
from shoe_daemon.vision.presence import no_face_ink
from shoe_daemon.vision.recognizer import cand_width
from shoe_daemon.vision.result import CardResult
from shoe_daemon.vision.zones import zone_of

# The centre's pips, each clearly a pip, reading the other suit of the deck's suit's colour at
# least this sure veto the enrolled deck's suit. Motion blur across a 7H's hearts left blobs the
# deck model took for diamonds (7D at 1.000, its likeness too) where the generic suit classifier
# read the pips hearts (mean 0.92; own seed 889013 table-stress frame 86, kennard); a 7S read 7C
# at 0.993 and 0.998, its pips spades at 0.74 and 0.995 (own seeds 889600 frame 39, 889500 frame
# 18). Of the other colour the deck's colour maps are believed over the pips' shape (an AH's pip
# read S at 0.93). On own seeds 889500-889605 (six designs, stress and table stress) 0.7 vetoed no
# right card, but on 885700-885805 a four-colour deck's 7S and AS, their pips read C at 0.71 and
# 0.78 (the shape alone; the deck's black against green is right there): 0.9 vetoes no right card
# on either, and leaves the 7S of 0.74 read 7C. Not the benchmark's.
PIP_SUIT_VETO = 0.9


def with_generic_guess(dr, generic, corner: tuple[str, float, int] | None = None,
                       deck_corner: tuple[str, float] | None = None):  # fmt: skip
    """The deck's reading with the generic reader's best guess at the same card (DeckReading.generic);
    without one (no index the centre confirms), the guess of its whole clear index (``corner``),
    with the deck's corner model's reading of that index (``deck_corner``) beside it. An unsure
    generic reading whose guess that whole clear index names too has the corner model's reading
    beside it as well."""
    from dataclasses import replace

    dc, pc = deck_corner if deck_corner is not None else (None, 0.0)
    if not isinstance(generic, CardResult) or generic.rank_probs is None or generic.suit_probs is None:
        if corner is None:
            return dr
        return replace(dr, generic=corner[0], p_generic=corner[1], corner=dc, p_corner=pc)
    r, s = int(np.argmax(generic.rank_probs)), int(np.argmax(generic.suit_probs))
    guess = RANKS[r] + SUITS[s]
    dr = replace(dr, generic=guess, p_generic=float(generic.rank_probs[r] * generic.suit_probs[s]))
    # The sleeve over a card's centre leaves its pips broken or run together: the generic reader,
    # its index read, is unsure for the centre's sake (own seed 880100, nominal: 4 of kennard's 11
    # cards not read). Its one clear index read twice may then decide, as for a card whose centre
    # is hidden (the centre's pip count or picture still vetoes a rank it contradicts).
    if generic.status != "ok" and corner is not None and corner[0] == guess:
        dr = replace(dr, corner=dc, p_corner=pc)
    return dr


def without_deck(generic, dr):
    """The generic reading alone: the deck's reading is not like this deck's card."""
    if isinstance(generic, CardResult):
        return generic
    return f"{generic}; not like this deck's {dr.card} (likeness {dr.match:.2f})"


def _card_floor(deck, cand, centre_names_card: bool) -> float:
    """The probability the deck's card needs: the deck's threshold for the card's width, but
    ``min_p`` alone where the centre names the deck's card itself (``centre_names_card``: its pip
    count the deck's rank, its pips clearly the deck's suit). The small-card floor is for the deck
    model alone, overconfident on small, blurred cards (S for C, D for H); pips counted and
    classified apart are a second reader of the same card. Peek-index cards 96-99 px wide, the
    deck at 0.9984-0.99988 and two or seven pips of its suit at 1.00, were withheld for it
    (own seed 884000 frames 52, 193, 502, 564 and 658, font-peek nominal; not the benchmark's).
    """
    if centre_names_card:
        return deck.min_p
    return deck.card_threshold(cand_width(cand.quad))


def decide(deck, cand, pip, generic: CardResult | str, dr, zones,
           pip_suit: np.ndarray | None = None, ink: np.ndarray | None = None,
           feats: np.ndarray | None = None) -> CardResult | str:  # fmt: skip
    """The enrolled ``deck``'s reading ``dr`` of a card, checked against the generic one.

    The deck model decides when it is sure (probability and likeness to that card's own
    face both clear the thresholds ``enroll`` set); the generic reading (index glyphs, pip
    count, picture) may only veto it: a pip count or picture that contradicts the deck's
    rank, the centre's pips surely of another suit (``pip_suit``: their suit probabilities),
    or a sure generic card or value that differs, makes the card ``unknown``. Where the generic
    reader saw no face, a card without pip or picture ink in its ``ink`` map is none. A suit
    of a four-colour pair that only the colour of its features (``feats``) names is not read.
    """
    quad = np.round(cand.quad, 1).tolist()
    zone = zone_of(zones, cand.quad.mean(axis=0)) if zones else None
    this_deck = dr.match >= deck.min_match
    agreed = _readers_agree(deck, dr)
    one_index = _one_clear_index(deck, cand, pip, dr, this_deck, quad, zone)
    if one_index is not None:
        return one_index
    if not this_deck and not agreed:
        return without_deck(generic, dr)
    v = _vetoes(pip, generic, dr, pip_suit)
    shown = _pips_show_deck_suit(pip, pip_suit, dr)
    centre_names_card = shown and not v.card   # its pip count the deck's rank, its pips the deck's suit
    need = _card_floor(deck, cand, centre_names_card)
    sure = this_deck and dr.p_card >= need
    same = isinstance(generic, CardResult) and generic.card == dr.card
    v.suit += _suit_by_colour_alone(deck, dr, feats, sure and not same and not agreed, shown)
    no_face = _no_face(generic, dr, ink, sure, centre_names_card)
    if no_face is not None:
        return no_face
    if not v.every() and (sure or same or agreed):
        return _deck_card(dr, generic, sure, same, quad, zone)
    if not this_deck:       # agreed, but the centre or the index says otherwise: as if no deck
        return without_deck(generic, dr)
    return _less_than_card(generic, dr, v, sure, need, quad, zone)


# ------------------------------------------------------------------ decide's steps


@dataclass
class _Vetoes:
    """What the generic reading says against the deck's card, each list in the order found:
    ``value`` another value, ``card`` another card (the centre's rank, the generic reader's card),
    ``suit`` another suit of the deck's suit's colour."""

    value: list[str] = field(default_factory=list)
    card: list[str] = field(default_factory=list)
    suit: list[str] = field(default_factory=list)

    def every(self) -> list[str]:
        """Every veto once: the card's, the suit's, then the value's."""
        return list(dict.fromkeys(self.card + self.suit + self.value))


def _readers_agree(deck, dr) -> bool:
    """Whether the generic reader and the deck name one card, each sure enough."""
    # Two readers of their own (index glyphs and centre; the whole face) naming the same card,
    # each sure enough (DeckModel.agree, set by enroll): the card, whatever the likeness.
    return (deck.agree is not None and dr.generic == dr.card and dr.p_generic >= deck.agree[0]
            and dr.p_card >= deck.agree[1])  # fmt: skip


def _one_clear_index(deck, cand, pip, dr, this_deck: bool, quad, zone) -> CardResult | None:
    """The card one clear index names, read alike by the generic reader and the deck's corner
    model, unless the deck is sure of another card or the centre contradicts its rank; else None."""
    # One clear index, the rest of the card hidden (a sleeve, a hand): the generic reader's and
    # the deck's corner model's readings of that index naming one card, each sure enough
    # (DeckModel.corner_agree, set by enroll), unless the whole-face model is sure of another.
    if (deck.corner_agree is not None and dr.corner is not None and dr.corner == dr.generic
            and dr.p_generic >= deck.corner_agree[0] and dr.p_corner >= deck.corner_agree[1]):
        other = this_deck and dr.card != dr.corner and dr.p_card >= deck.card_threshold(cand_width(cand.quad))
        centre = (RANK_OF_COUNT[pip.count] if pip.kind == "pips" else "JQK" if pip.kind == "picture" else None)
        if not other and (centre is None or dr.corner[0] in centre):
            return CardResult(dr.corner, RANK_VALUES[dr.corner[0]], "ok", min(dr.p_generic, dr.p_corner), quad, zone,
                              f"one clear index: the index ({dr.p_generic:.2f}) and the deck's reading of it "
                              f"({dr.p_corner:.2f}) agree")  # fmt: skip
    return None


def _vetoes(pip, generic: CardResult | str, dr, pip_suit: np.ndarray | None) -> _Vetoes:
    """The centre's pip count or picture, its pips' suit and the generic reader's card and value,
    where they contradict the deck's card."""
    rank = dr.card[0]
    v = _Vetoes()
    if pip.kind == "pips":
        seen = RANK_OF_COUNT[pip.count]
        if RANK_VALUES[seen] != dr.value:
            v.value.append(f"the centre shows {pip.count} pips")
        if seen != rank:
            v.card.append(f"the centre shows {pip.count} pips")
    elif pip.kind == "picture":
        if dr.value != 0:
            v.value.append("the centre shows a picture")
        if rank not in "JQK":
            v.card.append("the centre shows a picture")
    if pip.kind == "pips" and pip_suit is not None:
        ps = int(pip_suit.argmax())
        if SUITS[ps] != dr.card[1] and (SUITS[ps] in "HD") == (dr.card[1] in "HD") and pip_suit[ps] >= PIP_SUIT_VETO:
            v.suit.append(f"the centre's pips read {SUITS[ps]} ({pip_suit[ps]:.2f})")
    if isinstance(generic, CardResult):
        if generic.value is not None and generic.value != dr.value:
            v.value.append(f"the index reads value {generic.value}")
        if generic.card is not None and generic.card != dr.card:
            v.card.append(f"the index reads {generic.card}")
    return v


def _pips_show_deck_suit(pip, pip_suit: np.ndarray | None, dr) -> bool:
    """Whether the centre's pips are surely (PIP_SUIT_VETO) of the deck's suit."""
    return pip.kind == "pips" and pip_suit is not None and pip_suit[SUITS.index(dr.card[1])] >= PIP_SUIT_VETO


def _suit_by_colour_alone(deck, dr, feats: np.ndarray | None, deck_alone: bool, shown: bool) -> list[str]:
    """A suit veto (a list of it, or none) where the deck alone decides (``deck_alone``) and only
    the colour of the features ``feats`` names the suit, unless the centre's pips show it (``shown``)."""
    # A four-colour deck tells spades from green clubs, hearts from blue diamonds, by colour;
    # where the deck alone decides and only the colour does (read with its colour maps faded,
    # the card is the other suit of the pair), a colour cast may have: a motion-blurred 6S's
    # black ink, its white clipped in green (gain 1.29, green 1.2x), read 6C at 0.95 (own seed
    # 889413 table-stress frame 48, kennard-4colour-jumbo; not the benchmark's). Not where the
    # centre's pips show that suit (a 2C whose pips read clubs at 1.00, own seed 885602).
    if deck_alone and not shown and feats is not None:
        faded = deck.read_faded(feats)
        if faded != dr.card and faded[0] == dr.card[0] and (faded[1] in "HD") == (dr.card[1] in "HD"):
            return [f"its suit rests on the ink's colour alone (faded: {faded})"]
    return []


def _no_face(generic: CardResult | str, dr, ink: np.ndarray | None, sure: bool, centre_names_card: bool) -> str | None:
    """Why a sure deck alone is not believed where its card has no pip or picture ink, or None."""
    # Alone (the generic reader saw no face here), the deck is not believed on a card with no
    # pip or picture ink: a back's fine pattern, blurred, read 7H at 0.9997 (likeness 0.29, its
    # inner area 0.77 "paper" and no solid ink; own seed 889002 stress frames 35 and 40,
    # kennard-jumbo; not the benchmark's). Pips the centre counted and classified as the deck's
    # card are pip ink, however faint: a blurred peek-index 2D's two small pips (deck 0.9954,
    # likeness 0.61; the pips diamonds at 1.00) stay under the solid-ink share (own seed 884000,
    # nominal, frame 196; font-peek).
    if (sure and isinstance(generic, str) and not centre_names_card and ink is not None
            and no_face_ink(ink)):
        return f"{generic}; deck: {dr.card} ({dr.p_card:.2f}), but no pip or picture ink: no face"
    return None


def _deck_card(dr, generic: CardResult | str, sure: bool, same: bool, quad, zone) -> CardResult:
    """The deck's card, ``ok``: the deck sure of it, the generic reader's card too (``same``), or
    the two readers agreeing on it."""
    conf = dr.p_card if sure else generic.confidence if same else min(dr.p_generic, dr.p_card)
    why = "" if sure or same else f"the deck ({dr.p_card:.2f}) and the index ({dr.p_generic:.2f}) agree"
    return CardResult(dr.card, RANK_VALUES[dr.card[0]], "ok", conf, quad, zone, why)


def _less_than_card(generic: CardResult | str, dr, v: _Vetoes, sure: bool, need: float, quad,
                    zone) -> CardResult | str:  # fmt: skip
    """Where the deck's card is vetoed or unsure: no card where the generic reader saw none (but
    a sure card whose suit alone is vetoed), else its value ``partial`` where that is sure (at
    ``need``) and not vetoed, else ``unknown``."""
    vetoes = v.every()
    # A sure deck whose suit alone is vetoed still gives its value, where it gave the card.
    suit_only = sure and bool(v.suit) and not v.card
    if isinstance(generic, str) and not suit_only:
        # Neither reading is sure: the generic reader saw no face-up card here, so nothing
        # is reported (a back, a chip or a card under a hand is no card to announce).
        return f"{generic}; deck: unsure, best guess {dr.card} ({dr.p_card:.2f})"
    # The value alone needs what the card needs (a small card the small-card floor: the deck
    # classifier is most overconfident on small, blurred cards; a 70-px peek-index 5C read
    # value 0 at 0.983 under table stress).
    if not v.value and dr.p_value >= need:
        return CardResult(None, dr.value, "partial", dr.p_value, quad, zone,
                          f"deck: value {dr.value} sure, card not (best {dr.card} {dr.p_card:.2f})"
                          + ("; " + "; ".join(vetoes) if vetoes else ""))  # fmt: skip
    why = f"deck: unsure, best guess {dr.card} ({dr.p_card:.2f})" + ("; " + "; ".join(vetoes) if vetoes else "")
    return CardResult(None, None, "unknown", dr.p_value, quad, zone, why)
