from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from shoe_daemon.core.events import Kind
from shoe_daemon.game.cards import ALL_CODES
from shoe_daemon.sources import driver_names, get_driver
from shoe_daemon.sources.text_driver import MAX_LINE, TextLineDriver


def make(pattern=None):
    return TextLineDriver(SimpleNamespace(text_pattern=pattern))


def test_registered_by_name():
    assert get_driver("text") is TextLineDriver
    assert {"protocol", "text"} <= set(driver_names())


def test_unknown_driver_names_the_known_ones():
    try:
        get_driver("nope")
    except KeyError as exc:
        assert "text" in str(exc) and "nope" in str(exc)
    else:
        raise AssertionError("expected KeyError")


def test_lines_split_anywhere_give_cards_in_order():
    d = make()
    events, reply = d.feed(b"9H\r\nT", 1.0)
    assert [e.data["card"] for e in events] == ["9H"] and reply == b""
    events, _ = d.feed(b"S\n10d\n\n", 2.0)
    assert [e.data["card"] for e in events] == ["TS", "TD"]
    assert all(e.kind is Kind.CARD and e.source == "shoe" for e in events)
    assert events[0].t == 2.0


def test_garbage_line_is_a_fault_with_the_line():
    d = make()
    events, _ = d.feed(b"XX\n", 1.0)
    assert events[0].kind is Kind.FAULT
    assert events[0].data == {"code": "unrecognised_line", "line": "XX"}


def test_custom_pattern_and_bad_code_in_group():
    d = make(r"CARD=(?P<card>\w+)")
    events, _ = d.feed(b"CARD=QC\nCARD=ZZ\n", 1.0)
    assert events[0].data["card"] == "QC"
    assert events[1].kind is Kind.FAULT and events[1].data["code"] == "bad_card_code"


def test_endless_line_is_bounded():
    d = make()
    events, _ = d.feed(b"A" * (MAX_LINE + 10), 1.0)
    assert events[0].data["code"] == "line_too_long"
    events, _ = d.feed(b"\nKH\n", 1.0)
    assert [e.data.get("card") for e in events if e.kind is Kind.CARD] == ["KH"]


@given(st.lists(st.sampled_from(ALL_CODES), max_size=30), st.data())
def test_any_split_gives_the_same_cards(codes, data):
    blob = "".join(c + "\n" for c in codes).encode()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(blob)), max_size=5)))
    d = make()
    got, start = [], 0
    for cut in [*cuts, len(blob)]:
        got += [e.data["card"] for e in d.feed(blob[start:cut], 0.0)[0]]
        start = cut
    assert got == codes
