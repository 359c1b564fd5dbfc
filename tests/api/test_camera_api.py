"""The daemon with its overhead camera on: the real camera source thread, the API and MQTT.

The camera is a folder of recorded frames (fixtures/camera/unreadable-card: P 6H, B 9D, P 2S,
B 4C landing one by one); the shoe then deals that coup and cannot read 9D. The card comes from
the camera, over HTTP as over MQTT, and /status and /metrics show the camera's health.
"""

from __future__ import annotations

import json

import pytest

from tests.api.harness import Stack
from tests.support.mosquitto import Subscriber
from tests.vision.conftest import ROOT

pytestmark = pytest.mark.timeout(120)

FRAMES = ROOT / "fixtures" / "camera" / "unreadable-card"


def camera_toml() -> str:
    truth = json.loads((FRAMES / "truth.json").read_text())
    zones = ", ".join(f'{{ name = "{z["name"]}", polygon = {json.dumps(z["polygon"])} }}' for z in truth["zones"])
    return (f'\n[camera]\nenabled = true\nsource = "{FRAMES}"\nfps = 25\nzones = [{zones}]\n'
            "fuser = { settle_frames = 1, min_votes = 2, max_frames = 6 }\n")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    s = Stack(tmp_path_factory.mktemp("camera-api"), extra_toml=camera_toml())
    try:
        s.start()
        yield s
    finally:
        s.stop()


def test_status_and_metrics_show_the_camera(stack):
    status = stack.wait(lambda: (lambda s: s if s["camera"]["finished"] else None)(stack.get("/status").json()),
                        30, "the camera to read its frames")
    cam = status["camera"]
    assert cam["frames"] == 17 and cam["cards"] == {"ok": 4, "unsure": 0} and cam["last_error"] is None
    assert cam["source"] == str(FRAMES) and 0 < cam["recognize_ms_p50"] <= cam["recognize_ms_p95"] < 1000
    assert cam["fps"] > 0                         # paced at 25 frames a second (a loaded machine reads fewer)
    assert status["sources"]["camera"]["link"] == "up"
    text = stack.get("/metrics").text
    for needle in ("shoe_camera_frames_total 17.0", 'shoe_camera_cards_total{status="ok"} 4.0',
                   'shoe_camera_cards_total{status="unsure"} 0.0', "shoe_camera_connected 1.0",
                   'shoe_camera_recognize_seconds{quantile="0.95"}', 'shoe_source_link_up{source="camera"} 1.0'):
        assert needle in text, needle


def test_the_card_the_shoe_cannot_read_comes_from_the_camera(stack):
    with Subscriber(stack.broker.port, "baccarat/api-test/coup/#") as sub:
        stack.wait(lambda: stack.get("/status").json()["camera"]["finished"], 30, "the camera's frames")
        stack.deal("6H", "9D", "2S", "4C", unreadable=(1,))
        current = stack.wait(lambda: (lambda c: c if c["settled"] else None)(stack.get("/coup/current").json()),
                             10, "the coup to settle")
        assert (current["punto"], current["banco"]) == (["6H", "2S"], ["9D", "4C"])
        (nine,) = [s for s in current["card_sources"]["banco"] if s["source"] == "camera"]
        assert current["card_sources"]["banco"].index(nine) == 0 and nine["confidence"] >= 0.98
        cards = sub.wait_for(lambda ms: (lambda c: c if len(c) == 4 else None)(
            [m for m in ms if m.topic.endswith("/coup/card")]), 10)
        by_card = {json.loads(m.payload)["card"]: json.loads(m.payload) for m in cards}
        assert by_card["9D"]["source"] == "camera" and by_card["6H"]["source"] == "shoe"
        alerts = stack.get("/alerts", params={"state": "active"}).json()["active"]
        assert not [a for a in alerts if a["kind"] in ("card_unreadable", "camera_mismatch", "manual_entry_needed")]
