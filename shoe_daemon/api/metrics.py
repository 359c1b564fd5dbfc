"""Prometheus metrics of one daemon, in its own CollectorRegistry (never the global one).

Counted by the service as it works (``journaled()`` from ``Daemon.process``,
``published()`` from ``Daemon.render``); figures that already live elsewhere
(the serial port, the MQTT publisher, the core's link state) are read when
scraped, so they never drift. docs/api.md lists every metric.
"""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from shoe_daemon import __version__
from shoe_daemon.core.events import Kind
from shoe_daemon.game.alerts import AlertKind

CONTENT_TYPE = CONTENT_TYPE_LATEST

# The engine's dealing errors (the other alert kinds are supervisor actions or table-level alerts).
DEALING_ERRORS = frozenset({
    AlertKind.EXTRA_CARD, AlertKind.MISSING_CARD, AlertKind.WRONG_SIDE, AlertKind.OUT_OF_ORDER,
    AlertKind.IMPOSSIBLE_CARD, AlertKind.AFTER_LAST_HAND, AlertKind.CARD_PUSHED_BACK,
})

FAST_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class Metrics:
    def __init__(self, daemon):
        self.daemon = daemon
        self.registry = r = CollectorRegistry()
        self.events = Counter("shoe_events_processed", "Events journaled and handed to the core",
                              ["kind", "source"], registry=r)
        self.cards = Counter("shoe_cards_read", "Cards dealt, by the source that read them (shoe, camera, api, ...)",
                             ["source"], registry=r)
        self.unreadable = Counter("shoe_cards_unreadable", "Cards a source saw but could not read",
                                  ["source"], registry=r)
        self.alerts = Counter("shoe_alerts", "Alerts raised, by kind and severity", ["kind", "severity"], registry=r)
        self.dealing_errors = Counter("shoe_dealing_errors", "Dealing errors raised by the rules engine, by kind",
                                      ["kind"], registry=r)
        self.coups = Counter("shoe_coups_settled", "Coup results published (re-settlements included), by winner",
                             ["winner"], registry=r)
        self.messages = Counter("shoe_messages_published", "Messages the core handed to the publisher, by topic",
                                ["topic"], registry=r)
        self.journal_append = Histogram("shoe_journal_append_seconds",
                                        "Time to append one batch of events to the journal (durable)",
                                        buckets=FAST_BUCKETS, registry=r)
        self.publish = Histogram("shoe_publish_seconds",
                                 "Time to hand one message to the MQTT publisher and the live streams",
                                 buckets=FAST_BUCKETS, registry=r)
        self.requests = Counter("shoe_api_requests", "HTTP requests answered, by method, route and status",
                                ["method", "route", "status"], registry=r)
        self.active_source: str | None = None
        r.register(_Live(self))

    # -- from the service -----------------------------------------------------------
    def journaled(self, batch, seconds: float) -> None:
        self.journal_append.observe(seconds)
        for event in batch:
            self.events.labels(event.kind.value, event.source).inc()
            if event.kind is Kind.CARD_UNREADABLE:
                self.unreadable.labels(event.source).inc()

    def published(self, out, seconds: float) -> None:
        self.publish.observe(seconds)
        self.messages.labels(out.topic).inc()
        payload = out.payload
        if out.topic == "coup/card":   # a card dealt (a refused or queued one is not counted until dealt)
            source = str(payload.get("source"))
            self.cards.labels(source).inc()
            self.active_source = source
        elif out.topic == "alerts/event" and payload.get("action") == "raised":
            alert = payload.get("alert") or {}
            kind = str(alert.get("kind"))
            self.alerts.labels(kind, str(alert.get("severity"))).inc()
            if kind in DEALING_ERRORS:
                self.dealing_errors.labels(kind).inc()
        elif out.topic == "coup/result":
            self.coups.labels(str(payload.get("winner"))).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _Live:
    """Figures read at scrape time from the parts that own them."""

    def __init__(self, metrics: Metrics):
        self.metrics = metrics

    def describe(self):
        return []

    def _camera(self, camera):
        """The overhead camera's figures, when it is enabled."""
        if camera is None:
            return
        s = camera.stats()
        yield GaugeMetricFamily("shoe_camera_connected", "1 while the camera gives frames", value=int(s["connected"]))
        yield CounterMetricFamily("shoe_camera_frames", "Frames read from the camera", value=s["frames"])
        yield CounterMetricFamily("shoe_camera_reconnects", "Times the camera was lost and reopened",
                                  value=s["reconnects"])
        cards = CounterMetricFamily("shoe_camera_cards", "Cards the camera decided, by status (ok, unsure)",
                                    labels=["status"])
        for status, n in sorted(s["cards"].items()):
            cards.add_metric([status], n)
        yield cards
        if s["fps"] is not None:
            yield GaugeMetricFamily("shoe_camera_fps", "Frames a second over the last 64 frames", value=s["fps"])
        lat = GaugeMetricFamily("shoe_camera_recognize_seconds", "Recognition time per frame, recent frames",
                                labels=["quantile"])
        for q, key in (("0.5", "recognize_ms_p50"), ("0.95", "recognize_ms_p95")):
            if s[key] is not None:
                lat.add_metric([q], s[key] / 1000.0)
        yield lat

    def collect(self):
        d = self.metrics.daemon
        info = GaugeMetricFamily("shoe_build_info", "The daemon's version and table", labels=["version", "table_id"])
        info.add_metric([__version__, d.config.table.id], 1)
        yield info
        yield GaugeMetricFamily("shoe_uptime_seconds", "Seconds since the daemon started",
                                value=time.monotonic() - d.started)
        yield GaugeMetricFamily("shoe_ready", "1 when the daemon is ready (docs/api.md /readyz)",
                                value=1 if d.ready.is_set() else 0)
        queue = getattr(d, "_queue", None)
        yield GaugeMetricFamily("shoe_event_queue_depth", "Events waiting for the core",
                                value=queue.qsize() if queue is not None else 0)
        # The serial port of the shoe.
        src = d.source
        port_up = GaugeMetricFamily("shoe_port_connected", "1 while the shoe's serial port is open", labels=["port"])
        reconnects = CounterMetricFamily("shoe_port_reconnects", "Times the shoe's serial port was lost and reopened",
                                         labels=["port"])
        bytes_in = CounterMetricFamily("shoe_port_bytes_in", "Bytes read from the shoe's serial port", labels=["port"])
        if src is not None:
            port = d.config.shoe.port
            port_up.add_metric([port], 1 if src.connected else 0)
            reconnects.add_metric([port], src.reconnects)
            bytes_in.add_metric([port], src.bytes_in)
        yield port_up
        yield reconnects
        yield bytes_in
        # Link state of every card source, as the core knows it.
        link = GaugeMetricFamily("shoe_source_link_up", "1 while a card source's link is up (the core's view)",
                                 labels=["source"])
        active = GaugeMetricFamily("shoe_source_active", "1 for the source of the last card read", labels=["source"])
        table = d.table
        sources = dict(table.sources) if table is not None else {}
        for name, state in sorted(sources.items()):
            link.add_metric([name], 1 if state.get("link") == "up" else 0)
        names = set(sources) | ({self.metrics.active_source} if self.metrics.active_source else set())
        for name in sorted(names):
            active.add_metric([name], 1 if name == self.metrics.active_source else 0)
        yield link
        yield active
        if table is not None:
            by_severity: dict[str, int] = {"info": 0, "warning": 0, "error": 0, "critical": 0}
            for alert in table.active_alerts.values():
                by_severity[alert.get("severity", "warning")] = by_severity.get(alert.get("severity"), 0) + 1
            g = GaugeMetricFamily("shoe_alerts_active", "Active alerts, by severity", labels=["severity"])
            for sev, n in by_severity.items():
                g.add_metric([sev], n)
            yield g
        # The MQTT publisher.
        pub = d.publisher
        if pub is not None:
            s = pub.stats()
            yield GaugeMetricFamily("shoe_mqtt_connected", "1 while connected to the broker",
                                    value=1 if s["connected"] else 0)
            yield GaugeMetricFamily("shoe_mqtt_queue_depth", "Messages queued or in flight to the broker",
                                    value=s["queue_depth"])
            for name, help_text in (("published", "Messages accepted by the publisher"),
                                    ("acked", "Messages acknowledged by the broker"),
                                    ("dropped", "Messages dropped because the queue was full"),
                                    ("resent", "Messages sent again after a reconnect"),
                                    ("reconnects", "Reconnections to the broker")):
                yield CounterMetricFamily(f"shoe_mqtt_{name}", help_text, value=s.get(name) or 0)
            lat = GaugeMetricFamily("shoe_mqtt_publish_latency_seconds",
                                    "Publish-to-acknowledgement latency of recent messages",
                                    labels=["quantile"])
            for q, key in (("0.5", "latency_ms_p50"), ("0.99", "latency_ms_p99"), ("last", "latency_ms_last")):
                if s.get(key) is not None:
                    lat.add_metric([q], s[key] / 1000.0)
            yield lat
        yield from self._camera(d.camera)
        journal = d.journal
        if journal is not None and not journal.closed:
            yield GaugeMetricFamily("shoe_journal_last_seq", "The newest seq in the journal", value=journal.last_seq())


class RequestCounter:
    """ASGI middleware: counts each answered request in ``counter()`` by method, route template
    (``unmatched`` when no route took it) and status."""

    def __init__(self, app, *, counter):
        self.app = app
        self.counter = counter

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = None

        async def send_counted(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.app(scope, receive, send_counted)
        if status is not None:   # the router put the route it chose in the scope
            route = scope.get("route")
            self.counter().labels(scope["method"], getattr(route, "path", "unmatched"), str(status)).inc()
