"""Work that would stall the daemon's loop while cards come in is done before the table deals.

Found by the text-junk drill (bench/drills.py), whose slowest /healthz was 257-397 ms: the first
request through uvicorn/Starlette/FastAPI built what they make lazily (about 0.1 s idle, 0.4 s
loaded, on the loop), full garbage collections walked the whole start-up heap (50-100 ms each,
300 ms loaded), and each batch's journal commit waited for its fsync on the loop (up to 200 ms on
a busy disk). Timing is the drills' job; these tests check that the causes are gone.
"""

from __future__ import annotations

import gc
import threading

from shoe_daemon.journal import Journal
from tests.api.harness import Stack
from tests.support.mosquitto import Subscriber


def test_the_api_has_answered_one_request_before_anyone_asks_and_the_start_up_heap_is_frozen(tmp_path):
    stack = Stack(tmp_path).start()     # waits for /readyz only
    try:
        metrics = stack.get("/metrics").text
        # The daemon's own warm-up request went through the whole stack (and was counted).
        assert 'shoe_api_requests_total{method="GET",route="/healthz",status="200"} 1.0' in metrics
        assert gc.get_freeze_count() > 10_000
    finally:
        stack.stop()
    assert gc.get_freeze_count() == 0    # given back to the collector at shutdown


def test_every_answer_is_counted_by_route_and_status(tmp_path):
    stack = Stack(tmp_path).start()
    try:
        assert stack.get("/nowhere").status_code == 404
        assert stack.post("/coups/1-1/void", {"reason": "x"}).status_code == 401
        stack.get("/healthz")
        metrics = stack.get("/metrics").text
        assert 'shoe_api_requests_total{method="GET",route="unmatched",status="404"} 1.0' in metrics
        assert 'route="unmatched",status="401"} 1.0' in metrics   # the write gate's refusal, too
        assert 'shoe_api_requests_total{method="GET",route="/healthz",status="200"} 2.0' in metrics
    finally:
        stack.stop()


def test_the_journals_fsync_runs_off_the_loop_and_nothing_is_published_before_it(tmp_path, monkeypatch):
    """synchronous = "full": a batch is committed, then made durable in a thread; its messages wait
    for that. The fsync is held here (a gate in front of the real one) to see both."""
    armed, gate, syncing = threading.Event(), threading.Event(), threading.Event()
    real_sync = Journal.sync

    def gated_sync(journal):
        if armed.is_set() and journal.unsynced:
            syncing.set()
            gate.wait(30)
        real_sync(journal)

    monkeypatch.setattr(Journal, "sync", gated_sync)
    stack = Stack(tmp_path, synchronous="full").start()
    sub = Subscriber(stack.broker.port, "baccarat/#").start()
    try:
        stack.wait(lambda: stack.get("/readyz").status_code == 200, 10, "ready")
        armed.set()
        stack.deal("9H")                                # journaled (the API reads it)...
        assert syncing.wait(10)
        for _ in range(5):                              # ...the loop answers while the disk works...
            assert stack.get("/healthz").status_code == 200
        assert not [m for m in sub.snapshot() if m.topic.endswith("/coup/card")]   # ...nothing out yet
        gate.set()
        sub.wait_for(lambda msgs: any(m.topic.endswith("/coup/card") and b'"9H"' in m.payload for m in msgs),
                     timeout=10)
        assert stack.daemon.journal.unsynced is False
    finally:
        gate.set()
        sub.stop()
        stack.stop()
