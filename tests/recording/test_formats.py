"""Fixture files: the text format, its gzip variant, the registry by suffix, errors with line numbers."""

from __future__ import annotations

import gzip

import pytest

from shoe_daemon.recording.formats import (
    CAMERA,
    EVENT,
    HOST,
    LOST,
    NOTE,
    OPEN,
    SHOE,
    Fixture,
    FixtureFormatError,
    Header,
    Record,
    find_fixtures,
    fixture_stem,
    format_for,
    open_writer,
    read_fixture,
    register_format,
    write_fixture,
)


def sample() -> Fixture:
    header = Header(
        name="sample", description="two frames, an unplug and a camera card", date="2025-03-01T20:00:00Z",
        start=1740859200.0, shoe={"model": "EMU-SHOE", "protocol": "1"},
        port={"device": "/dev/dealing-shoe", "baud": "115200", "note": "has spaces in it"},
        driver="protocol", table={"id": "t1", "decks": "8"}, command="shoe-daemon record --port x --out y",
        emulator={"seed": "7"}, camera="events", shows="a longer   text\nover lines", extra={"site": "pit 3"},
        camera_config={"zones": [{"name": "banco", "polygon": [[0, 0], [9, 0], [9, 9]]}], "fuser": {"min_votes": 2}},
    )
    records = [
        Record(0.0, OPEN), Record(0.001, HOST, b"\x00\x02\x80"), Record(0.0125, SHOE, bytes(range(0, 40))),
        Record(1.5, LOST, "read failed: [Errno 5] Input/output error"), Record(2.0, OPEN),
        Record(2.25, CAMERA, {"event": {"kind": "card", "data": {"card": "TH", "side": "banco"}}, "frame": None}),
        Record(2.5, CAMERA, {"frame": "camera/x/frame-000.jpg"}),
        Record(2.75, EVENT, {"kind": "card", "source": "api", "data": {"card": "9D", "user": "pit-1"}}),
        Record(3.0, NOTE, "the end"),
    ]
    return Fixture(header, records)


@pytest.mark.parametrize("suffix", [".shoelog", ".shoelog.gz"])
def test_round_trip(tmp_path, suffix):
    fx = sample()
    path = write_fixture(tmp_path / f"sample{suffix}", fx)
    back = read_fixture(path)
    assert back.records == fx.records
    h = back.header
    assert (h.name, h.description, h.start, h.driver, h.camera) == ("sample", fx.header.description, 1740859200.0,
                                                                     "protocol", "events")
    assert h.port["note"] == "has spaces in it" and h.table == {"id": "t1", "decks": "8"}
    assert h.shows == "a longer text over lines"          # one line in the file
    assert h.extra == {"site": "pit 3"}
    assert h.camera_config == fx.header.camera_config      # JSON, on one header line
    assert back.path == path and back.name == "sample" and back.duration == 3.0
    if suffix.endswith(".gz"):
        assert gzip.decompress(path.read_bytes()).startswith(b"# shoelog 1\n")
        # No time or name in the gzip header: the same fixture gives the same bytes.
        again = write_fixture(tmp_path / f"again{suffix}", fx)
        assert again.read_bytes() == path.read_bytes()


def test_the_text_is_readable(tmp_path):
    text = write_fixture(tmp_path / "s.shoelog", sample()).read_text()
    lines = text.splitlines()
    assert lines[0] == "# shoelog 1"
    assert "# description: two frames, an unplug and a camera card" in lines
    assert "# table: id=t1 decks=8" in lines
    assert '# port: device=/dev/dealing-shoe baud=115200 note="has spaces in it"' in lines
    assert "0.012500 shoe " + bytes(range(40)).hex() in lines
    assert "1.500000 lost read failed: [Errno 5] Input/output error" in lines
    assert '2.250000 camera {"event":{"data":{"card":"TH","side":"banco"},"kind":"card"},"frame":null}' in lines


def test_registry_by_suffix(tmp_path):
    assert format_for("a/b/clean.shoelog").suffix == ".shoelog"
    assert format_for("clean.shoelog.gz").suffix == ".shoelog.gz"      # the longest suffix wins
    assert fixture_stem("x/clean-8-decks.shoelog.gz") == "clean-8-decks"
    with pytest.raises(ValueError, match="unknown fixture format.*known suffixes: .shoelog, .shoelog.gz"):
        format_for("clean.txt")

    seen = []

    def reader(path):
        seen.append(path)
        return sample()

    register_format(".shoelog.test", reader, lambda path, header: open_writer(path.with_suffix(""), header))
    assert read_fixture(tmp_path / "x.shoelog.test").header.name == "sample"
    assert seen == [tmp_path / "x.shoelog.test"]


def test_find_fixtures_lists_a_directory(tmp_path):
    for name in ("b.shoelog", "a.shoelog.gz", "a.chk", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    assert [p.name for p in find_fixtures([tmp_path])] == ["a.shoelog.gz", "b.shoelog"]
    assert [p.name for p in find_fixtures([tmp_path / "b.shoelog"])] == ["b.shoelog"]


@pytest.mark.parametrize("body, message", [
    ("0.5 shoe zz", r"x.shoelog:3: non-hexadecimal"),
    ("0.5 smoke 00", r"x.shoelog:3: unknown record kind 'smoke'"),
    ("1.0 shoe 00\n0.5 shoe 00", r"x.shoelog:4: time goes backwards"),
    ("0.5 camera [1]", r"x.shoelog:3: a camera record holds a JSON object"),
    ("0.5 event \"card\"", r"x.shoelog:3: an event record holds a JSON object"),
    ("0.5 event {nope", r"x.shoelog:3: Expecting property name"),
    ("-1 open", r"x.shoelog:3: bad time"),
])
def test_bad_lines_name_the_line(tmp_path, body, message):
    path = tmp_path / "x.shoelog"
    path.write_text(f"# shoelog 1\n# name: x\n{body}\n")
    with pytest.raises(FixtureFormatError, match=message):
        read_fixture(path)


def test_not_a_shoelog(tmp_path):
    path = tmp_path / "x.shoelog"
    path.write_text("0.0 open\n")
    with pytest.raises(FixtureFormatError, match="not a shoelog"):
        read_fixture(path)
    path.write_text("# shoelog 9\n0.0 open\n")
    with pytest.raises(FixtureFormatError, match="shoelog version 9"):
        read_fixture(path)


def test_a_bad_camera_config_header_is_refused(tmp_path):
    path = tmp_path / "x.shoelog"
    path.write_text("# shoelog 1\n# camera_config: [1, 2]\n0.0 open\n")
    with pytest.raises(FixtureFormatError, match="header: camera_config holds a JSON object"):
        read_fixture(path)
    path.write_text("# shoelog 1\n# camera_config: {zones\n0.0 open\n")
    with pytest.raises(FixtureFormatError, match="x.shoelog: header: Expecting property name"):
        read_fixture(path)
