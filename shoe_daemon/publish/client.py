"""The paho client on an asyncio loop, through paho's public external-loop API only.

One ``PahoLink`` owns one ``paho.mqtt.client.Client`` and drives it from one
asyncio loop (the daemon's, or the publisher's own loop thread):

* reading: ``loop.add_reader(client.socket(), ...)`` calls ``loop_read()``;
* writing: paho writes a packet from ``publish()`` at once when no callback is
  running (no ``on_socket_register_write`` is set: that is paho's own rule), so
  a message published on the loop's thread goes to the socket in that call, with
  TCP_NODELAY; what is left (a full socket, packets queued inside a callback) is
  written by ``loop_write()`` right after the read that queued it, or from
  ``loop.add_writer`` while ``want_write()`` says so;
* keep-alive: ``loop_misc()`` once a second;
* connecting: ``reconnect()`` (DNS, TCP, TLS handshake: blocking, up to
  ``connect_timeout``) runs in a short-lived thread, so that a broker that is
  away never holds the loop; the loop takes the socket over when it returns.
  Retries back off from ``reconnect_min_delay`` doubling to ``reconnect_max_delay``.

Every call into paho and every paho callback that matters happens on the loop's
thread (a callback paho makes from the connecting thread is only noted there), so
there is no lock between this module and paho's own. The owner gets events
through a ``LinkHandler``: ``link_up`` / ``link_failed`` once per attempt,
``link_down`` after a ``link_up``, ``acked`` per acknowledgement, and ``pump``
after every read (the window may have room again).
"""

from __future__ import annotations

import asyncio
import logging
import select
import socket
import ssl
import threading
import time
from typing import Any, Protocol

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from shoe_daemon.config import MqttConfig

log = logging.getLogger("shoe_daemon.mqtt")

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

MISC_INTERVAL = 1.0   # s between two loop_misc() calls (keep-alive), as paho's own loop does
_TCP_CORK = getattr(socket, "TCP_CORK", None)   # Linux


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
    """MQTT 5 properties saying the payload is UTF-8 JSON (packed once: see _PackedOnce)."""
    props = _PackedOnce(packet_type)
    props.PayloadFormatIndicator = 1
    props.ContentType = "application/json"
    return props


class _PackedOnce(Properties):
    """Properties whose public ``pack()`` is computed on first use and kept (set them before).
    paho packs a message's properties on every publish: 40 us here, as much as the rest of the
    message; these never change."""

    def pack(self) -> bytes:
        packed = self.__dict__.get("_packed_once")
        if packed is None:
            packed = super().pack()
            object.__setattr__(self, "_packed_once", packed)   # Properties.__setattr__ takes property names only
        return packed


class LinkHandler(Protocol):
    def link_up(self, receive_max: int | None) -> None: ...
    def link_failed(self, message: str) -> None: ...
    def link_down(self, reason: str) -> None: ...
    def acked(self, mid: int, failure: str | None) -> None: ...
    def pump(self) -> None: ...


class _Attempt:
    """One connection attempt: ``reconnect()`` in a thread of its own."""

    __slots__ = ("thread", "error", "lost", "handled")

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None
        self.lost: str | None = None       # paho closed the new socket while connecting
        self.handled = False


class PahoLink:
    """See the module doc. Create it anywhere; everything else runs on ``loop``'s thread, except
    ``start()`` (any thread)."""

    def __init__(self, config: MqttConfig, *, client_id: str, will_topic: str, will_payload: bytes,
                 loop: asyncio.AbstractEventLoop, handler: LinkHandler, reconnect_min_delay: float = 1.0,
                 reconnect_max_delay: float = 30.0, connect_timeout: float = 5.0) -> None:
        self.config = config
        self.broker = f"{config.host}:{config.port}"
        self._loop = loop
        self._handler = handler
        self._delays = (reconnect_min_delay, reconnect_max_delay)
        self._delay = reconnect_min_delay
        self._v5 = config.protocol != "3.1.1"
        self._no_cork = bool(config.tls_ca) or _TCP_CORK is None   # TLS records: no cork
        self._props = json_properties(PacketTypes.PUBLISH) if self._v5 else None
        self._up = False
        self._closing = False
        self._reported = False               # this attempt's failure was told already
        self._attempt: _Attempt | None = None
        self._retry: asyncio.TimerHandle | None = None
        self._misc: asyncio.TimerHandle | None = None
        self._reader: Any = None             # the socket registered with the loop
        self._writer = False
        self._turn = False                   # a message was written in this turn of the loop
        self._corked = False
        self._thread_id: int | None = None   # the loop's thread, known from start()'s first callback

        kwargs: dict[str, Any] = {} if self._v5 else {"clean_session": True}
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho_protocol(config),
                             **kwargs)
        client.suppress_exceptions = True
        if logging.getLogger("shoe_daemon.mqtt.paho").isEnabledFor(logging.DEBUG):
            client.enable_logger(logging.getLogger("shoe_daemon.mqtt.paho"))
        configure_client(client, config)
        client.will_set(will_topic, will_payload, qos=1, retain=True,
                        properties=json_properties(PacketTypes.WILLMESSAGE) if self._v5 else None)
        client.connect_timeout = connect_timeout
        client.max_inflight_messages_set(0)   # the delivery queue's window bounds it
        client.max_queued_messages_set(0)     # the delivery queue bounds it
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_socket_close = self._on_socket_close
        if self._v5:
            client.connect_async(config.host, config.port, config.keepalive, clean_start=True)
        else:
            client.connect_async(config.host, config.port, config.keepalive)
        self.client = client

    # -- the owner's side (loop thread) -------------------------------------------------------
    @property
    def up(self) -> bool:
        return self._up

    def start(self, thread_id: int | None = None) -> None:
        """Connect in the background (any thread). ``thread_id``: the loop's thread, when known."""
        if thread_id is not None:
            self._thread_id = thread_id
        self._loop.call_soon_threadsafe(self._first_attempt)

    def publish(self, topic: str, payload: bytes, qos: int, retain: bool) -> tuple[int, bool]:
        """Hand one message to paho, which writes it to the socket at once. Returns (mid, written
        or queued to be); raises ValueError for what paho refuses (for example too large).

        The first message of a turn of the loop leaves at once; the ones after it in the same turn
        are held (TCP_CORK) and leave together in as few segments as they fill, when the turn ends,
        or before when the window is full (``read_now``): one wake-up of the broker per batch
        instead of one per message, and no wait for the first."""
        if self._turn:
            if not self._corked and self._reader is not None and not self._no_cork:
                self._cork(True)
        elif self._reader is not None:
            self._turn = True
            self._loop.call_soon(self._end_turn)
        info = self.client.publish(topic, payload, qos, retain, properties=self._props if payload else None)
        return info.mid, info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS

    def uncork(self) -> None:
        """Send what the cork holds, now."""
        if self._corked:
            self._cork(False)

    def _cork(self, on: bool) -> None:
        self._corked = on
        try:
            self._reader.setsockopt(socket.IPPROTO_TCP, _TCP_CORK, 1 if on else 0)
        except (AttributeError, OSError):
            self._corked = False

    def _end_turn(self) -> None:
        self._turn = False
        self.uncork()

    def read_now(self) -> None:
        """Read what the broker sent (acknowledgements) now, without waiting for the loop's next
        turn: while the loop is busy with a batch of events, the window refills from here."""
        if self._reader is None:
            return
        self.uncork()   # the broker acknowledges what it has received
        client = self.client
        try:
            client.loop_read()
            sock = client.socket()
            pending = getattr(sock, "pending", None)
            while pending is not None and pending() and client.socket() is sock:
                client.loop_read()
        except Exception:  # noqa: BLE001
            log.exception("MQTT read failed")

    def flush(self) -> None:
        """Write what paho holds; keep a writer on the loop while the socket does not take it all."""
        client = self.client
        if client.want_write():
            client.loop_write()
        self._sync_writer()

    def drain(self, deadline: float, done) -> None:
        """Until ``done()`` or ``deadline`` (time.monotonic()): serve the socket in this thread,
        without the loop (at stop, when the loop may not run again). Finishes a connection attempt
        under way; starts no new one."""
        self._closing = True
        self._cancel_retry()
        client = self.client
        while not done():
            self._end_turn()   # the loop does not turn meanwhile: nothing stays corked
            left = deadline - time.monotonic()
            if left <= 0:
                return
            attempt = self._attempt
            if attempt is not None:
                attempt.thread.join(left)
                if attempt.thread.is_alive():
                    return
                self._attempt_done(attempt)
                continue
            sock = client.socket()
            if sock is None:
                return                       # down, and no attempt: nothing more can go out
            wlist = [sock] if client.want_write() else []
            pending = getattr(sock, "pending", None)
            if pending is not None and pending():
                readable = [sock]
            else:
                try:
                    readable, writable, _ = select.select([sock], wlist, [], min(left, MISC_INTERVAL))
                except (OSError, ValueError):
                    return
                if writable:
                    self._writable()
            if readable:
                self._readable()

    def close(self) -> None:
        """Disconnect cleanly (DISCONNECT: no Last Will) and let go of the loop."""
        self._closing = True
        self._cancel_retry()
        self._end_turn()
        client = self.client
        if client.socket() is not None:
            try:
                client.disconnect()
                self.flush()
            except Exception:  # noqa: BLE001 - shutting down whatever the state
                log.debug("MQTT disconnect failed", exc_info=True)
        self._unregister()
        if self._misc is not None:
            self._misc.cancel()
            self._misc = None
        self._up = False

    def on_loop_thread(self) -> bool:
        return threading.get_ident() == self._thread_id

    # -- connecting ----------------------------------------------------------------------------
    def _first_attempt(self) -> None:
        self._thread_id = threading.get_ident()
        self._connect()

    def _connect(self) -> None:
        self._retry = None
        if self._closing or self._attempt is not None or self.client.socket() is not None:
            return
        attempt = _Attempt()
        self._attempt = attempt
        self._reported = False
        attempt.thread = threading.Thread(target=self._connect_blocking, args=(attempt,),
                                          name="mqtt-connect", daemon=True)
        attempt.thread.start()

    def _connect_blocking(self, attempt: _Attempt) -> None:
        """The connecting thread: DNS, TCP, TLS and the CONNECT packet; the loop takes over after."""
        try:
            self.client.reconnect()
        except Exception as exc:  # noqa: BLE001 - OSError mostly; whatever it is, retried
            attempt.error = exc
        try:
            self._loop.call_soon_threadsafe(self._attempt_done, attempt)
        except RuntimeError:   # the loop is closed: the publisher stopped meanwhile
            pass

    def _attempt_done(self, attempt: _Attempt) -> None:
        if attempt.handled:
            return
        attempt.handled = True
        self._attempt = None
        client = self.client
        sock = client.socket()
        if self._closing:
            if sock is not None and attempt.error is None and self._reader is None:
                self._register(sock)   # drain() may still deliver over it
            elif attempt.error is not None:
                self._fail(f"cannot connect to MQTT broker {self.broker}: {attempt.error}")
            return
        if attempt.error is not None:
            self._fail(f"cannot connect to MQTT broker {self.broker}: {attempt.error}")
            self._schedule_retry()
        elif sock is None:
            if not self._reported:
                self._fail(self._closed_early_text(attempt.lost or "connection lost"))
            self._schedule_retry()
        else:
            self._register(sock)

    def _register(self, sock: Any) -> None:
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)   # paho leaves Nagle on
        except (AttributeError, OSError):
            pass
        self._loop.add_reader(sock, self._readable)
        self._reader = sock
        self.flush()
        if self._misc is None:
            self._misc = self._loop.call_later(MISC_INTERVAL, self._misc_tick)

    def _unregister(self) -> None:
        sock = self._reader
        if sock is None:
            return
        self._reader = None
        self._corked = False
        try:
            self._loop.remove_reader(sock)
            if self._writer:
                self._loop.remove_writer(sock)
        except (ValueError, OSError, RuntimeError):   # closed socket or closed loop
            pass
        self._writer = False

    def _schedule_retry(self) -> None:
        if self._closing or self._retry is not None or self._attempt is not None:
            return
        delay = self._delay
        self._delay = min(self._delay * 2, self._delays[1])
        self._retry = self._loop.call_later(delay, self._connect)

    def _cancel_retry(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None

    def _fail(self, message: str) -> None:
        self._reported = True
        self._handler.link_failed(message)

    def _closed_early_text(self, reason: str) -> str:
        hint = "; check tls_cert / tls_key and the broker's CA" if self.config.tls_ca else ""
        return f"MQTT broker {self.broker} closed the connection before accepting it ({reason}){hint}"

    def refusal_text(self, reason_code: Any) -> str:
        value = getattr(reason_code, "value", None)
        text = f"MQTT broker {self.broker} refused the connection: {reason_code} (reason code {value})"
        hint = _HINTS.get(value)
        return f"{text}; {hint}" if hint else text

    # -- the socket on the loop ----------------------------------------------------------------
    def _readable(self) -> None:
        self.read_now()   # (TLS: bytes already decrypted do not wake the selector: read them too)
        self._handler.pump()
        self._end_turn()  # what the acks let out goes now: the next callback's first message goes at once
        self.flush()

    def _writable(self) -> None:
        try:
            self.client.loop_write()
        except Exception:  # noqa: BLE001
            log.exception("MQTT write failed")
        self._sync_writer()

    def _sync_writer(self) -> None:
        sock = self._reader
        want = sock is not None and self.client.want_write()
        if want and not self._writer:
            self._loop.add_writer(sock, self._writable)
            self._writer = True
        elif not want and self._writer:
            self._writer = False
            if sock is not None:
                self._loop.remove_writer(sock)

    def _misc_tick(self) -> None:
        self._misc = None
        if self.client.socket() is None:
            return
        try:
            self.client.loop_misc()
        except Exception:  # noqa: BLE001
            log.exception("MQTT keep-alive failed")
        self.flush()
        if self.client.socket() is not None and not self._closing:
            self._misc = self._loop.call_later(MISC_INTERVAL, self._misc_tick)

    # -- paho callbacks (never raise) ----------------------------------------------------------
    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        try:
            if getattr(reason_code, "is_failure", False):
                self._fail(self.refusal_text(reason_code))
                return
            client.drop_out_messages()   # the delivery queue resends; paho's copies would go twice
            self._up = True
            self._reported = True
            self._delay = self._delays[0]
            receive_max = getattr(properties, "ReceiveMaximum", None) if properties is not None else None
            self._handler.link_up(int(receive_max) if receive_max else None)
        except Exception:  # noqa: BLE001
            log.exception("MQTT on_connect failed")

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        try:
            attempt = self._attempt
            if attempt is not None and not self.on_loop_thread():
                attempt.lost = str(reason_code)   # while connecting: told by _attempt_done
                return
            was_up, self._up = self._up, False
            if was_up:
                self._handler.link_down(str(reason_code))
            elif not self._reported and not self._closing:
                self._fail(self._closed_early_text(str(reason_code)))
            self._schedule_retry()
        except Exception:  # noqa: BLE001
            log.exception("MQTT on_disconnect failed")

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        try:
            self._handler.acked(mid, str(reason_code) if reason_code.is_failure else None)
        except Exception:  # noqa: BLE001
            log.exception("MQTT on_publish failed")

    def _on_socket_close(self, client, userdata, sock) -> None:
        if sock is self._reader:
            self._unregister()
