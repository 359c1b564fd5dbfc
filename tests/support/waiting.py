"""Waiting for a condition in a test: one helper for every harness (web, floor, publisher)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float = 10.0, what: str = "condition",
               interval: float = 0.02) -> T:
    """Call ``predicate`` every ``interval`` s until it returns something true, and return that;
    TimeoutError naming ``what`` after ``timeout`` s (the predicate is tried once more at the end)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not met within {timeout} s")
        time.sleep(interval)
