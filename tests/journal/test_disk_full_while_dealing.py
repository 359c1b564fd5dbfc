"""A full disk while dealing: the dealing is held (nothing handled or published, the stop light on),
and it goes on by itself once space returns, with nothing lost or doubled and an alert saying what
happened. Before, the daemon died with a traceback (exit 1) and the unit restarted it into the
same wall. A real daemon (tests/api/harness.py) whose journal lives on a tmpfs the test fills."""

from __future__ import annotations

import logging

from firmware_protocol.messages import CardDrawn
from tests.api.harness import Stack

from .fs import fill, tmpfs
from .test_daemon_start_unavailable import launch, wait_log


def shoe_cards(stack: Stack) -> list[str]:
    events = stack.get("/journal", params={"last": 1000}).json()["events"]
    return [e["data"]["card"] for e in events if e["source"] == "shoe" and e["kind"] == "card"]


def test_a_full_disk_holds_the_dealing_and_it_resumes_by_itself_with_nothing_lost(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="shoe_daemon")
    with tmpfs(tmp_path / "fs", "8m") as fs:
        stack = Stack(fs)
        try:
            launch(stack)
            stack.wait(lambda: stack.get("/readyz").status_code == 200, 30, "the daemon to start")
            stack.deal("9H", "2C", "KS", "3D")                       # coup 1: Punto 9, settled
            assert [c["coup_id"] for c in stack.get("/coups").json()["coups"]] == ["1-1"]
            filler = fill(fs)
            log = stack.shoe.simulator.lights_log
            lit = len(log)
            for card in ("8S", "4H", "QC", "5D"):                      # coup 2, while the disk is full
                stack.counter += 1
                stack.shoe.inject(CardDrawn(card, stack.counter, 100))
            wait_log(caplog, "journal unavailable (disk_full) while dealing: dealing held")
            assert "Traceback" not in caplog.text and stack.rc is None
            assert shoe_cards(stack) == ["9H", "2C", "KS", "3D"]       # nothing journaled, so nothing dealt
            assert [c["coup_id"] for c in stack.get("/coups").json()["coups"]] == ["1-1"]
            stack.wait(lambda: any(e.lights.name == "ERROR_STOP" for _, e in log[lit:]), 10, "the stop light")
            filler.unlink()
            stack.wait(lambda: len(stack.get("/coups").json()["coups"]) == 2, 20, "coup 2 once space returns")
            assert shoe_cards(stack) == ["9H", "2C", "KS", "3D", "8S", "4H", "QC", "5D"]   # none lost, none twice
            alerts = stack.get("/alerts").json()["active"]
            [held] = [a for a in alerts if a["evidence"].get("code") == "journal_unavailable"]
            assert held["severity"] == "warning" and held["evidence"]["cause"] == "disk_full"
            assert held["evidence"]["held"] >= 1
            wait_log(caplog, "the journal is writable again: dealing resumed")
        finally:
            stack.stop()
