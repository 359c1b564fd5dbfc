"""Work that would stall the daemon's loop while cards come in is done before the table deals.

Found by the text-junk drill (bench/drills.py), whose slowest /healthz was 257-397 ms: the first
request through uvicorn/Starlette/FastAPI built what they make lazily (about 0.1 s idle, 0.4 s
loaded, on the loop), and full garbage collections walked the whole start-up heap (50-100 ms
each, 300 ms loaded). Timing is the drills' job; these tests check that the causes are gone.
"""

from __future__ import annotations

import gc

from tests.api.harness import Stack


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
