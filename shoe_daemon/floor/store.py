"""The floor's database: one schema on SQLite (embedded default) or PostgreSQL (a floor).

The schema is Alembic's (``schema.py``, ``migrations/versions/``), applied when a store
is opened with ``migrate=True`` (the floor's start); the reads and writes below are
plain SQL through the DB-API (sqlite3, psycopg 3).

Idempotence is in the keys, not in the code that calls them:

- ``messages (table_id, seq)``: every message of a table seen once; a second delivery
  of the same ``seq`` finds its row and is skipped (``record_message`` returns False);
- ``coups (table_id, coup_id, revision)``: a coup's result, from MQTT or a recall;
- ``alert_events (table_id, alert_id, action)``: raised / acknowledged / cleared;
- ``actions (table_id, alert_id, action)``: what a supervisor did (derived from alerts);
- ``status_changes (table_id, at, state)``, ``gaps (table_id, from_seq)``.

SQL is written once with ``?`` placeholders; PostgreSQL gets ``%s``. Booleans are
integers 0/1 and JSON is text on both, so rows read back the same from either.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from . import schema

SCHEMA_VERSION = 2          # the newest revision in migrations/versions/ (a test holds them equal)

# Alert kinds that record a supervisor's action (docs/mqtt.md, alerts/event).
ACTION_KINDS = {"card_corrected", "coup_voided", "coup_resolved", "action_rejected"}

COUP_COLUMNS = ("table_id", "coup_id", "revision", "shoe", "coup", "seq", "t", "punto", "banco",
                "punto_total", "banco_total", "winner", "natural_hand", "punto_pair", "banco_pair", "cards",
                "last_hand", "voided", "void_reason", "settlement", "dealt", "recalled", "source", "stored_at")
VOID_KIND = "coup_voided"


class StoreError(RuntimeError):
    pass


def _b(v: Any) -> int | None:
    return None if v is None else int(bool(v))


def _j(v: Any) -> str | None:
    return None if v is None else json.dumps(v, sort_keys=True, separators=(",", ":"))


class Store:
    """One connection to the floor's database. Not shared between threads: each
    thread that writes or reads opens its own (``Store.open(url)``)."""

    def __init__(self, conn, kind: str, url: str) -> None:
        self.conn = conn
        self.kind = kind          # "sqlite" | "postgresql"
        self.url = url
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, url: str, *, migrate: bool = True) -> Store:
        if url.startswith("sqlite:///"):
            path = url[len("sqlite:///"):]
            if path != ":memory:":
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            store = cls(conn, "sqlite", url)
        elif url.startswith(("postgresql://", "postgres://")):
            try:
                import psycopg
            except ImportError as exc:   # pragma: no cover - the extra is documented
                raise StoreError("PostgreSQL needs psycopg 3: pip install 'shoe-daemon[floor-pg]'") from exc
            try:
                conn = psycopg.connect(url, autocommit=True)
            except psycopg.Error as exc:
                raise StoreError(f"cannot connect to {_mask(url)}: {exc}") from exc
            store = cls(conn, "postgresql", url)
        else:
            raise StoreError(f"unknown database URL {url!r}: sqlite:///PATH or postgresql://...")
        if migrate:
            store.migrate()
        return store

    def close(self) -> None:
        try:
            self.conn.close()
        except Exception:  # noqa: BLE001 - closing a broken connection
            pass

    # ------------------------------------------------------------------ plumbing

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self.kind == "postgresql" else sql

    def execute(self, sql: str, params: Sequence = ()):
        cur = self.conn.cursor()
        cur.execute(self._sql(sql), tuple(params))
        return cur

    def query(self, sql: str, params: Sequence = ()) -> list[dict]:
        cur = self.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def one(self, sql: str, params: Sequence = ()) -> dict | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def begin(self) -> None:
        self.execute("BEGIN IMMEDIATE" if self.kind == "sqlite" else "BEGIN")

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        try:
            self.execute("ROLLBACK")
        except Exception:  # noqa: BLE001 - nothing to roll back
            pass

    class _Tx:
        def __init__(self, store: Store) -> None:
            self.store = store

        def __enter__(self):
            self.store._lock.acquire()
            self.store.begin()
            return self.store

        def __exit__(self, exc_type, exc, tb):
            try:
                if exc_type is None:
                    self.store.commit()
                else:
                    self.store.rollback()
            finally:
                self.store._lock.release()

    def transaction(self) -> Store._Tx:
        return Store._Tx(self)

    def pipeline(self):
        """PostgreSQL: the statements inside are sent without waiting for each answer, and the
        answers read at the end: a batch (BEGIN ... COMMIT) is one round trip to the server, not
        one per statement. A result (``fetchall``, ``rowcount``) is read after the block.
        SQLite: nothing to save (no server)."""
        return self.conn.pipeline() if self.kind == "postgresql" else contextlib.nullcontext()

    # ------------------------------------------------------------------ migrations

    def schema_version(self) -> int:
        """The schema version Alembic recorded (0: none yet)."""
        try:
            row = self.one("SELECT version_num AS v FROM alembic_version")
        except Exception:  # noqa: BLE001 - no table yet
            self.rollback()
            return 0
        return int(row["v"]) if row else 0

    def migrate(self) -> int:
        """Apply the migrations this database lacks (Alembic: ``schema.py``); returns the version reached.
        A database already at this code's version is left alone without loading Alembic (each of
        the floor's threads opens its own store)."""
        if self.schema_version() == SCHEMA_VERSION:
            return SCHEMA_VERSION
        try:
            return schema.upgrade(self.url)
        except schema.SchemaError as exc:
            raise StoreError(str(exc)) from None

    # ------------------------------------------------------------------ writes (inside a transaction)

    def ensure_table(self, table_id: str) -> None:
        self.execute("INSERT INTO tables (table_id, updated_at) VALUES (?, ?) ON CONFLICT (table_id) DO NOTHING",
                     (table_id, time.time()))

    def record_messages(self, rows: list[tuple]) -> set[tuple[str, int]]:
        """Insert ``(table_id, seq, topic, type, t, received_at, consumer)`` rows in one statement;
        returns the (table_id, seq) that were new (the others were seen before: duplicates)."""
        return self.insert_messages(rows)()

    def insert_messages(self, rows: list[tuple]) -> Callable[[], set[tuple[str, int]]]:
        """``record_messages`` in a pipeline: the new keys are read by calling the result after it."""
        if not rows:
            return set
        if self.kind == "postgresql":
            # One fixed statement over arrays (binary: no escaping): PostgreSQL plans it once.
            cols = list(zip(*rows, strict=True))
            cur = self.conn.cursor()
            cur.execute("INSERT INTO messages (table_id, seq, topic, type, t, received_at, consumer) "
                        "SELECT * FROM unnest(%b::text[], %b::bigint[], %b::text[], %b::text[], %b::float8[], "
                        "%b::float8[], %b::text[]) ON CONFLICT (table_id, seq) DO NOTHING RETURNING table_id, seq",
                        [list(c) for c in cols])
            return lambda: {(t, int(q)) for t, q in cur.fetchall()}
        new: set[tuple[str, int]] = set()
        for i in range(0, len(rows), 1000):
            chunk = rows[i:i + 1000]
            marks = ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * len(chunk))
            cur = self.execute(
                f"INSERT INTO messages (table_id, seq, topic, type, t, received_at, consumer) VALUES {marks} "
                "ON CONFLICT (table_id, seq) DO NOTHING RETURNING table_id, seq", [v for r in chunk for v in r])
            new.update((t, int(q)) for t, q in cur.fetchall())
        return lambda: new

    def record_message(self, table_id: str, seq: int, topic: str, type_: str | None, t: float | None,
                       received_at: float, consumer: str | None = None) -> bool:
        """True when (table_id, seq) is new; False for a message seen before (a duplicate)."""
        return bool(self.record_messages([(table_id, seq, topic, type_, t, received_at, consumer)]))

    def upsert_coup(self, row: dict) -> bool:
        """Insert a coup's result; a recall of a coup already stored adds what MQTT lacks
        (settlement, dealt cards). True when the row is new."""
        values = [row.get(c) for c in COUP_COLUMNS]
        cols = ", ".join(COUP_COLUMNS)
        marks = ", ".join("?" for _ in COUP_COLUMNS)
        cur = self.execute(f"INSERT INTO coups ({cols}) VALUES ({marks}) "
                           "ON CONFLICT (table_id, coup_id, revision) DO NOTHING", values)
        new = cur.rowcount == 1
        if not new and row.get("recalled"):
            # A coup voided after it settled: the table's recall says so even without its alert.
            self.execute("UPDATE coups SET settlement = COALESCE(?, settlement), dealt = COALESCE(?, dealt), "
                         "recalled = 1, voided = CASE WHEN ? = 1 THEN 1 ELSE voided END, "
                         "void_reason = COALESCE(void_reason, ?) WHERE table_id = ? AND coup_id = ? AND revision = ?",
                         (row.get("settlement"), row.get("dealt"), row.get("voided") or 0, row.get("void_reason"),
                          row["table_id"], row["coup_id"], row["revision"]))
        elif not new and row.get("seq") is not None:
            # The recall stored it first (a gap fill); MQTT brings the seq.
            self.execute("UPDATE coups SET seq = ? WHERE table_id = ? AND coup_id = ? AND revision = ? "
                         "AND seq IS NULL", (row["seq"], row["table_id"], row["coup_id"], row["revision"]))
        self.apply_voids([(row["table_id"], row["coup_id"])])
        return new

    def add_coups(self, rows: list[dict]) -> Callable[[], int]:
        """MQTT results, in the writer's pipeline: inserted on their key (a duplicate does
        nothing), a row the recall stored first gets its seq, a void recorded first is applied.
        Call the result after the pipeline: how many rows were new."""
        if not rows:
            return lambda: 0
        cols = ", ".join(COUP_COLUMNS)
        marks = ", ".join("?" for _ in COUP_COLUMNS)
        inserted = self.conn.cursor()
        inserted.executemany(self._sql(f"INSERT INTO coups ({cols}) VALUES ({marks}) "
                                       "ON CONFLICT (table_id, coup_id, revision) DO NOTHING"),
                             [[r.get(c) for c in COUP_COLUMNS] for r in rows])
        self.conn.cursor().executemany(self._sql(
            "UPDATE coups SET seq = ? WHERE table_id = ? AND coup_id = ? AND revision = ? AND seq IS NULL"),
            [(r["seq"], r["table_id"], r["coup_id"], r["revision"]) for r in rows if r.get("seq") is not None])
        self.apply_voids([(r["table_id"], r["coup_id"]) for r in rows])
        return lambda: max(inserted.rowcount, 0)

    def add_alert_event(self, row: dict) -> bool:
        return bool(self.add_alert_events([row])())

    def add_alert_events(self, rows: list[dict]) -> Callable[[], int]:
        """Alert events (pipeline-safe): each on its key, with the supervisor action it records
        and, for a ``coup_voided``, the void of its coup. Call the result after the pipeline:
        how many events were new."""
        if not rows:
            return lambda: 0
        cols = ("table_id", "alert_id", "action", "seq", "kind", "severity", "shoe", "coup", "message",
                "by_user", "reason", "t", "alert", "source", "stored_at")
        inserted = self.conn.cursor()
        inserted.executemany(self._sql(
            f"INSERT INTO alert_events ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)}) "
            "ON CONFLICT (table_id, alert_id, action) DO NOTHING"), [[r.get(k) for k in cols] for r in rows])
        self.conn.cursor().executemany(self._sql(
            "UPDATE alert_events SET seq = ? WHERE table_id = ? AND alert_id = ? AND action = ? AND seq IS NULL"),
            [(r["seq"], r["table_id"], r["alert_id"], r["action"]) for r in rows if r.get("seq") is not None])
        acts = ("table_id", "alert_id", "action", "kind", "by_user", "reason", "t", "shoe", "coup")
        self.conn.cursor().executemany(self._sql(
            f"INSERT INTO actions ({', '.join(acts)}) VALUES ({', '.join('?' for _ in acts)}) "
            "ON CONFLICT (table_id, alert_id, action) DO NOTHING"), [[r.get(k) for k in acts] for r in rows
                                                                   if is_action(r)])
        voids = [{**r["void"], "table_id": r["table_id"], "alert_id": r["alert_id"], "seq": r.get("seq"),
                  "source": r["source"], "stored_at": r["stored_at"]} for r in rows if r.get("void")]
        if voids:
            vcols = ("table_id", "coup_id", "shoe", "coup", "by_user", "reason", "t", "result_withdrawn",
                     "alert_id", "seq", "source", "stored_at")
            self.conn.cursor().executemany(self._sql(
                f"INSERT INTO voids ({', '.join(vcols)}) VALUES ({', '.join('?' for _ in vcols)}) "
                "ON CONFLICT (table_id, coup_id) DO NOTHING"), [[v.get(k) for k in vcols] for v in voids])
            self.apply_voids([(v["table_id"], v["coup_id"]) for v in voids])
        return lambda: max(inserted.rowcount, 0)

    def apply_voids(self, keys: Iterable[tuple[str, str]]) -> None:
        """Mark the stored rows of these coups voided, by whom, why and when, from ``voids``
        (order-free: the void may come before or after the coup's result; done once)."""
        keys = sorted(set(keys))
        if not keys:
            return
        pick = "(SELECT {} FROM voids v WHERE v.table_id = coups.table_id AND v.coup_id = coups.coup_id)"
        self.conn.cursor().executemany(self._sql(
            f"UPDATE coups SET voided = 1, voided_by = {pick.format('by_user')}, "
            f"void_reason = COALESCE({pick.format('reason')}, void_reason), voided_at = {pick.format('t')} "
            "WHERE table_id = ? AND coup_id = ? AND voided_at IS NULL AND EXISTS "
            "(SELECT 1 FROM voids v WHERE v.table_id = ? AND v.coup_id = ?)"),
            [(t, c, t, c) for t, c in keys])

    def set_status(self, table_id: str, state: str, version: str | None, at: float) -> None:
        """Record a status change; the same state again (a retained re-delivery) is no change.
        (No result is read: it runs in the writer's pipeline.)"""
        self.ensure_table(table_id)
        self.execute("INSERT INTO status_changes (table_id, at, state, version) SELECT ?, ?, ?, ? "
                     "WHERE NOT EXISTS (SELECT 1 FROM tables WHERE table_id = ? AND status = ?) "
                     "ON CONFLICT (table_id, at, state) DO NOTHING", (table_id, at, state, version, table_id, state))
        self.execute("UPDATE tables SET status = ?, status_at = ?, version = ?, updated_at = ? "
                     "WHERE table_id = ? AND (status IS NULL OR status <> ?)",
                     (state, at, version, at, table_id, state))

    def set_states(self, rows: list[tuple[str, str, int, dict | str]]) -> None:
        """The newest retained state of each kind (``coup``, ``shoe``, ``active``) of each table,
        from ``(table_id, which, seq, payload)`` rows (payload: a dict, or its JSON text as the
        table sent it): an older seq never overwrites a newer one."""
        kinds = ("coup", "shoe", "active")
        per_table: dict[str, dict[str, tuple[int, str]]] = {}
        for table_id, which, seq, payload in rows:
            assert which in kinds
            per_table.setdefault(table_id, {})[which] = (seq, payload if isinstance(payload, str) else _j(payload))
        if self.kind == "postgresql":
            # Every kind of every table in one statement (seq 0: nothing new of that kind).
            ids = sorted(per_table)
            arrays = [ids]
            for which in kinds:
                arrays.append([per_table[t].get(which, (0, None))[0] for t in ids])
                arrays.append([per_table[t].get(which, (0, None))[1] for t in ids])
            sets = ", ".join(f"{w}_seq = GREATEST(tables.{w}_seq, v.{w}_seq), {w}_json = CASE WHEN v.{w}_seq > "
                             f"tables.{w}_seq THEN v.{w}_json ELSE tables.{w}_json END" for w in kinds)
            self.conn.cursor().execute(
                f"UPDATE tables SET {sets} FROM unnest(%b::text[], %b::bigint[], %b::text[], %b::bigint[], "
                "%b::text[], %b::bigint[], %b::text[]) AS v(table_id, coup_seq, coup_json, shoe_seq, shoe_json, "
                "active_seq, active_json) WHERE tables.table_id = v.table_id AND (v.coup_seq > tables.coup_seq "
                "OR v.shoe_seq > tables.shoe_seq OR v.active_seq > tables.active_seq)", arrays)
            return
        for which in kinds:
            params = [(seq, text, t, seq) for t, states in per_table.items() if which in states
                      for seq, text in [states[which]]]
            if params:
                self.conn.cursor().executemany(self._sql(
                    f"UPDATE tables SET {which}_seq = ?, {which}_json = ? WHERE table_id = ? AND {which}_seq < ?"),
                    params)

    def set_state(self, table_id: str, which: str, seq: int, payload: dict) -> None:
        self.set_states([(table_id, which, seq, payload)])

    def add_gap(self, table_id: str, from_seq: int, to_seq: int, at: float) -> bool:
        cur = self.execute("INSERT INTO gaps (table_id, from_seq, to_seq, detected_at, state) VALUES (?, ?, ?, ?, 'open') "
                           "ON CONFLICT (table_id, from_seq) DO NOTHING", (table_id, from_seq, to_seq, at))
        return cur.rowcount == 1

    def advance_contiguous(self, reached: list[tuple[str, int]]) -> None:
        """Each table is contiguous up to its seq in ``reached`` (never goes back)."""
        top = "GREATEST" if self.kind == "postgresql" else "MAX"
        self.conn.cursor().executemany(self._sql(
            "INSERT INTO seq_state (table_id, contiguous_seq) VALUES (?, ?) ON CONFLICT (table_id) DO UPDATE "
            f"SET contiguous_seq = {top}(seq_state.contiguous_seq, excluded.contiguous_seq)"), reached)

    def finish_gap(self, table_id: str, from_seq: int, state: str, *, coups: int = 0, alerts: int = 0,
                   error: str | None = None) -> None:
        self.execute("UPDATE gaps SET state = ?, filled_at = ?, coups_recovered = coups_recovered + ?, "
                     "alerts_recovered = alerts_recovered + ?, error = ? WHERE table_id = ? AND from_seq = ?",
                     (state, time.time(), coups, alerts, error, table_id, from_seq))

    def add_rejected(self, topic: str, payload: bytes, reason: str, at: float,
                     key: tuple[str, int] | None = None) -> None:
        """Bad input is kept (as text, lossless for UTF-8; replaced bytes otherwise) with its reason.
        With the message's (table, seq) ``key``: once (a redelivery of a message stored before is not)."""
        values = (topic, payload.decode("utf-8", "replace"), reason, at)
        if key is None:
            self.execute("INSERT INTO rejected (topic, payload, reason, received_at) VALUES (?, ?, ?, ?)", values)
        else:
            self.execute("INSERT INTO rejected (topic, payload, reason, received_at) SELECT ?, ?, ?, ? "
                         "WHERE NOT EXISTS (SELECT 1 FROM messages WHERE table_id = ? AND seq = ?)", (*values, *key))

    # ------------------------------------------------------------------ reads

    def tables(self) -> list[dict]:
        return self.query("SELECT tables.*, (SELECT MAX(seq) FROM messages m WHERE m.table_id = tables.table_id) "
                          "AS last_seq, COALESCE(s.contiguous_seq, 0) AS contiguous_seq FROM tables "
                          "LEFT JOIN seq_state s ON s.table_id = tables.table_id ORDER BY tables.table_id")

    def unchecked_messages(self, limit: int = 200_000) -> list[dict]:
        """Every table's stored seqs above its contiguous_seq, in (table, seq) order (the gap checker)."""
        if self.kind == "postgresql":
            # One round trip for every table (a loop of per-table queries costs the floor's
            # threads the interpreter lock 200 times a second on a big floor).
            return self.query(
                "SELECT t.table_id, COALESCE(s.contiguous_seq, 0) AS contiguous_seq, m.seq, m.received_at "
                "FROM tables t LEFT JOIN seq_state s ON s.table_id = t.table_id CROSS JOIN LATERAL "
                "(SELECT seq, received_at FROM messages WHERE table_id = t.table_id "
                "AND seq > COALESCE(s.contiguous_seq, 0) ORDER BY seq LIMIT ?) m ORDER BY t.table_id, m.seq",
                (limit,))
        rows = []
        for state in self.query("SELECT t.table_id, COALESCE(s.contiguous_seq, 0) AS contiguous_seq FROM tables t "
                                "LEFT JOIN seq_state s ON s.table_id = t.table_id ORDER BY t.table_id"):
            for r in self.query("SELECT seq, received_at FROM messages WHERE table_id = ? AND seq > ? "
                                "ORDER BY seq LIMIT ?", (state["table_id"], state["contiguous_seq"], limit)):
                rows.append({"table_id": state["table_id"], "contiguous_seq": state["contiguous_seq"], **r})
        return rows

    def messages_after(self, table_id: str, seq: int, limit: int = 5000) -> list[dict]:
        return self.query("SELECT seq, received_at FROM messages WHERE table_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                          (table_id, seq, limit))

    def count(self, table: str, where: str = "", params: Sequence = ()) -> int:
        row = self.one(f"SELECT COUNT(*) AS n FROM {table} {where}", params)
        return int(row["n"]) if row else 0

    def coups(self, *, table_id: str | None = None, shoe: int | None = None, coup: int | None = None,
              since: float | None = None, until: float | None = None, limit: int = 1000,
              latest_only: bool = True, order: str = "asc") -> list[dict]:
        where, params = _filters(table_id=table_id, shoe=shoe, coup=coup, since=since, until=until)
        if latest_only:
            where.append("revision = (SELECT MAX(c2.revision) FROM coups c2 WHERE c2.table_id = coups.table_id "
                         "AND c2.coup_id = coups.coup_id)")
        sql = "SELECT * FROM coups" + (" WHERE " + " AND ".join(where) if where else "")
        direction = "DESC" if order == "desc" else "ASC"
        sql += f" ORDER BY t {direction}, table_id, shoe {direction}, coup {direction} LIMIT ?"
        return [decode_coup(r) for r in self.query(sql, [*params, limit])]

    def alert_events(self, *, table_id: str | None = None, since: float | None = None, until: float | None = None,
                     limit: int = 1000) -> list[dict]:
        where, params = _filters(table_id=table_id, since=since, until=until)
        sql = "SELECT * FROM alert_events" + (" WHERE " + " AND ".join(where) if where else "")
        return self.query(sql + " ORDER BY t, table_id, alert_id LIMIT ?", [*params, limit])

    def actions(self, *, table_id: str | None = None, since: float | None = None, until: float | None = None,
                limit: int = 1000) -> list[dict]:
        where, params = _filters(table_id=table_id, since=since, until=until)
        sql = "SELECT * FROM actions" + (" WHERE " + " AND ".join(where) if where else "")
        return self.query(sql + " ORDER BY t, table_id LIMIT ?", [*params, limit])

    def gaps(self, table_id: str | None = None, state: str | None = None) -> list[dict]:
        where, params = [], []
        if table_id:
            where.append("table_id = ?")
            params.append(table_id)
        if state:
            where.append("state = ?")
            params.append(state)
        sql = "SELECT * FROM gaps" + (" WHERE " + " AND ".join(where) if where else "")
        return self.query(sql + " ORDER BY detected_at, table_id", params)

    def status_changes(self, table_id: str | None = None) -> list[dict]:
        if table_id:
            return self.query("SELECT * FROM status_changes WHERE table_id = ? ORDER BY at", (table_id,))
        return self.query("SELECT * FROM status_changes ORDER BY at")


def is_action(row: dict) -> bool:
    """A person acted: an acknowledgement, a clear by someone, or a supervisor's alert kind."""
    if row.get("action") in ("acknowledged", "cleared"):
        return row.get("by_user") not in (None, "", "table", "system")
    return row.get("kind") in ACTION_KINDS


def decode_coup(row: dict) -> dict:
    out = dict(row)
    out["natural"] = out.pop("natural_hand", None)   # NATURAL is an SQL keyword
    for key in ("punto", "banco", "settlement", "dealt"):
        if out.get(key) is not None:
            out[key] = json.loads(out[key])
    for key in ("natural", "punto_pair", "banco_pair", "last_hand", "voided", "recalled"):
        if out.get(key) is not None:
            out[key] = bool(out[key])
    return out


def _filters(*, table_id=None, shoe=None, coup=None, since=None, until=None) -> tuple[list[str], list]:
    where: list[str] = []
    params: list = []
    for col, val, op in (("table_id", table_id, "="), ("shoe", shoe, "="), ("coup", coup, "="),
                         ("t", since, ">="), ("t", until, "<")):
        if val is not None:
            where.append(f"{col} {op} ?")
            params.append(val)
    return where, params


def _mask(url: str) -> str:
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        cred, host = rest.rsplit("@", 1)
        return f"{scheme}://{cred.split(':', 1)[0]}:***@{host}"
    return url


def json_text(v: Any) -> str | None:
    return _j(v)


def bool_int(v: Any) -> int | None:
    return _b(v)


__all__: Iterable[str] = ["Store", "StoreError", "SCHEMA_VERSION", "is_action", "decode_coup"]
