"""The delivery queue: which message goes to the broker next, and what happens to it.

No I/O, no threads, no clock (every time is passed in), no locks: the owner
(``shoe_daemon.publish.mqtt.MqttPublisher``) calls it from one thread at a time
and does the talking to paho. The rules it keeps (docs/mqtt.md, "Delivery"):

* **Order.** One FIFO of messages. ``take()`` hands out the head while the link is
  up and fewer than ``window`` QoS > 0 messages wait for their acknowledgement.
* **At-least-once.** A QoS > 0 message stays here (in flight) until ``acked()``.
  ``link_down()`` puts the unacknowledged ones back at the head of the queue, in
  the order they were sent, so that they go out again first after the reconnect.
  Over one connection the broker receives a prefix of what was sent (TCP), so
  on first arrival the order is always kept; a message may arrive twice.
* **Bounded.** At most ``queue_max`` messages wait; past that the policy drops
  the oldest (``drop_oldest``: never the publisher's own status and retained
  messages) or the newest (``drop_newest``), counts every drop and reports one
  overflow episode until the queue has drained below half of ``queue_max``.
* **Connect sequence.** ``link_up()`` queues ``status`` ``online`` first, then
  the backlog in order, then the last payload of every retained topic that the
  backlog does not carry (a broker that lost its retained store gets the state
  back), and ``offline`` last when the publisher is closing.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

from shoe_daemon.publish import topics

DROP_OLDEST = "drop_oldest"
DROP_NEWEST = "drop_newest"
LATENCY_SAMPLES = 2048


@dataclass(slots=True, eq=False)
class Message:
    suffix: str
    topic: str
    payload: bytes
    qos: int
    retain: bool
    t0: float               # when it was offered (the owner's clock)
    internal: bool = False  # status / retained republish made by the publisher itself


@dataclass(slots=True)
class Counters:
    accepted: int = 0       # offered by the caller and kept (at least until dropped)
    dropped: int = 0        # by the queue_full policy, while closed, or a QoS 0 message not written
    sent: int = 0           # handed to the link (a resend counts again)
    acked: int = 0
    resent: int = 0         # put back at the head after a link loss
    rejected: int = 0       # refused by the broker or by the client library
    connects: int = 0
    latencies: collections.deque[float] = field(default_factory=lambda: collections.deque(maxlen=LATENCY_SAMPLES))
    latency_last: float | None = None


class DeliveryQueue:
    """See the module doc. ``prefix`` names the topics of the messages the queue makes itself."""

    def __init__(self, *, prefix: str, online: bytes, offline: bytes, queue_max: int,
                 queue_full: str = DROP_OLDEST, max_inflight: int = 16) -> None:
        if queue_full not in (DROP_OLDEST, DROP_NEWEST):
            raise ValueError(f"queue_full must be {DROP_OLDEST!r} or {DROP_NEWEST!r}, not {queue_full!r}")
        if max_inflight < 1:
            raise ValueError("max_inflight must be >= 1")
        if queue_max < 1:
            raise ValueError("queue_max must be >= 1")
        self.prefix = prefix
        self.queue_max = queue_max
        self.queue_full = queue_full
        self.max_inflight = max_inflight
        self.window = max_inflight
        self.counters = Counters()
        self._status_topic = topics.join(prefix, topics.STATUS)
        self._online = online
        self._offline = offline
        self._queue: collections.deque[Message] = collections.deque()
        self._inflight: dict[int, Message] = {}       # id(msg) -> msg, in the order sent
        self._by_mid: dict[int, Message] = {}         # the link's message id -> msg
        self._retained: dict[str, bytes] = {}         # suffix -> last retained payload
        self._offline_msg: Message | None = None
        self._offline_delivered = False
        self._up = False
        self._closing = False
        self._overflowing = False
        self._episode_dropped = 0
        self._episode_ended: int | None = None

    # -- state ---------------------------------------------------------------------------------
    @property
    def up(self) -> bool:
        """The link is connected (between ``link_up()`` and ``link_down()``)."""
        return self._up

    @property
    def closing(self) -> bool:
        return self._closing

    @property
    def backlog(self) -> int:
        """Messages waiting for their turn (not yet handed to the link)."""
        return len(self._queue)

    @property
    def inflight(self) -> int:
        return len(self._inflight)

    @property
    def drained(self) -> bool:
        """Nothing waits and nothing is unacknowledged."""
        return not self._queue and not self._inflight

    def waiting(self) -> list[Message]:
        """The queued messages, head first (a copy: for tests and diagnostics)."""
        return list(self._queue)

    def retained(self) -> dict[str, bytes]:
        return dict(self._retained)

    # -- the caller's side ---------------------------------------------------------------------
    def offer(self, suffix: str, topic: str, payload: bytes, qos: int, retain: bool,
              now: float) -> tuple[bool, dict[str, Any] | None]:
        """Queue one message. Returns (kept, overflow): ``kept`` False when the policy dropped this
        very message (or the queue is closing); ``overflow`` is the evidence of a new overflow
        episode (once per episode), else None."""
        c = self.counters
        if self._closing:
            c.dropped += 1
            return False, None
        c.accepted += 1
        if retain:
            # The retained state converges on the latest payload even if this message is dropped.
            if payload:
                self._retained[suffix] = payload
            else:
                self._retained.pop(suffix, None)
        queue = self._queue
        msg = Message(suffix, topic, payload, qos, retain, now)
        if len(queue) < self.queue_max:
            queue.append(msg)
            return True, None
        kept = True
        if self.queue_full == DROP_NEWEST:
            self._count_drop()
            kept = False
        else:
            while len(queue) >= self.queue_max and self._drop_oldest():
                pass
            queue.append(msg)
        overflow = None
        if not self._overflowing:
            self._overflowing = True
            self._episode_ended = None
            overflow = {"policy": self.queue_full, "queue_max": self.queue_max,
                        "dropped_total": c.dropped, "connected": self._up}
        return kept, overflow

    def close(self, now: float) -> None:
        """No more offers: ``offline`` (retained) is queued last; the owner delivers what it can."""
        if self._closing:
            return
        self._closing = True
        self._offline_msg = self._status(self._offline, now)
        self._queue.append(self._offline_msg)

    # -- the link's side -----------------------------------------------------------------------
    def link_up(self, now: float, receive_max: int | None = None) -> None:
        """A new connection: the connect sequence (module doc). ``receive_max`` is the broker's
        MQTT 5 Receive Maximum, which narrows the window."""
        if self._inflight:
            self._requeue()
        self._by_mid.clear()
        self.window = max(1, min(self.max_inflight, receive_max)) if receive_max else self.max_inflight
        queue = self._queue
        # The previous connection's own status messages that never went out are replaced.
        offline = self._offline_msg
        if any(m.internal and m.suffix == topics.STATUS for m in queue):
            kept = [m for m in queue if not (m.internal and m.suffix == topics.STATUS)]
            queue.clear()
            queue.extend(kept)
        carried = {m.suffix for m in queue if m.retain}
        for suffix, payload in self._retained.items():
            if suffix not in carried:
                queue.append(Message(suffix, topics.join(self.prefix, suffix), payload, 1, True, now, internal=True))
        queue.appendleft(self._status(self._online, now))
        if offline is not None and not self._offline_delivered:
            queue.append(offline)
        self._up = True
        self.counters.connects += 1

    def link_down(self) -> int:
        """The connection is gone: unacknowledged messages back to the head, in order. Returns how
        many wait now."""
        self._up = False
        self._requeue()
        self._by_mid.clear()
        return len(self._queue)

    def take(self) -> Message | None:
        """The next message to send, or None (link down, window full, nothing queued). A QoS > 0
        message is in flight from now on: call ``sent()`` with the link's id for it."""
        if not self._up or not self._queue or len(self._inflight) >= self.window:
            return None
        msg = self._queue.popleft()
        self.counters.sent += 1
        if msg.qos:
            self._inflight[id(msg)] = msg
        if self._overflowing and len(self._queue) <= self.queue_max // 2:
            self._overflowing = False
            self._episode_ended = self._episode_dropped
            self._episode_dropped = 0
        return msg

    def sent(self, msg: Message, mid: int, written: bool = True) -> None:
        """The link took ``msg`` under id ``mid``. For QoS 0, ``written`` False means it was not
        written (no connection): at-most-once, so it is counted as dropped."""
        if not msg.qos:
            if written:
                self.counters.acked += 1
            else:
                self.counters.dropped += 1
            return
        if id(msg) in self._inflight:      # else the link dropped meanwhile: it is queued again
            self._by_mid[mid] = msg

    def failed(self, msg: Message) -> None:
        """The link refused ``msg`` outright (for example too large): dropped, never retried."""
        self._inflight.pop(id(msg), None)
        self.counters.rejected += 1

    def acked(self, mid: int, now: float, ok: bool = True) -> Message | None:
        """The broker acknowledged ``mid`` (``ok`` False: with a failure reason code). Returns the
        message, or None when the id is not (or no longer) ours."""
        msg = self._by_mid.pop(mid, None)
        if msg is None:
            return None
        self._inflight.pop(id(msg), None)
        c = self.counters
        if not ok:
            c.rejected += 1
            return msg
        c.acked += 1
        if msg is self._offline_msg:
            self._offline_delivered = True
        if not msg.internal:
            ms = (now - msg.t0) * 1000.0
            c.latency_last = ms
            c.latencies.append(ms)
        return msg

    def episode_ended(self) -> int | None:
        """Once, after an overflow episode ended: how many messages it dropped."""
        ended, self._episode_ended = self._episode_ended, None
        return ended

    # -- helpers -------------------------------------------------------------------------------
    def _status(self, payload: bytes, now: float) -> Message:
        return Message(topics.STATUS, self._status_topic, payload, 1, True, now, internal=True)

    def _requeue(self) -> None:
        if not self._inflight:
            return
        # An in-flight online is not sent again: the next connection starts with its own.
        back = [m for m in self._inflight.values()
                if not (m.internal and m.suffix == topics.STATUS and m is not self._offline_msg)]
        self._inflight.clear()
        self.counters.resent += len(back)
        self._queue.extendleft(reversed(back))

    def _count_drop(self) -> None:
        self.counters.dropped += 1
        self._episode_dropped += 1

    def _drop_oldest(self) -> bool:
        for i, m in enumerate(self._queue):
            if not m.internal:
                del self._queue[i]
                self._count_drop()
                return True
        return False
