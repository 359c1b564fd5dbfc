"""The ``text`` driver: one card code per line, as plain card readers send them.

The line is matched against ``shoe.text_pattern`` (a regex with a named group
``card``, this driver's one setting); the card goes through the one card parser. A line that does not
match, or whose card code is bad, becomes a ``fault`` event with the line in
its evidence: it is never dropped silently and never guessed.
"""

from __future__ import annotations

import re

from pydantic import field_validator

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.game.cards import CardCodeError, parse_card
from shoe_daemon.sources.base import DriverSettings, ShoeDriver

# One card code alone on its line (matched ignoring case).
DEFAULT_PATTERN = r"^\s*(?P<card>(?:10|[A2-9TJQK])[SHDC])\s*$"
MAX_LINE = 256  # a reader that never sends a newline must not grow memory


class TextSettings(DriverSettings):
    """[shoe] keys of the text driver."""

    text_pattern: str = DEFAULT_PATTERN

    @field_validator("text_pattern")
    @classmethod
    def _pattern(cls, v: str) -> str:
        try:
            rx = re.compile(v)
        except re.error as exc:
            raise ValueError(f"invalid regular expression: {exc}") from None
        if "card" not in rx.groupindex:
            raise ValueError("must have a named group (?P<card>...) that captures the card code")
        return v


class TextLineDriver(ShoeDriver):
    Settings = TextSettings

    def __init__(self, settings=None):
        super().__init__(settings)
        pattern = getattr(settings, "text_pattern", None) or DEFAULT_PATTERN
        self._pattern = re.compile(pattern, re.IGNORECASE)
        self._buffer = bytearray()
        self._linked = False

    def connected(self, now):
        self._linked = True
        return [Event(now, Kind.LINK_UP, self.source, {"driver": "text"})], b""

    def disconnected(self, now, reason):
        self._buffer.clear()
        if not self._linked:
            return []
        self._linked = False
        return [Event(now, Kind.LINK_DOWN, self.source, {"reason": reason})]

    def feed(self, data, now):
        events = []
        self._buffer += data
        while True:
            end = self._find_line_end()
            if end < 0:
                break
            raw = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            event = self._parse_line(raw, now)
            if event is not None:
                events.append(event)
        if len(self._buffer) > MAX_LINE:
            raw = bytes(self._buffer)
            self._buffer.clear()
            events.append(self._fault("line_too_long", raw, now))
        return events, b""

    def _find_line_end(self) -> int:
        ends = [i for i in (self._buffer.find(b"\n"), self._buffer.find(b"\r")) if i >= 0]
        return min(ends) if ends else -1

    def _parse_line(self, raw: bytes, now: float) -> Event | None:
        text = raw.decode("ascii", errors="replace")
        if not text.strip():
            return None
        m = self._pattern.search(text)
        if m is None:
            return self._fault("unrecognised_line", raw, now)
        try:
            card = parse_card(m.group("card"))
        except (CardCodeError, IndexError) as exc:
            return self._fault("bad_card_code", raw, now, str(exc))
        return Event(now, Kind.CARD, self.source, {"card": card.code})

    def _fault(self, code: str, raw: bytes, now: float, text: str | None = None) -> Event:
        data = {"code": code, "line": raw.decode("ascii", errors="replace")[:MAX_LINE]}
        if text:
            data["text"] = text
        return Event(now, Kind.FAULT, self.source, data)
