"""The daemon's start on a read-only or full journal file system: held, said, retried, resumed.

A real daemon (tests/api/harness.py: emulated shoe on a pty, real Mosquitto, the API) whose
journal lives on a tmpfs the test mounts. Before, a read-only file system gave an ``OSError``
traceback and a full one a traceback and exit 1 (systemd restarted it every 3 s).
"""

from __future__ import annotations

import logging
import time

import httpx
import pytest

from firmware_protocol.messages import CardDrawn, Lights
from shoe_daemon import service
from tests.api.harness import Stack
from tests.support.waiting import wait_until

from .fs import fill, remount, tmpfs


def wait_log(caplog, text: str, timeout: float = 15.0) -> str:
    """The first log message holding ``text``, once there is one (the log shows with a failure)."""
    return wait_until(lambda: next((m for r in caplog.records if text in (m := r.getMessage())), None),
                      timeout, f"a log line with {text!r}")


def api_down(stack: Stack) -> bool:
    try:
        stack.http.get("/healthz", timeout=0.5)
    except httpx.TransportError:
        return True
    return False


def launch(stack: Stack) -> None:
    stack.shoe.start()
    stack._thread.start()


@pytest.mark.parametrize("trouble", ["read_only", "disk_full"])
def test_start_is_held_until_the_journal_can_be_written_then_resumes(tmp_path, caplog, trouble):
    caplog.set_level(logging.INFO, logger="shoe_daemon")
    with tmpfs(tmp_path / "fs", "8m") as fs:
        stack = Stack(fs)                               # config written; the journal not yet
        filler = None
        try:
            if trouble == "read_only":
                remount(fs, readonly=True)
            else:
                filler = fill(fs)
            launch(stack)
            message = wait_log(caplog, f"journal unavailable ({trouble})")
            assert "dealing held" in message and "retrying" in message
            # The shoe's stop light is lit over a link that acknowledges nothing: the cards dealt
            # meanwhile stay in the shoe's ring, for the real start to fetch.
            conn = stack.shoe.simulator.conn
            stack.wait(lambda: conn.lights == Lights.ERROR_STOP, 10, "the shoe's stop light while held")
            stack.shoe.inject(CardDrawn("9H", stack.counter + 1, 100), CardDrawn("2C", stack.counter + 2, 100))
            stack.counter += 2
            stack.wait(lambda: conn.unacked >= 2, 10, "the held cards sent, unacknowledged")
            time.sleep(0.5)
            assert conn.unacked >= 2 and conn.lights == Lights.ERROR_STOP
            assert stack.rc is None and api_down(stack)   # nothing started, no crash, no exit
            assert "Traceback" not in caplog.text
            if trouble == "read_only":
                remount(fs, readonly=False)
            else:
                filler.unlink()
            stack.wait(lambda: stack.get("/readyz").status_code == 200, 20, "the daemon to start by itself")
            wait_log(caplog, "the journal is writable again")
            # The outage is journaled once the journal takes writes, and shows as an alert.
            active = stack.get("/alerts", params={"state": "active"}).json()["active"]
            held = [a for a in active if a["evidence"].get("code") == "journal_unavailable"]
            assert held and held[0]["evidence"]["cause"] == trouble and held[0]["severity"] == "warning", active
            stack.deal("KS", "3D")        # after the two dealt while held, fetched at the start
            coups = stack.get("/coups").json()["coups"]
            assert coups and coups[-1]["winner"] == "punto"
            assert (coups[-1]["punto"], coups[-1]["banco"]) == (["9H", "KS"], ["2C", "3D"]), coups[-1]
            if trouble == "disk_full":            # full again while running: not ready, and why
                filler = fill(fs)
                r = stack.get("/readyz")
                assert r.status_code == 503 and "journal: cannot be written (disk full)" in " ".join(r.json()["reasons"])
                assert stack.get("/status").json()["journal"]["writable"] == "disk_full"
                filler.unlink()
                assert stack.get("/readyz").status_code == 200
        finally:
            if trouble == "read_only":
                remount(fs, readonly=False)
            stack.stop()


def test_still_unavailable_after_the_wait_is_exit_status_4(tmp_path, caplog, monkeypatch):
    monkeypatch.setattr(service, "START_WAIT", 1.0)
    monkeypatch.setattr(service, "START_RETRY", 0.2)
    with tmpfs(tmp_path / "fs", "8m") as fs:
        stack = Stack(fs)
        try:
            remount(fs, readonly=True)
            launch(stack)
            stack._thread.join(15)
            assert stack.rc == service.EXIT_JOURNAL_UNAVAILABLE == 4
            assert "exiting with status 4" in caplog.text and "Traceback" not in caplog.text
        finally:
            remount(fs, readonly=False)
            stack.stop()
