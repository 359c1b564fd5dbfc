"""Helpers of the journal tests: deterministic events and direct SQLite surgery."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from shoe_daemon.core.events import Event, Kind
from shoe_daemon.journal import Journal

CARDS = [r + s for r in "A23456789TJQK" for s in "SHDC"]


def card(i: int) -> Event:
    return Event(1_700_000_000.0 + i * 0.25, Kind.CARD, "shoe", {"card": CARDS[i % 52], "counter": i})


def new_shoe(i: int) -> Event:
    return Event(1_700_000_000.0 + i * 0.25, Kind.NEW_SHOE, "api", {"user": "sup1", "reason": "new shoe", "decks": 8})


def shoes(n_shoes: int, per_shoe: int) -> list[Event]:
    """``n_shoes`` shoes: a new_shoe then ``per_shoe - 1`` cards each."""
    out = []
    for s in range(n_shoes):
        for k in range(per_shoe):
            i = s * per_shoe + k
            out.append(new_shoe(i) if k == 0 else card(i))
    return out


def build(path: Path, events: list[Event], *, synchronous: str = "normal") -> list[str]:
    """A journal at ``path`` holding ``events``; returns their bodies."""
    with Journal.open(path, synchronous=synchronous) as j:
        j.append_many(events)
    return [e.to_json() for e in events]


def sql(path: Path, statement: str, args: tuple = ()) -> None:
    """Run one statement on the journal file, as a person with the sqlite3 shell would."""
    conn = sqlite3.connect(path)
    try:
        conn.execute(statement, args)
        conn.commit()
    finally:
        conn.close()


def rows(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT seq, body, checksum FROM events ORDER BY seq").fetchall()
    finally:
        conn.close()
