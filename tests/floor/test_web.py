"""The floor's HTTP side over real HTTP (uvicorn) and in headless Chromium, fed by live daemons.

Assertions read data attributes and text, never pixel sizes (no dependence on host fonts).
"""

from __future__ import annotations

import csv
import io
import json
import os
import time

import httpx
import pytest

from shoe_daemon.emulator import Faults
from shoe_daemon.floor.config import load_floor_config
from shoe_daemon.floor.service import FloorService
from shoe_daemon.floor.store import Store
from tests.floor.harness import ROOT, TableRig, floor_config
from tests.support.waiting import wait_until
from tests.web.harness import browser_session
from tests.web.pagecheck import assert_own_fonts

SCREENSHOT = ROOT / "docs" / "screenshots" / "floor.png"


@pytest.fixture
def floor_with_tables(tmp_path, mosquitto, sqlite_url):
    started: list = []

    def make(n: int, coups: int | None, pace: float, held: set[str] = frozenset()):
        tables = []
        for i in range(1, n + 1):
            tid = f"t{i:02d}"
            rig = TableRig(tmp_path, tid, broker_port=mosquitto.port, coups=coups, pace=pace, seed=100 + i, api=False)
            if tid in held:   # every coup gets an extra card: an error alert holds the coup
                rig.shoe = type(rig.shoe)(decks=8, seed=100 + i, pace=pace, link=str(rig.dir / "shoe"), coups=coups,
                                          faults=Faults(extra_card=1.0))
            tables.append(rig.start())
            started.append(rig)
        cfg = load_floor_config(floor_config(tmp_path / "floor.toml", broker_port=mosquitto.port,
                                             database=sqlite_url, tables=tables, http_port=0))
        floor = FloorService(cfg).start()
        started.append(floor)
        return floor, tables

    yield make
    for x in reversed(started):
        x.stop()


def test_floor_http_api_recall_csv_and_metrics(floor_with_tables, sqlite_url):
    floor, tables = floor_with_tables(2, coups=6, pace=0.01)
    for t in tables:
        t.deal()
    for t in tables:
        t.wait_done()
    store = Store.open(sqlite_url)
    want = sum(len(t.journal_coups()) for t in tables)
    wait_until(lambda: store.count("coups") >= want, 20, "the coups at the floor")
    base = floor.url
    with httpx.Client(base_url=base, timeout=10) as http:
        f = http.get("/api/floor").json()
        assert [t["table_id"] for t in f["tables"]] == ["t01", "t02"]
        assert f["counts"]["coups"] == want and f["counts"]["online"] == 2
        t1 = f["tables"][0]
        journal = tables[0].journal_coups()
        shoe = journal[-1]["shoe"]
        assert [r["winner"] for r in t1["road"]] == [j["winner"] for j in journal if j["shoe"] == shoe][-36:]
        last = [p for topic, p in tables[0].published if topic == "coup/current"][-1]
        assert (t1["coup"], t1["punto"], t1["banco"]) == (last["coup"], last["punto"], last["banco"])

        d = http.get("/api/tables/t02").json()
        assert [c["coup_id"] for c in d["coups"]][::-1] == [j["coup_id"] for j in tables[1].journal_coups()]
        assert d["status_changes"][0]["state"] == "online"
        assert http.get("/api/tables/nope").status_code == 404

        # Recall by table, shoe and coup; and by time.
        j0 = journal[2]
        got = http.get("/api/coups", params={"table": "t01", "shoe": j0["shoe"], "coup": j0["coup"]}).json()["coups"]
        assert [(c["coup_id"], c["winner"], c["punto"]) for c in got] == [(j0["coup_id"], j0["winner"], j0["punto"])]
        rows = store.coups()
        mid = sorted(r["t"] for r in rows)[len(rows) // 2]
        since = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(mid)) + f".{int(mid % 1 * 1e6):06d}Z"
        later = http.get("/api/coups", params={"since": since}).json()["coups"]
        assert later and all(c["t"] >= mid - 1e-6 for c in later)
        assert len(later) == sum(1 for r in rows if r["t"] >= mid - 1e-6)
        bad = http.get("/api/coups", params={"since": "yesterday"})
        assert bad.status_code == 422 and "ISO 8601" in bad.json()["error"]["message"]

        # CSV of a shift: every coup, one row each, the cards and winners of the journals.
        r = http.get("/export/coups.csv")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
        rows_csv = list(csv.DictReader(io.StringIO(r.text)))
        assert len(rows_csv) == want
        by_key = {(x["table_id"], x["coup_id"]): x for x in rows_csv}
        for t in tables:
            for j in t.journal_coups():
                x = by_key[(t.table_id, j["coup_id"])]
                assert (x["winner"], x["punto"].split(), x["banco"].split()) == (j["winner"], j["punto"], j["banco"])
        assert http.get("/export/alerts.csv").text.startswith("table_id,alert_id,action,")
        assert http.get("/export/nothing.csv").status_code == 404

        m = http.get("/metrics").text
        stored = [ln for ln in m.splitlines() if ln.startswith('floor_messages_total{outcome="stored"}')]
        assert stored and float(stored[0].split()[-1]) == store.count("messages")
        assert "floor_ingest_latency_seconds_bucket" in m
        assert http.get("/healthz").json()["broker_connected"] is True
    store.close()


def test_floor_page_ten_live_tables_held_coup_first(floor_with_tables, tmp_path):
    floor, tables = floor_with_tables(10, coups=None, pace=0.12, held={"t07"})
    for t in tables:
        t.deal()
    with browser_session(hide_host_fonts=True) as browser:   # the page's own fonts only
        context = browser.new_context(viewport={"width": 1920, "height": 1080}, device_scale_factor=1)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(floor.url + "/")
        page.wait_for_function("document.querySelectorAll('article.tile').length === 10", timeout=20_000)
        # The held table comes first, marked; the others follow by id.
        page.wait_for_function("document.querySelector('article.tile').dataset.held === '1'", timeout=30_000)
        order = page.eval_on_selector_all("article.tile", "els => els.map(e => [e.dataset.table, e.dataset.held])")
        assert order[0] == ["t07", "1"]
        assert [t for t, _ in order[1:]] == sorted(t.table_id for t in tables if t.table_id != "t07")
        assert page.inner_text("article.tile[data-table=t07] .badge") == "HELD"
        page.evaluate("document.fonts.ready")
        assert_own_fonts(page)                    # the display's shipped fonts, none of the host's
        # Live: cards and small roads fill in as the tables deal.
        page.wait_for_function("document.querySelectorAll('article.tile .road .bead').length >= 15", timeout=30_000)
        page.wait_for_function("document.querySelectorAll('article.tile .card').length >= 10", timeout=10_000)
        online = page.get_attribute("[data-count=online]", "data-count")
        assert online == "online" and page.inner_text("[data-count=online] b") == "10"
        # docs/screenshots/floor.png is rewritten only on request, as the display's screenshots are.
        shot = SCREENSHOT if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path / "floor.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000

        # Drill-down: the held table's alerts (the extra card) and coups.
        page.click("article.tile[data-table=t07] a.id")
        page.wait_for_url("**/table/t07")
        page.wait_for_function("document.querySelector('#alerts td') !== null", timeout=10_000)
        assert "EXTRA CARD" in page.inner_text("#alerts")      # alert.extra_card in the English catalogue
        assert page.get_attribute("#tile article", "data-held") == "1"

        # Recall across tables by table: every row is that table's.
        page.goto(floor.url + "/recall?table=t01")
        page.wait_for_function("document.body.dataset.results !== undefined", timeout=10_000)
        tables_shown = page.eval_on_selector_all("#results tr[data-table]", "els => els.map(e => e.dataset.table)")
        assert tables_shown and set(tables_shown) == {"t01"}
        assert errors == []
        context.close()
    api = json.loads(httpx.get(floor.url + "/api/floor", timeout=10).text)
    assert api["tables"][0]["table_id"] == "t07" and api["counts"]["held"] == 1
