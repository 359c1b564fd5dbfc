"""Fixtures of the end-to-end tests: the daemon subprocess, its notify socket, emulated shoes.

Everything started here is stopped after the test, whatever happened (a daemon still running is
killed; an emulated shoe is stopped and its pty closed).
"""

from __future__ import annotations

import pytest

from shoe_daemon.emulator import EmulatedShoe
from tests.e2e.harness import DaemonProcess, NotifySocket


@pytest.fixture
def notify():
    sock = NotifySocket()
    yield sock
    sock.close()


@pytest.fixture
def daemon_factory(tmp_path, notify):
    """``make(config_path, **kw) -> DaemonProcess`` (not started)."""
    made: list[DaemonProcess] = []

    def make(config, **kwargs) -> DaemonProcess:
        d = DaemonProcess(config, notify=notify, workdir=tmp_path, **kwargs)
        made.append(d)
        return d

    yield make
    for d in made:
        d.cleanup()


@pytest.fixture
def shoe_factory(tmp_path):
    """``make(**EmulatedShoe kwargs) -> EmulatedShoe`` with its stable link in the test's dir
    (opened, not started)."""
    shoes: list[EmulatedShoe] = []

    def make(**kwargs) -> EmulatedShoe:
        kwargs.setdefault("link", str(tmp_path / f"shoe{len(shoes)}"))
        shoe = EmulatedShoe(**kwargs)
        shoes.append(shoe)
        shoe.open()
        return shoe

    yield make
    for shoe in shoes:
        shoe.stop()
        if shoe.error is not None:
            raise AssertionError(f"the emulated shoe failed: {shoe.error!r}")
