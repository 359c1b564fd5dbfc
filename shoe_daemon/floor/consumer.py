"""The floor's MQTT client: every table under the prefix, acknowledged after commit.

It subscribes with QoS 1 to ``<prefix>/+/#``; with MQTT 5 and a ``share_group``, to
``$share/<group>/<prefix>/+/#``, so that two or more floor consumers in the group
split the tables' messages between them (the broker gives each message to one
member) and one can die while the others go on. With MQTT 3.1.1 (no shared
subscriptions) or no group there must be one consumer.

Messages are acknowledged by hand (paho's ``manual_ack``), after the ``Writer`` has
committed them: a message the floor received but did not store is never PUBACKed.

Sessions:

- one consumer (no group): a fixed ``client_id`` with a persistent session
  (``session_expiry``, or clean_session false on 3.1.1) makes the broker keep the
  messages published while the floor is down;
- a share group: the default ``session_expiry = 0`` ends a dead member's session at
  once, so the broker stops giving it messages and the others take them all. The
  few it had received and not acknowledged when it died are the hole the gap checker
  sees and fills from the tables' recall (docs/floor.md).
"""

from __future__ import annotations

import logging
import threading

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from .ingest import Incoming, Writer

log = logging.getLogger(__name__)


def subscription(prefix: str, share_group: str, protocol: str) -> str:
    topic = f"{prefix}/+/#"
    if share_group and protocol == "5":
        return f"$share/{share_group}/{topic}"
    return topic


class Consumer:
    def __init__(self, config, writer: Writer, metrics) -> None:
        self.config = config
        self.writer = writer
        self.metrics = metrics
        b = config.broker
        self.v5 = b.protocol == "5"
        self.topic = subscription(config.floor.prefix, config.floor.share_group, b.protocol)
        self.client_id = config.client_id()
        self.persistent = bool(config.floor.client_id) and (config.floor.session_expiry > 0 or not self.v5)
        kwargs = {} if self.v5 else {"clean_session": not self.persistent}
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.client_id,
                                  protocol=mqtt.MQTTv5 if self.v5 else mqtt.MQTTv311,
                                  manual_ack=True, **kwargs)
        if b.username:
            self.client.username_pw_set(b.username, config.broker_password())
        self.client.reconnect_delay_set(0.2, 5.0)
        # The in-flight window: how many unacknowledged messages the broker may send us.
        self.client.max_inflight_messages_set(1000)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe
        # Set on the broker's SUBACK, not when the SUBSCRIBE is sent: until then a table's
        # message is not routed to us (a shared subscription keeps nothing for a group that is
        # not there yet), so the service must not say it is storing every table (READY=1).
        self.subscribed = threading.Event()
        self._subscribe_mid: int | None = None
        self.connects = 0
        self.generation = 0     # +1 per connect: an ack never crosses to a new connection
        self._last_error: str | None = None

    def start(self) -> Consumer:
        b = self.config.broker
        if self.v5:
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = self.config.floor.session_expiry if self.persistent else 0
            props.ReceiveMaximum = 1000
            self.client.connect_async(b.host, b.port, b.keepalive, clean_start=not self.persistent, properties=props)
        else:
            self.client.connect_async(b.host, b.port, b.keepalive)
        self.client.loop_start()
        return self

    def stop(self) -> None:
        try:
            self.client.disconnect()
        finally:
            self.client.loop_stop()
            self.metrics.connected.set(0)

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            msg = f"the broker refused the floor's connection: {reason_code}"
            if msg != self._last_error:
                log.error("%s", msg)
                self._last_error = msg
            return
        self._last_error = None
        self.connects += 1
        self.generation += 1
        self.metrics.connected.set(1)
        log.info("floor consumer %s connected to %s:%s; subscribing to %s", self.client_id,
                 self.config.broker.host, self.config.broker.port, self.topic)
        _result, self._subscribe_mid = client.subscribe(self.topic, qos=1)

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties):
        if mid != self._subscribe_mid:
            return
        refused = [rc for rc in reason_codes if rc.is_failure]
        if refused:     # an ACL without read on the prefix, or shared subscriptions turned off
            log.error("the broker refused the floor's subscription to %s: %s", self.topic, refused[0])
            return
        self.subscribed.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties):
        self.metrics.connected.set(0)
        self.subscribed.clear()
        log.warning("floor consumer %s lost the broker (%s); reconnecting", self.client_id, reason_code)

    def _on_message(self, client, userdata, message):
        mid, qos, generation = message.mid, message.qos, self.generation

        def ack() -> None:
            # A packet id acknowledged on a later connection could name another message:
            # after a reconnect the broker resends what we did not acknowledge instead.
            if qos > 0 and generation == self.generation:
                client.ack(mid, qos)

        self.writer.submit(Incoming(message.topic, bytes(message.payload), ack))
