"""The endpoints (docs/api.md is their reference).

No ``from __future__ import annotations`` here: FastAPI reads the handlers' annotations, and
the role aliases (``Dealer``, ...) are local to ``build_router``.
"""


import asyncio
import logging
import time
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, WebSocket
from fastapi.responses import JSONResponse, Response

from shoe_daemon import __version__
from shoe_daemon.api import models as m
from shoe_daemon.api.auth import ROLES, Principal, requires
from shoe_daemon.api.errors import ApiError
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Publish
from shoe_daemon.game.cards import ALL_CODES
from shoe_daemon.game.settle import BetError, format_amount, parse_bets, to_decimal

log = logging.getLogger("shoe_daemon.api")

ALERT_ID = Path(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9:_.-]+$", description="an alert id, e.g. 1-4-2")
COUP_ID = Path(pattern=m.COUP_ID_PATTERN, description='a coup id "<shoe>-<coup>", e.g. 1-12')


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: {"model": m.Error} for code in codes}


READ_ERRORS = _errors(422)
WRITE_ERRORS = _errors(401, 403, 409, 422, 503)


def build_router(ctx) -> APIRouter:
    router = APIRouter()
    daemon = ctx.daemon

    def role(*roles: str):
        return Depends(requires(lambda request: ctx.tokens, ctx.forbidden, *roles))

    Dealer = Annotated[Principal, role("dealer")]
    # The pit boss has a supervisor's rights (resolve, void, correct, alerts, audit, settlements).
    Supervisor = Annotated[Principal, role("supervisor", "pit")]
    Technician = Annotated[Principal, role("technician")]
    DealerOrSupervisor = Annotated[Principal, role("dealer", "supervisor", "pit")]
    AnyRole = Annotated[Principal, role(*ROLES)]
    SupervisorOrTechnician = Annotated[Principal, role("supervisor", "pit", "technician")]

    # ------------------------------------------------------------------ helpers

    def table():
        return daemon.table

    def current_coup() -> dict:
        t = table()
        payload = t.last_payload("coup/current")
        if payload is None:  # nothing dealt or published yet
            payload = t.engine.snapshot().to_dict()
            payload["announce"] = f"Punto {payload['punto_total']}, Banco {payload['banco_total']}"
        payload = dict(payload)
        payload["bets_open_for"] = None if t.engine.shoe_state().shoe_over else t.betting_coup()
        return payload

    def event_out(seq: int, event: Event) -> dict:
        return {"seq": seq, "t": event.t, "kind": event.kind.value, "source": event.source, "data": event.data}

    def rejection(outs: list) -> dict | None:
        for out in outs:
            if (isinstance(out, Publish) and out.topic == "alerts/event" and out.payload.get("action") == "raised"
                    and out.payload["alert"].get("kind") == "action_rejected"):
                return out.payload["alert"]
        return None

    async def write(request: Request, who: Principal, kind: Kind, data: dict, reason: str, action: str,
                    check=None) -> tuple[int, Event, list]:
        """Journal the event, let the core handle it, and answer with what it did (or why not)."""
        event = Event(daemon.clock(), kind, "api", {**data, "user": who.user, "role": who.role, "reason": reason})
        audit = {"action": action, "reason": reason, "data": data, "t": event.t}
        try:
            seq, journaled, outs = await asyncio.wait_for(asyncio.shield(daemon.submit_wait(event)),
                                                          ctx.write_timeout)
        except TimeoutError:
            message = (f"the {kind.value} event is queued but the core did not process it within "
                       f"{ctx.write_timeout:g} s; check /status before trying again")
            ctx.record(request, who, status=503, outcome="timeout", message=message, **audit)
            raise ApiError(503, message, code="timeout") from None
        except Exception as exc:  # the journal refused it: nothing was processed
            message = f"the journal could not take the {kind.value} event: {exc}"
            ctx.record(request, who, status=503, outcome="journal_error", message=message, **audit)
            raise ApiError(503, message, code="journal_error") from None
        alert = rejection(outs)
        problem = alert["message"] if alert is not None else (check(outs) if check else None)
        if problem is not None:
            ctx.record(request, who, status=409, outcome="rejected", journal_seq=seq, message=problem, **audit)
            raise ApiError(409, problem, code="rejected", journal_seq=seq, alert=alert)
        ctx.record(request, who, status=200, outcome="done", journal_seq=seq, **audit)
        return seq, journaled, outs

    def result(seq: int, event: Event, outs: list) -> dict:
        messages = [{"topic": o.topic, "retain": o.retain, "payload": o.payload} for o in outs if isinstance(o, Publish)]
        alerts = [{**msg["payload"]["alert"], "action": msg["payload"]["action"]}
                  for msg in messages if msg["topic"] == "alerts/event"]
        return {"journal_seq": seq, "event": event_out(seq, event), "alerts": alerts, "messages": messages,
                "coup": table().last_payload("coup/current")}

    def refuse(request: Request, who: Principal, action: str, reason: str, data: dict, status: int,
               message: str, **extra) -> ApiError:
        """A write refused before it reaches the journal (bad bets, a coup that is no longer current)."""
        ctx.record(request, who, action=action, reason=reason, data=data, status=status, outcome="refused",
                   message=message)
        return ApiError(status, message, **extra)

    def coup_guard(request, who, action, body: m.CoupAction) -> str:
        current = table().engine.snapshot().coup_id
        if body.coup_id is not None and body.coup_id != current:
            raise refuse(request, who, action, body.reason, {"coup_id": body.coup_id}, 409,
                         f"the current coup is {current}, not {body.coup_id}", code="rejected")
        return current

    # ------------------------------------------------------------------ health and status

    @router.get("/healthz", response_model=m.Health, tags=["health"],
                summary="Liveness: the daemon's event loop answers")
    async def healthz():
        return {"status": "ok"}

    @router.get("/readyz", response_model=m.Ready, tags=["health"], responses={503: {"model": m.Ready}},
                summary="Readiness: journal open, shoe port and link up, broker connected")
    async def readyz():
        checks, reasons = readiness()
        body = {"ready": not reasons, "reasons": reasons, "checks": checks}
        return JSONResponse(body, status_code=200 if not reasons else 503)

    def readiness() -> tuple[dict[str, bool], list[str]]:
        reasons: list[str] = []
        j = daemon.journal
        journal_ok = j is not None and not j.closed
        if not journal_ok:
            reasons.append("journal: not open")
        elif (why := j.writable()) is not None:   # a full or read-only disk holds dealing
            journal_ok = False
            reasons.append(f"journal: cannot be written ({why.replace('_', ' ')}): dealing is held")
        src = daemon.source
        link = (table().sources.get("shoe") or {}) if table() is not None else {}
        port_ok = src is not None and bool(src.connected)
        link_ok = link.get("link") != "down"
        if not port_ok:
            why = f": {src.last_error}" if src is not None and src.last_error else ""
            reasons.append(f"shoe: port {daemon.config.shoe.port} is not open{why}")
        elif not link_ok:
            reasons.append(f"shoe: the port is open but the shoe link is down: {link.get('reason')}")
        pub = daemon.publisher
        broker_ok = pub is not None and bool(pub.connected)
        if not broker_ok:
            last = pub.stats().get("last_error") if pub is not None else None
            reasons.append("broker: not connected" + (f": {last}" if last else ""))
        core_ok = daemon.ready.is_set()
        if not core_ok and not reasons:
            reasons.append("core: not ready yet")
        return {"journal": journal_ok, "shoe": port_ok and link_ok, "broker": broker_ok, "core": core_ok}, reasons

    @router.get("/status", response_model=m.Status, tags=["health"],
                summary="Sources and link state, broker, journal, version, uptime")
    async def status():
        t = table()
        src = daemon.source
        port = None
        if src is not None:
            port = {"port": daemon.config.shoe.port, "driver": daemon.config.shoe.driver,
                    "connected": bool(src.connected), "reconnects": src.reconnects, "bytes_in": src.bytes_in,
                    "last_error": src.last_error}
        j = daemon.journal
        journal = {"path": str(daemon.config.journal.path), "open": j is not None and not j.closed}
        if journal["open"]:
            journal["last_seq"] = j.last_seq()
            journal["writable"] = j.writable() or "yes"
        api = daemon.config.api
        return {
            "table_id": daemon.config.table.id,
            "version": __version__,
            "uptime_s": round(time.monotonic() - daemon.started, 3),
            "ready": daemon.ready.is_set(),
            "events_processed": daemon.events_processed,
            "lights": t.lights,
            "active_alerts": len(t.active_alerts),
            "sources": dict(sorted(t.sources.items())),
            "shoe_port": port,
            "broker": daemon.publisher.stats() if daemon.publisher is not None else None,
            "camera": daemon.camera.stats() if daemon.camera is not None else None,
            "journal": journal,
            "api": {"host": api.host, "port": api.port, "tokens": len(ctx.tokens),
                    "stream_clients": len(ctx.streams.clients), "audit_log": str(ctx.audit.path)},
        }

    @router.get("/auth/whoami", response_model=m.Whoami, tags=["health"], responses=_errors(401),
                summary="Who a bearer token is: its user and role (the console signs in with it)")
    async def whoami(who: AnyRole):
        return {"user": who.user, "role": who.role}

    # ------------------------------------------------------------------ the game

    @router.get("/coup/current", response_model=m.Coup, tags=["game"],
                summary="The coup being dealt (the coup/current payload)")
    async def coup_current():
        return current_coup()

    @router.get("/coups", response_model=m.CoupList, tags=["game"], responses=READ_ERRORS,
                summary="Recall of the last coups (cards, sources, alerts, settlement)")
    async def coups(last: Annotated[int, Query(ge=1, le=1000, description="how many (default 10)")] = 10,
                    shoe: Annotated[int | None, Query(ge=1, le=1_000_000, description="only this shoe")] = None):
        return {"coups": [recall(r) for r in daemon.journal.coups(last=last, shoe=shoe)]}

    def recall(record) -> dict:
        body = record.result if isinstance(record.result, dict) else {"result": record.result}
        return {**body, "coup_id": record.coup_id, "shoe": record.shoe, "coup": record.coup,
                "recorded": record.recorded}

    @router.get("/coups/{coup_id}", response_model=m.CoupRecall, tags=["game"], responses=_errors(404, 422),
                summary="Recall of one coup")
    async def coup_recall(coup_id: Annotated[str, COUP_ID]):
        record = daemon.journal.coup(coup_id)
        if record is None:
            current = table().engine.snapshot().coup_id
            hint = "; it is the coup being dealt: see /coup/current" if coup_id == current else ""
            raise ApiError(404, f"coup {coup_id} has no recorded result{hint}")
        return recall(record)

    @router.get("/shoe", response_model=m.Shoe, tags=["game"],
                summary="The shoe: composition dealt and remaining, cut card, last hand")
    async def shoe():
        state = table().engine.shoe_state().to_dict()
        decks = state["decks"]
        remaining = state["remaining_by_code"]
        state["dealt_by_code"] = {code: max(0, decks - remaining.get(code, 0)) for code in ALL_CODES}
        full = [4 * decks * (4 if v == 0 else 1) for v in range(10)]
        state["dealt_by_value"] = [max(0, full[v] - n) for v, n in enumerate(state["remaining_by_value"])]
        return state

    @router.get("/odds", tags=["game"],
                summary="Exact probabilities and house edge of each bet for the cards left in the shoe")
    async def odds() -> dict[str, Any]:
        from shoe_daemon.game.odds import NotEnoughCardsError, analyze

        state = table().engine.shoe_state()
        body: dict[str, Any] = {"shoe": state.shoe, "after_coup": state.coups}
        try:
            return {**body, "available": True, **analyze(list(state.remaining_by_value)).to_dict()}
        except NotEnoughCardsError as exc:
            return {**body, "available": False, "reason": str(exc)}

    @router.get("/roads", tags=["game"],
                summary="The scoreboard roads of the shoe (bead plate, big road, derived roads, ask previews)")
    async def roads() -> dict[str, Any]:
        return table().roads.to_dict()

    @router.get("/stats", tags=["game"], summary="Shoe statistics: wins, naturals, pairs, streaks")
    async def stats() -> dict[str, Any]:
        return table().roads.stats()

    @router.get("/alerts", response_model=m.Alerts, tags=["alerts"], responses=READ_ERRORS,
                summary="Active alerts, and the cleared ones")
    async def alerts(state: Annotated[str, Query(pattern="^(active|past|all)$",
                                                 description="active, past or all (default)")] = "all"):
        t = table()
        active = sorted(t.active_alerts.values(), key=lambda a: a["id"]) if state in ("active", "all") else []
        past = list(t.past_alerts) if state in ("past", "all") else []
        return {"active": active, "past": past}

    @router.get("/journal", response_model=m.JournalPage, tags=["journal"], responses=READ_ERRORS,
                summary="The event journal, paged by seq")
    async def journal(after: Annotated[int, Query(ge=0, le=2**62, description="events with seq > after")] = 0,
                      limit: Annotated[int, Query(ge=1, le=1000)] = 100,
                      last: Annotated[int | None, Query(ge=1, le=1000,
                                                        description="instead: the last N events")] = None):
        j = daemon.journal
        entries = j.last_events(last) if last is not None else list(j.events(since_seq=after, limit=limit))
        last_seq = j.last_seq()
        events = [event_out(e.seq, e.event) for e in entries]
        next_after = events[-1]["seq"] if events else (after if last is None else None)
        return {"events": events, "last_seq": last_seq, "next_after": next_after}

    # ------------------------------------------------------------------ dealer

    @router.post("/coup/card", response_model=m.WriteResult, tags=["dealer"], responses=WRITE_ERRORS,
                 summary="Enter a card by hand (an unreadable card is pending, or the shoe link is down)")
    async def manual_card(body: m.ManualCard, who: Dealer, request: Request):
        seq, event, outs = await write(request, who, Kind.CARD, {"card": body.card}, body.reason, "manual_card")
        return result(seq, event, outs)

    @router.post("/bets", response_model=m.BetsResult, tags=["dealer"], responses=WRITE_ERRORS,
                 summary="The bets of every box for a coup, checked against the table limits")
    async def place_bets(body: m.PlaceBets, who: Dealer, request: Request):
        t = table()
        data = {"bets": [b.model_dump() for b in body.bets]}
        if body.coup_id is not None:
            data["coup_id"] = body.coup_id
        seats = ctx.live_config.table.seats
        try:
            bets = parse_bets(data["bets"])
        except BetError as exc:
            raise refuse(request, who, "bets", body.reason, data, 422, str(exc)) from None
        for bet in bets:
            if bet.seat > seats:
                raise refuse(request, who, "bets", body.reason, data, 422,
                             f"seat {bet.seat}: this table has seats 1-{seats}")
        if t.limits is not None:
            violations = t.limits.validate(bets)
            if violations:
                raise refuse(request, who, "bets", body.reason, data, 422,
                             "; ".join(v.message for v in violations),
                             code="over_limit", violations=[v.to_dict() for v in violations])
        open_for = None if t.engine.shoe_state().shoe_over else t.betting_coup()
        coup_id = body.coup_id or open_for
        if coup_id is None:
            raise refuse(request, who, "bets", body.reason, data, 409, "the shoe is over: a new shoe is due",
                         code="rejected")
        data["coup_id"] = coup_id
        seq, _event, _outs = await write(request, who, Kind.BETS, data, body.reason, "bets")
        totals = {}
        for kind in ("punto", "banco", "tie"):
            totals[kind] = format_amount(sum((b.amount for b in bets if b.kind.value == kind), to_decimal(0)))
        return {"journal_seq": seq, "coup_id": coup_id, "bets": [b.to_dict() for b in bets], "totals": totals,
                "limits": t.limits.to_dict() if t.limits is not None else {}}

    @router.get("/coups/{coup_id}/settlement", response_model=m.Settlement, tags=["dealer"],
                responses=_errors(401, 403, 404, 422), summary="The payout of every bet of a coup")
    async def settlement(coup_id: Annotated[str, COUP_ID], who: DealerOrSupervisor):
        t = table()
        if coup_id in t.settlements:
            return t.settlements[coup_id]
        placed = t.bets.get(coup_id)
        if placed is not None:
            return {"coup_id": coup_id, "status": "open", "placed": {k: placed[k] for k in ("by", "t", "reason")},
                    "bets": placed["bets"]}
        record = daemon.journal.coup(coup_id)
        if record is not None and isinstance(record.result, dict) and record.result.get("settlement"):
            return record.result["settlement"]
        raise ApiError(404, f"no bets were placed on coup {coup_id}")

    # ------------------------------------------------------------------ supervisor

    @router.post("/alerts/{alert_id}/clear", response_model=m.WriteResult, tags=["supervisor"],
                 responses=WRITE_ERRORS, summary="Clear an active alert")
    async def clear_alert(alert_id: Annotated[str, ALERT_ID], body: m.Write, who: Supervisor, request: Request):
        seq, event, outs = await write(request, who, Kind.CLEAR_ALERT, {"alert_id": alert_id}, body.reason,
                                       "clear_alert")
        return result(seq, event, outs)

    @router.post("/alerts/{alert_id}/ack", response_model=m.WriteResult, tags=["supervisor"],
                 responses=WRITE_ERRORS, summary="Acknowledge an active alert (it stays active)")
    async def ack_alert(alert_id: Annotated[str, ALERT_ID], body: m.Write, who: Supervisor, request: Request):
        def acknowledged(outs):
            for o in outs:
                if isinstance(o, Publish) and o.topic == "alerts/event" and o.payload.get("action") == "acknowledged":
                    return None
            return f"no active alert {alert_id!r} to acknowledge"

        seq, event, outs = await write(request, who, Kind.ACK_ALERT, {"alert_id": alert_id}, body.reason,
                                       "ack_alert", check=acknowledged)
        return result(seq, event, outs)

    @router.post("/coup/void", response_model=m.WriteResult, tags=["supervisor"], responses=WRITE_ERRORS,
                 summary="Void the current coup (a settled one loses its result; bets are returned)")
    async def void_coup(body: m.CoupAction, who: Supervisor, request: Request):
        coup_id = coup_guard(request, who, "void_coup", body)
        seq, event, outs = await write(request, who, Kind.VOID_COUP, {"coup_id": coup_id}, body.reason, "void_coup")
        return result(seq, event, outs)

    @router.post("/coup/resolve", response_model=m.WriteResult, tags=["supervisor"], responses=WRITE_ERRORS,
                 summary="Release a held coup: it goes on by the tableau")
    async def resolve_coup(body: m.CoupAction, who: Supervisor, request: Request):
        coup_id = coup_guard(request, who, "resolve_coup", body)
        seq, event, outs = await write(request, who, Kind.RESOLVE_COUP, {"coup_id": coup_id}, body.reason,
                                       "resolve_coup")
        return result(seq, event, outs)

    @router.post("/coup/correct", response_model=m.WriteResult, tags=["supervisor"], responses=WRITE_ERRORS,
                 summary="Correct a card of the current coup (the original reading is kept in the alert)")
    async def correct_card(body: m.CorrectCard, who: Supervisor, request: Request):
        coup_id = coup_guard(request, who, "correct_card", body)
        seq, event, outs = await write(request, who, Kind.CORRECT_CARD,
                                       {"coup_id": coup_id, "index": body.index, "card": body.card},
                                       body.reason, "correct_card")
        return result(seq, event, outs)

    @router.get("/audit", response_model=m.AuditEntries, tags=["supervisor"], responses=_errors(401, 403, 422),
                summary="The last entries of the audit log")
    async def audit(who: SupervisorOrTechnician,
                    last: Annotated[int, Query(ge=1, le=10_000)] = 100):
        return {"path": str(ctx.audit.path), "entries": ctx.audit.tail(last)}

    # ------------------------------------------------------------------ technician

    @router.post("/shoe/new", response_model=m.WriteResult, tags=["technician"], responses=WRITE_ERRORS,
                 summary="Start a new shoe")
    async def new_shoe(body: m.NewShoe, who: Technician, request: Request):
        data = {} if body.decks is None else {"decks": body.decks}
        seq, event, outs = await write(request, who, Kind.NEW_SHOE, data, body.reason, "new_shoe")
        return result(seq, event, outs)

    @router.post("/config/reload", response_model=m.ReloadResult, tags=["technician"], responses=WRITE_ERRORS,
                 summary="Re-read the configuration file: apply what can change live, list what needs a restart")
    async def reload_config(body: m.Write, who: Technician, request: Request):
        from shoe_daemon.config import ConfigError, load_config
        from shoe_daemon.core.table import limits_from_config

        path = getattr(daemon, "config_path", None)
        if not path:
            raise refuse(request, who, "config_reload", body.reason, {}, 409,
                         "the daemon was started without a configuration file: there is nothing to re-read",
                         code="no_config_file")
        try:
            new = load_config(path)
        except ConfigError as exc:
            raise refuse(request, who, "config_reload", body.reason, {"path": str(path)}, 409,
                         f"{exc}; nothing was applied", code="config_invalid") from None
        applied = [k for k in _changed(ctx.live_config, new) if _live(k)]
        restart = [k for k in _changed(daemon.config, new) if not _live(k)]
        data = {"path": str(path), "applied": applied, "restart_needed": restart}
        # Journaled (and audited) first, then applied.
        seq, _event, _outs = await write(request, who, Kind.CONFIG_RELOAD, data, body.reason, "config_reload")
        if "api.tokens" in applied:
            ctx.tokens.update(new.api.tokens)
        if any(k.startswith("table.limits.") for k in applied):
            table().limits = limits_from_config(new.table.limits)
        if "log.level" in applied:
            logging.getLogger().setLevel(new.log.level.upper())
        ctx.live_config = new
        log.info("configuration reloaded by %s: applied %s; needs a restart: %s", who.user, applied or "nothing",
                 restart or "nothing")
        return {"journal_seq": seq, "path": str(path), "applied": applied, "restart_needed": restart}

    # ------------------------------------------------------------------ metrics and stream

    @router.get("/metrics", tags=["health"], response_class=Response,
                responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                                 "description": "Prometheus text exposition"}},
                summary="Prometheus metrics")
    async def metrics():
        from shoe_daemon.api.metrics import CONTENT_TYPE

        return Response(ctx.metrics.render(), media_type=CONTENT_TYPE)

    @router.websocket("/stream")
    async def stream(ws: WebSocket,
                     topic: Annotated[list[str] | None, Query()] = None,
                     retained: bool = True):
        await ctx.streams.serve(ws, table().retained(), topic or [], retained)

    return router


# Settings a reload applies at once; every other change needs a restart.
LIVE_KEYS = ("api.tokens", "table.limits.", "table.seats", "log.level", "display.")


def _live(key: str) -> bool:
    return any(key == k or (k.endswith(".") and key.startswith(k)) for k in LIVE_KEYS)


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(data, dict):
        for k, v in data.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
    else:
        out[prefix] = data
    return out


def _changed(old, new) -> list[str]:
    """Dotted keys whose value differs (token values compared by digest, never shown)."""
    a, b = _flat(old.model_dump(mode="json")), _flat(new.model_dump(mode="json"))
    a["api.tokens"], b["api.tokens"] = _tokens(old), _tokens(new)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def _tokens(config) -> list:
    return [(t.user, t.role, (t.digest() or b"").hex()) for t in config.api.tokens]
