"""The FAULT codes of PROTOCOL.md section 7.2: name, severity and host action, in one table.

A shoe reports a fault as a number; the host needs to know what it means for the game. Every
code of the spec is here with the severity the host gives it and the action the spec lists, so
the daemon's driver, its docs and the tests read the same table:

    >>> describe(0x0003).name, describe(0x0003).severity, describe(0x0003).action
    ('CARD_JAM', 'error', 'stop_dealing')

Actions (what the host does while the fault is raised):

* ``stop_dealing``  -- the game must not go on: stop light, the coup is held until the shoe
  clears the fault or a supervisor resolves it;
* ``camera_verify`` -- the cards involved are checked against the camera (or a person);
* ``expect_lost``   -- events were overwritten in the shoe: EventsLost follows for them;
* ``alert``         -- tell the pit; the game goes on;
* ``none``          -- informational only.

Codes the table does not name are still valid on the wire (new codes are a compatible
addition, section 16): a vendor code (0x8000-0xFFFF) or an unknown one is shown with its number
and raised as a warning with action ``alert``.
"""

from __future__ import annotations

from dataclasses import dataclass

SEVERITIES = ("info", "warning", "error", "critical")
ACTIONS = ("stop_dealing", "camera_verify", "expect_lost", "alert", "none")
VENDOR_FIRST = 0x8000


@dataclass(frozen=True, slots=True)
class FaultInfo:
    code: int
    name: str          # the spec's name, e.g. "CARD_JAM"
    severity: str      # info | warning | error | critical
    action: str        # one of ACTIONS
    meaning: str       # the spec's "meaning" column

    @property
    def label(self) -> str:
        """Words for people: "card jam", "vendor fault"."""
        return self.name.lower().replace("_", " ")

    def text(self, active: bool = True, detail: int = 0) -> str:
        """``card jam (0x0003)``, ``over temperature (0x0022), detail 71``, ``... cleared``."""
        out = f"{self.label} (0x{self.code:04x})"
        if detail:
            out += f", detail {detail}"
        return out if active else out + " cleared"


def _f(code: int, name: str, severity: str, action: str, meaning: str) -> FaultInfo:
    return FaultInfo(code, name, severity, action, meaning)


#: PROTOCOL.md section 7.2, "Fault codes" (keep the two in step: tests/protocol checks it).
FAULTS: dict[int, FaultInfo] = {f.code: f for f in (
    _f(0x0001, "OPTICS_DIRTY", "warning", "camera_verify", "read quality degraded"),
    _f(0x0002, "SENSOR_FAILURE", "error", "stop_dealing", "the card sensor does not work"),
    _f(0x0003, "CARD_JAM", "error", "stop_dealing", "a card is stuck in the exit"),
    _f(0x0004, "DOUBLE_CARD", "error", "camera_verify", "two cards left together"),
    _f(0x0005, "CARD_REVERSED", "warning", "camera_verify", "a card faces the wrong way"),
    _f(0x0010, "RING_OVERFLOW", "error", "expect_lost", "unacknowledged events were overwritten"),
    _f(0x0011, "RX_OVERFLOW", "info", "none", "the shoe lost host bytes (its receive buffer overflowed)"),
    _f(0x0020, "LOW_VOLTAGE", "warning", "alert", "supply below specification"),
    _f(0x0021, "WATCHDOG_RESET", "warning", "alert", "the firmware restarted through its watchdog"),
    _f(0x0022, "OVER_TEMPERATURE", "warning", "alert", "the shoe is too hot"),
    _f(0x0030, "CONFIG_CORRUPT", "warning", "alert", "settings failed their check; defaults in use"),
    _f(0x0031, "CALIBRATION_NEEDED", "warning", "alert", "the card reader needs calibrating"),
    _f(0x0040, "LIGHT_FAILURE", "warning", "alert", "a dealer light is broken"),
    _f(0x0041, "BUTTON_STUCK", "warning", "alert", "a button reads pressed for > 5 s"),
)}


def describe(code: int) -> FaultInfo:
    """The table entry for ``code``; vendor and unknown codes get a generic entry."""
    known = FAULTS.get(code)
    if known is not None:
        return known
    if code >= VENDOR_FIRST:
        return FaultInfo(code, "VENDOR_FAULT", "warning", "alert", "vendor-specific")
    return FaultInfo(code, "UNKNOWN_FAULT", "warning", "alert", "a code this host does not know")


__all__ = ["ACTIONS", "FAULTS", "SEVERITIES", "VENDOR_FIRST", "FaultInfo", "describe"]
