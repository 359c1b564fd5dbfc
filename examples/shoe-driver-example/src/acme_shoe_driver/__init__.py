"""A shoe-daemon driver for the Acme CardStream line protocol (made up, for docs/drivers.md).

The protocol, as the vendor's manual would give it: 7-bit ASCII lines ending in CR LF, one
message a line, the shoe speaking first when it has something to say.

    shoe -> host
      HELLO <model> <firmware>     power-up, and the answer to HELLO?
      CARD <rank><suit> <counter>  a card drawn and read: "CARD QH 17", "CARD 10S 18"
      NOREAD <counter>             a card drawn that the reader could not read
      CUT                          the cut card came out
      ERR <code> <text>            the shoe's own fault report: "ERR 12 optical sensor dirty"
    host -> shoe
      HELLO?                       who are you (sent when the port opens)
      SINCE <counter>              send again the cards after <counter> that you still remember
      LAMP P|B|C|E|0               the dealer lamp: Punto, Banco, coup complete, error, off

<counter> counts the cards drawn since the shoe was filled (1, 2, 3, ...); the daemon's core
checks it for gaps, so this driver only passes it on. A card resent after ``SINCE`` that the
daemon already has (its counter at most the last one delivered) is dropped here.

The driver is sans-I/O: the daemon's serial source owns the port and calls ``connected``,
``feed``, ``tick``, ``disconnected`` and ``lights`` with the time; nothing here reads a clock or
a port. ``resume`` gets the journal's last events before the port first opens.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.game.cards import CardCodeError, parse_card
from shoe_daemon.sources.base import DriverSettings, Lights, ShoeDriver

LAMPS = {Lights.OFF: b"0", Lights.PUNTO: b"P", Lights.BANCO: b"B", Lights.COMPLETE: b"C", Lights.ERROR: b"E"}


class AcmeSettings(DriverSettings):
    """This driver's own [shoe] keys, validated when the daemon's configuration loads.

    Prefixed with the driver's name: they share the [shoe] table with the port keys and the
    built-in drivers' keys.
    """

    example_max_line: int = Field(128, ge=16, le=4096)   # a longer line is noise: a fault, then dropped
    example_lamps: bool = True                           # the shoe has a dealer lamp (LAMP commands)
    example_resend: bool = True                          # ask for the cards missed (SINCE) on connect


class AcmeDriver(ShoeDriver):
    Settings = AcmeSettings

    def __init__(self, settings=None):
        super().__init__(settings)
        self._buffer = bytearray()
        self._linked = False
        self._counter: int | None = None   # the counter of the last card delivered (or journaled)

    # -- the ShoeDriver interface ------------------------------------------------------------
    def resume(self, recent_events: Sequence[Event]) -> None:
        # The last counter the journal holds (newest first): after a daemon restart the shoe is
        # asked for what came after it, and what the journal has is not delivered twice.
        for event in recent_events:
            counter = event.data.get("counter")
            if event.source == self.source and isinstance(counter, int):
                self._counter = counter
                return

    def connected(self, now):
        self._buffer.clear()
        hello = b"HELLO?\r\n"                # the link is up when the shoe answers
        if self.settings.example_resend and self._counter is not None:
            hello += b"SINCE %d\r\n" % self._counter
        return [], hello

    def feed(self, data, now):
        events: list[Event] = []
        self._buffer += data
        while (end := self._buffer.find(b"\n")) >= 0:
            line = bytes(self._buffer[:end]).rstrip(b"\r")
            del self._buffer[: end + 1]
            events += self._line(line, now)
        if len(self._buffer) > self.settings.example_max_line:
            events.append(self._fault("line_too_long", now, line=self._text(bytes(self._buffer))))
            self._buffer.clear()
        return events, b""

    def disconnected(self, now, reason):
        self._buffer.clear()
        if not self._linked:
            return []
        self._linked = False
        return [Event(now, Kind.LINK_DOWN, self.source, {"reason": reason})]

    def lights(self, state, now):
        if not self.settings.example_lamps:
            return b""
        return b"LAMP " + LAMPS[state] + b"\r\n"

    # -- the vendor's messages ---------------------------------------------------------------
    def _line(self, raw: bytes, now: float) -> list[Event]:
        text = self._text(raw)
        word, _, rest = text.strip().partition(" ")
        args = rest.split()
        if not word:
            return []
        if word == "HELLO" and len(args) == 2:
            self._linked = True
            return [Event(now, Kind.LINK_UP, self.source,
                          {"driver": "example", "model": args[0], "firmware": args[1]})]
        if word == "CARD" and len(args) == 2 and args[1].isdigit():
            try:
                card = parse_card(args[0])
            except CardCodeError as exc:
                return [self._fault("bad_card_code", now, line=text, text=str(exc))]
            if self._seen(int(args[1])):
                return []
            return [Event(now, Kind.CARD, self.source, {"card": card.code, "counter": int(args[1])})]
        if word == "NOREAD" and len(args) == 1 and args[0].isdigit():
            if self._seen(int(args[0])):
                return []
            return [Event(now, Kind.CARD_UNREADABLE, self.source, {"counter": int(args[0])})]
        if word == "CUT" and not args:
            return [Event(now, Kind.CUT_CARD, self.source, {})]
        if word == "ERR" and args:
            return [self._fault(f"acme_{args[0]}", now, text=" ".join(args[1:]) or None)]
        return [self._fault("unrecognised_line", now, line=text)]

    def _seen(self, counter: int) -> bool:
        """Whether this card was delivered already (a resend); else it is the last one delivered.
        Counter 1 after others is a refilled shoe, never a resend."""
        if self._counter is not None and 1 < counter <= self._counter:
            return True
        self._counter = counter
        return False

    def _fault(self, code: str, now: float, **data) -> Event:
        return Event(now, Kind.FAULT, self.source, {"code": code, **{k: v for k, v in data.items() if v is not None}})

    def _text(self, raw: bytes) -> str:
        return raw.decode("ascii", errors="replace")[: self.settings.example_max_line]
