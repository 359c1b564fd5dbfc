"""The ``text`` driver: one card code per line, as plain card readers send them.

The line is matched against ``shoe.text_pattern`` (a regex with a named group
``card``, this driver's one setting); the card goes through the one card parser. A line that does not
match, or whose card code is bad, becomes a ``fault`` event with the line in
its evidence: it is never dropped silently and never guessed.

Bad input cannot take the daemon down. Memory is fixed: at most ``MAX_LINE``
bytes of a line are kept; a longer line is dropped up to its end with one
``line_too_long`` fault. Faults are coalesced here, per code: the first of a
burst is reported at once (``{"code", "line"[, "text"]}``), the ones that follow
within ``COALESCE`` seconds are counted and reported as one event when the
window closes (``{"code", "line": the last one, "count": n, "coalesced": true,
"since": t}``), so a reader spewing garbage makes a few events a second, not
one per line. The pattern is checked when the configuration loads
(``check_pattern``): one that can backtrack catastrophically is refused.
"""

from __future__ import annotations

import re
from re import _constants as C  # noqa: N812 - the regex parser's node names
from re import _parser as sre

from pydantic import field_validator

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.game.cards import CardCodeError, parse_card
from shoe_daemon.sources.base import DriverSettings, ShoeDriver

# One card code alone on its line (matched ignoring case).
DEFAULT_PATTERN = r"^\s*(?P<card>(?:10|[A2-9TJQK])[SHDC])\s*$"
MAX_LINE = 256    # bytes of one line kept; a reader that never sends a newline must not grow memory
COALESCE = 1.0    # seconds: faults of one code after the first are counted, one event per window
_EOL = re.compile(rb"[\r\n]")


class TextSettings(DriverSettings):
    """[shoe] keys of the text driver."""

    text_pattern: str = DEFAULT_PATTERN

    @field_validator("text_pattern")
    @classmethod
    def _pattern(cls, v: str) -> str:
        check_pattern(v)   # valid, has the card group, cannot backtrack catastrophically
        return v


class TextLineDriver(ShoeDriver):
    Settings = TextSettings

    def __init__(self, settings=None):
        super().__init__(settings)
        pattern = getattr(settings, "text_pattern", None) or DEFAULT_PATTERN
        self._pattern = re.compile(pattern, re.IGNORECASE)
        self._buffer = bytearray()
        self._discarding = False     # inside an over-long line: skip to its end
        self._linked = False
        self._bursts: dict[str, _Burst] = {}

    def connected(self, now):
        self._linked = True
        return [*self._due(now), Event(now, Kind.LINK_UP, self.source, {"driver": "text"})], b""

    def disconnected(self, now, reason):
        self._buffer.clear()
        self._discarding = False
        events = self._due(now, flush=True)
        if self._linked:
            self._linked = False
            events.append(Event(now, Kind.LINK_DOWN, self.source, {"reason": reason}))
        return events

    def tick(self, now):
        return self._due(now), b""

    def feed(self, data, now):
        events = self._due(now)
        start = 0
        for m in _EOL.finditer(data):
            self._take(data[start:m.start()], events, now)
            self._end_line(events, now)
            start = m.end()
        self._take(data[start:], events, now)
        return events, b""

    # -- lines ---------------------------------------------------------------------------------
    def _take(self, piece: bytes, events: list, now: float) -> None:
        if not piece or self._discarding:
            return
        if len(self._buffer) + len(piece) > MAX_LINE:
            head = bytes(self._buffer + piece[: MAX_LINE - len(self._buffer)])
            self._buffer.clear()
            self._discarding = True
            self._fault(events, "line_too_long", head, now)
            return
        self._buffer += piece

    def _end_line(self, events: list, now: float) -> None:
        if self._discarding:
            self._discarding = False
            return
        raw = bytes(self._buffer)
        self._buffer.clear()
        text = raw.decode("ascii", errors="replace")
        if not text.strip():
            return
        m = self._pattern.search(text)
        if m is None:
            self._fault(events, "unrecognised_line", raw, now)
            return
        try:
            card = parse_card(m.group("card"))
        except (CardCodeError, IndexError) as exc:
            self._fault(events, "bad_card_code", raw, now, str(exc))
            return
        events.append(Event(now, Kind.CARD, self.source, {"card": card.code}))

    # -- coalesced faults ------------------------------------------------------------------------
    def _fault(self, events: list, code: str, raw: bytes, now: float, text: str | None = None) -> None:
        data = {"code": code, "line": raw.decode("ascii", errors="replace")[:MAX_LINE]}
        if text:
            data["text"] = text
        burst = self._bursts.get(code)
        if burst is None:
            self._bursts[code] = _Burst(now)
            events.append(Event(now, Kind.FAULT, self.source, data))
        else:
            burst.count += 1
            burst.last = data

    def _due(self, now: float, flush: bool = False) -> list[Event]:
        """Summaries of the bursts whose window has closed (all of them with ``flush``)."""
        events = []
        for code, burst in list(self._bursts.items()):
            if not flush and now - burst.since < COALESCE:
                continue
            if burst.count:
                data = {**burst.last, "count": burst.count, "coalesced": True, "since": burst.since}
                events.append(Event(now, Kind.FAULT, self.source, data))
                self._bursts[code] = _Burst(now)     # still spewing: the next window counts on
            else:
                del self._bursts[code]               # quiet for a window: the next fault is news
        if flush:
            self._bursts.clear()
        return events


class _Burst:
    __slots__ = ("since", "count", "last")

    def __init__(self, since: float):
        self.since = since
        self.count = 0
        self.last: dict = {}


# -- the pattern check ---------------------------------------------------------------------------

_UNIVERSE = frozenset([*range(128), 0xFFFD])   # lines are decoded as ASCII, bad bytes as U+FFFD
_CATEGORIES = {
    C.CATEGORY_DIGIT: frozenset(range(48, 58)),
    C.CATEGORY_SPACE: frozenset(b" \t\n\r\f\v"),
    C.CATEGORY_WORD: frozenset(b"0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    C.CATEGORY_LINEBREAK: frozenset(b"\n"),
}
_REPEATS = {C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT}


def _fold(chars: frozenset) -> frozenset:
    """Both cases: the driver matches ignoring case."""
    more = {ord(chr(c).swapcase()) for c in chars if chr(c).isalpha() and c < 128}
    return chars | frozenset(more)


def _category(cat) -> frozenset:
    for base, chars in _CATEGORIES.items():
        if cat == base:
            return chars
    name = str(cat).replace("NOT_", "")
    for base, chars in _CATEGORIES.items():
        if str(base) == name:
            return _UNIVERSE - chars
    return _UNIVERSE


def _chars_of_set(items) -> frozenset:
    out: set[int] = set()
    negate = False
    for op, av in items:
        if op == C.NEGATE:
            negate = True
        elif op == C.LITERAL:
            out.add(av)
        elif op == C.RANGE:
            out.update(range(av[0], min(av[1], 0xFFFD) + 1))
        elif op == C.CATEGORY:
            out |= _category(av)
        else:
            out |= _UNIVERSE
    chars = _fold(frozenset(out) & _UNIVERSE)
    return _UNIVERSE - chars if negate else chars


def _first(seq) -> tuple[frozenset, bool]:
    """Characters a sequence can start with, and whether it can match the empty string."""
    out: frozenset = frozenset()
    for item in seq:
        chars, nullable = _first_item(item)
        out |= chars
        if not nullable:
            return out, False
    return out, True


def _first_item(item) -> tuple[frozenset, bool]:
    op, av = item
    if op == C.LITERAL:
        return _fold(frozenset([av])), False
    if op == C.NOT_LITERAL:
        return _UNIVERSE - _fold(frozenset([av])), False
    if op == C.ANY:
        return _UNIVERSE, False
    if op == C.IN:
        return _chars_of_set(av), False
    if op == C.SUBPATTERN:
        return _first(av[-1])
    if op == C.ATOMIC_GROUP:
        return _first(av)
    if op in _REPEATS:
        chars, nullable = _first(av[2])
        return chars, nullable or av[0] == 0
    if op == C.BRANCH:
        out, nullable = frozenset(), False
        for branch in av[1]:
            chars, n = _first(branch)
            out |= chars
            nullable = nullable or n
        return out, nullable
    if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
        return frozenset(), True
    return _UNIVERSE, True      # back-references and the like: anything


def _variable_repeats(seq):
    """Repeats of variable count inside ``seq``, at any depth."""
    for op, av in seq:
        if op in _REPEATS:
            if av[0] != av[1]:
                yield av
            yield from _variable_repeats(av[2])
        elif op == C.SUBPATTERN:
            yield from _variable_repeats(av[-1])
        elif op == C.BRANCH:
            for branch in av[1]:
                yield from _variable_repeats(branch)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            yield from _variable_repeats(av[1])
        elif op == C.ATOMIC_GROUP:
            yield from _variable_repeats(av)


def _branches_overlap(seq) -> bool:
    for op, av in seq:
        if op == C.BRANCH:
            seen: frozenset = frozenset()
            for branch in av[1]:
                chars, nullable = _first(branch)
                if nullable or seen & chars:
                    return True
                seen |= chars
            if any(_branches_overlap(b) for b in av[1]):
                return True
        elif op == C.SUBPATTERN and _branches_overlap(av[-1]):
            return True
        elif op in _REPEATS and _branches_overlap(av[2]):
            return True
    return False


def _unbounded(item) -> tuple | None:
    """The repeat ``item`` is (possibly inside a group), if it has no upper bound."""
    op, av = item
    while op == C.SUBPATTERN and len(av[-1]) == 1:
        op, av = av[-1][0]
    if op in _REPEATS and av[1] == C.MAXREPEAT:
        return av
    return None


def _check_seq(seq) -> str | None:
    items = list(seq)
    for i, (op, av) in enumerate(items):
        if op in _REPEATS:
            lo, hi, body = av
            if hi == C.MAXREPEAT or hi > 1:
                if any(True for _ in _variable_repeats(body)):
                    return "nested quantifiers (like (a+)+ or (\\s*x)*)"
                if _first(body)[1]:
                    return "a quantifier over something that can match nothing (like (a*)* or (x?)+)"
                if _branches_overlap(body):
                    return "a quantified alternation whose branches can start alike (like (a|ab)*)"
            problem = _check_seq(body)
            if problem:
                return problem
        elif op == C.SUBPATTERN:
            problem = _check_seq(av[-1])
            if problem:
                return problem
        elif op == C.BRANCH:
            for branch in av[1]:
                problem = _check_seq(branch)
                if problem:
                    return problem
        rep = _unbounded((op, av))
        if rep is None:
            continue
        chars = _all_chars(rep[2])
        for later in items[i + 1:]:
            other = _unbounded(later)
            if other is not None and chars & _all_chars(other[2]):
                return "adjacent unbounded quantifiers that match the same characters (like \\s*\\s* or .*.*)"
            if not _first_item(later)[1]:
                break
    return None


def _all_chars(seq) -> frozenset:
    out: frozenset = frozenset()
    for op, av in seq:
        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            out |= _first_item((op, av))[0]
        elif op == C.SUBPATTERN:
            out |= _all_chars(av[-1])
        elif op in _REPEATS:
            out |= _all_chars(av[2])
        elif op == C.BRANCH:
            for branch in av[1]:
                out |= _all_chars(branch)
        elif op not in (C.AT, C.ASSERT, C.ASSERT_NOT):
            out |= _UNIVERSE
    return out


def check_pattern(pattern: str) -> None:
    """Raise ValueError for a pattern that is invalid, lacks the ``card`` group, or can backtrack
    catastrophically. The check is structural and conservative (no timeouts, no trial runs): it
    refuses nested variable quantifiers, quantified empty matches, quantified alternations whose
    branches start alike and adjacent unbounded quantifiers over common characters."""
    try:
        rx = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"invalid regular expression: {exc}") from None
    if "card" not in rx.groupindex:
        raise ValueError("must have a named group (?P<card>...) that captures the card code")
    problem = _check_seq(sre.parse(pattern, re.IGNORECASE))
    if problem:
        raise ValueError(f"can backtrack catastrophically: {problem}; write it without that (got {pattern!r})")
