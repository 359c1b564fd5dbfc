"""The delivery queue alone (no broker, no paho): order, window, requeue, drop policy, connect sequence.

The broker is modelled the way TCP and MQTT behave: over one connection the broker receives a
prefix of what was sent, in order; it acknowledges only what it received; a link loss loses what
was sent but not received.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shoe_daemon.publish import topics
from shoe_daemon.publish.queue import DeliveryQueue

PREFIX = "baccarat/T1"
ONLINE = b'{"state":"online"}'
OFFLINE = b'{"state":"offline"}'


def make(queue_max=100, queue_full="drop_oldest", max_inflight=4) -> DeliveryQueue:
    return DeliveryQueue(prefix=PREFIX, online=ONLINE, offline=OFFLINE, queue_max=queue_max,
                         queue_full=queue_full, max_inflight=max_inflight)


def offer(q: DeliveryQueue, n: int, suffix="coup/card", retain=False, now=0.0, qos=1):
    return q.offer(suffix, topics.join(PREFIX, suffix), json.dumps({"n": n}).encode(), qos, retain, now)


class Broker:
    """What the broker received and acknowledged, connection by connection."""

    def __init__(self, q: DeliveryQueue) -> None:
        self.q = q
        self.next_mid = 1
        self.sent: list[tuple[int, object]] = []      # this connection: (mid, msg), not yet received
        self.unacked: list[tuple[int, object]] = []   # received, not yet acknowledged
        self.received: list[object] = []              # every message received, all connections
        self.per_connection: list[list[object]] = []

    def connect(self, receive_max=None) -> None:
        self.q.link_up(0.0, receive_max)
        self.per_connection.append([])

    def send_all(self) -> int:
        n = 0
        while (msg := self.q.take()) is not None:
            mid = self.next_mid
            self.next_mid += 1
            self.q.sent(msg, mid)
            if msg.qos:
                self.sent.append((mid, msg))
            else:
                self.received.append(msg)
                self.per_connection[-1].append(msg)
            n += 1
        return n

    def receive(self, k: int) -> None:
        for mid, msg in self.sent[:k]:
            self.received.append(msg)
            self.per_connection[-1].append(msg)
            self.unacked.append((mid, msg))
        del self.sent[:k]

    def ack(self, indices) -> None:
        for i in sorted(set(indices), reverse=True):
            if i < len(self.unacked):
                mid, _ = self.unacked.pop(i)
                assert self.q.acked(mid, 1.0) is not None

    def disconnect(self) -> None:
        self.sent.clear()       # on the wire, never received
        self.unacked.clear()    # received; their acks are lost with the link
        self.q.link_down()

    def settle(self) -> None:
        """Connect if needed and deliver everything."""
        if not self.q.up:
            self.connect()
        for _ in range(10_000):
            self.send_all()
            self.receive(len(self.sent))
            self.ack(range(len(self.unacked)))
            if self.q.drained:
                return
        raise AssertionError("the queue did not drain")


def user_numbers(msgs) -> list[int]:
    return [json.loads(m.payload)["n"] for m in msgs if not m.internal]


def first_arrivals(values):
    seen, out = set(), []
    for v in values:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def test_nothing_moves_until_the_link_is_up_then_online_first_and_the_backlog_in_order():
    q = make()
    for i in range(3):
        assert offer(q, i) == (True, None)
    assert q.take() is None and q.backlog == 3
    b = Broker(q)
    b.connect()
    b.settle()
    assert b.received[0].suffix == topics.STATUS and b.received[0].payload == ONLINE
    assert user_numbers(b.received) == [0, 1, 2]
    assert q.counters.acked == 4 and q.counters.sent == 4 and q.drained


def test_the_window_bounds_unacknowledged_messages_and_an_ack_frees_one_place():
    q = make(max_inflight=4)
    b = Broker(q)
    b.connect()
    for i in range(10):
        offer(q, i)
    assert b.send_all() == 4 and q.inflight == 4 and q.backlog == 7   # online + 3 cards in flight
    assert q.take() is None
    b.receive(4)
    b.ack([0])
    assert b.send_all() == 1 and q.inflight == 4
    b.ack([2])                        # out of order: any ack frees a place
    assert b.send_all() == 1


def test_receive_maximum_narrows_the_window_for_that_connection_only():
    q = make(max_inflight=8)
    b = Broker(q)
    b.connect(receive_max=2)
    for i in range(5):
        offer(q, i)
    assert b.send_all() == 2 and q.window == 2
    b.disconnect()
    b.connect()
    assert q.window == 8


def test_a_link_loss_puts_the_unacknowledged_back_at_the_head_in_order():
    q = make(max_inflight=16)
    b = Broker(q)
    b.connect()
    for i in range(6):
        offer(q, i)
    b.send_all()
    b.receive(7)                      # online + 0..5
    b.ack([1, 3])                     # cards 0 and 2 acknowledged
    offer(q, 6)                       # sent too, never received
    b.send_all()
    b.disconnect()
    assert q.counters.resent == 5     # cards 1, 3, 4, 5, 6 (the in-flight online is not resent)
    assert user_numbers(q.waiting()) == [1, 3, 4, 5, 6]
    offer(q, 7)
    b.connect()
    waiting = q.waiting()
    assert waiting[0].payload == ONLINE and user_numbers(waiting) == [1, 3, 4, 5, 6, 7]
    b.settle()
    assert first_arrivals(user_numbers(b.received)) == list(range(8))


def test_an_ack_for_a_message_of_a_dropped_link_is_ignored():
    q = make()
    b = Broker(q)
    b.connect()
    offer(q, 0)
    b.send_all()
    mids = [mid for mid, _ in b.sent]
    b.disconnect()
    assert q.acked(mids[-1], 1.0) is None
    assert q.counters.acked == 0 and q.backlog == 1


def test_a_message_requeued_while_being_handed_over_is_not_tracked():
    """The link can drop inside the hand-over (paho calls on_disconnect from publish())."""
    q = make()
    q.link_up(0.0)
    offer(q, 0)
    online = q.take()
    msg = q.take()
    q.link_down()                     # before sent() was told the id
    q.sent(online, 1)
    q.sent(msg, 2)
    assert q.acked(2, 1.0) is None and user_numbers(q.waiting()) == [0]


def test_qos0_is_counted_acked_when_written_and_dropped_when_not():
    q = make()
    q.link_up(0.0)
    q.take()
    offer(q, 0, qos=0)
    offer(q, 1, qos=0)
    m0, m1 = q.take(), q.take()
    assert q.inflight == 1            # only the online status waits for an ack
    q.sent(m0, 10, written=True)
    q.sent(m1, 11, written=False)
    assert q.counters.acked == 1 and q.counters.dropped == 1


def test_a_failure_reason_counts_as_rejected_and_is_not_resent():
    q = make()
    b = Broker(q)
    b.connect()
    offer(q, 0)
    b.send_all()
    b.receive(2)
    mid = b.unacked[1][0]
    msg = q.acked(mid, 1.0, ok=False)
    assert msg is not None and q.counters.rejected == 1
    b.disconnect()
    assert user_numbers(q.waiting()) == []


def test_failed_hand_over_is_dropped_not_retried():
    q = make()
    q.link_up(0.0)
    offer(q, 0)
    q.take()
    msg = q.take()
    q.failed(msg)
    assert q.counters.rejected == 1 and q.inflight == 1


@pytest.mark.parametrize("policy", ["drop_oldest", "drop_newest"])
def test_queue_full_drops_by_policy_counts_and_reports_one_episode(policy):
    q = make(queue_max=10, queue_full=policy)
    results = [offer(q, i) for i in range(25)]
    kept = [k for k, _ in results]
    alerts = [a for _, a in results if a is not None]
    assert q.counters.dropped == 15 and q.backlog == 10 and q.counters.accepted == 25
    assert len(alerts) == 1 and alerts[0]["policy"] == policy and alerts[0]["queue_max"] == 10
    assert alerts[0]["connected"] is False and alerts[0]["dropped_total"] == 1
    if policy == "drop_oldest":
        assert all(kept) and user_numbers(q.waiting()) == list(range(15, 25))
    else:
        assert kept == [True] * 10 + [False] * 15 and user_numbers(q.waiting()) == list(range(10))
    # The episode ends once the queue drained below half of queue_max, then a new one alerts again.
    b = Broker(q)
    b.connect()
    assert q.episode_ended() is None
    b.settle()
    assert q.episode_ended() == 15 and q.episode_ended() is None
    b.disconnect()
    again = [offer(q, i)[1] for i in range(100, 112)]
    assert sum(a is not None for a in again) == 1


def test_drop_oldest_never_drops_the_publishers_own_messages():
    q = make(queue_max=10)
    offer(q, 0, suffix="shoe", retain=True)
    q.link_up(0.0)
    q.link_down()                     # online + shoe are queued, online internal
    for i in range(1, 30):
        offer(q, i)
    assert q.waiting()[0].payload == ONLINE


def test_the_connect_sequence_republishes_retained_state_the_backlog_does_not_carry():
    q = make()
    offer(q, 1, suffix="shoe", retain=True)
    offer(q, 2, suffix="coup/current", retain=True)
    offer(q, 3, suffix="shoe", retain=True)
    b = Broker(q)
    b.settle()
    assert q.retained() == {"shoe": json.dumps({"n": 3}).encode(), "coup/current": json.dumps({"n": 2}).encode()}
    b.disconnect()
    offer(q, 4, suffix="coup/current", retain=True)   # carried by the backlog: not republished
    offer(q, 5, suffix="coup/card")
    b.connect()
    waiting = q.waiting()
    assert [(m.suffix, m.internal) for m in waiting] == [
        ("status", True), ("coup/current", False), ("coup/card", False), ("shoe", True)]
    assert waiting[-1].payload == json.dumps({"n": 3}).encode() and waiting[-1].retain
    # An empty retained payload clears the topic: nothing to republish for it.
    b.settle()
    b.disconnect()
    q.offer("shoe", f"{PREFIX}/shoe", b"", 1, True, 0.0)
    b.connect()
    assert "shoe" not in {m.suffix for m in q.waiting() if m.internal}


def test_a_reconnect_replaces_a_stale_online_and_never_repeats_it():
    q = make()
    q.link_up(0.0)
    q.link_down()                     # online never went out
    q.link_up(0.0)
    assert [m.payload for m in q.waiting()] == [ONLINE]


def test_close_queues_offline_last_refuses_more_and_survives_a_reconnect():
    q = make()
    b = Broker(q)
    b.connect()
    offer(q, 0)
    q.close(0.0)
    assert offer(q, 1) == (False, None) and q.counters.dropped == 1
    assert [m.payload for m in q.waiting()][-1] == OFFLINE
    b.send_all()
    b.disconnect()                    # nothing received: offline is resent after the next online
    b.connect()
    waiting = q.waiting()
    assert waiting[0].payload == ONLINE and waiting[-1].payload == OFFLINE
    b.settle()
    assert [m.payload for m in b.received if m.suffix == "status"][-1] == OFFLINE
    b.disconnect()
    b.connect()                       # offline delivered already: not again
    assert OFFLINE not in [m.payload for m in q.waiting()]


def test_latency_is_measured_with_the_times_given():
    q = make()
    q.link_up(0.0)
    q.offer("coup/card", f"{PREFIX}/coup/card", b"{}", 1, False, 10.0)
    q.take()
    msg = q.take()
    q.sent(msg, 5)
    q.acked(5, 10.25)
    assert q.counters.latency_last == 250.0 and list(q.counters.latencies) == [250.0]


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        make(max_inflight=0)
    with pytest.raises(ValueError):
        make(queue_full="drop_all")


# -- the property: random link histories keep the order and lose nothing under queue_max ------------

step = st.one_of(
    st.tuples(st.just("offer"), st.integers(1, 5), st.booleans()),
    st.tuples(st.just("connect"), st.one_of(st.none(), st.integers(1, 6))),
    st.tuples(st.just("send")),
    st.tuples(st.just("receive"), st.integers(0, 8)),
    st.tuples(st.just("ack"), st.lists(st.integers(0, 10), max_size=6)),
    st.tuples(st.just("disconnect")),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, max_size=60), max_inflight=st.integers(1, 6), queue_max=st.integers(1, 40),
       policy=st.sampled_from(["drop_oldest", "drop_newest"]))
def test_property_order_kept_and_nothing_lost_while_under_queue_max(steps, max_inflight, queue_max, policy):
    q = make(queue_max=queue_max, queue_full=policy, max_inflight=max_inflight)
    b = Broker(q)
    n = 0
    kept: list[int] = []
    for s in steps:
        kind = s[0]
        if kind == "offer":
            for _ in range(s[1]):
                ok, _ = offer(q, n, suffix="shoe" if s[2] else "coup/card", retain=s[2])
                if ok:
                    kept.append(n)
                n += 1
        elif kind == "connect":
            if not q.up:
                b.connect(s[1])
        elif kind == "send":
            b.send_all()
            assert q.inflight <= q.window
        elif kind == "receive":
            if q.up:
                b.receive(s[1])
        elif kind == "ack":
            b.ack(s[1])
        elif kind == "disconnect":
            if q.up:
                b.disconnect()
        # Every connection starts with online, and online is never sent twice in one.
        for conn in b.per_connection:
            status = [m for m in conn if m.suffix == topics.STATUS]
            if conn:
                assert conn[0].suffix == topics.STATUS and conn[0].payload == ONLINE
            assert len(status) <= 1
    b.settle()
    arrived = first_arrivals(user_numbers(b.received))
    # Order: first arrivals in the order offered (retained republish copies are internal).
    assert arrived == sorted(arrived)
    dropped = q.counters.dropped
    missing = set(range(n)) - set(arrived)
    if dropped == 0:
        assert arrived == list(range(n))          # nothing lost
    else:
        assert len(missing) <= dropped            # only counted drops are missing
    assert q.counters.accepted == n and q.drained
    # The retained topic's state converges on its last payload after a reconnect, even after drops.
    b.disconnect()
    b.settle()
    shoe = q.retained().get("shoe")
    if shoe is not None:
        assert [m.payload for m in b.received if m.suffix == "shoe"][-1] == shoe
