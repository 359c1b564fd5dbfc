"""The ``protocol`` driver: our framed shoe protocol (firmware_protocol/PROTOCOL.md).

A thin adapter: ``firmware_protocol.HostConnection`` does the link work
(handshake, seq tracking, resend requests, duplicate suppression, heartbeats,
timeouts); this turns what it delivers into daemon Events. Card events carry
the shoe's session (``boot``) and the link sequence number (``lseq``), so a
restarted daemon resumes the link exactly after the last event it journaled:
nothing the shoe sent is lost, nothing is dealt twice.

Faults carry what the host must do about them (firmware_protocol/faults.py, the
spec's table): a FAULT event has ``code`` ("0x0003"), ``name`` ("CARD_JAM"),
``severity``, ``action`` ("stop_dealing", "camera_verify", "expect_lost",
"alert", "none"), ``text`` ("card jam (0x0003)"), ``active`` and ``detail``; a
clear from the shoe has ``active: false``, ``cleared: true`` and severity
"info". Events the link could not recover are one distinct fault,
``events_lost`` (severity error, action stop_dealing), whatever the reason
(``gone`` = RESEND_GONE, ``not_in_ring``, ``retries``, ``shoe_restarted``).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from firmware_protocol.codec import DecodeError
from firmware_protocol.connection import EventsLost, HostConnection, LinkDown, LinkUp
from firmware_protocol.faults import describe
from firmware_protocol.messages import (
    ButtonPressed,
    CardDrawn,
    CardPushedBack,
    CardUnreadable,
    CutCard,
    Fault,
    ShoeState,
    ShoeStateCode,
    Tamper,
    TamperKind,
)
from firmware_protocol.messages import Lights as WireLights
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.sources.base import DriverSettings, Lights, ShoeDriver

LIGHTS = {
    Lights.OFF: WireLights.OFF,
    Lights.PUNTO: WireLights.PUNTO,
    Lights.BANCO: WireLights.BANCO,
    Lights.COMPLETE: WireLights.COUP_COMPLETE,
    Lights.ERROR: WireLights.ERROR_STOP,
}
SHOE_STATE = {
    ShoeStateCode.INSERTED: Kind.SHOE_INSERTED,
    ShoeStateCode.REMOVED: Kind.SHOE_REMOVED,
    ShoeStateCode.EMPTY: Kind.SHOE_EMPTY,
}


def resume_point(events) -> tuple[int, int] | None:
    """(boot, lseq) of the last journaled shoe event that carries them, scanning newest first."""
    for event in events:
        data = event.data
        if event.source == "shoe" and "boot" in data and "lseq" in data:
            return int(data["boot"]), int(data["lseq"])
    return None


class ProtocolSettings(DriverSettings):
    """[shoe] keys of the protocol driver."""

    # PROTOCOL.md section 10: link down after 3 heartbeat periods (3 x 1.0 s) without a valid frame.
    link_timeout: float = Field(3.0, gt=0, le=3600)


LOST_WHY = {
    "gone": "no longer in the shoe's ring (RESEND_GONE)",
    "not_in_ring": "overwritten in the shoe's ring before the host could fetch them",
    "retries": "not received after every resend request",
    "shoe_restarted": "the shoe restarted before sending them",
}


def fault_data(code: int, active: bool, detail: int, link: dict | None = None) -> dict:
    """The FAULT event's data for a shoe fault (PROTOCOL.md 7.2)."""
    info = describe(code)
    data = {"code": f"0x{code:04x}", "name": info.name, "active": active, "detail": detail,
            "severity": info.severity if active else "info", "action": info.action,
            "text": info.text(active, detail)}
    if not active:
        data["cleared"] = True
    return {**data, **(link or {})}


def lost_data(first_seq: int, count: int, reason: str, boot: int | None) -> dict:
    """The FAULT event's data for events the link could not recover (EventsLost)."""
    last = (first_seq + count - 1) % 65536
    seqs = f"seq {first_seq}" if count == 1 else f"seqs {first_seq}-{last}"
    text = f"{count} shoe event{'s' if count != 1 else ''} lost ({seqs}): {LOST_WHY.get(reason, reason)}"
    data = {"code": "events_lost", "name": "EVENTS_LOST", "severity": "error", "action": "stop_dealing",
            "first_seq": first_seq, "count": count, "reason": reason, "text": text}
    if boot is not None:
        data["boot"] = boot
    return data


class ProtocolDriver(ShoeDriver):
    Settings = ProtocolSettings

    def __init__(self, settings=None, resume: tuple[int, int] | None = None):
        super().__init__(settings)
        timeout = getattr(self.settings, "link_timeout", None)
        self.conn = HostConnection(resume=resume, link_timeout=timeout)
        self._standby = False

    def resume(self, recent_events: Sequence[Event]) -> None:
        """Continue the shoe session the journal remembers (before the port opens)."""
        point = resume_point(recent_events)
        if point is not None:
            self.conn = HostConnection(resume=point, link_timeout=self.conn.configured_link_timeout)

    def connected(self, now):
        self.conn.connection_made(now)
        return self._drain(now)

    def feed(self, data, now):
        self.conn.receive_data(data, now)
        return self._drain(now)

    def tick(self, now):
        return self._drain(now)

    def disconnected(self, now, reason):
        self.conn.connection_lost(now, reason)
        return self._drain(now)[0]

    def lights(self, state, now):
        return self.conn.set_lights(LIGHTS[state], now)

    def standby(self) -> bool:
        # The shoe keeps what is not acknowledged (PROTOCOL.md 9.2): the next session fetches it.
        self._standby = True
        self.conn.withhold_acks()
        return True

    def _drain(self, now: float) -> tuple[list[Event], bytes]:
        if self._standby:
            self.conn.events()          # neither stored nor acknowledged: fetched again later
            return [], self.conn.tick(now)
        events = []
        for item in self.conn.events():
            event = self._convert(item, now)
            if event is not None:
                events.append(event)
        return events, self.conn.tick(now)

    def _convert(self, item, now: float) -> Event | None:
        src = self.source
        link = {}
        if hasattr(item, "seq") and self.conn.boot_id is not None and not isinstance(item, DecodeError):
            link = {"boot": self.conn.boot_id, "lseq": item.seq}
        if isinstance(item, CardDrawn):
            return Event(now, Kind.CARD, src, {"card": item.card, "counter": item.counter,
                                               "quality": item.quality, **link})
        if isinstance(item, CardUnreadable):
            return Event(now, Kind.CARD_UNREADABLE, src, {"counter": item.counter,
                                                          "reason": item.reason.name.lower(), **link})
        if isinstance(item, CardPushedBack):
            return Event(now, Kind.CARD_PUSHED_BACK, src, {"card": item.card, "counter": item.counter, **link})
        if isinstance(item, CutCard):
            return Event(now, Kind.CUT_CARD, src, {"counter": item.counter, **link})
        if isinstance(item, ShoeState):
            return Event(now, SHOE_STATE[item.state], src, dict(link))
        if isinstance(item, Tamper):
            active = item.what is not TamperKind.LID_CLOSED
            return Event(now, Kind.TAMPER, src, {"what": item.what.name.lower(), "active": active, **link})
        if isinstance(item, ButtonPressed):
            return Event(now, Kind.BUTTON, src, {"button": item.button.name.lower(), **link})
        if isinstance(item, Fault):
            return Event(now, Kind.FAULT, src, fault_data(item.code, item.active, item.detail, link))
        if isinstance(item, LinkUp):
            info = item.info
            return Event(now, Kind.LINK_UP, src, {
                "driver": "protocol", "model": info.model, "serial": info.serial,
                "firmware": f"{info.fw_major}.{info.fw_minor}.{info.fw_patch}", "protocol": info.version,
                "boot": info.boot_id, "resumed": item.resumed, "missed": item.missed,
            })
        if isinstance(item, LinkDown):
            return Event(now, Kind.LINK_DOWN, src, {"reason": item.reason})
        if isinstance(item, EventsLost):
            # Cards among them must come from the camera or a person: an error, not a warning.
            return Event(now, Kind.FAULT, src, lost_data(item.first_seq, item.count, item.reason,
                                                         self.conn.boot_id))
        if isinstance(item, DecodeError) and item.seq is not None:
            # A sequenced event with a good CRC that we cannot interpret: say so, do not guess.
            return Event(now, Kind.FAULT, src, {"code": "undecodable_event", "severity": "error",
                                                "detail": item.detail, "lseq": item.seq})
        return None  # heartbeats, status, clock sync, stray decode errors: counted in conn.stats
