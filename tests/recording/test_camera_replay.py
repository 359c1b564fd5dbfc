"""Replayed camera sessions: recorded frames go through the daemon's recogniser and fuser.

fixtures/camera-unreadable-card.shoelog is a session whose shoe cannot read Banco's first card
of coup 2; its ``camera`` records hold the frames the overhead camera took of that coup
(fixtures/camera/unreadable-card). Replaying it reads those frames with the daemon's camera
reader, so the card the shoe missed comes from the pictures, not from a recorded answer.
camera-manual-entry is the same coup with a chip on that card: the camera must not read it,
asks for a person, and the card a supervisor enters settles the coup.
"""

from __future__ import annotations

import json
import shutil

import pytest

from shoe_daemon.recording.formats import CAMERA, EVENT, read_fixture, write_fixture
from shoe_daemon.recording.replay import ReplayError, replay
from tests.recording.conftest import LIBRARY

pytestmark = pytest.mark.timeout(120)

UNREADABLE = LIBRARY / "camera-unreadable-card.shoelog"
MANUAL = LIBRARY / "camera-manual-entry.shoelog"


def payloads(result, suffix: str) -> list[dict]:
    return [json.loads(m[3]) for m in result.messages if m[0].endswith("/" + suffix)]


def alerts(result) -> list[tuple[str, str]]:
    return [(p["action"], p["alert"]["kind"]) for p in payloads(result, "alerts/event")]


def copy_session(tmp_path, fixture=UNREADABLE):
    """The fixture and its frames, copied (frame paths are relative to the fixture)."""
    shutil.copytree(LIBRARY / "camera", tmp_path / "camera")
    shutil.copy(fixture, tmp_path / fixture.name)
    return tmp_path / fixture.name


def test_the_fixture_holds_frames_not_answers():
    fx = read_fixture(UNREADABLE)
    camera = [r.data for r in fx.records if r.kind == CAMERA]
    assert len(camera) == 17 and all(set(c) == {"frame"} for c in camera)
    assert all((LIBRARY / c["frame"]).is_file() for c in camera)
    assert fx.header.camera_config["zones"] and fx.header.camera.startswith("frames")
    assert not [r for r in fx.records if r.kind == EVENT]


def test_the_unread_card_is_read_from_the_frames_and_the_coup_settles():
    result = replay(UNREADABLE)
    cards = [(p["coup"], p["card"], p["side"], p["source"]) for p in payloads(result, "coup/card")]
    assert cards[5:] == [(2, "6H", "punto", "shoe"), (2, "9D", "banco", "camera"), (2, "2S", "punto", "shoe"),
                         (2, "4C", "banco", "shoe")]
    (nine,) = [p for p in payloads(result, "coup/card") if p["source"] == "camera"]
    assert nine["fills_unreadable"] == 7 and nine["confidence"] >= 0.98 and nine["reported_side"] == "banco"
    result2 = payloads(result, "coup/result")[-1]
    assert (result2["punto"], result2["banco"], result2["winner"]) == (["6H", "2S"], ["9D", "4C"], "punto")
    # The camera also saw 6H, 2S and 4C: it agrees with the shoe, so no mismatch is raised.
    assert alerts(result) == [("raised", "card_unreadable"), ("cleared", "card_unreadable")]
    camera = payloads(result, "sources")[-1]["sources"]["camera"]
    assert camera["link"] == "up" and camera["info"]["source"] == "fixture frames"


def test_a_card_the_camera_cannot_read_asks_for_a_person_who_settles_the_coup():
    result = replay(MANUAL)
    assert alerts(result) == [("raised", "card_unreadable"), ("raised", "manual_entry_needed"),
                              ("cleared", "card_unreadable"), ("cleared", "manual_entry_needed")]
    raised = next(p["alert"] for p in payloads(result, "alerts/event") if p["alert"]["kind"] == "manual_entry_needed")
    assert raised["evidence"]["side"] == "banco" and raised["source"] == "camera"
    nine = next(p for p in payloads(result, "coup/card") if p["card"] == "9D")
    assert (nine["source"], nine["side"], nine["fills_unreadable"]) == ("api", "banco", 7)
    assert "confidence" not in nine        # nobody took the camera's word for it
    # The card entered by hand comes after the camera gave up, and the coup settles with it.
    t_alert = raised["t"]
    assert nine["t"] > t_alert
    assert payloads(result, "coup/result")[-1]["banco"] == ["9D", "4C"]


def test_the_frames_decide_not_the_recording(tmp_path):
    """Put the chip on 9D in the readable session's frames: the camera now asks for a person."""
    path = copy_session(tmp_path)
    frames = tmp_path / "camera"
    for covered in (frames / "unreadable-card-covered").glob("frame-*.jpg"):
        shutil.copy(covered, frames / "unreadable-card" / covered.name)
    result = replay(path)
    assert ("raised", "manual_entry_needed") in alerts(result)
    assert not [p for p in payloads(result, "coup/card") if p["source"] == "camera"]
    assert len(payloads(result, "coup/result")) == 1      # coup 2 waits for the card


def test_a_missing_frame_stops_the_replay_and_names_it(tmp_path):
    path = copy_session(tmp_path)
    (tmp_path / "camera" / "unreadable-card" / "frame-006.jpg").unlink()
    with pytest.raises(ReplayError, match=r"camera frame camera/unreadable-card/frame-006.jpg: .*no such file"
                                          r" at record \d+ \(t=[\d.]+ camera\)"):
        replay(path)


def test_frames_without_zones_are_refused(tmp_path):
    path = copy_session(tmp_path)
    fx = read_fixture(path)
    fx.header.camera_config = {}
    write_fixture(path, fx)
    with pytest.raises(ReplayError, match="camera frames need the header's camera_config with the zones"):
        replay(path)


def test_a_bad_camera_config_is_refused_as_the_daemon_refuses_its_config(tmp_path):
    path = copy_session(tmp_path)
    fx = read_fixture(path)
    fx.header.camera_config = {**fx.header.camera_config, "fuser": {"min_vote": 2}}
    write_fixture(path, fx)
    with pytest.raises(ReplayError, match=r"camera_config: unknown key camera.fuser.min_vote \(did you mean min_votes\?\)"):
        replay(path)
