"""Recognition on seeded nominal frames: right codes and zones, never a wrong card."""

from __future__ import annotations

from shoe_daemon.game.cards import RANK_VALUES
from shoe_daemon.vision.zones import parse_zones
from tests.vision.helpers import match


def test_dealt_coup_is_read_with_zones(generator, recognizer):
    codes = ["9H", "KS", "TD", "5C", "AH", "QC"]   # P1 B1 P2 B2 P3 B3 (P3, B3 sideways)
    f = generator("nominal", seed=7).frame(3, codes=codes, hand=False)
    res = recognizer.recognize(f.image, zones=parse_zones(f.zones))
    assert len(res.cards) == 6, [c.to_json() for c in res.cards]
    got = {(c.card, c.zone) for c in res.cards}
    want = {(code, "punto" if i % 2 == 0 else "banco") for i, code in enumerate(codes)}
    assert got == want
    for c in res.cards:
        assert c.status == "ok" and c.value == RANK_VALUES[c.card[0]]
        assert 0.9 <= c.confidence <= 1.0
        assert len(c.quad) == 4 and all(len(p) == 2 for p in c.quad)


def test_seeded_nominal_frames(generator, recognizer):
    gen = generator("nominal", seed=2024)
    total = ok = 0
    for i in range(5):
        f = gen.frame(i, hand=False)
        res = recognizer.recognize(f.image, zones=parse_zones(f.zones))
        for truth in f.face_up:
            total += 1
            r = match(res, truth)
            assert r is not None, f"frame {i}: {truth.code} not found"
            assert r.card in (truth.code, None), f"frame {i}: {truth.code} read as {r.card}"
            assert r.value in (RANK_VALUES[truth.code[0]], None)
            assert r.zone == truth.zone
            ok += r.status == "ok"
        # Nothing reported that is not a face-up card.
        assert len(res.cards) == len([t for t in f.face_up if match(res, t) is not None])
    assert ok >= 0.9 * total, f"{ok} of {total} ok"


def test_hand_over_an_index_corner_reads_the_other(generator, recognizer):
    gen = generator("hand", seed=99)
    seen = 0
    for i in range(4):
        f = gen.frame(i, hand=True)
        res = recognizer.recognize(f.image, zones=parse_zones(f.zones))
        for truth in f.face_up:
            r = match(res, truth)
            if r is not None:
                assert r.card in (truth.code, None)
                if truth.occluded_corner is not None and r.card == truth.code:
                    seen += 1
    assert seen >= 2


def test_result_json_shape(generator, recognizer):
    f = generator("nominal", seed=5).frame(0, hand=False)
    d = recognizer.recognize(f.image).to_json(image="x.jpg")
    assert list(d) == ["image", "cards", "elapsed_ms"]
    assert d["cards"] and all(c["zone"] is None for c in d["cards"])   # no zones configured


def test_opencv_runs_on_one_thread_during_a_frame_and_its_setting_is_given_back(generator, recognizer, monkeypatch):
    import cv2
    import pytest

    from shoe_daemon.vision import detect

    f = generator("nominal", seed=5).frame(0, hand=False)
    during = []
    real = detect.find_cards
    monkeypatch.setattr(detect, "find_cards", lambda frame: during.append(cv2.getNumThreads()) or real(frame))
    before = cv2.getNumThreads()
    try:
        cv2.setNumThreads(3)
        assert recognizer.recognize(f.image).cards
        assert during == [1] and cv2.getNumThreads() == 3
        with pytest.raises(ValueError):
            recognizer.recognize(f.image[:, :, 0])        # refused: the setting is given back all the same
        assert cv2.getNumThreads() == 3
    finally:
        cv2.setNumThreads(before)
