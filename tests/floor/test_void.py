"""A coup voided after it settled, end to end: a real daemon on an emulated shoe, its HTTP API,
Mosquitto, the floor service on PostgreSQL and SQLite, its page, recall and CSV.

The supervisor voids the table's last coup once it has settled (POST /coup/void); the table
publishes the ``coup_voided`` alert naming the supervisor (no new result: the result is
withdrawn). The floor's stored coup must then say it is void, by whom, why and when, in the
recall, the CSV and on the page; the alert delivered again changes nothing.
"""

from __future__ import annotations

import csv
import io
import json
import secrets

import httpx
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from shoe_daemon.floor.config import load_floor_config
from shoe_daemon.floor.service import FloorService
from shoe_daemon.floor.store import Store
from tests.floor.harness import TableRig, floor_config
from tests.support.waiting import wait_until
from tests.web.harness import browser_session

SUPERVISOR = "sup-" + secrets.token_hex(16)


def _republish(port: int, topic: str, payload: dict) -> None:
    """The broker's redelivery, as a floor restart or a bridge resend gives it: the same message again."""
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="redeliver-" + secrets.token_hex(4), protocol=mqtt.MQTTv5)
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        c.publish(topic, json.dumps(payload), qos=1).wait_for_publish(10)
    finally:
        c.disconnect()
        c.loop_stop()


def test_a_void_after_settlement_is_marked_at_the_floor(tmp_path, mosquitto, db_url):
    table = TableRig(tmp_path, "v1", broker_port=mosquitto.port, coups=4, seed=11,
                     tokens=[{"user": "sam", "role": "supervisor", "token": SUPERVISOR}]).start()
    cfg = load_floor_config(floor_config(tmp_path / "floor.toml", broker_port=mosquitto.port, database=db_url,
                                         http_port=0))
    floor = FloorService(cfg).start()
    store = Store.open(db_url)
    try:
        table.deal()
        table.wait_done()
        last = table.results()[-1]
        wait_until(lambda: store.count("coups") >= len(table.results()), 30, "the coups at the floor")
        assert store.coups(table_id="v1")[-1]["voided"] is False
        # The shoe is done: the last coup, settled, is still the current one; the supervisor voids it.
        with httpx.Client(base_url=table.api_url, timeout=10) as api:
            r = api.post("/coup/void", json={"coup_id": last["coup_id"], "reason": "misdeal"},
                         headers={"Authorization": f"Bearer {SUPERVISOR}"})
            assert r.status_code == 200, r.text
            assert r.json()["coup"]["voided"] is True
        table.wait_done()
        event = next(p for topic, p in table.published
                     if topic == "alerts/event" and p["alert"]["kind"] == "coup_voided")
        assert event["alert"]["evidence"]["user"] == "sam" and event["alert"]["evidence"]["result_withdrawn"] is True
        assert not [p for topic, p in table.published if topic == "coup/result" and p["seq"] > event["seq"]]

        def voided():
            row = store.coups(table_id="v1", shoe=last["shoe"], coup=last["coup"])
            return row[0] if row and row[0]["voided"] else None

        row = wait_until(voided, 20, "the floor to mark the coup void")
        assert (row["voided_by"], row["void_reason"], row["voided_at"]) == ("sam", "misdeal", event["alert"]["t"])
        assert row["winner"] == last["winner"] and row["punto"] == last["punto"]   # what was withdrawn
        others = [c for c in store.coups(table_id="v1") if c["coup_id"] != last["coup_id"]]
        assert others and not any(c["voided"] for c in others)

        # Delivered again (same seq): counted as a duplicate, nothing changes.
        dup0 = floor.metrics.snapshot()["duplicate"]
        _republish(mosquitto.port, "baccarat/v1/alerts/event", event)
        wait_until(lambda: floor.metrics.snapshot()["duplicate"] > dup0, 20, "the redelivery")
        assert floor.wait_idle()
        again = store.coups(table_id="v1", shoe=last["shoe"], coup=last["coup"])
        assert len(again) == 1 and again[0]["voided_at"] == row["voided_at"] and again[0]["voided_by"] == "sam"
        assert store.count("voids") == 1 and store.count("coups") == len(table.results())

        with httpx.Client(base_url=floor.url, timeout=10) as http:
            recall = http.get("/api/coups", params={"table": "v1", "shoe": last["shoe"], "coup": last["coup"]}).json()
            assert [(c["voided"], c["voided_by"], c["void_reason"]) for c in recall["coups"]] == \
                [(True, "sam", "misdeal")]
            rows = list(csv.DictReader(io.StringIO(http.get("/export/coups.csv", params={"table": "v1"}).text)))
            mine = [r for r in rows if r["coup_id"] == last["coup_id"]]
            assert [(r["voided"], r["voided_by"], r["void_reason"]) for r in mine] == [("True", "sam", "misdeal")]
            assert mine[0]["voided_at_utc"].endswith("Z") and mine[0]["winner"] == last["winner"]
            assert all(r["voided"] == "False" and not r["voided_by"] for r in rows if r["coup_id"] != last["coup_id"])
            road = http.get("/api/floor").json()["tables"][0]["road"]
            assert last["coup"] not in [b["coup"] for b in road]     # withdrawn from the road, as at the table

        # The page: the drill-down's coup row says void, by whom and why.
        with browser_session(hide_host_fonts=True) as browser:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(floor.url + "/table/v1")
            cell = page.wait_for_selector(f"tr[data-coup-id='{last['coup_id']}'] .void", timeout=10000)
            assert "sam" in cell.inner_text() and "misdeal" in cell.inner_text()
            assert page.locator("tr[data-coup-id] .void").count() == 1
    finally:
        store.close()
        table.stop()
        floor.stop()
