"""The one loop every event goes through: stamp -> journal append -> core -> emit.

The daemon, fixture replay, the virtual session that makes the fixture library
and the tests all feed events through a :class:`Pipeline`; nobody else calls the
table's steps in order by hand.

1. **stamp**: :meth:`Table.prepare` puts on what the table decides by its state
   at that moment (a new shoe's carried alerts, the link state under a typed-in
   card, the limits under the bets), so that a replay decides the same way;
2. **journal**: the stamped events are appended in one transaction (group
   commit) before the core sees them: nothing is published that is not journaled;
3. **core**: :meth:`Table.handle`, one event at a time;
4. **emit**: each output goes to ``emit`` as the core makes it (a card's message
   leaves before the coup's result, roads and odds are computed).

A stamp may read state that the events before it change (a new shoe carries the
alerts active at that point), so such an event starts a batch of its own.

When the journal refuses a batch (a full disk, a read-only file system), nothing of
it reaches the core: :class:`~shoe_daemon.core.errors.NotJournaled` says which events
went through before and which are left, in order, to be fed again once the journal
takes writes (the daemon holds the dealing meanwhile).

The journal is anything with ``append_many(events) -> seqs`` (the daemon's
SQLite journal, or None where nothing is journaled: the virtual session, tests).
The pipeline does no I/O of its own and reads no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from shoe_daemon.core.errors import NotJournaled
from shoe_daemon.core.events import Event
from shoe_daemon.core.outputs import Outbox, Output
from shoe_daemon.core.table import Table


class _Refused(Exception):
    """The journal refused a sub-batch (internal: feed() says which events are left)."""


class EventLog(Protocol):
    def append_many(self, events: list[Event]) -> list[int]: ...


@dataclass(frozen=True, slots=True)
class Handled:
    """One event after the pipeline: its journal seq (None unjournaled), the event as journaled,
    and the core's outputs."""

    seq: int | None
    event: Event
    outputs: list[Output]


class Pipeline:
    def __init__(self, table: Table, *, journal: EventLog | None = None,
                 emit: Callable[[Output], None] | None = None):
        self.table = table
        self.journal = journal
        self.emit = emit
        self.events = 0

    def feed(self, events: Iterable[Event]) -> list[Handled]:
        """Stamp, journal, handle and emit a batch of events, in order."""
        batch = list(events)
        done: list[Handled] = []
        # Whether prepare() stamps an event depends on the event alone (its kind and what it lacks);
        # what it stamps on depends on the state then, so a stamped event starts its own sub-batch
        # and is stamped when the events before it have been handled (_feed).
        cuts = [i for i in range(1, len(batch)) if self.table.prepare(batch[i]) is not batch[i]]
        for start, end in zip([0, *cuts], [*cuts, len(batch)], strict=True):
            try:
                done += self._feed(batch[start:end])
            except _Refused as refused:
                raise NotJournaled(done, batch[start:]) from refused.__cause__
        return done

    def feed_one(self, event: Event) -> list[Output]:
        """One event through the pipeline: its outputs."""
        return self.feed([event])[0].outputs

    def _feed(self, batch: list[Event]) -> list[Handled]:
        if not batch:
            return []
        batch[0] = self.table.prepare(batch[0])   # the others are not stamped (see feed)
        if self.journal is None:
            seqs: list[int | None] = [None] * len(batch)
        else:
            try:
                seqs = self.journal.append_many(batch)
            except Exception as exc:  # re-raised as NotJournaled, with what is left to feed again
                raise _Refused() from exc
        done = []
        for seq, event in zip(seqs, batch, strict=True):
            outputs = self.table.handle(event, Outbox(self.emit))
            done.append(Handled(seq, event, outputs))
        self.events += len(batch)
        return done

    def restore(self, journaled: Iterable[Event], emit: Callable[[Output], None] | None = None) -> int:
        """Rebuild the core's state from events already journaled (a restart): core only, nothing
        journaled again; ``emit`` sees the outputs (the caller decides what to render again)."""
        # A fresh core's first retained state took the first message seqs in the journal's first
        # run: take them again, so that a replay numbers its messages as the live run did.
        self.table.retained()
        n = 0
        for event in journaled:
            self.table.handle(event, Outbox(emit))
            n += 1
        return n
