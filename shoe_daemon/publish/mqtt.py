"""The MQTT publisher: delivers the core's outputs, in order, at least once.

The core hands over ``(topic suffix, payload, qos, retain)``; this module only
delivers, in two parts with one job each (docs/mqtt.md tells the operator's side):

* ``shoe_daemon.publish.queue.DeliveryQueue`` decides: order, the in-flight
  window, requeue at the head on a link loss, ``queue_max`` and its drop policy,
  the connect sequence (``online``, backlog, retained state). No I/O.
* ``shoe_daemon.publish.client.PahoLink`` talks: paho through its public
  external-loop API on one asyncio loop (socket reader/writer on the loop,
  connecting in a short-lived thread).

``MqttPublisher`` joins them, and adds what the operator sees: the log, the
alerts (``publish_queue_full``, ``broker_connection_lost``,
``broker_connection_restored``) and ``stats()``. It runs on the asyncio loop it
is given (the daemon's: a message published on the loop's thread is written to
the socket in that call, no thread hand-off), or without one on a loop thread of
its own (for callers with no loop: tests, the replay command). ``publish()`` may
be called from any thread; from another thread than the loop's it wakes the loop.

``status`` ``offline`` (retained) is the Last Will, and is also published
explicitly by ``stop()`` before a clean DISCONNECT.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from shoe_daemon.config import MqttConfig
from shoe_daemon.publish import topics
from shoe_daemon.publish.client import (  # noqa: F401 - re-exported: the monitor uses them from here
    RC_BAD_CREDENTIALS,
    RC_BANNED,
    RC_CLIENT_ID_NOT_VALID,
    RC_NOT_AUTHORIZED,
    RC_SERVER_UNAVAILABLE,
    RC_UNSUPPORTED_PROTOCOL,
    PahoLink,
    configure_client,
    json_properties,
    paho_protocol,
)
from shoe_daemon.publish.queue import LATENCY_SAMPLES, DeliveryQueue  # noqa: F401

log = logging.getLogger("shoe_daemon.mqtt")

AlertHook = Callable[[str, dict[str, Any]], None]


def status_payload(state: str, table_id: str, version: str) -> bytes:
    """The retained ``status`` payload (``online`` / ``offline``)."""
    doc = {"schema": topics.SCHEMA, "state": state, "table_id": table_id, "version": version}
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def _percentile(sorted_values: list[float], q: float) -> float:
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


class MqttPublisher:
    """Delivers ``(suffix, payload, qos, retain)`` to ``<prefix>/<suffix>``; see the module doc.

    ``publish()`` may be called from any thread, before ``start()`` too (the messages wait in the
    queue). ``loop``: the asyncio loop to run on; ``start()`` is then called on that loop's
    thread. Without it, ``start()`` starts a loop thread of its own. ``on_alert(kind, evidence)``
    must return quickly; it runs on the loop's thread, or on the publishing thread for
    ``publish_queue_full``.
    """

    def __init__(
        self,
        config: MqttConfig,
        *,
        table_id: str,
        version: str,
        on_alert: AlertHook | None = None,
        clock: Callable[[], float] = time.monotonic,
        max_inflight: int = 16,
        reconnect_min_delay: float = 1.0,
        reconnect_max_delay: float = 30.0,
        connect_timeout: float = 5.0,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.config = config
        self.table_id = table_id
        self.version = version
        self.prefix = topics.normalize_prefix(config.prefix, table_id)
        self.client_id = config.client_id or f"shoe-daemon-{table_id}"
        self.status_topic = topics.join(self.prefix, topics.STATUS)
        self._on_alert = on_alert
        self._clock = clock
        self._link_args = {"reconnect_min_delay": reconnect_min_delay, "reconnect_max_delay": reconnect_max_delay,
                           "connect_timeout": connect_timeout}
        self._queue = DeliveryQueue(
            prefix=self.prefix, online=status_payload("online", table_id, version),
            offline=status_payload("offline", table_id, version), queue_max=config.queue_max,
            queue_full=config.queue_full, max_inflight=max_inflight,
        )
        self._lock = threading.Lock()   # the queue, between the loop's thread and other publishers
        self._topics: dict[str, str] = {}
        self._loop = loop
        self._own_thread: threading.Thread | None = None
        self._link: PahoLink | None = None
        self._started = False
        self._stopping = False
        self._closed = False
        self._pumping = False
        self._pump_posted = False

        # What the operator sees.
        self._link_alerted = False
        self._down_since: float | None = None
        self._last_logged_error: str | None = None
        self._connect_failures = 0
        self._last_error: str | None = None

    # -- public API ----------------------------------------------------------------------------
    def start(self) -> None:
        """Connect in the background; returns at once. A broker that is down is retried."""
        if self._started:
            raise RuntimeError("MqttPublisher.start() called twice")
        if self.config.host is None:
            raise ValueError("[mqtt] host is not set: start the embedded broker and give its address")
        own = self._loop is None
        loop = asyncio.new_event_loop() if own else self._loop
        try:
            link = PahoLink(
                self.config, client_id=self.client_id, will_topic=self.status_topic,
                will_payload=status_payload("offline", self.table_id, self.version),
                loop=loop, handler=self, **self._link_args,
            )
        except Exception:
            if own:
                loop.close()
            raise
        self._loop = loop
        self._link = link
        self._started = True
        if own:
            self._own_thread = threading.Thread(target=self._run_own_loop, name=f"mqtt-{self.table_id}",
                                                daemon=True)
            self._own_thread.start()
            thread_id = self._own_thread.ident
        else:
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            thread_id = threading.get_ident() if running is loop else None
        link.start(thread_id)
        log.info(
            "MQTT publisher for %s -> %s:%d (MQTT %s, client id %s%s%s)",
            self.prefix, self.config.host, self.config.port, self.config.protocol, self.client_id,
            ", TLS" if self.config.tls_ca else "", ", own loop thread" if own else "",
        )

    def publish(self, topic_suffix: str, payload: bytes | str, qos: int = 1, retain: bool = False) -> bool:
        """Queue one message; never blocks. False when it was dropped (queue full, or stopped).

        Raises ValueError for a malformed suffix or QoS (a programming error).
        """
        if qos not in (0, 1, 2):
            raise ValueError(f"qos must be 0, 1 or 2, not {qos!r}")
        topic = self._topics.get(topic_suffix)
        if topic is None:  # checked once per suffix
            if topic_suffix == topics.STATUS:
                raise ValueError("the status topic is the publisher's own")
            topic = self._topics[topic_suffix] = topics.join(self.prefix, topic_suffix)
        data = payload.encode() if isinstance(payload, str) else bytes(payload)
        with self._lock:
            if self._closed or self._stopping:
                self._queue.counters.dropped += 1
                return False
            kept, overflow = self._queue.offer(topic_suffix, topic, data, qos, bool(retain), self._clock())
            up = self._queue.up
        if up:
            link = self._link
            if link.on_loop_thread():
                self.pump()
            elif not self._pump_posted:
                self._pump_posted = True
                try:
                    self._loop.call_soon_threadsafe(self.pump)
                except RuntimeError:   # the loop is closed: the message waits, as when the link is down
                    self._pump_posted = False
        if overflow is not None:
            log.error(
                "MQTT publish queue full (%d messages, broker %s): dropping the %s messages",
                self.config.queue_max, "connected" if overflow["connected"] else "away",
                "oldest" if self.config.queue_full == "drop_oldest" else "newest",
            )
            self._alert("publish_queue_full", overflow)
        return kept

    def stop(self, timeout: float = 5.0) -> None:
        """Publish ``offline`` (retained), deliver what can be within ``timeout``, disconnect cleanly.

        Waits for a connection attempt under way, but starts no new one."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self._lock:
            if self._closed or self._stopping:
                return
            self._stopping = True
            if not self._started:
                self._closed = True
                return
        link = self._link
        if link.on_loop_thread():
            self._finish(deadline)
        else:
            done = threading.Event()

            def finish() -> None:
                try:
                    self._finish(deadline)
                finally:
                    done.set()

            try:
                self._loop.call_soon_threadsafe(finish)
                done.wait(max(0.0, deadline - time.monotonic()) + 2.0)
            except RuntimeError:   # the loop is closed already
                pass
        if self._own_thread is not None:
            try:
                self._loop.call_soon_threadsafe(self._loop.stop)
            except RuntimeError:
                pass
            self._own_thread.join(2.0)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            q = self._queue
            c = q.counters
            lat = sorted(c.latencies)
            return {
                "connected": q.up,
                "queue_depth": q.backlog + q.inflight,
                "queued": q.backlog,
                "inflight": q.inflight,
                "published": c.accepted,
                "dropped": c.dropped,
                "sent": c.sent,
                "acked": c.acked,
                "resent": c.resent,
                "rejected": c.rejected,
                "connects": c.connects,
                "reconnects": max(0, c.connects - 1),
                "connect_failures": self._connect_failures,
                "last_error": self._last_error,
                "latency_ms_last": c.latency_last,
                "latency_ms_p50": _percentile(lat, 0.50) if lat else None,
                "latency_ms_p99": _percentile(lat, 0.99) if lat else None,
            }

    @property
    def connected(self) -> bool:
        return self._queue.up

    @property
    def backlog(self) -> int:
        """Messages waiting for their turn (not yet handed to paho); cheap, for flow control."""
        return self._queue.backlog

    # -- the loop's thread -----------------------------------------------------------------------
    def _run_own_loop(self) -> None:
        loop = self._loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            loop.close()

    def pump(self) -> None:
        """Hand queued messages to the link while the window allows (LinkHandler; loop thread)."""
        self._pump_posted = False
        if self._pumping:
            return
        self._pumping = True
        link = self._link
        queue = self._queue
        lock = self._lock
        ended = None
        read = False
        try:
            while True:
                with lock:
                    msg = queue.take()
                    if msg is None:
                        full = queue.up and queue.backlog > 0
                        if not full or read:
                            ended = queue.episode_ended()
                            break
                if msg is None:
                    # The window is full: take the acknowledgements that arrived meanwhile (once), so
                    # that a long batch of events on the loop does not wait for the loop's next turn.
                    read = True
                    link.read_now()
                    continue
                try:
                    mid, written = link.publish(msg.topic, msg.payload, msg.qos, msg.retain)
                except Exception as exc:  # noqa: BLE001 - e.g. payload too large: drop, never loop
                    with lock:
                        queue.failed(msg)
                    log.error("cannot publish on %s: %s", msg.topic, exc)
                    continue
                with lock:
                    queue.sent(msg, mid, written)
        finally:
            self._pumping = False
        if ended is not None:
            log.warning("MQTT publish queue drained below %d; %d messages were dropped in the episode",
                        self.config.queue_max // 2, ended)

    def _finish(self, deadline: float) -> None:
        link = self._link
        with self._lock:
            self._queue.close(self._clock())
        self.pump()
        try:
            link.drain(deadline, lambda: self._queue.drained)
        except Exception:  # noqa: BLE001 - stop() always ends
            log.exception("MQTT publisher: delivering at stop failed")
        with self._lock:
            undelivered = self._queue.backlog + self._queue.inflight
            self._closed = True
        link.close()
        if undelivered:
            log.warning("MQTT publisher stopped with %d messages not delivered", undelivered)
        else:
            log.info("MQTT publisher stopped; everything delivered")

    # -- LinkHandler (loop thread) ---------------------------------------------------------------
    def link_up(self, receive_max: int | None) -> None:
        with self._lock:
            self._queue.link_up(self._clock(), receive_max)
            waiting = self._queue.backlog
            restored = self._link_alerted and not self._stopping
            self._link_alerted = False
            down_s = None if self._down_since is None else round(self._clock() - self._down_since, 3)
            self._down_since = None
            self._last_logged_error = None
        log.info("connected to MQTT broker %s:%d (MQTT %s); %d messages to send",
                 self.config.host, self.config.port, self.config.protocol, waiting)
        if restored:
            self._alert("broker_connection_restored", {"broker": f"{self.config.host}:{self.config.port}",
                                                       "down_s": down_s, "queued": waiting})

    def link_down(self, reason: str) -> None:
        with self._lock:
            waiting = self._queue.link_down()
            if self._stopping:
                return
            self._down_since = self._clock()
            self._last_error = f"connection lost: {reason}"
            alert = None
            if not self._link_alerted:
                self._link_alerted = True
                alert = {"broker": f"{self.config.host}:{self.config.port}", "reason": reason, "queued": waiting}
        log.warning("lost the MQTT broker %s:%d (%s); %d messages wait for the reconnect",
                    self.config.host, self.config.port, reason, waiting)
        if alert is not None:
            self._alert("broker_connection_lost", alert)

    def link_failed(self, message: str) -> None:
        alert = None
        with self._lock:
            self._connect_failures += 1
            self._last_error = message
            if not self._link_alerted and not self._stopping:
                self._link_alerted = True
                if self._down_since is None:
                    self._down_since = self._clock()
                alert = {"broker": f"{self.config.host}:{self.config.port}", "reason": message,
                         "queued": self._queue.backlog}
            repeat = message == self._last_logged_error
            self._last_logged_error = message
            failures = self._connect_failures
        if repeat:
            log.debug("%s (attempt %d; retrying with back-off)", message, failures)
        else:
            log.error("%s; retrying with back-off", message)
        if alert is not None:
            self._alert("broker_connection_lost", alert)

    def acked(self, mid: int, failure: str | None) -> None:
        with self._lock:
            msg = self._queue.acked(mid, self._clock(), failure is None)
        if msg is not None and failure is not None:
            log.error("broker rejected the message on %s: %s", msg.topic, failure)

    def _alert(self, kind: str, evidence: dict[str, Any]) -> None:
        if self._on_alert is None:
            return
        try:
            self._on_alert(kind, evidence)
        except Exception:  # noqa: BLE001 - the hook is the daemon's; never break delivery
            log.exception("MQTT alert hook failed for %s", kind)
