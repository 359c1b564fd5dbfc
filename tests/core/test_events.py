"""Typed payloads: parsed once and leniently (old journals replay as before), checked strictly when an
event is journaled, and the journal's bytes are the data's bytes."""

import json

import pytest

from shoe_daemon.core.errors import CoreMisuse, EventError
from shoe_daemon.core.events import UNSET, CardData, Event, Kind, NewShoeData, NoData


def test_a_card_payload_reads_the_typed_fields_and_keeps_the_data_as_sent():
    e = Event(1.5, Kind.CARD, "shoe", {"card": "9H", "counter": 7, "lseq": 3, "quality": 98})
    assert isinstance(e.payload, CardData)
    assert (e.payload.card, e.payload.counter, e.payload.lseq, e.payload.side) == ("9H", 7, 3, None)
    assert e.payload.shoe_link is UNSET and e.payload.user is UNSET
    assert e.payload.shown() == {"quality": 98}
    assert json.loads(e.to_json()) == {"t": 1.5, "kind": "card", "source": "shoe",
                                       "data": {"card": "9H", "counter": 7, "lseq": 3, "quality": 98}}


def test_the_journal_bytes_are_those_of_the_data_sorted_and_compact():
    e = Event(2.0, Kind.NEW_SHOE, "api", {"user": "pit", "decks": 6, "reason": "é"})
    assert e.to_json() == '{"data":{"decks":6,"reason":"é","user":"pit"},"kind":"new_shoe","source":"api","t":2.0}'
    assert Event.from_json(e.to_json()) == e


def test_parsing_is_lenient_a_field_of_the_wrong_type_reads_as_absent():
    e = Event(1.0, Kind.CARD, "shoe", {"card": "9H", "counter": "7", "side": 3})
    assert e.payload.counter is None and e.payload.side is None
    ns = Event(1.0, Kind.NEW_SHOE, "api", {"carried_alerts": "nope", "message_seq": 5})
    assert isinstance(ns.payload, NewShoeData) and ns.payload.carried_alerts == [] and ns.payload.message_seq == 5


@pytest.mark.parametrize("kind,data,what", [
    (Kind.CARD, {"card": "9H", "counter": "7"}, "counter='7'"),
    (Kind.CARD, {"card": "9H", "counter": True}, "counter=True"),
    (Kind.CORRECT_CARD, {"index": 1.0, "card": "9H"}, "index=1.0"),
    (Kind.BETS, {"bets": {"seat": 1}}, "bets="),
    (Kind.CLEAR_ALERT, {"alert_id": 12}, "alert_id=12"),
    (Kind.NEW_SHOE, {"decks": "8"}, "decks='8'"),
])
def test_journaling_an_event_whose_data_does_not_fit_its_kind_is_a_bug(kind, data, what):
    event = Event(1.0, kind, "api", data)
    with pytest.raises(EventError) as err:
        event.to_json()
    assert what in str(err.value) and isinstance(err.value, CoreMisuse)


def test_a_bad_envelope_is_refused_too():
    with pytest.raises(EventError, match="source=5"):
        Event(1.0, Kind.CUT_CARD, 5, {}).to_json()  # type: ignore[arg-type]
    assert isinstance(Event(1.0, Kind.CUT_CARD, "shoe").payload, NoData)


def test_with_data_stamps_more_data_and_parses_it_again():
    e = Event(1.0, Kind.CARD, "api", {"card": "9H"}).with_data(shoe_link="up")
    assert e.payload.shoe_link == "up" and e.data == {"card": "9H", "shoe_link": "up"}
