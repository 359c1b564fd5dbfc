"""End to end on the camera side: fixture frames through the real camera source into the core.

The shoe cannot read Banco's first card (9D) of the coup filmed in
fixtures/camera/unreadable-card; the camera source (the daemon's own thread:
frames -> recogniser -> fuser -> events) supplies it and the coup settles. The
same frames with a chip over that card's centre cannot be read: the core asks
for a manual entry instead of guessing.
"""

from __future__ import annotations

import json
import shutil
import time

import cv2

from shoe_daemon.config import CameraConfig
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish
from shoe_daemon.core.pipeline import Pipeline
from shoe_daemon.core.table import Table
from shoe_daemon.game.engine import TableRules
from shoe_daemon.sources.camera_source import CameraSource
from tests.vision.conftest import ROOT

SCENARIO = ROOT / "fixtures" / "camera" / "unreadable-card"
TRUTH = json.loads((SCENARIO / "truth.json").read_text())


def camera_events(folder, *, workers: int = 0, stopped: list | None = None) -> list[Event]:
    cfg = CameraConfig(enabled=True, source=str(folder), zones=TRUTH["zones"],
                       fuser={"settle_frames": 0, "min_votes": 1, "max_frames": 3},
                       recognizer={"workers": workers})
    events: list[Event] = []
    source = CameraSource(cfg, events.extend)
    source.start()
    deadline = time.monotonic() + 120
    while not source.finished and time.monotonic() < deadline:
        time.sleep(0.05)
    source.stop()
    assert source.finished, source.last_error
    if stopped is not None:
        stopped.append(source._reader.recognizer._worker)
    return events


def shoe_events() -> list[Event]:
    """What the shoe reports of the filmed coup: P 6H, B unreadable, P 2S, B 4C."""
    return [
        Event(1.0, Kind.LINK_UP, "shoe", {"driver": "protocol", "missed": 0}),
        Event(2.0, Kind.CARD, "shoe", {"card": "6H", "counter": 1}),
        Event(3.0, Kind.CARD_UNREADABLE, "shoe", {"counter": 2}),
        Event(4.0, Kind.CARD, "shoe", {"card": "2S", "counter": 3}),
        Event(5.0, Kind.CARD, "shoe", {"card": "4C", "counter": 4}),
    ]


def run(events):
    table = Table(TableRules(), "t1")
    outs = [o for e in events for o in Pipeline(table).feed_one(e)]
    return table, [o for o in outs if isinstance(o, Publish)]


def test_the_unread_card_comes_from_the_fixture_frames_and_the_coup_settles():
    cams = camera_events(SCENARIO)
    assert [(e.data["card"], e.data["zone"]) for e in cams if e.kind is Kind.CAMERA_CARD] == [
        ("6H", "punto"), ("9D", "banco"), ("2S", "punto"), ("4C", "banco")]
    # The camera's readings arrive after the shoe's (it waits for each card to rest).
    table, outs = run(shoe_events() + [Event(6.0 + i * 0.1, e.kind, e.source, e.data) for i, e in enumerate(cams)])
    cards = [(m.payload["card"], m.payload["side"], m.payload["source"]) for m in outs if m.topic == "coup/card"]
    assert cards == [("6H", "punto", "shoe"), ("9D", "banco", "camera"), ("2S", "punto", "shoe"),
                     ("4C", "banco", "shoe")]
    (result,) = [m.payload for m in outs if m.topic == "coup/result"]
    assert (result["punto"], result["banco"]) == (["6H", "2S"], ["9D", "4C"])
    assert (result["punto_total"], result["banco_total"], result["winner"], result["natural"]) == (8, 3, "punto", True)
    assert not table.active_alerts  # the unreadable alert was cleared by the camera's reading


def test_a_card_the_camera_cannot_read_asks_for_manual_entry(tmp_path):
    for frame in TRUTH["frames"]:
        image = cv2.imread(str(SCENARIO / frame["file"]))
        for card in frame["cards"]:
            if card["card"] == "9D":  # a chip dropped on the card's centre
                cv2.circle(image, tuple(int(v) for v in card["centre"]), 25, (30, 30, 200), -1)
        cv2.imwrite(str(tmp_path / frame["file"]), image)
    shutil.copy(SCENARIO / "truth.json", tmp_path / "truth.json")
    cams = camera_events(tmp_path)
    readings = [(e.data["card"], e.data["zone"], e.data["status"]) for e in cams if e.kind is Kind.CAMERA_CARD]
    assert (None, "banco", "unsure") in readings
    assert all(card in (None, "6H", "2S", "4C") for card, _, _ in readings)  # never a guess
    table, outs = run(shoe_events() + [Event(6.0 + i * 0.1, e.kind, e.source, e.data) for i, e in enumerate(cams)])
    raised = [m.payload["alert"]["kind"] for m in outs if m.topic == "alerts/event"]
    assert "manual_entry_needed" in raised
    assert not [m for m in outs if m.topic == "coup/result"]
    # The dealer types the card in; the coup settles.
    outs = [o for o in Pipeline(table).feed_one(Event(9.0, Kind.CARD, "api", {"card": "9D", "user": "dealer",
                                                                      "reason": "chip on the card"}))
            if isinstance(o, Publish)]
    (result,) = [m.payload for m in outs if m.topic == "coup/result"]
    assert result["banco"] == ["9D", "4C"] and result["winner"] == "punto"
    assert not table.active_alerts


def test_with_a_card_reading_process_the_same_events_and_none_left_after_stop():
    """`[camera.recognizer] workers = 1`: the camera source's events are the same (but their times),
    and stopping the source stops the recogniser's second process."""
    workers: list = []
    pooled = camera_events(SCENARIO, workers=1, stopped=workers)

    def what(events):   # the events without their times (the source's clock)
        return [(e.kind, e.source, json.dumps(e.data, sort_keys=True)) for e in events]

    assert what(pooled) == what(camera_events(SCENARIO)) and any(e.kind is Kind.CAMERA_CARD for e in pooled)
    worker = workers[0]
    assert worker is not None and worker._proc is not None     # started on a frame of two cards
    worker._proc.join(5)
    assert not worker._proc.is_alive() and worker.failed == "closed"
