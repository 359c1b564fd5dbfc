"""`shoe-daemon camera snapshot`: one frame with the configured zones drawn."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from tests.vision.conftest import ROOT

ZONES = ('[camera]\nsource = "SOURCE"\nzones = [\n'
         '  { name = "punto", polygon = [[150, 200], [600, 200], [600, 600], [150, 600]] },\n'
         '  { name = "banco", polygon = [[680, 200], [1130, 200], [1130, 600], [680, 600]] },\n]\n')  # fmt: skip


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "shoe_daemon", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)  # fmt: skip


def test_snapshot_draws_zones(generator, tmp_path):
    import cv2

    frames = tmp_path / "frames"
    frames.mkdir()
    f = generator("nominal", seed=3).frame(0)
    (frames / "frame-000.jpg").write_bytes(f.jpeg)
    (frames / "frame-001.jpg").write_bytes(f.jpeg)
    cfg = tmp_path / "c.toml"
    cfg.write_text(ZONES.replace("SOURCE", str(frames)))
    out = tmp_path / "snap.png"
    p = _cli("camera", "snapshot", "--config", cfg, "--out", out)
    assert p.returncode == 0, p.stderr
    assert "zones: punto, banco" in p.stdout
    img = cv2.imread(str(out))
    assert img.shape == (720, 1280, 3)
    # The outline is drawn: pixels on the punto box's edge differ from the frame there.
    edge = img[400, 148:153].astype(int)
    orig = f.image[400, 148:153].astype(int)
    assert np.abs(edge - orig).max() > 60
    # --source overrides camera.source, --recognize also draws cards.
    single = tmp_path / "one.jpg"
    single.write_bytes(f.jpeg)
    p = _cli("camera", "snapshot", "--config", cfg, "--out", tmp_path / "b.jpg", "--source", single, "--recognize")
    assert p.returncode == 0, p.stderr
    assert "card(s) read" in p.stdout and (tmp_path / "b.jpg").stat().st_size > 10000


def test_snapshot_errors(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(ZONES.replace("SOURCE", str(tmp_path / "nowhere")))
    p = _cli("camera", "snapshot", "--config", cfg, "--out", tmp_path / "x.jpg")
    assert p.returncode == 1 and "nowhere" in p.stderr
    cfg.write_text("[camera]\n")
    p = _cli("camera", "snapshot", "--config", cfg, "--out", tmp_path / "x.jpg")
    assert p.returncode == 2 and "no frame source" in p.stderr
