"""The pipeline emits each output as the core appends it: the bytes must be those of the outputs once
the event is handled, i.e. the core never changes an output it appended."""

import random

from shoe_daemon.config import TableConfig
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish, RecordCoup, canonical_json
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table, rules_from_config
from shoe_daemon.game.cards import ALL_CODES


def encoded(out) -> tuple:
    if isinstance(out, Publish):
        return ("publish", out.topic, out.encode(), out.retain)
    if isinstance(out, RecordCoup):
        return ("record", out.coup_id, canonical_json(out.result))
    return ("other", repr(out))


def session(seed: int) -> list[Event]:
    rnd = random.Random(seed)
    t = 1_700_000_000.0
    events = [Event(t, Kind.LINK_UP, "shoe", {"model": "x"})]
    for _ in range(2):
        events.append(Event(t, Kind.NEW_SHOE, "api", {"decks": 8, "user": "pit", "reason": ""}))
        cards = [c for c in ALL_CODES for _ in range(8)]
        rnd.shuffle(cards)
        for i, code in enumerate(cards[:300]):
            t += 0.5
            events.append(Event(t, Kind.CARD, "shoe", {"card": code, "counter": i + 1}))
            if rnd.random() < 0.01:
                events.append(Event(t, Kind.TAMPER, "shoe", {"what": "lid_open"}))
            if rnd.random() < 0.01:
                events.append(Event(t, Kind.CARD_UNREADABLE, "shoe", {"counter": i + 1}))
                events.append(Event(t, Kind.CARD, "api", {"card": rnd.choice(ALL_CODES), "user": "x", "reason": "y"}))
    return events


def test_outputs_rendered_as_appended_are_the_outputs_of_the_event():
    seen: list = []
    streamed = Pipeline(Table(rules_from_config(TableConfig(id="s")), "s"), emit=lambda out: seen.append(encoded(out)))
    batched = Pipeline(Table(rules_from_config(TableConfig(id="s")), "s"))
    for event in session(3):
        seen.clear()
        outs = streamed.feed_one(event)
        assert seen == [encoded(o) for o in outs]
        assert [encoded(o) for o in batched.feed_one(event)] == seen
