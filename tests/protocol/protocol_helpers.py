"""Shared helpers of the protocol tests (imported by name: this folder is on sys.path)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from firmware_protocol.codec import DecodeError, Decoder
from firmware_protocol.messages import MESSAGE_CLASSES, MsgType, to_dict

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "firmware_protocol" / "vectors.json").read_text())

_ENUM_NAMES = {"reason", "state", "what", "button", "lights"}


def results(data: bytes, decoder: Decoder | None = None) -> list[dict]:
    """Decode bytes to the vectors' result form."""
    dec = decoder or Decoder()
    return [{"error": x.kind.value} if isinstance(x, DecodeError) else to_dict(x) for x in dec.feed(data)]


def to_line(d: dict) -> str:
    """A vectors dict -> the C driver's message line (see c/shoelink_driver.c)."""
    if "error" in d:
        return f"ERROR {d['error']}"
    cls = MESSAGE_CLASSES[MsgType[d["type"]]]
    parts = [d["type"], f"seq={d['seq']}", f"time={d['time_ms']}", f"flags={d['flags']}"]
    for name in cls.FIELDS:
        v = d[name]
        if name == "card":
            v = v if v is not None else "--"
        elif name in ("model", "serial"):
            v = v.encode("ascii").hex() if v else "-"
        elif name in _ENUM_NAMES:
            v = int(getattr(__import__("firmware_protocol.messages", fromlist=["x"]),
                            {"reason": "UnreadableReason", "state": "ShoeStateCode", "what": "TamperKind",
                             "button": "Button", "lights": "Lights"}[name])[v])
        elif isinstance(v, bool):
            v = int(v)
        parts.append(f"{name}={v}")
    return " ".join(parts)


def random_splits(data: bytes, rng: random.Random, max_chunk: int = 40) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        n = rng.randint(1, max_chunk)
        out.append(data[i:i + n])
        i += n
    return out


class Line:
    """An in-memory serial line between a ShoeSimulator/ShoeConnection and a HostConnection."""

    def __init__(self, drop: float = 0.0, corrupt: float = 0.0, seed: int = 0):
        self.rng = random.Random(seed)
        self.drop = drop
        self.corrupt = corrupt
        self.up = True

    def carry(self, data: bytes) -> bytes:
        if not self.up:
            return b""
        if not (self.drop or self.corrupt) or not data:
            return data
        out = bytearray()
        frame = bytearray()
        for b in data:
            frame.append(b)
            if b == 0:
                out += self._frame(frame)
                frame = bytearray()
        out += self._frame(frame)
        return bytes(out)

    def _frame(self, frame: bytearray) -> bytes:
        if not frame:
            return b""
        if self.rng.random() < self.drop:
            return b""
        if self.rng.random() < self.corrupt:
            frame = bytearray(frame)
            frame[self.rng.randrange(len(frame))] ^= 1 << self.rng.randrange(8)
        return bytes(frame)


class SerialHost:
    """A small daemon stand-in: pyserial on a path + HostConnection, reopening on errors."""

    def __init__(self, path: str, **host_kwargs):
        from firmware_protocol.connection import HostConnection

        self.path = path
        self.conn = HostConnection(**host_kwargs)
        self.port = None
        self.events: list = []
        self.opens = 0
        self.errors: list[str] = []

    def step(self, clock) -> None:
        import serial

        now = clock()
        if self.port is None:
            try:
                self.port = serial.Serial(self.path, 115200, timeout=0.01)
            except (serial.SerialException, OSError) as exc:
                self.errors.append(str(exc))
                import time

                time.sleep(0.01)
                return
            self.opens += 1
            self.conn.connection_made(now)
        try:
            data = self.port.read(max(1, self.port.in_waiting))
            now = clock()
            self.conn.receive_data(data, now)
            self.events += self.conn.events()
            out = self.conn.tick(now)
            self.events += self.conn.events()
            if out:
                self.port.write(out)
        except (serial.SerialException, OSError) as exc:
            self.errors.append(str(exc))
            self.conn.connection_lost(clock(), str(exc) or type(exc).__name__)
            self.events += self.conn.events()
            self.close()

    def run_until(self, predicate, timeout: float) -> bool:
        import time

        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.step(time.monotonic)
            if predicate():
                return True
        return False

    def close(self) -> None:
        port, self.port = self.port, None
        if port is not None:
            try:
                port.close()
            except Exception:
                pass

    def of(self, cls) -> list:
        return [e for e in self.events if isinstance(e, cls)]


def shoe_view(events) -> dict[tuple[int, int], str | None]:
    """Rebuild the cards out of the shoe from host events: (shoe, counter) -> code, None = unreadable."""
    from firmware_protocol.messages import (
        ButtonPressed,
        CardDrawn,
        CardPushedBack,
        CardUnreadable,
        ShoeState,
        ShoeStateCode,
    )

    view: dict[tuple[int, int], str | None] = {}
    shoe = 0
    for e in events:
        if isinstance(e, ShoeState) and e.state == ShoeStateCode.INSERTED:
            shoe += 1
        elif isinstance(e, ButtonPressed):
            continue
        elif isinstance(e, CardDrawn):
            view[(shoe, e.counter)] = e.card
        elif isinstance(e, CardUnreadable):
            view[(shoe, e.counter)] = None
        elif isinstance(e, CardPushedBack):
            view.pop((shoe, e.counter), None)
    return view


def truth_view(dealt) -> dict[tuple[int, int], str | None]:
    return {(d.shoe, d.counter): (d.card if d.readable else None) for d in dealt}
