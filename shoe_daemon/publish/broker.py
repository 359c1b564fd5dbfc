"""The embedded MQTT broker: displays on the table PC work with no Mosquitto installed.

With no ``[mqtt] host`` the daemon starts this broker on 127.0.0.1 and publishes to
it. It is amqtt (pure Python, asyncio) run in its own thread with its own event
loop, so it does not depend on the caller's loop. Loopback only.

Access: one *writer* (user ``shoe-daemon``, with a random password made per start and
handed to the daemon's publisher by :meth:`EmbeddedBroker.client_config`) may publish
under the protected topics (``protected``, default every topic; the daemon passes
``<prefix>/#``). Anyone else — displays, anonymous or not — reads only: their PUBLISH
there is dropped, and a CONNECT whose Last Will would land there is refused (amqtt
sends wills without a topic check). A wrong writer password is refused. Displays need
no credentials (the browser display connects anonymously over websockets).

Limits (docs/mqtt.md): amqtt speaks MQTT 3.1.1 only, so clients of the embedded
broker (the publisher included: use :meth:`EmbeddedBroker.client_config`) must use
3.1.1; it keeps retained messages in memory only; for a network-facing broker use
Mosquitto.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("shoe_daemon.broker")

PROTOCOL = "3.1.1"   # what amqtt speaks
WRITER = "shoe-daemon"
DRAIN_TIMEOUT = 2.0  # s: at most this long at stop for the broker to hand on what it received
# s: the broadcast queue must stay empty this long at stop: a client's last packets may be read but
# not yet queued when it is first seen empty (a daemon stopped just after its `offline` status: amqtt
# logged "1 messages not broadcasted", tests/cli/test_run.py on a fresh clone, session 13).
DRAIN_SETTLE = 0.1


def topic_matches(topic: str, pattern: str) -> bool:
    """MQTT filter matching (``+`` one level, ``#`` the rest, the parent level included)."""
    t, p = topic.split("/"), pattern.split("/")
    for i, part in enumerate(p):
        if part == "#":
            return True
        if i >= len(t) or (part != "+" and part != t[i]):
            return False
    return len(t) == len(p)


def _plugins():
    """The writer-only ACL as amqtt plugins (imported with amqtt, in the broker's thread)."""
    from amqtt.contexts import Action
    from amqtt.plugins.base import BaseAuthPlugin, BaseTopicPlugin

    class TableAuth(BaseAuthPlugin):
        @dataclass
        class Config:
            writer: str = WRITER
            password: str = ""
            protected: list[str] = field(default_factory=lambda: ["#"])

        async def authenticate(self, *, session) -> bool:
            cfg = self.context.config
            if session.username == cfg.writer:
                return hmac.compare_digest((session.password or "").encode(), cfg.password.encode())
            if session.username:
                return False       # the writer is the only user: a display connects without one
            will = session.will_topic if session.will_flag else None
            if will is not None and any(topic_matches(will, p) for p in cfg.protected):
                return False       # a Last Will is published without a topic check: not there
            return True

    class TableAcl(BaseTopicPlugin):
        @dataclass
        class Config:
            writer: str = WRITER
            protected: list[str] = field(default_factory=lambda: ["#"])

        async def topic_filtering(self, *, session=None, topic=None, action=None) -> bool:
            if action != Action.PUBLISH:
                return True        # everyone reads
            cfg = self.context.config
            writer = session is not None and session.username == cfg.writer
            return writer or not any(topic_matches(topic or "", p) for p in cfg.protected)

    return TableAuth, TableAcl


_AUTH, _ACL = None, None


def _plugin_classes():
    global _AUTH, _ACL
    if _AUTH is None:
        _AUTH, _ACL = _plugins()
    return _AUTH, _ACL


def __getattr__(name: str):
    # amqtt loads plugins by dotted name: shoe_daemon.publish.broker.TableAuth / .TableAcl
    if name == "TableAuth":
        return _plugin_classes()[0]
    if name == "TableAcl":
        return _plugin_classes()[1]
    raise AttributeError(name)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _broker_class():
    """amqtt's Broker, with retained-message delivery limited to the session's own subscriptions.

    amqtt 0.12 sends, to every client that connects, the retained messages matching
    *any* client's subscriptions (``_handle_client_session`` loops over the whole
    broker's subscription table), so a display gets topics it never subscribed to, and
    a second copy of those it did. The override keeps amqtt's own code and only skips
    filters the session itself has not subscribed to.
    """
    from amqtt.broker import Broker

    class _Broker(Broker):
        async def _publish_retained_messages_for_subscription(self, subscription, session) -> None:
            topic_filter = subscription[0]
            if not any(s is session for s, _qos in self._subscriptions.get(topic_filter, ())):
                return
            await super()._publish_retained_messages_for_subscription(subscription, session)

    return _Broker


class EmbeddedBroker:
    """An amqtt broker on ``host:port`` (and ``ws_port`` for websockets), in a thread."""

    protocol = PROTOCOL

    def __init__(self, host: str = "127.0.0.1", port: int = 1883, ws_port: int | None = None, *,
                 protected: str | list[str] = "#", password: str | None = None) -> None:
        if not _is_loopback(host):
            raise ValueError(
                f"the embedded broker allows anonymous readers and binds to loopback only, not {host!r};"
                " use Mosquitto with credentials for a network-facing broker"
            )
        self.host = host
        self.port = port
        self.ws_port = ws_port
        self.protected = [protected] if isinstance(protected, str) else list(protected)
        # The writer's password: random per start, never written anywhere.
        self.password = password if password is not None else secrets.token_urlsafe(24)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._broker: Any = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._stopped = threading.Event()

    def config_dict(self) -> dict[str, Any]:
        listeners: dict[str, Any] = {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}"}}
        if self.ws_port is not None:
            listeners["ws"] = {"type": "ws", "bind": f"{self.host}:{self.ws_port}"}
        return {
            "listeners": listeners,
            "timeout_disconnect_delay": 0,
            # The writer-only ACL; no $SYS, no packet logging (amqtt's defaults add them).
            "plugins": {
                "shoe_daemon.publish.broker.TableAuth": {"writer": WRITER, "password": self.password,
                                                         "protected": self.protected},
                "shoe_daemon.publish.broker.TableAcl": {"writer": WRITER, "protected": self.protected},
            },
        }

    @property
    def credentials(self) -> tuple[str, str]:
        """(username, password) of the writer."""
        return WRITER, self.password

    def client_config(self, config):
        """``config`` (an MqttConfig) pointed at this broker, in the protocol it speaks, as the writer."""
        return config.model_copy(update={"host": self.host, "port": self.port, "protocol": self.protocol,
                                         "username": WRITER, "password": self.password})

    def start(self, timeout: float = 10.0) -> None:
        """Start listening; returns once the listeners accept, raises if they cannot bind."""
        if self._thread is not None:
            raise RuntimeError("EmbeddedBroker.start() called twice")
        self._thread = threading.Thread(target=self._main, name="mqtt-embedded-broker", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError(f"the embedded MQTT broker did not start within {timeout} s")
        if self._error is not None:
            self._thread.join(timeout)
            self._thread = None
            raise RuntimeError(f"the embedded MQTT broker cannot start on {self.host}:{self.port}: {self._error}")
        log.info(
            "embedded MQTT broker (MQTT %s) on %s:%d%s", self.protocol, self.host, self.port,
            f", websockets on {self.ws_port}" if self.ws_port is not None else "",
        )

    def stop(self, timeout: float = 10.0) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None or self._stopped.is_set():
            return
        try:
            fut = asyncio.run_coroutine_threadsafe(self._shutdown(), loop)
            fut.result(timeout)
        except Exception:  # noqa: BLE001 - stop anyway
            log.warning("embedded MQTT broker did not shut down cleanly", exc_info=True)
        finally:
            if not loop.is_closed():
                loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
            self._stopped.set()

    def __enter__(self) -> EmbeddedBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the broker's thread --------------------------------------------------------------
    async def _startup(self) -> None:
        broker_class = _broker_class()
        self._broker = broker_class(self.config_dict())
        await self._broker.start()

    async def _shutdown(self) -> None:
        if self._broker is not None:
            await self._drain()
            await self._broker.shutdown()

    async def _drain(self, timeout: float = DRAIN_TIMEOUT, settle: float = DRAIN_SETTLE) -> None:
        """Let the broker hand on what it has already received (the daemon's last messages, its
        `offline` status) before it closes: amqtt's shutdown drops what its broadcast queue still
        holds ("N messages not broadcasted"). amqtt has no public way to wait for that queue: it
        must stay empty for ``settle`` seconds, within ``timeout``."""
        queue = getattr(self._broker, "_broadcast_queue", None)
        loop = asyncio.get_running_loop()
        now = loop.time()
        deadline, quiet_since = now + timeout, now
        while queue is not None and loop.time() < deadline:
            if not queue.empty():
                quiet_since = loop.time()
            elif loop.time() - quiet_since >= settle:
                return
            await asyncio.sleep(0.005)

    def _main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            try:
                loop.run_until_complete(self._startup())
            except BaseException as exc:  # noqa: BLE001 - reported by start()
                self._error = exc
                return
            finally:
                self._ready.set()
            loop.run_forever()
        finally:
            try:
                pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            finally:
                loop.close()
