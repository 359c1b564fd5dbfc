"""Gaps in a table's ``seq``: detected on the database, raised, and filled from the table's recall.

Every message a table publishes carries ``seq``, +1 per message (docs/mqtt.md). The
floor stores each (table, seq) once; ``seq_state.contiguous_seq`` is the highest seq up to
which it has every message (or has declared the rest a gap). The checker walks the
stored seqs above it; a hole that is still open ``gap_grace`` seconds after the first
message behind it arrived is a gap: shared subscriptions and redeliveries reorder
messages, so a hole is only a gap once it has had time to close. The check runs on
the database, not on what one consumer saw, so it is right with any number of
consumers sharing the load (and idempotent when several run it).

A gap is a row in ``gaps`` (state ``open``), a floor alert on the page and a metric.
It is then filled from the table's HTTP API (``[[tables]] api_url``, docs/api.md):
``GET /coups?last=1000`` (coups, with cards, sources and settlement) and
``GET /alerts?state=all`` (alerts with who acknowledged and cleared them). Both are
upserted on the same keys as MQTT's rows, so a fill doubles nothing; the gap becomes
``filled`` with what it recovered, or stays ``open`` with the error and is retried
(``unfillable`` when no API URL is configured for the table). Messages that still
arrive late for a declared gap are stored as usual.

Coups that came over MQTT are completed the same way, one ``GET /coups/{coup_id}`` each
(``enrich``): MQTT's ``coup/result`` has the cards and the winner, the recall adds every
card's source and the settlement of the bets.

The seqs themselves of the missed messages (cards, coup snapshots, roads) are not
recalled: what the floor keeps from them (coups, alerts, actions) is.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.error
import urllib.request

from .ingest import BadMessage, alert_row, coup_row
from .store import Store

log = logging.getLogger(__name__)

RECALL_LAST = 1000     # the most the table's /coups gives in one call
RETRY_OPEN = 10.0      # seconds between two attempts to fill an open gap


class GapChecker:
    def __init__(self, config, metrics, *, clock=time.time) -> None:
        self.config = config
        self.metrics = metrics
        self.clock = clock
        self.grace = config.floor.gap_grace
        self.interval = config.floor.gap_check_interval
        self.timeout = config.floor.recall_timeout
        self.store: Store | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._tried: dict[tuple[str, int], float] = {}
        self._enrich_tried: dict[tuple, float] = {}

    def start(self) -> GapChecker:
        self.store = Store.open(self.config.floor.database)
        self._thread = threading.Thread(target=self._run, name="floor-gaps", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
        if self.store is not None:
            self.store.close()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.check_once()
            except Exception as exc:  # noqa: BLE001 - the database may be away; try again next tick
                log.error("floor: gap check failed: %s", exc)
                try:
                    if self.store is not None:
                        self.store.close()
                    self.store = Store.open(self.config.floor.database, migrate=False)
                except Exception:  # noqa: BLE001
                    pass

    # ------------------------------------------------------------------ detection

    def check_once(self) -> list[dict]:
        """Find new gaps, then try to fill the open ones. Returns the gaps found now."""
        store = self.store
        assert store is not None
        now = self.clock()
        by_table: dict[str, list[dict]] = {}
        for row in store.unchecked_messages():
            by_table.setdefault(row["table_id"], []).append(row)
        found: list[dict] = []
        advance: list[tuple[str, int]] = []
        for table_id, rows in by_table.items():
            gaps, reached = self._walk(rows, int(rows[0]["contiguous_seq"]), now)
            found += [{"table_id": table_id, "from_seq": a, "to_seq": b} for a, b in gaps]
            if reached > int(rows[0]["contiguous_seq"]):
                advance.append((table_id, reached))
        if found or advance:
            with store.transaction():
                new = [g for g in found if store.add_gap(g["table_id"], g["from_seq"], g["to_seq"], now)]
                if advance:
                    store.advance_contiguous(advance)
            for g in new:
                self.metrics.gaps.inc()
                log.warning("floor: table %s: messages %d-%d missing (gap); filling from its recall",
                            g["table_id"], g["from_seq"], g["to_seq"])
            found = new
        self.metrics.tables.set(store.count("tables"))
        open_gaps = store.gaps(state="open")
        for gap in open_gaps:
            key = (gap["table_id"], int(gap["from_seq"]))
            if key not in self._tried or now - self._tried[key] >= RETRY_OPEN:
                self._tried[key] = now
                self.fill(gap)
        self.metrics.open_gaps.set(len(store.gaps(state="open")) if open_gaps else 0)
        self.enrich(now)
        return found

    def enrich(self, now: float, limit: int = 50) -> int:
        """Coups stored from MQTT get what only the table's recall has: every card with its
        source and the settlement of the bets (``GET /coups/{coup_id}``). Returns how many."""
        store = self.store
        assert store is not None
        apis = {t.id: t for t in self.config.tables if t.api_url}
        if not apis:
            return 0
        marks = ", ".join("?" for _ in apis)
        rows = store.query(f"SELECT table_id, coup_id, revision FROM coups WHERE recalled = 0 AND table_id IN ({marks}) "
                           "ORDER BY stored_at LIMIT ?", [*apis, limit * 4])
        done = 0
        for row in rows:
            key = (row["table_id"], row["coup_id"], int(row["revision"]))
            if now - self._enrich_tried.get(key, -RETRY_OPEN) < RETRY_OPEN:
                continue
            if done >= limit:
                break
            self._enrich_tried[key] = now
            try:
                record = self._get(apis[row["table_id"]], f"/coups/{row['coup_id']}")
            except (OSError, ValueError, urllib.error.URLError) as exc:
                self.metrics.recall_errors.inc()
                log.debug("floor: table %s: recall of coup %s failed: %s", row["table_id"], row["coup_id"], exc)
                continue
            if int(record.get("revision") or 0) != key[2]:
                continue   # re-settled meanwhile: its own result row will be enriched
            with store.transaction():
                store.upsert_coup(coup_row(row["table_id"], record, seq=None, source="recall", now=time.time(),
                                           recalled=True))
            self._enrich_tried.pop(key, None)
            done += 1
        return done

    def _walk(self, rows: list[dict], contiguous: int, now: float) -> tuple[list[tuple[int, int]], int]:
        """The holes older than the grace in a table's seqs above ``contiguous``, and how far
        the table is now contiguous (holes declared as gaps count as passed)."""
        gaps = []
        expected = contiguous + 1
        for row in rows:
            seq = int(row["seq"])
            if seq == expected:
                expected += 1
                continue
            if now - float(row["received_at"]) < self.grace:
                break   # the hole may still close (reordering, a redelivery)
            gaps.append((expected, seq - 1))
            expected = seq + 1
        return gaps, expected - 1

    # ------------------------------------------------------------------ filling

    def fill(self, gap: dict) -> bool:
        store = self.store
        assert store is not None
        table_id, from_seq = gap["table_id"], int(gap["from_seq"])
        entry = self.config.table(table_id)
        if entry is None or not entry.api_url:
            with store.transaction():
                store.finish_gap(table_id, from_seq, "unfillable",
                                 error="no api_url for this table in the floor configuration")
            return False
        try:
            coups = self._get(entry, f"/coups?last={RECALL_LAST}")["coups"]
            alerts = self._get(entry, "/alerts?state=all")
        except (OSError, ValueError, KeyError, urllib.error.URLError) as exc:
            self.metrics.recall_errors.inc()
            with store.transaction():
                store.finish_gap(table_id, from_seq, "open", error=f"recall failed: {exc}")
            log.error("floor: table %s: recall over %s failed: %s (retrying)", table_id, entry.api_url, exc)
            return False
        n_coups, n_alerts = self.store_recall(store, table_id, coups, alerts)
        with store.transaction():
            store.finish_gap(table_id, from_seq, "filled", coups=n_coups, alerts=n_alerts)
        self.metrics.gaps_filled.inc()
        self.metrics.coups.labels(origin="recall").inc(n_coups)
        self.metrics.alert_events.labels(origin="recall").inc(n_alerts)
        log.info("floor: table %s: gap from seq %d filled from the recall (%d coups, %d alert events)",
                 table_id, from_seq, n_coups, n_alerts)
        return True

    @staticmethod
    def store_recall(store: Store, table_id: str, coups: list[dict], alerts: dict) -> tuple[int, int]:
        now = time.time()
        n_coups = n_alerts = 0
        with store.transaction():
            store.ensure_table(table_id)
            for record in coups:
                try:
                    n_coups += store.upsert_coup(coup_row(table_id, record, seq=None, source="recall", now=now,
                                                          recalled=True))
                except BadMessage as exc:
                    log.warning("floor: table %s: a recalled coup was skipped: %s", table_id, exc)
            for alert in [*alerts.get("active", []), *alerts.get("past", [])]:
                actions = ["raised"]
                if alert.get("acknowledged"):
                    actions.append("acknowledged")
                if alert.get("cleared"):
                    actions.append("cleared")
                for action in actions:
                    try:
                        n_alerts += store.add_alert_event(alert_row(table_id, action, alert, seq=None,
                                                                    source="recall", now=now))
                    except BadMessage as exc:
                        log.warning("floor: table %s: a recalled alert was skipped: %s", table_id, exc)
        return n_coups, n_alerts

    def _get(self, entry, path: str) -> dict:
        request = urllib.request.Request(entry.api_url + path, headers={"Accept": "application/json"})
        token = entry.read_token()
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=self.timeout) as response:   # noqa: S310 - configured URL
            return json.loads(response.read())
