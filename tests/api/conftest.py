from __future__ import annotations

import pytest

from tests.api.harness import Stack


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """One running daemon (emulated shoe, Mosquitto, API) per test module."""
    s = Stack(tmp_path_factory.mktemp("api"))
    try:
        s.start()
        yield s
    finally:
        s.stop()
