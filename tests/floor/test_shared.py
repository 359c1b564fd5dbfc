"""Two floor consumers share the load with an MQTT 5 shared subscription; one is killed mid-stream.

Real parts: Mosquitto, three daemons on emulated shoes (with their HTTP APIs), two
`shoe-daemon floor` processes in the share group writing to one PostgreSQL. Consumer
A is SIGKILLed while the tables deal; B takes every message from then on, and what A
had received but not committed (never acknowledged) shows as a gap that B's checker
fills from the tables' recall. Every coup is in the database once and matches the journals.
"""

from __future__ import annotations

from shoe_daemon.floor.consumer import subscription
from shoe_daemon.floor.store import Store
from tests.floor.harness import FloorProcess, TableRig, floor_config
from tests.floor.test_floor_e2e import assert_floor_has_every_coup_once
from tests.support.waiting import wait_until


def test_subscription_topic_by_protocol():
    assert subscription("baccarat", "floor", "5") == "$share/floor/baccarat/+/#"
    assert subscription("baccarat", "", "5") == "baccarat/+/#"
    assert subscription("casino1/baccarat", "floor", "3.1.1") == "casino1/baccarat/+/#"


def test_two_consumers_share_the_load_and_one_killed_mid_stream_loses_nothing(tmp_path, mosquitto, pg_url):
    tables = [TableRig(tmp_path, f"s{i}", broker_port=mosquitto.port, coups=14, pace=0.04, seed=20 + i).start()
              for i in (1, 2, 3)]
    procs: list[FloorProcess] = []
    try:
        for name in ("a", "b"):
            cfg = floor_config(tmp_path / f"floor-{name}.toml", broker_port=mosquitto.port, database=pg_url,
                               tables=tables, client_id=f"floor-{name}", gap_grace=1.0)
            procs.append(FloorProcess(cfg, tmp_path / f"floor-{name}.log").start())
        for p in procs:
            wait_until(lambda p=p: "subscribing to $share/floor/baccarat/+/#" in p.log_text(), 30,
                       f"{p.config.name} to subscribe")
        a, b = procs
        for t in tables:
            t.deal()
        store = Store.open(pg_url)

        def by_consumer() -> dict:
            rows = store.query("SELECT consumer, COUNT(*) AS n FROM messages GROUP BY consumer")
            return {r["consumer"]: r["n"] for r in rows}

        # Both members got messages: the broker shares the tables between them.
        wait_until(lambda: all(by_consumer().get(c, 0) >= 20 for c in ("floor-a", "floor-b")), 30,
                   "both consumers to store messages")
        a.kill()
        at_kill = by_consumer()
        for t in tables:
            t.wait_done()
        want = sum(len(t.journal_coups()) for t in tables)
        wait_until(lambda: store.count("coups") >= want and not store.gaps(state="open"), 40,
                   f"{want} coups and no open gap")
        assert by_consumer()["floor-a"] == at_kill["floor-a"]        # A stored nothing after its death
        assert by_consumer()["floor-b"] > at_kill["floor-b"]         # B went on alone
        assert assert_floor_has_every_coup_once(store, tables) == want >= 42
        for gap in store.gaps():
            assert gap["state"] == "filled", gap
        # Every coup is completed from its table's recall: cards with their sources.
        wait_until(lambda: store.count("coups", "WHERE recalled = 0") == 0, 30, "every coup recalled")
        for c in store.coups():
            assert sorted(d["card"] for d in c["dealt"] if d["role"] == "coup") == sorted(c["punto"] + c["banco"])
            assert {d["source"] for d in c["dealt"]} == {"shoe"}
        store.close()
        assert b.stop() == 0, b.log_text()
    finally:
        for p in procs:
            p.kill()
        for t in tables:
            t.stop()
