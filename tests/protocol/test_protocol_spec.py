"""What PROTOCOL.md promises and the implementations do, read from the spec's own text.

Each answer the spec gives to a question an outside implementer would otherwise have to guess is
checked here against the Python reference (the C reference is checked by test_protocol_c.py on the
vectors): one truth in the document and in the code.
"""

from __future__ import annotations

import re
from pathlib import Path

from firmware_protocol.connection import HEARTBEAT_INTERVAL, LINK_TIMEOUT_BEATS, HostConnection
from shoe_daemon.config import ShoeConfig
from shoe_daemon.recording.formats import read_fixture
from shoe_daemon.recording.replay import config_for

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "firmware_protocol" / "PROTOCOL.md").read_text()
CONFIG_DOC = (ROOT / "docs" / "configuration.md").read_text()


def test_one_link_timeout_in_the_spec_the_default_and_the_docs():
    row = re.search(r"^\| link timeout \(host\) \| \*\*3 heartbeat periods\*\* \(([\d.]+) s\)", SPEC, re.M)
    assert row, "section 10 lost its link-timeout row"
    spec = float(row.group(1))
    assert spec == LINK_TIMEOUT_BEATS * HEARTBEAT_INTERVAL == HostConnection().link_timeout
    assert ShoeConfig().link_timeout == spec
    doc = re.search(r"^\| `link_timeout` \| number > 0 \| `([\d.]+)` \|", CONFIG_DOC, re.M)
    assert doc and float(doc.group(1)) == spec


def test_a_fixture_replays_with_the_link_timeout_its_header_recorded():
    fixture = read_fixture(ROOT / "fixtures" / "reader-unplug-replug.shoelog")
    assert fixture.header.port["link_timeout"] == "5.0"
    cfg = config_for(fixture.header, "/dev/null", "/tmp/j.sqlite3")
    assert cfg.shoe.link_timeout == 5.0 != ShoeConfig().link_timeout


VECTORS = __import__("json").loads((ROOT / "firmware_protocol" / "vectors.json").read_text())
FRAMES = {f["name"]: f for f in VECTORS["frames"]}
STREAMS = {s["name"]: s for s in VECTORS["streams"]}


def test_json_form_of_one_byte_booleans_and_bit_fields():
    assert FRAMES["fault_raised"]["message"]["active"] is True
    assert FRAMES["fault_cleared_vendor"]["message"]["active"] is False
    assert FRAMES["set_lights_error_blink"]["message"]["blink"] is True
    hb = FRAMES["heartbeat_status_reserved_bit"]["message"]
    assert hb["status"] == 137 and type(hb["status"]) is int       # bit 7 (reserved) kept, accepted
    assert type(FRAMES["shoe_hello"]["message"]["capabilities"]) is int
    for name in ("bad_field_fault_active_2", "bad_field_blink_2", "bad_field_hello_version_zero",
                 "bad_field_hello_ring_count", "bad_field_hello_ring_size_zero",
                 "bad_field_host_hello_versions", "bad_field_host_hello_min_zero"):
        assert STREAMS[name]["results"] == [{"error": "BAD_FIELD"}], name
        assert f"`{name}`" in SPEC, f"{name} is not named in section 14"
    assert FRAMES["shoe_hello_version_2"]["message"]["version"] == 2


def test_rx_errors_counts_checks_2_to_8_and_wrong_direction_not_empty_frames():
    from firmware_protocol.codec import encode_frame
    from firmware_protocol.connection import ShoeConnection
    from firmware_protocol.messages import CardDrawn

    one_of_each = ["oversize_by_one", "truncated_cobs", "too_short_eleven", "bad_crc_last_byte",
                   "unknown_type_reserved", "bad_length", "bad_field_blink_2"]          # checks 2-8
    kinds = {STREAMS[n]["results"][0]["error"] for n in one_of_each}
    assert kinds == {"OVERSIZE", "COBS", "TOO_SHORT", "BAD_CRC", "UNKNOWN_TYPE", "BAD_LENGTH", "BAD_FIELD"}
    data = b"\x00\x00\x00".join(bytes.fromhex(STREAMS[n]["hex"]) for n in one_of_each)
    data += encode_frame(CardDrawn("TH", 1, 90, seq=1))                  # a shoe frame echoed back
    data += b"\x00\x00\x00"                                               # empty frames: not errors
    shoe = ShoeConnection(now=0.0, boot_id=1)
    shoe.receive_data(data, 0.0)
    assert shoe.counters.rx_errors == 8
    assert shoe.heartbeat(0.0).rx_errors == 8
    assert "counted (the shoe reports its count as `rx_errors`" not in SPEC        # the old, narrower text
    assert "each failure of checks **2 to 8**" in SPEC and "checks 2-8 of section 6 and `WRONG_DIRECTION`" in SPEC


def test_the_spec_answers_what_events_do_to_the_game():
    section = SPEC.split("### 7.5 What events do to the game (host side)")[1].split("## 8.")[0]
    for event in ("BUTTON `COUP_CONFIRM`", "BUTTON `NEW_SHOE`", "SHOE_STATE `INSERTED`", "CUT_CARD", "FAULT"):
        assert f"| {event} |" in section, event
    assert "After a **shoe restart**" in SPEC and "An **outage**, for RING_OVERFLOW" in SPEC
