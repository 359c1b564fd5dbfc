"""Shoe faults through the daemon's protocol driver: every code named, with the spec's severity
and host action; a clear marked as such; lost events one distinct error.

The shoe side is the reference ShoeConnection, the host side the daemon's ProtocolDriver (which
wraps HostConnection): real frames, real codec, a fake clock.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

from firmware_protocol.connection import ShoeConnection
from firmware_protocol.faults import FAULTS, describe
from firmware_protocol.messages import CardDrawn, Fault, FaultCode
from shoe_daemon.core.events import Kind
from shoe_daemon.sources.protocol_driver import ProtocolDriver

SPEC = (Path(__file__).resolve().parents[2] / "firmware_protocol" / "PROTOCOL.md").read_text()


class Pair:
    """A shoe and the daemon's driver on an in-memory line that can be cut."""

    def __init__(self, ring_size: int = 64):
        self.t = 1000.0
        self.shoe = ShoeConnection(now=self.t, boot_id=0xFA17, ring_size=ring_size)
        self.driver = ProtocolDriver(SimpleNamespace(link_timeout=3.0))
        self.events = []
        self.up = True
        self.connect()

    def connect(self) -> None:
        evs, hello = self.driver.connected(self.t)
        self.events += evs
        self.shoe.receive_data(hello, self.t)
        self.run(0.3)

    def run(self, seconds: float, step: float = 0.05) -> None:
        end = self.t + seconds
        while self.t < end:
            self.t += step
            to_host = self.shoe.tick(self.t)
            evs, reply = self.driver.feed(to_host if self.up else b"", self.t)
            self.events += evs
            evs, more = self.driver.tick(self.t)
            self.events += evs
            if self.up:
                self.shoe.receive_data(reply + more, self.t)

    def send(self, msg) -> None:
        data = self.shoe.send(msg, self.t)
        if self.up:
            evs, reply = self.driver.feed(data, self.t)
            self.events += evs
            self.shoe.receive_data(reply, self.t)

    def faults(self) -> list[dict]:
        return [e.data for e in self.events if e.kind is Kind.FAULT]


def spec_fault_table() -> list[tuple[int, str, str, str]]:
    rows = re.findall(r"^\| 0x([0-9A-F]{4}) \| (\w+) \| [^|]* \| (\w+) \| [^|]* \| `(\w+)` \|$", SPEC, re.M)
    return [(int(code, 16), name, severity, action) for code, name, severity, action in rows]


def test_the_table_is_the_spec_and_names_every_code():
    table = spec_fault_table()
    assert len(table) == len(FaultCode) == len(FAULTS)
    assert table == [(f.code, f.name, f.severity, f.action) for f in FAULTS.values()]
    assert {f.name for f in FAULTS.values()} == {c.name for c in FaultCode}
    assert describe(0x0003).action == "stop_dealing" and describe(0x0003).severity == "error"
    assert describe(0x8001).name == "VENDOR_FAULT" and describe(0x0099).name == "UNKNOWN_FAULT"


def test_card_jam_is_named_an_error_that_stops_dealing_and_its_clear_says_so():
    p = Pair()
    p.send(CardDrawn("TH", 1, 97))
    p.send(Fault(FaultCode.CARD_JAM, True, 0))
    p.send(Fault(FaultCode.CARD_JAM, False, 0))
    raised, cleared = p.faults()
    assert raised == {"code": "0x0003", "name": "CARD_JAM", "active": True, "detail": 0, "severity": "error",
                      "action": "stop_dealing", "text": "card jam (0x0003)", "boot": 0xFA17, "lseq": 2}
    assert cleared == {"code": "0x0003", "name": "CARD_JAM", "active": False, "detail": 0, "severity": "info",
                       "action": "stop_dealing", "text": "card jam (0x0003) cleared", "cleared": True,
                       "boot": 0xFA17, "lseq": 3}


def test_every_code_gets_the_spec_severity_and_action():
    p = Pair()
    codes = [*FAULTS, 0x8123]
    for code in codes:
        p.send(Fault(code, True, 7))
    got = p.faults()
    assert [g["code"] for g in got] == [f"0x{c:04x}" for c in codes]
    for g, code in zip(got, codes, strict=True):
        info = describe(code)
        assert (g["name"], g["severity"], g["action"]) == (info.name, info.severity, info.action)
        assert g["text"] == f"{info.label} (0x{code:04x}), detail 7"
    assert got[-1]["name"] == "VENDOR_FAULT" and got[-1]["severity"] == "warning"


def test_events_overwritten_in_the_ring_are_one_lost_error_and_the_outage_a_fault():
    p = Pair(ring_size=8)
    p.up = False
    for i in range(12):
        p.send(CardDrawn("AS", i + 1, 90))
    # Card 9 (seq 9) overwrote seq 1: RING_OVERFLOW raised as seq 10; cards 10-12 are seqs 11-13.
    p.up = True
    p.events += p.driver.disconnected(p.t, "unplugged")
    p.connect()
    p.run(1.0)
    got = p.faults()
    lost = [f for f in got if f["code"] == "events_lost"]
    assert lost == [{"code": "events_lost", "name": "EVENTS_LOST", "severity": "error", "action": "stop_dealing",
                     "first_seq": 1, "count": 5, "reason": "not_in_ring", "boot": 0xFA17,
                     "text": "5 shoe events lost (seqs 1-5): overwritten in the shoe's ring before the host "
                             "could fetch them"}]
    overflow = [(f["active"], f["detail"], f["severity"], f["action"]) for f in got if f["code"] == "0x0010"]
    assert overflow == [(True, 1, "error", "expect_lost"), (False, 5, "info", "expect_lost")]
    assert [e.data["counter"] for e in p.events if e.kind is Kind.CARD] == list(range(6, 13))


def test_resend_gone_is_a_lost_error():
    p = Pair(ring_size=4)
    for i in range(3):
        p.send(CardDrawn("AS", i + 1, 90))
    p.shoe.send(CardDrawn("2S", 4, 90), p.t)          # seq 4: the frame is lost on the line
    evs, held = p.driver.feed(p.shoe.send(CardDrawn("3S", 5, 90), p.t), p.t)   # 5 arrives: ask for 4 ...
    p.events += evs
    for i in range(3):                                # ... the shoe deals 6-8 (lost on the line too)
        p.shoe.send(CardDrawn("4S", 6 + i, 90), p.t)
    p.shoe.receive_data(held, p.t)                    # ... 4 left the 4-event ring: RESEND_GONE
    p.run(1.0)
    lost = [f for f in p.faults() if f["code"] == "events_lost"]
    assert [(f["first_seq"], f["count"], f["reason"], f["severity"], f["action"]) for f in lost] == [
        (4, 1, "gone", "error", "stop_dealing")]
    assert lost[0]["text"] == "1 shoe event lost (seq 4): no longer in the shoe's ring (RESEND_GONE)"
    assert [e.data["counter"] for e in p.events if e.kind is Kind.CARD] == [1, 2, 3, 5, 6, 7, 8]
