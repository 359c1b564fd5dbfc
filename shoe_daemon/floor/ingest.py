"""From MQTT messages to rows: ``decode`` (pure) and the batching ``Writer``.

``decode(prefix, topic, payload)`` turns one message of a table (docs/mqtt.md) into a
``Decoded``: the table, its ``seq`` and what to store (a coup's result, an alert
event, a status change, the newest coup/shoe/alerts state). It raises ``BadMessage``
with the reason for anything that is not a table's message.

The ``Writer`` owns one database connection and one thread. Messages are handed to
it with their acknowledgement callback; it commits them in batches (one transaction
for up to ``batch_max`` messages or ``batch_wait`` seconds) and only then
acknowledges them to the broker, so a floor that dies before a commit gets the
messages again (persistent session) or sees the hole in ``seq`` (the gap checker).
A database error rolls the batch back and retries it: nothing is acknowledged that
is not committed.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import orjson

from .store import VOID_KIND, Store, json_text

log = logging.getLogger(__name__)

STATE_TYPES = {"coup": "coup", "shoe": "shoe", "alerts": "active"}


class BadMessage(ValueError):
    pass


@dataclass
class Decoded:
    table_id: str
    suffix: str
    seq: int | None
    type: str | None
    t: float | None
    payload: dict


@dataclass
class Incoming:
    topic: str
    payload: bytes
    ack: Callable[[], None] | None = None
    received_at: float = field(default_factory=time.time)


def split_topic(prefix: str, topic: str) -> tuple[str, str]:
    head = prefix + "/"
    if not topic.startswith(head):
        raise BadMessage(f"topic {topic!r} is not under {prefix}/")
    table_id, _, suffix = topic[len(head):].partition("/")
    if not table_id or not suffix:
        raise BadMessage(f"topic {topic!r} is not <prefix>/<table>/<suffix>")
    return table_id, suffix


def decode(prefix: str, topic: str, payload: bytes) -> Decoded:
    table_id, suffix = split_topic(prefix, topic)
    try:
        body = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise BadMessage(f"not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise BadMessage("the payload is not a JSON object")
    if body.get("table_id") not in (None, table_id):
        raise BadMessage(f"table_id {body.get('table_id')!r} does not match the topic's {table_id!r}")
    if suffix == "status":
        if body.get("state") not in ("online", "offline"):
            raise BadMessage(f"status without state online/offline: {body.get('state')!r}")
        return Decoded(table_id, suffix, None, "status", None, body)
    seq = body.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
        raise BadMessage(f"no valid seq ({seq!r})")
    t = body.get("t")
    if not isinstance(t, int | float) or isinstance(t, bool):
        t = None
    return Decoded(table_id, suffix, seq, body.get("type"), t, body)


def coup_row(table_id: str, body: dict, *, seq: int | None, source: str, now: float,
             recalled: bool = False) -> dict:
    """A ``coups`` row from a ``coup/result`` payload or a recall record (docs/api.md)."""
    try:
        coup_id = body["coup_id"]
        shoe, coup = int(body["shoe"]), int(body["coup"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BadMessage(f"a coup without coup_id/shoe/coup: {exc}") from exc
    voided = bool(body.get("voided"))
    return {
        "table_id": table_id, "coup_id": coup_id, "revision": int(body.get("revision") or 0),
        "shoe": shoe, "coup": coup, "seq": seq,
        "t": body.get("t") if body.get("t") is not None else body.get("recorded"),   # a recall has `recorded`
        "punto": json_text(body.get("punto")), "banco": json_text(body.get("banco")),
        "punto_total": body.get("punto_total"), "banco_total": body.get("banco_total"),
        "winner": None if voided else body.get("winner"),
        "natural_hand": _int(body.get("natural")), "punto_pair": _int(body.get("punto_pair")),
        "banco_pair": _int(body.get("banco_pair")), "cards": body.get("cards"),
        "last_hand": _int(body.get("last_hand")), "voided": int(voided),
        "void_reason": body.get("reason") if voided else None,
        "settlement": json_text(body.get("settlement")), "dealt": json_text(body.get("dealt")),
        "recalled": int(recalled), "source": source, "stored_at": now,
    }


def alert_row(table_id: str, action: str, alert: dict, *, seq: int | None, source: str, now: float) -> dict:
    if not isinstance(alert, dict) or not alert.get("id"):
        raise BadMessage("an alert event without alert.id")
    by = reason = None
    t = alert.get("t")
    if action == "acknowledged" and isinstance(alert.get("acknowledged"), dict):
        by, t = alert["acknowledged"].get("by"), alert["acknowledged"].get("t", t)
    elif action == "cleared" and isinstance(alert.get("cleared"), dict):
        c = alert["cleared"]
        by, reason, t = c.get("by"), c.get("reason"), c.get("t", t)
    elif action == "raised":
        ev = alert.get("evidence") or {}
        by, reason = ev.get("user"), ev.get("reason") if ev.get("user") else None
    row = {
        "table_id": table_id, "alert_id": str(alert["id"]), "action": action, "seq": seq,
        "kind": alert.get("kind"), "severity": alert.get("severity"), "shoe": alert.get("shoe"),
        "coup": alert.get("coup"), "message": alert.get("message"),
        "by_user": None if by is None else str(by), "reason": reason, "t": t,
        "alert": json_text(alert), "source": source, "stored_at": now,
    }
    if action == "raised" and alert.get("kind") == VOID_KIND:
        # A coup voided (before or after it settled): its stored coup is marked (Store.apply_voids).
        ev = alert.get("evidence") or {}
        try:
            shoe, coup = int(alert["shoe"]), int(alert["coup"])
        except (KeyError, TypeError, ValueError) as exc:
            raise BadMessage(f"a coup_voided alert without shoe/coup: {exc}") from exc
        row["void"] = {"coup_id": f"{shoe}-{coup}", "shoe": shoe, "coup": coup, "by_user": row["by_user"],
                       "reason": ev.get("reason"), "t": t, "result_withdrawn": _int(ev.get("result_withdrawn"))}
    return row


def _int(v) -> int | None:
    return None if v is None else int(bool(v))


class Writer:
    """One thread, one connection: batches of messages -> one transaction -> acks."""

    def __init__(self, store_url: str, prefix: str, metrics, *, batch_max: int = 500, batch_wait: float = 0.0,
                 on_commit: Callable[[list[Decoded]], None] | None = None, consumer: str | None = None) -> None:
        self.consumer = consumer      # recorded with each message: which floor consumer stored it
        self.store_url = store_url
        self.prefix = prefix
        self.metrics = metrics
        self.batch_max = batch_max
        self.batch_wait = batch_wait
        self.on_commit = on_commit
        self.queue: queue.Queue[Incoming] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.store: Store | None = None
        self.idle = threading.Event()
        self._known: set[str] = set()      # tables ensured in the database by this writer

    def start(self) -> Writer:
        self.store = Store.open(self.store_url)
        self._thread = threading.Thread(target=self._run, name="floor-writer", daemon=True)
        self._thread.start()
        return self

    def submit(self, item: Incoming) -> None:
        self.idle.clear()
        self.queue.put(item)
        self.metrics.queue.inc()

    def stop(self, timeout: float = 10.0) -> None:
        """Commit what was received, then stop."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self.store is not None:
            self.store.close()

    def _take(self) -> list[Incoming]:
        try:
            first = self.queue.get(timeout=0.2)
        except queue.Empty:
            self.idle.set()
            return []
        batch = [first]
        deadline = time.monotonic() + self.batch_wait
        while len(batch) < self.batch_max:
            remaining = deadline - time.monotonic()
            try:
                batch.append(self.queue.get(timeout=max(remaining, 0)) if remaining > 0 else self.queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _run(self) -> None:
        backoff = 0.1
        while True:
            batch = self._take()
            if not batch:
                if self._stop.is_set():
                    return
                continue
            while True:
                try:
                    stored = self.write(batch)
                    break
                except Exception as exc:  # noqa: BLE001 - the database went away: keep the batch, retry
                    self.metrics.db_errors.inc()
                    log.error("floor: cannot commit %d messages (%s); retrying in %.1f s", len(batch), exc, backoff)
                    time.sleep(backoff)
                    backoff = min(backoff * 2, 5.0)
                    self._reconnect()
            backoff = 0.1
            for item in batch:
                if item.ack is not None:
                    try:
                        item.ack()
                    except Exception as exc:  # noqa: BLE001 - a lost connection: the broker resends
                        log.debug("ack failed: %s", exc)
            self.metrics.queue.dec(len(batch))
            if self.on_commit is not None and stored:
                self.on_commit(stored)

    def _reconnect(self) -> None:
        try:
            if self.store is not None:
                self.store.close()
            self.store = Store.open(self.store_url, migrate=False)
        except Exception as exc:  # noqa: BLE001 - still down; the next retry tries again
            log.debug("reconnect failed: %s", exc)

    def write(self, batch: list[Incoming]) -> list[Decoded]:
        """Store ``batch`` in one transaction; returns the messages that were new.

        The rows are made first (in Python); then one transaction inserts the (table, seq)
        keys (the new ones tell duplicates apart), the coups and alert events on their own
        keys (a duplicate's rows do nothing), each table's newest state once per batch. On
        PostgreSQL the whole transaction is one pipeline: one round trip per batch."""
        store = self.store
        assert store is not None
        taken = time.time()        # the batch leaves the queue: the hand-off from the MQTT thread is over
        statuses: list[tuple] = []
        rejects: list[tuple[Incoming, str, tuple | None]] = []
        keys: dict[tuple[str, int], tuple] = {}
        rows: list[tuple[Incoming, Decoded]] = []
        coups: list[dict] = []
        alerts: list[dict] = []
        states: dict[tuple[str, str], tuple] = {}
        in_batch = 0
        for item in batch:
            try:
                d = decode(self.prefix, item.topic, item.payload)
            except BadMessage as exc:
                rejects.append((item, str(exc), None))
                continue
            if d.seq is None:
                statuses.append((d.table_id, d.payload["state"], d.payload.get("version"), item.received_at))
                continue
            key = (d.table_id, d.seq)
            if key in keys:
                in_batch += 1          # a second copy in the same batch is a duplicate
                continue
            keys[key] = (d.table_id, d.seq, d.suffix, d.type, d.t, item.received_at, self.consumer)
            try:
                if d.suffix == "coup/result":
                    coups.append(coup_row(d.table_id, d.payload, seq=d.seq, source="mqtt", now=item.received_at))
                elif d.suffix == "alerts/event":
                    action = d.payload.get("action")
                    if action not in ("raised", "acknowledged", "cleared"):
                        raise BadMessage(f"alert event with action {action!r}")
                    alerts.append(alert_row(d.table_id, action, d.payload.get("alert"), seq=d.seq, source="mqtt",
                                            now=item.received_at))
                elif d.type in STATE_TYPES and d.suffix in ("coup/current", "shoe", "alerts/active"):
                    which = STATE_TYPES[d.type]
                    if states.get((d.table_id, which), (0,))[0] < d.seq:
                        # Kept as the table sent it (valid JSON: decode read it), not encoded again.
                        states[(d.table_id, which)] = (d.seq, item.payload.decode())
            except BadMessage as exc:
                rejects.append((item, str(exc), key))    # its key is kept: no gap, the reason is
                continue
            rows.append((item, d))
        tables = {k[0] for k in keys} | {s[0] for s in statuses}
        with store.pipeline(), store.transaction():
            for table_id in sorted(tables - self._known):
                store.ensure_table(table_id)
            for status in statuses:
                store.set_status(*status)
            for item, reason, key in rejects:
                store.add_rejected(item.topic, item.payload, reason, item.received_at, key=key)
            new_keys = store.insert_messages(list(keys.values()))
            new_coups = store.add_coups(coups)
            new_alerts = store.add_alert_events(alerts)
            if states:
                store.set_states([(t, which, seq, payload) for (t, which), (seq, payload) in states.items()])
        committed = time.time()
        self._known |= tables
        new = new_keys()
        stored = [(item, d) for item, d in rows if (d.table_id, d.seq) in new]
        outcomes = {"stored": len(stored), "duplicate": in_batch + len(keys) - len(new),
                    "rejected": sum(1 for _, _, key in rejects if key is None or key in new),
                    "status": len(statuses)}
        for item, reason, key in rejects:
            if key is None or key in new:
                log.warning("floor: rejected a message on %s: %s", item.topic, reason)
        for name, n in outcomes.items():
            if n:
                self.metrics.messages.labels(outcome=name).inc(n)
        if (n := new_coups()):
            self.metrics.coups.labels(origin="mqtt").inc(n)
        if (n := new_alerts()):
            self.metrics.alert_events.labels(origin="mqtt").inc(n)
        self.metrics.batches.inc()
        for item, d in stored:
            if d.t:
                self.metrics.observe_latency(max(committed - d.t, 0.0), max(committed - item.received_at, 0.0),
                                             max(taken - item.received_at, 0.0))
        return [d for _, d in stored]
