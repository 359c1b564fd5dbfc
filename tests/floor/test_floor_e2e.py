"""End to end on real parts: emulated shoes -> real daemons -> Mosquitto -> the floor -> SQLite / PostgreSQL.

Every coup the tables published is in the floor's database exactly once and matches the
table's own journal; a floor that starts after the tables dealt sees the hole in `seq`,
raises it as a gap and fills it from the tables' HTTP recall.
"""

from __future__ import annotations

from shoe_daemon.floor.config import load_floor_config
from shoe_daemon.floor.service import FloorService
from shoe_daemon.floor.store import Store
from tests.floor.harness import TableRig, floor_config, same_coup
from tests.support.waiting import wait_until


def assert_floor_has_every_coup_once(store: Store, tables: list[TableRig]) -> int:
    total = 0
    for t in tables:
        journal = t.journal_coups()
        published = t.results()
        assert len(journal) >= len(published) > 0
        rows = store.query("SELECT coup_id, revision, COUNT(*) AS n FROM coups WHERE table_id = ? "
                           "GROUP BY coup_id, revision", (t.table_id,))
        assert all(r["n"] == 1 for r in rows)
        db = {c["coup_id"]: c for c in store.coups(table_id=t.table_id)}
        assert sorted(db) == sorted(j["coup_id"] for j in journal), f"table {t.table_id}: coups differ"
        for j in journal:
            assert same_coup(db[j["coup_id"]], j) == [], f"table {t.table_id} coup {j['coup_id']}"
        total += len(journal)
    return total


def _wait_coups(store: Store, tables: list[TableRig], timeout: float = 30.0) -> None:
    want = sum(len(t.journal_coups()) for t in tables)
    wait_until(lambda: store.count("coups") >= want, timeout, f"{want} coups in the floor's database")


def test_three_tables_every_coup_once_matching_the_journals(tmp_path, mosquitto, db_url):
    cfg = load_floor_config(floor_config(tmp_path / "floor.toml", broker_port=mosquitto.port, database=db_url))
    floor = FloorService(cfg, web=False).start()
    tables = [TableRig(tmp_path, f"t{i}", broker_port=mosquitto.port, coups=6, seed=i, api=False).start()
              for i in (1, 2, 3)]
    try:
        for t in tables:
            t.deal()
        for t in tables:
            t.wait_done()
        store = Store.open(db_url)
        _wait_coups(store, tables)
        assert floor.wait_idle()
        assert assert_floor_has_every_coup_once(store, tables) >= 18
        # Every message of every table is stored once, none is missing: no gap.
        for t in tables:
            stored = [r["seq"] for r in store.query("SELECT seq FROM messages WHERE table_id = ? ORDER BY seq",
                                                     (t.table_id,))]
            assert stored == list(range(1, max(t.seqs()) + 1))
        assert store.gaps() == []
        assert {r["table_id"]: r["status"] for r in store.tables()} == {"t1": "online", "t2": "online", "t3": "online"}
        # The newest coup state is the table's last coup/current (older seqs never overwrite it).
        row = store.one("SELECT coup_json FROM tables WHERE table_id = 't1'")
        last = [p for topic, p in tables[0].published if topic == "coup/current"][-1]
        assert row["coup_json"] and __import__("json").loads(row["coup_json"])["seq"] == last["seq"]
        store.close()
    finally:
        for t in tables:
            t.stop()
        floor.stop()


def test_a_floor_started_late_detects_the_gap_and_fills_it_from_the_recall(tmp_path, mosquitto, sqlite_url):
    table = TableRig(tmp_path, "late", broker_port=mosquitto.port, coups=5, seed=7).start()
    try:
        table.deal()
        table.wait_done()
        cfg = load_floor_config(floor_config(tmp_path / "floor.toml", broker_port=mosquitto.port,
                                             database=sqlite_url, tables=[table], gap_grace=0.5,
                                             protocol="3.1.1"))
        floor = FloorService(cfg, web=False).start()
        try:
            # MQTT 3.1.1 has no shared subscriptions: one consumer on the plain topic filter.
            assert floor.consumer.topic == "baccarat/+/#"
            store = Store.open(sqlite_url)
            gaps = wait_until(lambda: [g for g in store.gaps("late") if g["state"] == "filled"], 20,
                              "the gap to be filled")
            assert gaps[0]["from_seq"] == 1 and gaps[0]["coups_recovered"] == 5
            assert floor.metrics.snapshot()["gaps"] >= 1 and floor.metrics.snapshot()["gaps_filled"] >= 1
            assert assert_floor_has_every_coup_once(store, [table]) == 5
            # The recall brings what MQTT does not carry: every card with its source.
            assert all(c["recalled"] and c["dealt"] for c in store.coups(table_id="late"))
            store.close()
        finally:
            floor.stop()
    finally:
        table.stop()


def test_the_database_away_for_a_while_loses_nothing(tmp_path, mosquitto):
    """PostgreSQL stopped mid-stream: the writer keeps its batch (nothing acknowledged), retries
    and commits it when the database is back; every coup once, as in the journal."""
    from tests.floor.pg import PostgresServer

    pg = PostgresServer().start()
    try:
        url = pg.create_database("floor")
        cfg = load_floor_config(floor_config(tmp_path / "floor.toml", broker_port=mosquitto.port, database=url))
        floor = FloorService(cfg, web=False).start()
        table = TableRig(tmp_path, "db", broker_port=mosquitto.port, coups=12, pace=0.06, seed=3, api=False).start()
        try:
            table.deal()
            wait_until(lambda: len(table.results()) >= 2, 30, "the first coups")
            pg.pause()
            wait_until(lambda: floor.metrics.snapshot()["db_errors"] >= 1, 20, "the writer to meet the outage")
            pg.resume()
            table.wait_done()
            store = Store.open(url)
            _wait_coups(store, [table], timeout=40)
            assert assert_floor_has_every_coup_once(store, [table]) == len(table.journal_coups())
            stored = [r["seq"] for r in store.query("SELECT seq FROM messages ORDER BY seq")]
            assert stored == list(range(1, max(table.seqs()) + 1))
            store.close()
        finally:
            table.stop()
            floor.stop()
    finally:
        pg.stop()
