"""Replay fixtures/camera/unreadable-card through Recognizer + CardFuser, as the daemon will."""

from __future__ import annotations

import json

from shoe_daemon.vision.frames import open_frames
from shoe_daemon.vision.fuser import CardFuser
from shoe_daemon.vision.zones import parse_zones
from tests.vision.conftest import ROOT

SCENARIO = ROOT / "fixtures" / "camera" / "unreadable-card"


def test_replayed_session_decides_every_card(recognizer):
    truth = json.loads((SCENARIO / "truth.json").read_text())
    zones = parse_zones(truth["zones"])
    fuser = CardFuser(settle_frames=0, min_votes=1, max_frames=3)
    decided = []
    names = []
    for frame in open_frames(SCENARIO):
        names.append(frame.name)
        result = recognizer.recognize(frame.image, zones=zones)
        expected = next(f for f in truth["frames"] if f["file"] == frame.name)
        # Never a card that is not there, never a wrong one.
        got = {(c.card, c.zone) for c in result.cards if c.card}
        assert got <= {(c["card"], c["zone"]) for c in expected["cards"]}, (frame.name, got)
        assert len(result.cards) <= len(expected["cards"])
        decided += fuser.update(result, frame.t)
    assert names == [f["file"] for f in truth["frames"]]
    oks = {(d.card, d.zone) for d in decided if d.status == "ok"}
    want = {(c, "punto" if i % 2 == 0 else "banco") for i, c in enumerate(truth["codes"])}
    assert oks == want, [d.to_json() for d in decided]
    assert ("9D", "banco") in oks          # the card the shoe could not read
