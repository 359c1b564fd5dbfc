"""The unit's MemoryDenyWriteExecute=yes and SystemCallFilter= against the daemon's code and
dependencies, without systemd.

systemd implements MemoryDenyWriteExecute= with seccomp; Linux 6.3+ has the same rule as
prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN): no mapping both writable and executable, and none
made executable later. A program that JITs (or uses libffi closures the old way) dies or fails
under it. The system call filter is rebuilt from the unit's SystemCallFilter= lines with
libseccomp (helpers.sandbox_argv). This test runs, under both, everything the service loads: every
module of the package, numpy's linear algebra, the odds engine, a ctypes callback, the embedded
MQTT broker. (test_service_notify.py runs the whole daemon under them too.) The camera's
card-reading process (``[camera.recognizer] workers = 1``) is a second interpreter started by
spawn, given its models in POSIX shared memory (/dev/shm) and its frames over a pipe: it is run
under both as well, and must give the answers of the one-process recogniser.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import sandbox_argv

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "shoe-daemon.service"

SCRIPT = r"""
import ctypes, importlib, mmap, os, pkgutil, socket, sys

if "MemoryDenyWriteExecute" in sys.argv[1]:
    assert ctypes.CDLL(None).prctl(66, 0, 0, 0, 0) == 1, "PR_GET_MDWE: the lock is not on"
    try:
        mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    except OSError:
        pass
    else:
        raise SystemExit("a writable+executable mapping was allowed: the lock does not work")
if "SystemCallFilter" in sys.argv[1]:
    try:
        os.setuid(os.getuid())            # @privileged: refused with EPERM
    except PermissionError:
        pass
    else:
        raise SystemExit("setuid() was allowed: the system call filter is not on")

import numpy as np
a = np.random.default_rng(7).random((200, 200)) + np.eye(200)
assert np.allclose(a @ np.linalg.inv(a), np.eye(200), atol=1e-8)

import shoe_daemon
skipped = []
for mod in pkgutil.walk_packages(shoe_daemon.__path__, "shoe_daemon."):
    if mod.name.endswith("__main__"):
        continue
    try:
        importlib.import_module(mod.name)
    except ModuleNotFoundError as exc:   # an optional extra that is not installed (camera: cv2)
        if (exc.name or "").startswith("shoe_daemon"):
            raise
        skipped.append(f"{mod.name} ({exc.name})")

from shoe_daemon.cli import main
assert main(["odds", "--decks", "8", "--json"]) == 0

callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x + 1)
assert callback(41) == 42

from shoe_daemon.publish.broker import EmbeddedBroker
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
broker = EmbeddedBroker(port=port)
broker.start()
socket.create_connection(("127.0.0.1", port), timeout=5).close()
broker.stop()
print("sandbox OK; modules not installed, not checked:", ", ".join(skipped) or "none", file=sys.stderr)
"""


@pytest.mark.timeout(60)
def test_the_daemon_runs_under_the_units_memory_and_syscall_restrictions():
    argv, what = sandbox_argv([sys.executable, "-c", SCRIPT], UNIT)
    print(f"under: {what}")
    if "PR_SET_MDWE" not in what and "SystemCallFilter" not in what:
        pytest.skip(f"neither restriction can be applied here: {what}")
    argv.insert(argv.index(SCRIPT) + 1, what)   # the script's sys.argv[1]: what to expect
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
    print(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "")
    assert proc.returncode == 0, proc.stderr[-3000:]


CAMERA_SCRIPT = r"""
import json, sys, time
import cv2
from bench._camera_ab import canon
from shoe_daemon.vision.recognizer import Recognizer
from shoe_daemon.vision.zones import parse_zones

images = [cv2.imread(path) for path in sys.argv[2].split(",")]
zones = parse_zones(json.loads(sys.argv[3]))
alone, pooled = Recognizer({}), Recognizer({"recognizer": {"workers": 1}})
worker = pooled._worker
deadline = time.monotonic() + 60
while not worker.available():
    if worker.failed is not None:
        raise SystemExit(f"the card-reading process failed under {sys.argv[1]}: {worker.failed}")
    if time.monotonic() > deadline:
        raise SystemExit("the card-reading process did not start within 60 s")
    time.sleep(0.05)
cards = 0
for image in images:
    want = alone.recognize(image, zones=zones)
    got = pooled.recognize(image, zones=zones)
    assert canon(got) == canon(want), ([c.to_json() for c in got.cards], [c.to_json() for c in want.cards])
    cards += len(want.cards)
assert worker.failed is None and worker.frames == len(images), (worker.failed, worker.frames)
pid = worker.pid
pooled.close()
print(f"camera worker OK: pid {pid}, {len(images)} frames, {cards} cards, the same answers", file=sys.stderr)
"""


@pytest.mark.timeout(120)
def test_the_camera_card_worker_runs_under_the_units_restrictions(tmp_path):
    pytest.importorskip("cv2", reason="the camera extra is not installed")
    import cv2

    from shoe_daemon.vision.cardart import cardsjs_backs, cardsjs_faces
    from shoe_daemon.vision.synth import FrameGenerator

    gen = FrameGenerator(cardsjs_faces(), cardsjs_backs(), "nominal", seed=880031)
    paths = []
    for i in range(2):
        frame = gen.frame(i)
        paths.append(str(tmp_path / f"frame{i}.png"))
        cv2.imwrite(paths[-1], frame.image)     # lossless: the sandboxed process reads these pixels
    argv, what = sandbox_argv([sys.executable, "-c", CAMERA_SCRIPT], UNIT)
    print(f"under: {what}")
    if "PR_SET_MDWE" not in what and "SystemCallFilter" not in what:
        pytest.skip(f"neither restriction can be applied here: {what}")
    argv[argv.index(CAMERA_SCRIPT) + 1:] = [what, ",".join(paths), json.dumps(frame.zones)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=110)
    print(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "camera worker OK" in proc.stderr
