"""The Acme driver against a recorded session (acme-session.shoelog): first alone, sans-I/O, then
through the whole daemon with shoe-daemon's own replay, as docs/drivers.md describes."""

from pathlib import Path

from acme_shoe_driver import AcmeDriver, AcmeSettings

from shoe_daemon.core.events import Kind
from shoe_daemon.recording import read_fixture
from shoe_daemon.recording.formats import SHOE
from shoe_daemon.sources import register_driver

FIXTURE = Path(__file__).with_name("acme-session.shoelog")


def feed_fixture(driver, fixture):
    """The fixture's shoe bytes into the driver at their times; (events, bytes the driver answered)."""
    events, answered = [], b""
    evs, out = driver.connected(fixture.header.start)
    events += evs
    answered += out
    for record in fixture.records:
        if record.kind == SHOE:
            evs, out = driver.feed(record.data, fixture.header.start + record.t)
            events += evs
            answered += out
    return events, answered


def test_the_recorded_session_gives_these_events():
    fx = read_fixture(FIXTURE)
    events, answered = feed_fixture(AcmeDriver(), fx)
    assert answered == b"HELLO?\r\n"
    got = [(round(e.t - fx.header.start, 2), e.kind, e.data) for e in events]
    assert got == [
        (0.05, Kind.LINK_UP, {"driver": "example", "model": "ACME-CS2", "firmware": "1.4"}),
        (1.0, Kind.CARD, {"card": "9H", "counter": 1}),
        (1.6, Kind.CARD, {"card": "2C", "counter": 2}),
        (2.2, Kind.CARD, {"card": "KS", "counter": 3}),
        (2.8, Kind.CARD, {"card": "3D", "counter": 4}),
        (4.0, Kind.FAULT, {"code": "acme_12", "text": "optical sensor dirty"}),
        (5.0, Kind.FAULT, {"code": "unrecognised_line", "line": "HELO?"}),
        (6.01, Kind.CARD, {"card": "4H", "counter": 7}),     # the core sees the gap (5, 6 missed)
    ]
    assert all(e.source == "shoe" for e in events)


def test_resume_asks_for_what_the_journal_lacks_and_drops_what_it_has():
    fx = read_fixture(FIXTURE)
    journaled, _ = feed_fixture(AcmeDriver(), fx)
    driver = AcmeDriver()
    driver.resume(list(reversed(journaled)))           # newest first, as the daemon gives them
    assert driver.connected(10.0) == ([], b"HELLO?\r\nSINCE 7\r\n")
    events, _ = driver.feed(b"HELLO ACME-CS2 1.4\r\nCARD 4H 7\r\nCARD 2S 8\r\n", 10.1)
    assert [(e.kind, e.data.get("card")) for e in events] == [(Kind.LINK_UP, None), (Kind.CARD, "2S")]
    events, _ = driver.feed(b"CARD 5C 1\r\n", 11.0)      # a refilled shoe counts from 1 again
    assert [e.data["counter"] for e in events] == [1]
    assert AcmeDriver().connected(0.0) == ([], b"HELLO?\r\n")   # nothing journaled: nothing to ask
    assert AcmeDriver(AcmeSettings(example_resend=False)).connected(0.0)[1] == b"HELLO?\r\n"


def test_settings_shape_the_driver():
    quiet = AcmeDriver(AcmeSettings(example_lamps=False, example_max_line=16))
    assert quiet.lights("punto", 0.0) == b""
    assert AcmeDriver().lights("banco", 0.0) == b"LAMP B\r\n"
    events, _ = quiet.feed(b"X" * 20, 1.0)
    assert [e.data["code"] for e in events] == ["line_too_long"]
    assert quiet.disconnected(2.0, "unplugged") == []       # never linked: nothing to report down


def test_the_recorded_session_through_the_daemon():
    """shoe-daemon's replay: the fixture's bytes on a pty, the real daemon (driver, journal, core) behind it."""
    from shoe_daemon.recording.replay import replay

    register_driver("example", AcmeDriver)               # installed, the entry point does this
    result = replay(FIXTURE)
    cards = [line for line in result.lines if "/coup/card " in line]
    assert [c for c in ("9H", "2C", "KS", "3D", "4H") if any(f'"{c}"' in line for line in cards)] == \
        ["9H", "2C", "KS", "3D", "4H"]
    assert any('"winner":"punto"' in line for line in result.lines), "coup 1 is Punto's natural 9"
    faults = [line for line in result.lines if "/alerts/event " in line]
    assert any("acme_12" in line for line in faults) and any("unrecognised_line" in line for line in faults)
    assert any('"kind":"out_of_order"' in line and '"problem":"gap"' in line for line in faults)
    assert result.host_bytes.startswith(b"HELLO?\r\n")
