"""The benchmark names its host: CPU model and a reference figure beside the latency pass."""

import math

import pytest

pytest.importorskip("cv2")

from bench.camera import _reference  # noqa: E402
from shoe_daemon.vision.speed import cpu_model, host_reference_ms  # noqa: E402


def test_the_host_reference_is_a_time_and_the_cpu_has_a_name():
    ref = host_reference_ms(repeat=2)
    assert math.isfinite(ref) and 0.1 < ref < 10_000
    assert cpu_model().strip()


def test_the_latency_section_gives_the_reference_only_when_measured():
    assert "Host reference 6.04 ms" in _reference({"reference_ms": 6.04})
    assert _reference({"reference_ms": None}) == ""
