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
