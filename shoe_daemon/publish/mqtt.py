"""The MQTT publisher: delivers the core's outputs, in order, at least once.

The core hands over ``(topic suffix, payload, qos, retain)``; this module only
delivers. Design (docs/mqtt.md tells the operator's side):

* One in-order queue owns every message until the broker has acknowledged it.
  ``publish()`` appends to it under a short lock and returns at once. The head
  of the queue is handed to paho while connected, at most ``max_inflight``
  unacknowledged messages at a time, by whichever thread gets there first:
  ``publish()`` itself, paho's thread when an ack frees the window, else the
  sender thread (woken only then). Over plain TCP the thread that hands a
  message over also writes it to the socket (TCP_NODELAY): no thread switch
  between the core and the broker.
* A QoS 1 message stays ours until its PUBACK. When the connection drops, the
  unacknowledged ones go back to the head of the queue, in order, and are sent
  again after the reconnect (at-least-once: a display may see a message twice
  and dedupes by ``seq``; it never sees them out of order on first arrival).
  paho's own copies are dropped on every connect, so nothing is sent twice by
  two owners.
* While the broker is away the queue grows up to ``queue_max``; past that the
  ``queue_full`` policy drops the oldest or the newest message, counts it, and
  raises one ``publish_queue_full`` alert per overflow episode.
* On every (re)connect: ``status`` ``online`` (retained) first, then the
  backlog in order, then the last payload of every retained topic that the
  backlog does not already carry, so a broker that lost its retained store
  (restart without persistence) gets the table's state back.
* ``status`` ``offline`` (retained) is the Last Will, and is also published
  explicitly by ``stop()`` before a clean DISCONNECT.

Locks: ``_cond`` guards the queue and counters and is never held while calling
into paho (paho calls ``on_publish`` and sometimes ``on_disconnect`` with its
own message lock held). ``_send_lock`` serialises the hand-overs into paho
with ``on_connect``, so a connect never races a hand-over; paho's thread only
ever tries it (never waits for it).
"""

from __future__ import annotations

import collections
import inspect
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from shoe_daemon.config import MqttConfig
from shoe_daemon.publish import topics

log = logging.getLogger("shoe_daemon.mqtt")

AlertHook = Callable[[str, dict[str, Any]], None]

# MQTT 5 reason codes the operator can act on (3.1.1 CONNACK codes are mapped to these by paho).
RC_UNSUPPORTED_PROTOCOL = 0x84
RC_CLIENT_ID_NOT_VALID = 0x85
RC_BAD_CREDENTIALS = 0x86
RC_NOT_AUTHORIZED = 0x87
RC_SERVER_UNAVAILABLE = 0x88
RC_BANNED = 0x8A

_HINTS = {
    RC_UNSUPPORTED_PROTOCOL: 'the broker does not speak this MQTT version; set [mqtt] protocol = "3.1.1"',
    RC_CLIENT_ID_NOT_VALID: "the broker rejects the client id; check [mqtt] client_id",
    RC_BAD_CREDENTIALS: "check [mqtt] username and password",
    RC_NOT_AUTHORIZED: "check [mqtt] username and password, and the broker's ACL",
    RC_BANNED: "the broker has banned this client",
}

LATENCY_SAMPLES = 2048


def status_payload(state: str, table_id: str, version: str) -> bytes:
    """The retained ``status`` payload (``online`` / ``offline``)."""
    doc = {"schema": topics.SCHEMA, "state": state, "table_id": table_id, "version": version}
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def paho_protocol(config: MqttConfig) -> int:
    return mqtt.MQTTv311 if config.protocol == "3.1.1" else mqtt.MQTTv5


def configure_client(client: mqtt.Client, config: MqttConfig) -> None:
    """Credentials and TLS from ``[mqtt]`` on a paho client (the publisher and the monitor)."""
    if config.username is not None:
        client.username_pw_set(config.username, config.password)
    elif config.password is not None:
        raise ValueError("[mqtt] password is set but username is not")
    if config.tls_ca:
        try:
            client.tls_set(
                ca_certs=config.tls_ca,
                certfile=config.tls_cert,
                keyfile=config.tls_key,
                cert_reqs=ssl.CERT_REQUIRED,
                tls_version=ssl.PROTOCOL_TLS_CLIENT,
            )
        except (OSError, ssl.SSLError) as exc:
            raise ValueError(
                f"[mqtt] TLS files (tls_ca={config.tls_ca!r}, tls_cert={config.tls_cert!r},"
                f" tls_key={config.tls_key!r}) cannot be used: {exc}"
            ) from exc
        if config.tls_insecure:
            client.tls_insecure_set(True)
    elif config.tls_cert or config.tls_key:
        raise ValueError("[mqtt] tls_cert / tls_key need tls_ca (TLS is enabled by tls_ca)")


def json_properties(packet_type: int) -> Properties:
    """MQTT 5 properties saying the payload is UTF-8 JSON."""
    props = _PackedProperties(packet_type)
    props.PayloadFormatIndicator = 1
    props.ContentType = "application/json"
    return props


class _PackedProperties(Properties):
    """Properties packed once, on first use (set them before): paho packs a message's properties on
    every publish, which cost as much as the rest of its PUBLISH packet."""

    def pack(self) -> bytes:
        packed = self.__dict__.get("_packed")
        if packed is None:
            packed = super().pack()
            object.__setattr__(self, "_packed", packed)  # Properties.__setattr__ takes property names only
        return packed


# What paho would build for every plain PUBACK (shared: nobody changes them): success (0), or no
# subscriber (0x10, a success too).
_PUBACK_REASONS = {code: ReasonCode(PacketTypes.PUBACK, identifier=code) for code in (0x00, 0x10)}
_PUBACK_NO_PROPERTIES = Properties(PacketTypes.PUBACK)


def _paho_internals_known() -> bool:
    """_Client's two shortcuts use paho internals (paho-mqtt 2.1 and 2.2): with another layout,
    paho's own paths are used."""
    def arity(name: str) -> int:
        try:
            return len(inspect.signature(getattr(mqtt.Client, name)).parameters)
        except (AttributeError, TypeError, ValueError):
            return -1
    return (arity("_packet_queue"), arity("_packet_write"), arity("_handle_pubackcomp"),
            arity("_do_on_publish")) == (6, 1, 2, 4)


_PAHO_SHORTCUTS = _paho_internals_known()


class _Client(mqtt.Client):
    """paho's client, keeping the reason of the last failed connect.

    paho's network thread swallows the OSError of a failed connect (DNS, refused,
    TLS) and calls ``on_connect_fail`` without it; we keep it to tell the operator.
    Any other exception is turned into an OSError so that paho keeps retrying
    instead of letting its thread die.
    """

    last_connect_error: BaseException | None = None
    #: PUBLISH packets are written to the socket by the thread that hands them over (plain TCP only).
    direct_writes = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._write_lock = threading.Lock()

    def _packet_write(self) -> MQTTErrorCode:
        with self._write_lock:  # paho's thread and a publishing thread write whole packets in turn
            return mqtt.Client._packet_write(self)

    def _packet_queue(self, command: int, packet: bytes | bytearray, mid: int, qos: int,
                      info: mqtt.MQTTMessageInfo | None = None) -> MQTTErrorCode:
        """paho queues a packet and wakes its thread to write it: a thread switch (and, in a busy
        process, a wait for the GIL) between every message and the socket. A PUBLISH is written by
        the thread that hands it over, at once, instead. What the socket does not take (full, or
        broken) stays queued in order, and paho's thread is woken to deal with it."""
        if not (self.direct_writes and _PAHO_SHORTCUTS) or (command & 0xF0) != mqtt.PUBLISH:
            return super()._packet_queue(command, packet, mid, qos, info)
        with self._write_lock:
            self._out_packet.append({"command": command, "mid": mid, "qos": qos, "pos": 0,
                                     "to_process": len(packet), "packet": packet, "info": info})
            try:
                mqtt.Client._packet_write(self)
            except Exception:  # noqa: BLE001 - paho's thread meets the same error and handles it
                pass
            left = bool(self._out_packet)
        if left and self._sockpairW is not None:
            try:
                self._sockpairW.send(b"0")
            except OSError:  # BlockingIOError: a wake-up is pending already
                pass
        return MQTTErrorCode.MQTT_ERR_SUCCESS

    def _handle_pubackcomp(self, cmd: str) -> MQTTErrorCode:
        """A plain PUBACK (success, no properties: what a broker sends for nearly every message:
        the mid, then for MQTT 5 maybe reason 0 and an empty property list) without paho's
        decoding, which builds a ReasonCode and a Properties object per acknowledgement (the larger
        part of the cost of a message in paho's thread)."""
        if cmd != "PUBACK" or not _PAHO_SHORTCUTS:
            return super()._handle_pubackcomp(cmd)
        packet = self._in_packet["packet"]
        n = len(packet)
        reason = _PUBACK_REASONS.get(packet[2]) if 3 <= n <= 4 else _PUBACK_REASONS[0] if n == 2 else None
        if reason is None or (n == 4 and packet[3]):
            return super()._handle_pubackcomp(cmd)
        mid = (packet[0] << 8) | packet[1]
        with self._out_message_mutex:
            if mid in self._out_messages:
                return self._do_on_publish(mid, reason, _PUBACK_NO_PROPERTIES)
        return MQTTErrorCode.MQTT_ERR_SUCCESS

    def reconnect(self) -> MQTTErrorCode:
        try:
            return super().reconnect()
        except OSError as exc:
            self.last_connect_error = exc
            raise
        except Exception as exc:  # never let paho's thread die on a surprise
            self.last_connect_error = exc
            raise OSError(f"{type(exc).__name__}: {exc}") from exc


_paho_logger = logging.getLogger("shoe_daemon.mqtt.paho")


class _PahoLog:
    """paho's own log, at DEBUG: it calls routine retries errors. Exceptions in callbacks stay errors.

    Set as the client's ``logger`` (not ``on_log``, for which paho formats every line, str() of the
    properties of every PUBLISH included, even when nobody reads it)."""

    def log(self, level: int, msg: str, *args: Any) -> None:
        if msg.startswith("Caught exception"):
            _paho_logger.error(msg, *args)
        elif _paho_logger.isEnabledFor(logging.DEBUG):
            _paho_logger.debug(msg, *args)


def _no_delay(client: mqtt.Client) -> None:
    """TCP_NODELAY on the client's socket: a message goes out when written, not held by Nagle's
    algorithm until the previous segment is acknowledged (paho leaves it off)."""
    sock = client.socket()
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (AttributeError, OSError):  # no socket, or not TCP
        pass


@dataclass(slots=True, eq=False)
class _Msg:
    suffix: str
    topic: str
    payload: bytes
    qos: int
    retain: bool
    t0: float               # clock() when handed to publish()
    internal: bool = False  # status / retained republish made by the publisher itself


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[k]


class MqttPublisher:
    """Delivers ``(suffix, payload, qos, retain)`` to ``<prefix>/<suffix>``; see the module doc.

    ``publish()`` may be called from any thread, before ``start()`` too (the
    messages wait in the queue). ``on_alert(kind, evidence)`` is called with kinds
    ``publish_queue_full``, ``broker_connection_lost`` and
    ``broker_connection_restored``; it must return quickly (it runs on the
    caller's thread for the first kind and on paho's thread for the others).
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
    ) -> None:
        if max_inflight < 1:
            raise ValueError("max_inflight must be >= 1")
        self.config = config
        self.table_id = table_id
        self.version = version
        self.prefix = topics.normalize_prefix(config.prefix, table_id)
        self.client_id = config.client_id or f"shoe-daemon-{table_id}"
        self.status_topic = topics.join(self.prefix, topics.STATUS)
        self._on_alert = on_alert
        self._clock = clock
        self._max_inflight = max_inflight
        self._window = max_inflight
        self._reconnect_delays = (reconnect_min_delay, reconnect_max_delay)
        self._connect_timeout = connect_timeout
        self._v5 = config.protocol != "3.1.1"
        self._pub_props = json_properties(PacketTypes.PUBLISH) if self._v5 else None

        lock = threading.Lock()
        self._cond = threading.Condition(lock)
        # The sender thread waits on its own condition (same lock): woken only when a message waits
        # that no other thread is handing over, not by every acknowledgement.
        self._wake = threading.Condition(lock)
        self._send_lock = threading.Lock()
        self._queue: collections.deque[_Msg] = collections.deque()
        self._inflight: dict[int, _Msg] = {}          # id(msg) -> msg, in send order
        self._mid_to_key: dict[int, int] = {}         # paho mid -> id(msg)
        self._early_acks: dict[int, Any] = {}         # acks that beat the mid's recording
        self._publishing = False
        self._handing_over = False                     # a thread is in _hand_over's loop
        self._topics: dict[str, str] = {}              # suffix -> full topic
        self._epoch = 0
        self._retained: dict[str, bytes] = {}         # suffix -> last retained payload
        self._connected = False
        self._started = False
        self._stopping = False
        self._closed = False
        self._sender_exit = False
        self._sender: threading.Thread | None = None
        self._client: _Client | None = None
        self._offline_msg: _Msg | None = None

        # Link alerts and operator messages.
        self._link_alerted = False
        self._down_since: float | None = None
        self._last_logged_error: str | None = None
        self._attempt_reported = False   # the current connect attempt's failure is already told
        self._overflowing = False
        self._episode_dropped = 0

        # Counters.
        self._accepted = 0
        self._dropped = 0
        self._sent = 0
        self._acked = 0
        self._resent = 0
        self._rejected = 0
        self._connects = 0
        self._connect_failures = 0
        self._last_error: str | None = None
        self._latencies: collections.deque[float] = collections.deque(maxlen=LATENCY_SAMPLES)
        self._latency_last: float | None = None

    # -- public API -----------------------------------------------------------------
    def start(self) -> None:
        """Connect in the background; returns at once. A broker that is down is retried."""
        if self._started:
            raise RuntimeError("MqttPublisher.start() called twice")
        if self.config.host is None:
            raise ValueError("[mqtt] host is not set: start the embedded broker and give its address")
        client = self._make_client()
        self._client = client
        self._started = True
        self._sender = threading.Thread(target=self._sender_main, name=f"mqtt-sender-{self.table_id}", daemon=True)
        self._sender.start()
        if self._v5:
            client.connect_async(self.config.host, self.config.port, self.config.keepalive, clean_start=True)
        else:
            client.connect_async(self.config.host, self.config.port, self.config.keepalive)
        client.loop_start()
        log.info(
            "MQTT publisher for %s -> %s:%d (MQTT %s, client id %s%s)",
            self.prefix, self.config.host, self.config.port, self.config.protocol, self.client_id,
            ", TLS" if self.config.tls_ca else "",
        )

    def publish(self, topic_suffix: str, payload: bytes | str, qos: int = 1, retain: bool = False) -> bool:
        """Queue one message; never blocks. False when it was dropped (queue full, or stopped).

        Raises ValueError for a malformed suffix or QoS (a programming error).
        """
        if qos not in (0, 1, 2):
            raise ValueError(f"qos must be 0, 1 or 2, not {qos!r}")
        if topic_suffix == topics.STATUS:
            raise ValueError("the status topic is the publisher's own")
        topic = self._topics.get(topic_suffix)
        if topic is None:  # checked once per suffix
            topic = self._topics[topic_suffix] = topics.join(self.prefix, topic_suffix)
        data = payload.encode() if isinstance(payload, str) else bytes(payload)
        msg = _Msg(topic_suffix, topic, data, qos, bool(retain), self._clock())
        alert: dict[str, Any] | None = None
        with self._cond:
            if self._closed or self._stopping:
                self._dropped += 1
                return False
            self._accepted += 1
            if retain:
                # The retained state converges on the latest payload even if this one is dropped.
                if data:
                    self._retained[topic_suffix] = data
                else:
                    self._retained.pop(topic_suffix, None)
            accepted = True
            hand_over = False
            if len(self._queue) >= self.config.queue_max:
                if self.config.queue_full == "drop_newest":
                    self._count_drop_locked()
                    accepted = False
                else:
                    while len(self._queue) >= self.config.queue_max and self._drop_oldest_locked():
                        pass
                if not self._overflowing:
                    self._overflowing = True
                    alert = {
                        "policy": self.config.queue_full,
                        "queue_max": self.config.queue_max,
                        "dropped_total": self._dropped,
                        "connected": self._connected,
                    }
            if accepted:
                self._queue.append(msg)
                # The thread handing over checks the queue again (under this lock) before it stops.
                hand_over = not self._handing_over
        if hand_over and not self._hand_over(blocking=False):
            with self._cond:  # the thread handing over now takes this one too (see _hand_over)
                self._wake.notify()
        if alert is not None:
            log.error(
                "MQTT publish queue full (%d messages, broker %s): dropping the %s messages",
                self.config.queue_max, "connected" if alert["connected"] else "away",
                "oldest" if self.config.queue_full == "drop_oldest" else "newest",
            )
            self._alert("publish_queue_full", alert)
        return accepted

    def stop(self, timeout: float = 5.0) -> None:
        """Publish ``offline`` (retained), flush what can be within ``timeout``, disconnect cleanly."""
        deadline = time.monotonic() + max(0.0, timeout)
        with self._cond:
            if self._closed or self._stopping:
                return
            self._stopping = True
            if not self._started:
                self._closed = True
                return
            self._offline_msg = self._status_msg("offline")
            self._queue.append(self._offline_msg)
            self._wake.notify()
            while self._queue or self._inflight:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._cond.wait(remaining)
            undelivered = len(self._queue) + len(self._inflight)
            self._closed = True
            self._sender_exit = True
            self._wake.notify()
        if self._sender is not None:
            self._sender.join(timeout=2.0)
        client = self._client
        if client is not None:
            try:
                client.disconnect()
            except Exception:  # noqa: BLE001 - shutting down whatever the state
                log.debug("disconnect failed", exc_info=True)
            # loop_stop() joins paho's thread, which may sit in a blocking connect:
            # join it from a helper so stop() keeps its deadline.
            stopper = threading.Thread(target=client.loop_stop, name="mqtt-loop-stop", daemon=True)
            stopper.start()
            stopper.join(max(0.5, deadline - time.monotonic()))
        if undelivered:
            log.warning("MQTT publisher stopped with %d messages not delivered", undelivered)
        else:
            log.info("MQTT publisher stopped; everything delivered")

    def stats(self) -> dict[str, Any]:
        with self._cond:
            lat = sorted(self._latencies)
            return {
                "connected": self._connected,
                "queue_depth": len(self._queue) + len(self._inflight),
                "queued": len(self._queue),
                "inflight": len(self._inflight),
                "published": self._accepted,
                "dropped": self._dropped,
                "sent": self._sent,
                "acked": self._acked,
                "resent": self._resent,
                "rejected": self._rejected,
                "connects": self._connects,
                "reconnects": max(0, self._connects - 1),
                "connect_failures": self._connect_failures,
                "last_error": self._last_error,
                "latency_ms_last": self._latency_last,
                "latency_ms_p50": _percentile(lat, 0.50) if lat else None,
                "latency_ms_p99": _percentile(lat, 0.99) if lat else None,
            }

    @property
    def connected(self) -> bool:
        return self._connected

    @property
    def backlog(self) -> int:
        """Messages waiting for their turn (not yet handed to paho); cheap, for flow control."""
        return len(self._queue)

    # -- queue helpers (call with _cond held) ------------------------------------------
    def _count_drop_locked(self) -> None:
        self._dropped += 1
        self._episode_dropped += 1

    def _drop_oldest_locked(self) -> bool:
        for i, m in enumerate(self._queue):
            if not m.internal:
                del self._queue[i]
                self._count_drop_locked()
                return True
        return False

    def _status_msg(self, state: str) -> _Msg:
        return _Msg(
            topics.STATUS, self.status_topic, status_payload(state, self.table_id, self.version),
            1, True, self._clock(), internal=True,
        )

    def _requeue_inflight_locked(self) -> None:
        """Unacknowledged messages go back to the head of the queue, in send order."""
        if not self._inflight:
            return
        back = [m for m in self._inflight.values() if not (m.internal and m.suffix == topics.STATUS
                                                           and m is not self._offline_msg)]
        self._inflight.clear()
        self._resent += len(back)
        self._queue.extendleft(reversed(back))

    def _forget_mids_locked(self) -> None:
        self._mid_to_key.clear()
        self._early_acks.clear()

    def _ack_locked(self, key: int, reason: Any) -> str | None:
        msg = self._inflight.pop(key, None)
        if msg is None:
            return None
        self._cond.notify_all()
        if getattr(reason, "is_failure", False):
            self._rejected += 1
            return f"broker rejected the message on {msg.topic}: {reason}"
        self._acked += 1
        if not msg.internal:
            ms = (self._clock() - msg.t0) * 1000.0
            self._latency_last = ms
            self._latencies.append(ms)
        return None

    # -- the sender thread ---------------------------------------------------------------
    def _can_send_locked(self) -> bool:
        return self._connected and bool(self._queue) and len(self._inflight) < self._window

    def _sender_main(self) -> None:
        while True:
            with self._cond:
                while not self._sender_exit and not self._can_send_locked():
                    self._wake.wait()
                if self._sender_exit:
                    return
            self._hand_over(blocking=True)

    def _hand_over(self, *, blocking: bool) -> bool:
        """Hand the head of the queue to paho while connected and the window allows.

        Run by the sender thread, and first by ``publish()`` itself (``blocking`` False: False
        when another thread holds the hand-over, which then takes this message too). With
        ``direct_writes`` paho writes each message to the socket in the calling thread.
        """
        if not self._send_lock.acquire(blocking):
            return False
        try:
            while True:
                with self._cond:
                    if self._sender_exit or not self._can_send_locked():
                        self._handing_over = False
                        return True
                    self._handing_over = True
                    msg = self._queue.popleft()
                    epoch = self._epoch
                    key = id(msg)
                    if msg.qos > 0:
                        self._inflight[key] = msg
                    self._publishing = True
                    if self._overflowing and len(self._queue) <= self.config.queue_max // 2:
                        self._overflowing = False
                        log.warning(
                            "MQTT publish queue drained below %d; %d messages were dropped in the episode",
                            self.config.queue_max // 2, self._episode_dropped,
                        )
                        self._episode_dropped = 0
                problem = None
                info = None
                try:
                    info = self._client.publish(
                        msg.topic, msg.payload, msg.qos, msg.retain,
                        properties=self._pub_props if msg.payload else None,
                    )
                except Exception as exc:  # noqa: BLE001 - e.g. payload too large: drop, never loop
                    problem = f"cannot publish on {msg.topic}: {exc}"
                with self._cond:
                    self._publishing = False
                    if problem is not None:
                        self._inflight.pop(key, None)
                        self._rejected += 1
                        self._cond.notify_all()
                    else:
                        self._sent += 1
                        if msg.qos == 0:
                            if info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS:
                                self._acked += 1
                            else:
                                self._dropped += 1   # QoS 0 is at-most-once by definition
                        elif epoch == self._epoch and key in self._inflight:
                            early = self._early_acks.pop(info.mid, None)
                            if early is not None:
                                problem = self._ack_locked(key, early)
                            else:
                                self._mid_to_key[info.mid] = key
                        # else: the link dropped meanwhile; the message is back in the
                        # queue and paho's copy is dropped on the next connect.
                    self._early_acks.clear()
                if problem:
                    log.error("%s", problem)
        finally:
            if self._handing_over:  # an exception
                with self._cond:
                    self._handing_over = False
            self._send_lock.release()

    # -- paho callbacks (paho's thread: never raise) ---------------------------------------
    def _make_client(self) -> _Client:
        kwargs: dict[str, Any] = {}
        if not self._v5:
            kwargs["clean_session"] = True
        client = _Client(
            CallbackAPIVersion.VERSION2,
            client_id=self.client_id,
            protocol=paho_protocol(self.config),
            reconnect_on_failure=True,
            **kwargs,
        )
        client.suppress_exceptions = True
        client.logger = _PahoLog()
        client.direct_writes = not self.config.tls_ca
        configure_client(client, self.config)
        client.will_set(
            self.status_topic,
            status_payload("offline", self.table_id, self.version),
            qos=1,
            retain=True,
            properties=json_properties(PacketTypes.WILLMESSAGE) if self._v5 else None,
        )
        client.reconnect_delay_set(*self._reconnect_delays)
        client.connect_timeout = self._connect_timeout
        client.max_inflight_messages_set(0)   # our window bounds it
        client.max_queued_messages_set(0)     # our queue bounds it
        client.on_connect = self._on_connect
        client.on_connect_fail = self._on_connect_fail
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        return client

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        try:
            if getattr(reason_code, "is_failure", False):
                self._attempt_reported = True
                self._connect_failed(self._refusal_text(reason_code))
                return
            _no_delay(client)
            with self._send_lock:
                client.drop_out_messages()
                with self._cond:
                    self._epoch += 1
                    self._requeue_inflight_locked()
                    self._forget_mids_locked()
                    window = self._max_inflight
                    receive_max = getattr(properties, "ReceiveMaximum", None) if properties is not None else None
                    if receive_max:
                        window = max(1, min(window, int(receive_max)))
                    self._window = window
                    self._queue_connect_messages_locked()
                    self._connected = True
                    self._connects += 1
                    restored = self._link_alerted and not self._stopping
                    self._link_alerted = False
                    down_s = None if self._down_since is None else round(self._clock() - self._down_since, 3)
                    self._down_since = None
                    waiting = len(self._queue)
                    self._last_logged_error = None
                    self._cond.notify_all()
                    self._wake.notify()
            log.info(
                "connected to MQTT broker %s:%d (MQTT %s); %d messages to send",
                self.config.host, self.config.port, self.config.protocol, waiting,
            )
            if restored:
                self._alert("broker_connection_restored", {
                    "broker": f"{self.config.host}:{self.config.port}",
                    "down_s": down_s,
                    "queued": waiting,
                })
        except Exception:  # noqa: BLE001
            log.exception("MQTT on_connect failed")

    def _queue_connect_messages_locked(self) -> None:
        """``online`` first, the backlog, then retained state the backlog does not carry."""
        offline = self._offline_msg
        if offline is not None:
            try:
                self._queue.remove(offline)
            except ValueError:
                offline = None
        backlog = {m.suffix for m in self._queue if m.retain}
        for suffix, payload in self._retained.items():
            if suffix not in backlog:
                self._queue.append(_Msg(
                    suffix, topics.join(self.prefix, suffix), payload, 1, True, self._clock(), internal=True,
                ))
        self._queue.appendleft(self._status_msg("online"))
        if offline is not None:
            self._queue.append(offline)

    def _on_connect_fail(self, client, userdata) -> None:
        try:
            err = getattr(client, "last_connect_error", None)
            self._connect_failed(
                f"cannot connect to MQTT broker {self.config.host}:{self.config.port}: {err or 'connection failed'}"
            )
        except Exception:  # noqa: BLE001
            log.exception("MQTT on_connect_fail failed")

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        try:
            with self._cond:
                was_connected = self._connected
                self._connected = False
                self._epoch += 1
                self._requeue_inflight_locked()
                self._forget_mids_locked()
                stopping = self._stopping
                alert = None
                if was_connected and not stopping:
                    self._down_since = self._clock()
                    if not self._link_alerted:
                        self._link_alerted = True
                        alert = {
                            "broker": f"{self.config.host}:{self.config.port}",
                            "reason": str(reason_code),
                            "queued": len(self._queue),
                        }
                    self._last_error = f"connection lost: {reason_code}"
                waiting = len(self._queue)
                self._cond.notify_all()
            reported, self._attempt_reported = self._attempt_reported, False
            if not was_connected and not stopping and not reported:
                # Closed before any CONNACK: e.g. a TLS broker rejecting our certificate.
                hint = "; check tls_cert / tls_key and the broker's CA" if self.config.tls_ca else ""
                self._connect_failed(
                    f"MQTT broker {self.config.host}:{self.config.port} closed the connection before"
                    f" accepting it ({reason_code}){hint}"
                )
            if was_connected and not stopping:
                log.warning(
                    "lost the MQTT broker %s:%d (%s); %d messages wait for the reconnect",
                    self.config.host, self.config.port, reason_code, waiting,
                )
            if alert is not None:
                self._alert("broker_connection_lost", alert)
        except Exception:  # noqa: BLE001
            log.exception("MQTT on_disconnect failed")

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        try:
            with self._cond:
                key = self._mid_to_key.pop(mid, None)
                if key is None:
                    if self._publishing:
                        self._early_acks[mid] = reason_code
                    return
                problem = self._ack_locked(key, reason_code)
                more = self._can_send_locked() and not self._handing_over
            if problem:
                log.error("%s", problem)
            # The window has room again: hand the next messages over from here (paho's thread,
            # which writes them at once) rather than waking the sender thread for each ack.
            if more and not self._hand_over(blocking=False):
                with self._cond:
                    self._wake.notify()
        except Exception:  # noqa: BLE001
            log.exception("MQTT on_publish failed")

    # -- operator messages and alerts --------------------------------------------------------
    def _refusal_text(self, reason_code: Any) -> str:
        value = getattr(reason_code, "value", None)
        text = (
            f"MQTT broker {self.config.host}:{self.config.port} refused the connection:"
            f" {reason_code} (reason code {value})"
        )
        hint = _HINTS.get(value)
        return f"{text}; {hint}" if hint else text

    def _connect_failed(self, message: str) -> None:
        alert = None
        with self._cond:
            self._connect_failures += 1
            self._last_error = message
            if not self._link_alerted and not self._stopping:
                self._link_alerted = True
                if self._down_since is None:
                    self._down_since = self._clock()
                alert = {
                    "broker": f"{self.config.host}:{self.config.port}",
                    "reason": message,
                    "queued": len(self._queue),
                }
            repeat = message == self._last_logged_error
            self._last_logged_error = message
            failures = self._connect_failures
        if repeat:
            log.debug("%s (attempt %d; retrying with back-off)", message, failures)
        else:
            log.error("%s; retrying with back-off", message)
        if alert is not None:
            self._alert("broker_connection_lost", alert)

    def _alert(self, kind: str, evidence: dict[str, Any]) -> None:
        if self._on_alert is None:
            return
        try:
            self._on_alert(kind, evidence)
        except Exception:  # noqa: BLE001 - the hook is the daemon's; never break delivery
            log.exception("MQTT alert hook failed for %s", kind)
