"""`shoe-daemon recognize IMAGE... --json [--config PATH]`: the exact line contract."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

from shoe_daemon.game.cards import RANK_VALUES
from tests.vision.conftest import ROOT

CARD = {
    "type": "object",
    "required": ["card", "value", "status", "confidence", "quad", "zone"],
    "additionalProperties": False,
    "properties": {
        "card": {"type": ["string", "null"], "pattern": "^[A2-9TJQK][SHDC]$"},
        "value": {"type": ["integer", "null"], "minimum": 0, "maximum": 9},
        "status": {"enum": ["ok", "partial", "unknown"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "quad": {"type": "array", "minItems": 4, "maxItems": 4,
                 "items": {"type": "array", "minItems": 2, "maxItems": 2, "items": {"type": "number"}}},
        "zone": {"type": ["string", "null"]},
        "reason": {"type": "string"},
    },
}  # fmt: skip
LINE = {
    "type": "object",
    "required": ["image", "cards", "elapsed_ms"],
    "additionalProperties": False,
    "properties": {"image": {"type": "string"}, "cards": {"type": "array", "items": CARD},
                   "elapsed_ms": {"type": "number", "minimum": 0}},
}  # fmt: skip


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "shoe_daemon", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=120)  # fmt: skip


@pytest.fixture(scope="module")
def images(generator, tmp_path_factory):
    d = tmp_path_factory.mktemp("frames")
    gen = generator("nominal", seed=77)
    frames = [gen.frame(0, codes=["7D", "JC", "AS", "8H"], hand=False), gen.frame(1, hand=False)]
    paths = []
    for i, f in enumerate(frames):
        p = d / f"frame-{i:03d}.jpg"
        p.write_bytes(f.jpeg)
        paths.append(p)
    toml = "[camera]\nzones = [\n" + "".join(
        f'  {{ name = "{z["name"]}", polygon = {z["polygon"]} }},\n' for z in frames[0].zones) + "]\n"
    (d / "camera.toml").write_text(toml)
    empty = generator("empty", seed=1).frame(0)
    (d / "empty.jpg").write_bytes(empty.jpeg)
    (d / "broken.jpg").write_bytes(b"\xff\xd8 not really a jpeg")
    return d, paths, frames


def test_json_lines_contract(images):
    d, paths, frames = images
    p = _cli("recognize", paths[0], d / "empty.jpg", paths[1], "--json", "--config", d / "camera.toml")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 3
    objs = [json.loads(line) for line in lines]
    for o in objs:
        jsonschema.validate(o, LINE)
    assert [o["image"] for o in objs] == [str(paths[0]), str(d / "empty.jpg"), str(paths[1])]
    first = {(c["card"], c["value"], c["zone"]) for c in objs[0]["cards"]}
    boxes = {("7D", 7, "punto"), ("JC", 0, "banco"), ("AS", 1, "punto"), ("8H", 8, "banco")}
    elsewhere = {(t.code, RANK_VALUES[t.code[0]], None) for t in frames[0].face_up if t.zone is None}
    assert first == boxes | elsewhere
    assert objs[1]["cards"] == []


def test_bad_and_missing_images_are_reported_and_the_rest_processed(images):
    d, paths, _ = images
    p = _cli("recognize", d / "missing.jpg", paths[0], d / "broken.jpg", "--json")
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["image"] == str(paths[0])
    err = p.stderr.strip().splitlines()
    assert len(err) == 2
    assert "missing.jpg" in err[0] and "no such file" in err[0]
    assert "broken.jpg" in err[1] and "not an image" in err[1]
    assert all(e.startswith("shoe-daemon recognize: error: ") for e in err)


def test_text_output_and_bad_config(images, tmp_path):
    d, paths, _ = images
    p = _cli("recognize", paths[0])
    assert p.returncode == 0 and " card(s) in " in p.stdout and "7D" in p.stdout
    (tmp_path / "bad.toml").write_text('[camera]\nzones = [{ name = "p", polygon = [[0, 0], [1, 1]] }]\n')
    p = _cli("recognize", paths[0], "--config", tmp_path / "bad.toml")
    assert p.returncode == 2 and "camera.zones[0].polygon" in p.stderr
