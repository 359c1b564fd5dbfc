"""The table's MQTT topic tree: names, QoS and retain flags, prefix rules.

Every topic is ``<prefix>/<suffix>``; the prefix defaults to ``baccarat/<table_id>``
and never starts with ``/``. The core names topics by suffix (``coup/card``); the
publisher and the monitor join them to the prefix here, so the tree is spelled in
one place (docs/mqtt.md documents it).
"""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA = 1  # version of the status payload (the core's payloads carry their own)

STATUS = "status"
COUP_CURRENT = "coup/current"
COUP_CARD = "coup/card"
COUP_RESULT = "coup/result"
HISTORY = "history"
ALERTS_EVENT = "alerts/event"
ALERTS_ACTIVE = "alerts/active"
SHOE = "shoe"
SOURCES = "sources"
ROADS = "roads"
STATS = "stats"
ODDS = "odds"


@dataclass(frozen=True, slots=True)
class TopicSpec:
    suffix: str
    qos: int
    retain: bool
    what: str


# The tree, in the order docs/mqtt.md lists it.
TREE: tuple[TopicSpec, ...] = (
    TopicSpec(STATUS, 1, True, "daemon online/offline; the Last Will is offline"),
    TopicSpec(COUP_CURRENT, 1, True, "snapshot of the coup being dealt, after every card"),
    TopicSpec(COUP_CARD, 1, False, "one message per card dealt"),
    TopicSpec(COUP_RESULT, 1, False, "one message per settled coup"),
    TopicSpec(HISTORY, 1, True, "the last coups"),
    TopicSpec(ALERTS_EVENT, 1, False, "one message per alert raised, acknowledged or cleared"),
    TopicSpec(ALERTS_ACTIVE, 1, True, "the list of active alerts"),
    TopicSpec(SHOE, 1, True, "shoe state: decks, cards dealt and left, cut card"),
    TopicSpec(SOURCES, 1, True, "card sources and their links"),
    TopicSpec(ROADS, 1, True, "the scoreboard roads of the shoe, after every coup"),
    TopicSpec(STATS, 1, True, "shoe statistics: wins, naturals, pairs, streaks"),
    TopicSpec(ODDS, 1, True, "exact odds and house edge of each bet for the cards left"),
)

SPECS: dict[str, TopicSpec] = {spec.suffix: spec for spec in TREE}
RETAINED: frozenset[str] = frozenset(s.suffix for s in TREE if s.retain)

_FORBIDDEN = ("+", "#", "\x00")


def _check_level_text(text: str, what: str) -> None:
    for ch in _FORBIDDEN:
        if ch in text:
            raise ValueError(f"{what} {text!r} must not contain {ch!r}")


def default_prefix(table_id: str) -> str:
    if not table_id or "/" in table_id:
        raise ValueError(f"table id {table_id!r} must be non-empty and contain no '/'")
    _check_level_text(table_id, "table id")
    return f"baccarat/{table_id}"


def normalize_prefix(prefix: str | None, table_id: str) -> str:
    """The configured prefix (or the default one), checked: no leading '/', no wildcards."""
    if prefix is None or prefix == "":
        return default_prefix(table_id)
    if prefix.startswith("/"):
        raise ValueError(f"MQTT prefix {prefix!r} must not start with '/'")
    prefix = prefix.rstrip("/")
    if not prefix:
        raise ValueError("MQTT prefix is empty")
    _check_level_text(prefix, "MQTT prefix")
    return prefix


def join(prefix: str, suffix: str) -> str:
    """``prefix/suffix``; the suffix is relative (no leading '/') and has no wildcards."""
    if not suffix or suffix.startswith("/") or suffix.endswith("/"):
        raise ValueError(f"topic suffix {suffix!r} must be relative and non-empty")
    _check_level_text(suffix, "topic suffix")
    return f"{prefix}/{suffix}"


def split(prefix: str, topic: str) -> str | None:
    """The suffix of ``topic`` under ``prefix``, or None when it is not under it."""
    head = prefix + "/"
    if topic.startswith(head):
        return topic[len(head):]
    return None
