"""`shoe-daemon camera speed`: the recogniser timed on this PC against its 30 ms budget."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.vision.conftest import ROOT


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "shoe_daemon", "camera", "speed", *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)  # fmt: skip


@pytest.fixture(scope="module")
def face_dir(tmp_path_factory, faces):
    import cv2

    d = tmp_path_factory.mktemp("speed") / "faces"
    d.mkdir()
    for code, img in faces.items():
        cv2.imwrite(str(d / f"{code}.png"), img)
    return d


def test_speed_times_frames_and_its_verdict_follows_the_p95(face_dir):
    proc = _cli("--faces", face_dir, "--frames", 20)
    out = proc.stdout
    assert proc.returncode in (0, 1), out + proc.stderr
    p95 = float(re.search(r"per frame: p50 [\d.]+ ms, p95 ([\d.]+) ms", out).group(1))
    cards = float(re.search(r"([\d.]+) cards a frame", out).group(1))
    assert 5.0 <= cards <= 7.0          # six in the boxes, at most one elsewhere
    assert re.search(r"this PC: .+, \d+ cores, reference [\d.]+ ms", out)
    if proc.returncode == 0:
        assert f"within the budget: p95 {p95:.1f} ms <= 30 ms" in out
        assert p95 <= 30.0
    else:
        assert f"over the budget: p95 {p95:.1f} ms > 30 ms" in out
        assert p95 > 30.0


@pytest.mark.parametrize("args, needle", [
    (["--frames", 5], "--frames N: 20 or more"),
    (["--model", "/nonexistent/deck.json"], "cannot load the model"),
])  # fmt: skip
def test_speed_refuses_bad_input_with_one_line(face_dir, args, needle):
    proc = _cli("--faces", face_dir, *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], proc.stderr


def test_speed_refuses_a_face_folder_short_of_a_card(face_dir, tmp_path):
    short = tmp_path / "short"
    short.mkdir()
    for p in face_dir.iterdir():
        if p.stem != "7D":
            (short / p.name).write_bytes(p.read_bytes())
    proc = _cli("--faces", short)
    assert proc.returncode == 2
    assert "missing: 7D" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_time_frames_counts_each_frame_and_its_cards(generator, recognizer):
    from shoe_daemon.vision.speed import Timing, time_frames

    frames = [generator("nominal", 7).frame(i) for i in range(3)]
    timing = time_frames(recognizer, frames, warm=1)
    assert len(timing.ms) == len(timing.cpu_ms) == 3 and min(timing.ms) > 0
    assert timing.cards == [len(recognizer.recognize(f.image).cards) for f in frames]
    assert timing.workers == 0
    assert Timing([10.0] * 19 + [50.0], [10.0] * 20, [6] * 20, 0).within_budget()
    assert not Timing([10.0] * 18 + [50.0] * 2, [10.0] * 20, [6] * 20, 0).within_budget()
