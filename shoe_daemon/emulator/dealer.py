"""The emulated dealer: turns a seed and options into the shoe's event messages.

Everything here is deterministic: the shoe is shuffled with
``random.Random(seed)`` and every fault or dealer habit draws from its own
``random.Random(f"{seed}:{name}")``, once per card or per coup whether it
fires or not, so changing one rate never moves the others. The same seed and
options give the same cards, the same coups and the same messages.

The script is a generator of actions (protocol messages to send, plus the
directives ``Pause``, ``Disconnect`` and ``Noise``); ``dealt`` grows as it is
consumed and is the ground truth tests compare the host's view with.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields

from firmware_protocol.messages import (
    Button,
    ButtonPressed,
    CardDrawn,
    CardPushedBack,
    CardUnreadable,
    CutCard,
    Message,
    ShoeState,
    ShoeStateCode,
    UnreadableReason,
)
from shoe_daemon.game.cards import ALL_CODES, RANK_VALUES, parse_card
from shoe_daemon.game.tableau import Side, next_side

DEFAULT_CUT_RANGE = (14, 16)  # the cut card goes this many cards from the end (drawn per shoe)


# -- directives a script may contain besides messages ----------------------------------------

@dataclass(frozen=True)
class Pause:
    """The dealer does nothing for this long (heartbeats go on)."""

    seconds: float


@dataclass(frozen=True)
class Disconnect:
    """Unplug the shoe's cable for this long; the shoe keeps running and keeps its ring."""

    seconds: float


@dataclass(frozen=True)
class Noise:
    """Raw bytes on the line (not a frame)."""

    data: bytes


Action = Message | Pause | Disconnect | Noise


# -- fault rates -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Faults:
    """Fault rates (probabilities 0-1). Link faults apply per frame, dealer faults per card or coup."""

    noise: float = 0.0          # random bytes (1-24, zeros included) before a frame
    corrupt: float = 0.0        # 1-3 bit flips in a frame
    drop: float = 0.0           # a frame never reaches the wire
    disconnect: float = 0.0     # unplug after an event frame, for disconnect_time seconds
    unreadable: float = 0.0     # a card leaves unread (CARD_UNREADABLE)
    push_back: float = 0.0      # a card is drawn, pushed back, drawn again
    extra_card: float = 0.0     # per coup: the dealer draws one card the tableau did not call for
    missing_card: float = 0.0   # per coup: the dealer forgets a third card the tableau called for
    disconnect_time: float = 0.5

    LINK = ("noise", "corrupt", "drop", "disconnect")
    DEALER = ("unreadable", "push_back", "extra_card", "missing_card")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return cls.LINK + cls.DEALER

    @classmethod
    def parse(cls, items: Iterable[str]) -> Faults:
        """From ``NAME=RATE`` strings (``push-back=0.01``, ``disconnect_time=2``)."""
        values: dict[str, float] = {}
        known = {f.name for f in fields(cls)}
        for item in items:
            name, sep, rate = item.partition("=")
            name = name.strip().replace("-", "_")
            if not sep or name not in known:
                raise ValueError(f"bad fault {item!r}: use NAME=RATE with NAME one of {', '.join(sorted(known))}")
            try:
                value = float(rate)
            except ValueError:
                raise ValueError(f"bad fault rate in {item!r}") from None
            if name != "disconnect_time" and not 0.0 <= value <= 1.0:
                raise ValueError(f"fault rate {name}={value} must be between 0 and 1")
            values[name] = value
        return cls(**values)

    def any_link(self) -> bool:
        return any(getattr(self, n) > 0 for n in self.LINK)


def fault_rng(seed, name: str) -> random.Random:
    return random.Random(f"{seed}:{name}")


# -- the ground truth ----------------------------------------------------------------------------

@dataclass(frozen=True)
class DealtCard:
    """A card that left the shoe and stayed out (a pushed-back card is not listed until redrawn)."""

    shoe: int                  # 1-based shoe number
    counter: int               # the shoe's card counter: position in this shoe, 1-based
    card: str
    side: str | None           # "punto", "banco", "burn"; None in a scripted scenario
    coup: int | None           # 1-based over the whole session; None for burn cards
    readable: bool = True      # False: the shoe sent CARD_UNREADABLE
    mistake: str | None = None  # "extra": a card the tableau did not call for


@dataclass(frozen=True)
class Mistake:
    coup: int
    kind: str                  # "extra" or "missing"
    side: str


def shuffled_shoe(decks: int, rng: random.Random) -> list[str]:
    cards = list(ALL_CODES) * decks
    rng.shuffle(cards)
    return cards


@dataclass
class DealerScript:
    """A dealer working through shoes, as a lazy sequence of actions."""

    decks: int = 8
    seed: object = 0
    shoes: int | None = 1            # None: new shoes until ``coups`` is reached
    coups: int | None = None         # stop after this many coups in all
    cut: int | None = None           # cards from the end for the cut card; None: 14-16 (0 = no cut card)
    burn: bool = True
    stack: list[str] | None = None   # these cards in order instead of a shuffle (one shoe)
    faults: Faults = field(default_factory=Faults)

    def __post_init__(self) -> None:
        self.dealt: list[DealtCard] = []
        self.mistakes: list[Mistake] = []
        self.coups_dealt = 0
        self.shoes_dealt = 0
        if self.stack is not None:
            self.stack = [parse_card(c).code for c in self.stack]
        self._iter = self._actions()

    def __iter__(self) -> Iterator[Action]:
        return self._iter

    def __next__(self) -> Action:
        return next(self._iter)

    # -- the dealing -----------------------------------------------------------------------------
    def _actions(self) -> Iterator[Action]:
        shuffle_rng = random.Random(self.seed)
        cut_rng = fault_rng(self.seed, "cut")
        quality_rng = fault_rng(self.seed, "quality")
        rng = {name: fault_rng(self.seed, name) for name in Faults.DEALER}
        shoe_no = 0
        while True:
            if self.stack is not None and shoe_no >= 1:
                return
            if self.shoes is not None and shoe_no >= self.shoes:
                return
            if self.coups is not None and self.coups_dealt >= self.coups:
                return
            if self.shoes is None and self.coups is None and shoe_no >= 1:
                return
            shoe_no += 1
            self.shoes_dealt = shoe_no
            cards = list(self.stack) if self.stack is not None else shuffled_shoe(self.decks, shuffle_rng)
            if self.cut is not None:
                cut_from_end = self.cut
            elif self.stack is not None:
                cut_from_end = 0
            else:
                cut_from_end = cut_rng.randint(*DEFAULT_CUT_RANGE)
            cut_at = len(cards) - cut_from_end if cut_from_end > 0 else None
            yield from self._deal_shoe(shoe_no, cards, cut_at, quality_rng, rng)

    def _deal_shoe(self, shoe_no, cards, cut_at, quality_rng, rng) -> Iterator[Action]:
        f = self.faults
        state = {"pos": 0, "cut_seen": False}

        def draw(side: str, coup: int | None, mistake: str | None = None):
            """Actions for one card leaving the shoe; returns (actions, card or None when empty)."""
            out: list[Action] = []
            if cut_at is not None and state["pos"] >= cut_at and not state["cut_seen"]:
                state["cut_seen"] = True
                out.append(CutCard(state["pos"]))
            if state["pos"] >= len(cards):
                return out, None
            card = cards[state["pos"]]
            state["pos"] += 1
            counter = state["pos"]
            quality = quality_rng.randint(80, 100)
            pushed = rng["push_back"].random() < f.push_back
            unreadable = rng["unreadable"].random() < f.unreadable
            if pushed:
                out.append(CardDrawn(card, counter, quality))
                out.append(CardPushedBack(card, counter))
            if unreadable:
                out.append(CardUnreadable(counter, UnreadableReason.NO_READ))
            else:
                out.append(CardDrawn(card, counter, quality))
            self.dealt.append(DealtCard(shoe_no, counter, card, side, coup, not unreadable, mistake))
            if state["pos"] == len(cards):
                out.append(ShoeState(ShoeStateCode.EMPTY))
            return out, card

        yield ShoeState(ShoeStateCode.INSERTED)
        yield ButtonPressed(Button.NEW_SHOE)
        if self.burn and cards:
            yield ButtonPressed(Button.BURN)
            actions, first = draw("burn", None)
            yield from actions
            if first is not None:
                for _ in range(RANK_VALUES[first[0]] or 10):
                    actions, card = draw("burn", None)
                    yield from actions
                    if card is None:
                        break
        last_coup = False
        while True:
            if self.coups is not None and self.coups_dealt >= self.coups:
                return  # the session ends mid-shoe: the shoe stays in
            if state["pos"] >= len(cards):
                break
            self.coups_dealt += 1
            coup = self.coups_dealt
            forget = rng["missing_card"].random() < f.missing_card
            extra = rng["extra_card"].random() < f.extra_card
            extra_side = Side.PUNTO if rng["extra_card"].random() < 0.5 else Side.BANCO
            punto: list[int] = []
            banco: list[int] = []
            complete = True
            while (side := next_side(punto, banco)) is not None:
                if forget and len(punto) + len(banco) >= 4:
                    self.mistakes.append(Mistake(coup, "missing", side.value))
                    break
                actions, card = draw(side.value, coup)
                yield from actions
                if card is None:
                    complete = False
                    break
                (punto if side is Side.PUNTO else banco).append(RANK_VALUES[card[0]])
            if not complete:
                break  # the shoe ran dry mid-coup
            if extra:
                actions, card = draw(extra_side.value, coup, mistake="extra")
                yield from actions
                if card is not None:
                    self.mistakes.append(Mistake(coup, "extra", extra_side.value))
            yield ButtonPressed(Button.COUP_CONFIRM)
            if last_coup:
                break
            if state["cut_seen"]:
                last_coup = True  # the cut card came out: one more coup, then the shoe ends
        yield ShoeState(ShoeStateCode.REMOVED)


@dataclass
class ScenarioScript:
    """A scripted scenario: the actions as given; ``dealt`` records the cards it draws."""

    actions: Iterable[Action]
    shoe: int = 1

    def __post_init__(self) -> None:
        self.dealt: list[DealtCard] = []
        self.mistakes: list[Mistake] = []
        self._iter = self._run()

    def __iter__(self):
        return self._iter

    def __next__(self):
        return next(self._iter)

    def _run(self):
        for action in self.actions:
            if isinstance(action, CardDrawn):
                self.dealt = [d for d in self.dealt if d.counter != action.counter]
                self.dealt.append(DealtCard(self.shoe, action.counter, action.card, None, None))
            elif isinstance(action, CardUnreadable):
                self.dealt.append(DealtCard(self.shoe, action.counter, "??", None, None, readable=False))
            elif isinstance(action, CardPushedBack):
                self.dealt = [d for d in self.dealt if d.counter != action.counter]
            yield action


def stacked_scenario(cards: Iterable[str]) -> list[Action]:
    """Card codes -> CardDrawn actions with counters 1, 2, ... (no buttons)."""
    return [CardDrawn(parse_card(c).code, i, 100) for i, c in enumerate(cards, start=1)]
