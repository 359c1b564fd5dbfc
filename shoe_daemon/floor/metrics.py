"""Prometheus metrics of one floor service, in its own CollectorRegistry.

The ingest writer, the consumer and the gap checker count into one ``FloorMetrics``;
the web app serves ``registry`` at ``/metrics``. ``snapshot()`` gives the same
figures as a dict (the benchmark and the page's header read it).
"""

from __future__ import annotations

import threading

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0)


class FloorMetrics:
    def __init__(self) -> None:
        self.registry = r = CollectorRegistry()
        self.messages = Counter("floor_messages", "MQTT messages taken by the floor, by outcome",
                                ["outcome"], registry=r)     # stored | duplicate | rejected | status
        self.coups = Counter("floor_coups_stored", "coup results stored, by origin", ["origin"], registry=r)
        self.alert_events = Counter("floor_alert_events_stored", "alert events stored, by origin", ["origin"],
                                    registry=r)
        self.batches = Counter("floor_batches_committed", "transactions committed by the ingest writer", registry=r)
        self.db_errors = Counter("floor_db_errors", "database errors (the batch is retried)", registry=r)
        self.gaps = Counter("floor_gaps_detected", "gaps in a table's seq", registry=r)
        self.gaps_filled = Counter("floor_gaps_filled", "gaps filled from the table's recall", registry=r)
        self.recall_errors = Counter("floor_recall_errors", "failed recalls over a table's HTTP API", registry=r)
        self.latency = Histogram("floor_ingest_latency_seconds",
                                 "from the message's input time t to its committed row", buckets=LATENCY_BUCKETS,
                                 registry=r)
        self.queue = Gauge("floor_ingest_queue", "messages received and not yet committed", registry=r)
        self.connected = Gauge("floor_broker_connected", "1 while the floor's MQTT client is connected", registry=r)
        self.tables = Gauge("floor_tables", "tables known to the floor", registry=r)
        self.open_gaps = Gauge("floor_gaps_open", "gaps not filled yet", registry=r)
        self._lock = threading.Lock()
        # The recent latencies (the last 100,000-200,000) by stage: "total" from the message's t
        # to its commit, "in_floor" from its receipt by the MQTT client to its commit, "queued"
        # from that receipt to the moment the writer took it (the hand-off between the threads).
        self._series: dict[str, list[float]] = {"total": [], "in_floor": [], "queued": []}

    def observe_latency(self, seconds: float, in_floor: float | None = None, queued: float | None = None) -> None:
        self.latency.observe(seconds)
        with self._lock:
            for name, value in (("total", seconds), ("in_floor", in_floor), ("queued", queued)):
                if value is None:
                    continue
                values = self._series[name]
                values.append(value)
                if len(values) > 200_000:
                    del values[:100_000]

    def latencies(self, which: str = "total") -> list[float]:
        with self._lock:
            return list(self._series[which])

    def value(self, counter, **labels) -> float:
        metric = counter.labels(**labels) if labels else counter
        return metric._value.get()  # prometheus-client's own value holder

    def latency_ms(self, which: str = "total") -> dict:
        """p50 / p99 / max of the recent ingest latencies of one stage (see ``_series``), in ms."""
        values = sorted(self.latencies(which))
        if not values:
            return {"n": 0, "p50": None, "p99": None, "max": None}

        def pct(p: float) -> float:
            return round(values[min(len(values) - 1, int(p / 100 * (len(values) - 1) + 0.5))] * 1000, 2)

        return {"n": len(values), "p50": pct(50), "p99": pct(99), "max": round(values[-1] * 1000, 2)}

    def snapshot(self) -> dict:
        return {
            "stored": self.value(self.messages, outcome="stored"),
            "duplicate": self.value(self.messages, outcome="duplicate"),
            "rejected": self.value(self.messages, outcome="rejected"),
            "status": self.value(self.messages, outcome="status"),
            "batches": self.value(self.batches),
            "db_errors": self.value(self.db_errors),
            "gaps": self.value(self.gaps),
            "gaps_filled": self.value(self.gaps_filled),
            "recall_errors": self.value(self.recall_errors),
            "queue": self.queue._value.get(),
            "connected": bool(self.connected._value.get()),
        }
