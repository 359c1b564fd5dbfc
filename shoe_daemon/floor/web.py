"""The floor's HTTP side: the pit's page, a table's drill-down, recall, CSV of a shift, metrics.

Pages (static HTML + JS in ``static/``, the display's colours, fonts and languages) poll the JSON
endpoints once a second; nothing in the browser talks MQTT. Everything is a read of
the floor's database, through one connection per request thread.

| path | what |
| --- | --- |
| ``/`` | every table: status, shoe and coup, the coup on the layout, a small road, alerts; held coups and active alerts first |
| ``/table/{id}`` | one table: its coup, last coups, alerts, supervisor actions, status changes, gaps |
| ``/recall`` | coups across tables by table, shoe, coup and time |
| ``/api/floor``, ``/api/tables/{id}``, ``/api/coups`` | the same as JSON |
| ``/api/ingest`` | the ingest counters and latency percentiles |
| ``/export/{coups,alerts,actions}.csv?since=&until=&table=`` | a shift as CSV |
| ``/metrics`` | Prometheus; ``/healthz`` |
| ``/config.json``, ``/shared/common.js``, ``/i18n/{lang}.json``, ``/fonts/...`` | the page's language (``[http] lang``) and the display's own script, catalogues and fonts |

Times in queries are epoch seconds or ISO 8601 (``2026-12-01T18:00:00Z``; without a
zone, UTC).
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from fastapi import FastAPI, HTTPException, Query, Response
from fastapi.responses import FileResponse, JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from .store import Store

STATIC = Path(__file__).resolve().parent / "static"
FONTS = Path(__file__).resolve().parents[1] / "web" / "static"   # the display's shipped fonts
LANGS = ("en", "ru", "bg", "fi")
ROAD_LEN = 36           # results on a table's small road
BAD = ("error", "critical")


def parse_time(value: str | None, name: str) -> float | None:
    if value in (None, ""):
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise HTTPException(422, f"{name}: epoch seconds or ISO 8601 (2026-12-01T18:00:00Z), not {value!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _loads(text: str | None, default):
    return json.loads(text) if text else default


def table_view(store: Store, row: dict, gaps: list[dict]) -> dict:
    coup = _loads(row.get("coup_json"), {})
    shoe = _loads(row.get("shoe_json"), {})
    active = _loads(row.get("active_json"), {}).get("alerts", [])
    current_shoe = coup.get("shoe") or shoe.get("shoe")
    road = store.query(
        "SELECT coup, winner, punto_pair, banco_pair, natural_hand FROM coups c WHERE table_id = ? AND shoe = ? "
        "AND voided = 0 AND revision = (SELECT MAX(revision) FROM coups c2 WHERE c2.table_id = c.table_id "
        "AND c2.coup_id = c.coup_id) ORDER BY coup DESC LIMIT ?", (row["table_id"], current_shoe or 0, ROAD_LEN))
    road.reverse()
    held = bool(coup.get("held"))
    worst = max((_severity(a.get("severity")) for a in active), default=0)
    open_gaps = [g for g in gaps if g["state"] != "filled"]
    return {
        "table_id": row["table_id"], "status": row.get("status") or "unknown", "version": row.get("version"),
        "status_at": row.get("status_at"), "last_seq": row.get("last_seq"),
        "shoe": current_shoe, "coup": coup.get("coup"), "coup_id": coup.get("coup_id"),
        "punto": coup.get("punto", []), "banco": coup.get("banco", []),
        "punto_total": coup.get("punto_total"), "banco_total": coup.get("banco_total"),
        "settled": coup.get("settled", False), "voided": coup.get("voided", False), "held": held,
        "last_hand": coup.get("last_hand", False), "remaining": shoe.get("remaining"),
        "road": [{"coup": r["coup"], "winner": r["winner"], "punto_pair": bool(r["punto_pair"]),
                  "banco_pair": bool(r["banco_pair"]), "natural": bool(r["natural_hand"])} for r in road],
        "alerts": active, "gaps": [{k: g[k] for k in ("from_seq", "to_seq", "state", "error")} for g in open_gaps],
        "priority": (0 if held else 1 if worst >= 3 else 2 if active or open_gaps else 3 if row.get("status") !=
                     "online" else 4),
    }


def _severity(s: str | None) -> int:
    return {"info": 0, "warning": 2, "error": 3, "critical": 4}.get(s or "", 1)


def create_app(config, metrics, *, started_at: float | None = None) -> FastAPI:
    app = FastAPI(title="shoe-daemon floor", docs_url="/docs", openapi_url="/openapi.json")
    local = threading.local()
    names = {t.id: t.name for t in config.tables if t.name}

    def store() -> Store:
        s = getattr(local, "store", None)
        if s is None:
            s = local.store = Store.open(config.floor.database, migrate=False)
        return s

    def floor() -> dict:
        s = store()
        gaps = s.gaps()
        by_table: dict[str, list] = {}
        for g in gaps:
            by_table.setdefault(g["table_id"], []).append(g)
        tables = [table_view(s, row, by_table.get(row["table_id"], [])) for row in s.tables()]
        for t in tables:
            t["name"] = names.get(t["table_id"])
        tables.sort(key=lambda t: (t["priority"], t["table_id"]))
        return {
            "generated_at": time.time(), "tables": tables,
            "floor_alerts": [{"kind": "gap", "table_id": g["table_id"], "from_seq": g["from_seq"],
                              "to_seq": g["to_seq"], "state": g["state"], "error": g["error"],
                              "detected_at": g["detected_at"]} for g in gaps if g["state"] != "filled"],
            "counts": {"tables": len(tables), "online": sum(t["status"] == "online" for t in tables),
                       "held": sum(t["held"] for t in tables), "alerts": sum(len(t["alerts"]) for t in tables),
                       "coups": s.count("coups")},
            "ingest": metrics.snapshot(),
            "uptime_s": time.time() - (started_at or time.time()),
        }

    @app.get("/healthz", include_in_schema=False)
    def healthz():
        return {"status": "ok", "broker_connected": metrics.snapshot()["connected"]}

    @app.get("/metrics", include_in_schema=False)
    def prom():
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/api/ingest")
    def api_ingest():
        """The ingest figures with the latency from a message's t to its commit (the last 200,000)."""
        return {**metrics.snapshot(), "latency_ms": metrics.latency_ms(),
                "floor_latency_ms": metrics.latency_ms("in_floor"), "queue_latency_ms": metrics.latency_ms("queued")}

    @app.get("/api/floor")
    def api_floor():
        return floor()

    @app.get("/api/tables/{table_id}")
    def api_table(table_id: str, coups: int = Query(50, ge=1, le=1000)):
        s = store()
        row = s.one("SELECT * FROM tables WHERE table_id = ?", (table_id,))
        if row is None:
            raise HTTPException(404, f"no table {table_id!r} on the floor")
        gaps = s.gaps(table_id)
        return {
            "table": {**table_view(s, row, gaps), "name": names.get(table_id)},
            "coups": s.coups(table_id=table_id, limit=coups, order="desc"),
            "alert_events": s.query("SELECT table_id, alert_id, action, seq, kind, severity, shoe, coup, message, "
                                    "by_user, reason, t, source FROM alert_events WHERE table_id = ? "
                                    "ORDER BY t DESC LIMIT 200", (table_id,)),
            "actions": s.query("SELECT * FROM actions WHERE table_id = ? ORDER BY t DESC LIMIT 200", (table_id,)),
            "status_changes": s.query("SELECT * FROM status_changes WHERE table_id = ? ORDER BY at DESC LIMIT 100",
                                      (table_id,)),
            "gaps": gaps,
        }

    @app.get("/api/coups")
    def api_coups(table: str | None = None, shoe: int | None = Query(None, ge=1),
                  coup: int | None = Query(None, ge=1), since: str | None = None, until: str | None = None,
                  limit: int = Query(200, ge=1, le=10000)):
        return {"coups": store().coups(table_id=table or None, shoe=shoe, coup=coup,
                                       since=parse_time(since, "since"), until=parse_time(until, "until"),
                                       limit=limit)}

    @app.get("/export/{kind}.csv")
    def export(kind: str, since: str | None = None, until: str | None = None, table: str | None = None):
        lo, hi = parse_time(since, "since"), parse_time(until, "until")
        s = store()
        if kind == "coups":
            rows = s.coups(table_id=table or None, since=lo, until=hi, limit=1_000_000)
            cols = ["table_id", "shoe", "coup", "coup_id", "revision", "time_utc", "t", "winner", "punto", "banco",
                    "punto_total", "banco_total", "natural", "punto_pair", "banco_pair", "cards", "voided",
                    "voided_by", "void_reason", "voided_at_utc", "seq", "source", "settlement"]
        elif kind == "alerts":
            rows = s.alert_events(table_id=table or None, since=lo, until=hi, limit=1_000_000)
            cols = ["table_id", "alert_id", "action", "time_utc", "t", "kind", "severity", "shoe", "coup", "by_user",
                    "reason", "message", "seq", "source"]
        elif kind == "actions":
            rows = s.actions(table_id=table or None, since=lo, until=hi, limit=1_000_000)
            cols = ["table_id", "alert_id", "action", "time_utc", "t", "kind", "by_user", "reason", "shoe", "coup"]
        else:
            raise HTTPException(404, "export coups.csv, alerts.csv or actions.csv")
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            r = dict(r)
            r["time_utc"] = utc(r.get("t"))
            r["voided_at_utc"] = utc(r.get("voided_at"))
            for k in ("punto", "banco"):
                if isinstance(r.get(k), list):
                    r[k] = " ".join(r[k])
            if r.get("settlement") is not None and not isinstance(r["settlement"], str):
                r["settlement"] = json.dumps(r["settlement"], sort_keys=True)
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
        name = f"floor-{kind}-{int(lo) if lo else 'start'}-{int(hi) if hi else 'now'}.csv"
        return Response(buf.getvalue(), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    def utc(t: float | None) -> str:
        return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ") if t is not None else ""

    def page(name: str):
        return FileResponse(STATIC / name, headers={"Cache-Control": "no-cache"})

    @app.get("/", include_in_schema=False)
    def index():
        return page("floor.html")

    @app.get("/table/{table_id}", include_in_schema=False)
    def table_page(table_id: str):
        return page("table.html")

    @app.get("/recall", include_in_schema=False)
    def recall_page():
        return page("recall.html")

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str):
        path = STATIC / name
        if "/" in name or not path.is_file():
            raise HTTPException(404, "no such file")
        return FileResponse(path, headers={"Cache-Control": "no-cache"})

    @app.get("/config.json", include_in_schema=False)
    def page_config():
        return {"lang": config.http.lang}

    @app.get("/shared/common.js", include_in_schema=False)
    def common_js():
        # The display's fonts-and-languages script, so the floor speaks as the display does.
        return FileResponse(FONTS / "common.js", headers={"Cache-Control": "no-cache"})

    @app.get("/i18n/{lang}.json", include_in_schema=False)
    def catalogue(lang: str):
        # The display's catalogues (shoe_daemon/web/static/i18n), the floor's keys among them.
        if lang not in LANGS:
            raise HTTPException(404, f"no language {lang!r}: one of {', '.join(LANGS)}")
        return FileResponse(FONTS / "i18n" / f"{lang}.json", headers={"Cache-Control": "no-cache"})

    @app.get("/fonts/{name:path}", include_in_schema=False)
    def fonts(name: str):
        # The display's own fonts (shoe_daemon/web/static: fonts.css and its vendored woff2), never the host's.
        path = FONTS / name
        if name != "fonts.css" and not (name.startswith("vendor/") and name.endswith(".woff2") and name.count("/") == 1):
            raise HTTPException(404, "no such file")
        if not path.is_file():
            raise HTTPException(404, "no such file")
        return FileResponse(path, headers={"Cache-Control": "no-cache"})

    @app.exception_handler(HTTPException)
    async def _errors(request, exc: HTTPException):
        return JSONResponse({"error": {"status": exc.status_code, "message": exc.detail}}, status_code=exc.status_code)

    return app
