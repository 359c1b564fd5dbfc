"""The network between table and floor: each table's Mosquitto bridges to the floor's Mosquitto.

Real parts: a floor Mosquitto (persistence), one Mosquitto per table (persistence, a
QoS 1 bridge with a persistent session to the floor broker), a daemon on an emulated
shoe per table publishing to its own broker, and the floor service on the floor broker.
The floor link is cut (the floor broker stopped) for 60 s while the tables deal (the
issue's minute; bench/floor.py --outage 60 does the same at 200 tables), then restored:
every message of every table reaches the floor, none twice, no gap, and every coup
matches the table's journal.
"""

from __future__ import annotations

import time

from shoe_daemon.floor.config import load_floor_config
from shoe_daemon.floor.service import FloorService
from shoe_daemon.floor.store import Store
from tests.floor.harness import TableRig, bridge_conf, floor_config
from tests.floor.test_floor_e2e import assert_floor_has_every_coup_once
from tests.support.waiting import wait_until

OUTAGE = 60.0
PACE = 0.3          # seconds a card: ~40 coups take 65-75 s, so the tables deal before, during and after


def test_floor_link_down_for_a_while_loses_nothing(tmp_path, mosquitto_factory, sqlite_url):
    # As docs/floor.md configures the floor broker: with Mosquitto's default (1000 queued messages a
    # client) the bridges' flush after the outage (~700 messages a table) could outrun the floor
    # consumer's reconnect and overflow its session's queue, and the broker dropped the rest.
    floor_broker = mosquitto_factory(persistence=True, extra_conf=["max_queued_messages 1000000", "set_tcp_nodelay true"])
    table_ids = ("b1", "b2")
    table_brokers = {t: mosquitto_factory(persistence=True, extra_conf=bridge_conf(t, floor_broker.port))
                     for t in table_ids}
    cfg = load_floor_config(floor_config(tmp_path / "floor.toml", broker_port=floor_broker.port, database=sqlite_url,
                                         client_id="floor-1", session_expiry=3600, share_group=""))
    floor = FloorService(cfg, web=False).start()
    tables = [TableRig(tmp_path, t, broker_port=table_brokers[t].port, coups=40, pace=PACE, seed=30 + i,
                       api=False).start() for i, t in enumerate(table_ids)]
    store = Store.open(sqlite_url)
    try:
        wait_until(lambda: store.count("tables") == 2, 15, "both tables to reach the floor over their bridges")
        for t in tables:
            t.deal()
        wait_until(lambda: store.count("coups") >= 2, 20, "the first coups at the floor")
        floor_broker.stop()                     # the floor link is down: the tables deal on
        down_at = time.monotonic()
        assert floor.wait_idle()                # what the floor had received is committed
        before = store.count("messages")
        time.sleep(OUTAGE - (time.monotonic() - down_at))
        assert store.count("messages") == before          # nothing reached the floor meanwhile
        dealt_while_down = sum(len(t.results()) for t in tables)
        floor_broker.start()
        assert time.monotonic() - down_at >= OUTAGE
        for t in tables:
            t.wait_done(timeout=120)
        want = sum(len(t.journal_coups()) for t in tables)
        assert want > dealt_while_down > 2     # coups were dealt during and after the outage
        wait_until(lambda: store.count("coups") >= want, 40, f"{want} coups at the floor")
        for t in tables:
            published = sorted(set(t.seqs()))
            wait_until(lambda t=t, top=published[-1]: store.count("messages", "WHERE table_id = ?", (t.table_id,))
                       >= top, 20, f"every message of {t.table_id}")
            stored = [r["seq"] for r in store.query("SELECT seq FROM messages WHERE table_id = ? ORDER BY seq",
                                                     (t.table_id,))]
            assert stored == list(range(1, published[-1] + 1)), f"table {t.table_id}: messages lost"
        assert assert_floor_has_every_coup_once(store, tables) == want
        time.sleep(cfg.floor.gap_grace + 0.5)
        assert store.gaps() == []               # nothing was missing, so nothing had to be recalled
    finally:
        store.close()
        for t in tables:
            t.stop()
        floor.stop()
