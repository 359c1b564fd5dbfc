"""open_frames: folders, single images, video files; errors."""

from __future__ import annotations

import numpy as np
import pytest

from shoe_daemon.vision.frames import FrameSourceError, describe, open_frames, read_image


def _img(v):
    return np.full((48, 64, 3), v, np.uint8)


def test_folder_in_name_order_skipping_unreadable(tmp_path):
    import cv2

    for i, v in ((2, 30), (0, 10), (1, 20)):
        cv2.imwrite(str(tmp_path / f"frame-{i:03d}.png"), _img(v))
    (tmp_path / "frame-003.jpg").write_bytes(b"junk")
    (tmp_path / "notes.txt").write_text("not a frame")
    frames = list(open_frames(tmp_path))
    assert [f.name for f in frames] == ["frame-000.png", "frame-001.png", "frame-002.png"]
    assert [int(f.image[0, 0, 0]) for f in frames] == [10, 20, 30]
    assert [f.index for f in frames] == [0, 1, 2]
    looped = list(open_frames(tmp_path, loop=True, limit=7))
    assert len(looped) == 7 and looped[6].name == "frame-000.png"


def test_single_image_and_video_file(tmp_path):
    import cv2

    cv2.imwrite(str(tmp_path / "one.png"), _img(99))
    (frame,) = open_frames(tmp_path / "one.png")
    assert frame.image.shape == (48, 64, 3) and frame.name == "one.png"
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    assert writer.isOpened()
    for v in (50, 100, 150, 200):
        writer.write(_img(v))
    writer.release()
    frames = list(open_frames(path))
    assert len(frames) == 4
    assert [int(round(float(f.image.mean()) / 50)) for f in frames] == [1, 2, 3, 4]
    assert len(list(open_frames(path, limit=2))) == 2


def test_sources_described_and_errors(tmp_path):
    assert describe(0) == "camera" and describe("1") == "camera" and describe("/dev/video0") == "camera"
    assert describe("rtsp://cam.local/stream") == "stream" and describe(str(tmp_path)) == "folder"
    assert describe("x.jpg") == "image" and describe("x.mp4") == "video"
    with pytest.raises(FrameSourceError, match="no such file"):
        list(open_frames(tmp_path / "missing.mp4"))
    with pytest.raises(FrameSourceError, match="no image files"):
        list(open_frames(tmp_path))
    with pytest.raises(FrameSourceError, match="no such file"):
        read_image(tmp_path / "nope.jpg")
    (tmp_path / "bad.png").write_bytes(b"\x89PNG but no")
    with pytest.raises(FrameSourceError, match="not an image"):
        read_image(tmp_path / "bad.png")
