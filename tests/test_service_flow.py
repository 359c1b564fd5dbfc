"""Flow control: a source thread is held back while the publisher's backlog to a connected broker is
large (an emulated shoe at full speed), never while the broker is away."""

from shoe_daemon import service
from shoe_daemon.config import Config
from shoe_daemon.service import BACKLOG_MAX, Daemon


class Publisher:
    def __init__(self, backlog: list[int], connected: bool = True):
        self._backlog = backlog      # the values the backlog takes, one per look
        self.looks = 0
        self.connected = connected

    @property
    def backlog(self) -> int:
        self.looks += 1
        return self._backlog.pop(0) if len(self._backlog) > 1 else self._backlog[0]


def daemon(publisher) -> Daemon:
    d = Daemon(Config())
    d.publisher = publisher
    return d


def test_the_source_waits_until_the_backlog_drains():
    pub = Publisher([BACKLOG_MAX + 500, BACKLOG_MAX + 100, BACKLOG_MAX + 1, BACKLOG_MAX, 0])
    daemon(pub)._hold_back()
    assert pub.looks == 4


def test_no_wait_with_the_broker_away_or_a_small_backlog():
    away = Publisher([BACKLOG_MAX * 10], connected=False)
    daemon(away)._hold_back()
    small = Publisher([BACKLOG_MAX])
    daemon(small)._hold_back()
    assert small.looks == 1
    daemon(object())._hold_back()    # a publisher without a backlog (fixture capture): never held


def test_the_wait_is_bounded(monkeypatch):
    monkeypatch.setattr(service, "BACKLOG_WAIT", 0.01)
    stuck = Publisher([BACKLOG_MAX * 2])
    daemon(stuck)._hold_back()       # returns although the backlog never drains
    assert stuck.looks > 1
