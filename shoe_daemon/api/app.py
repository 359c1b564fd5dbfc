"""The FastAPI app of one daemon: ``create_app(daemon)``.

The app talks to the daemon through a small surface only, which keeps it
testable with the real daemon or a stand-in:

* reads: ``daemon.table`` (the core: state, alerts, bets, retained payloads),
  ``daemon.journal`` (events, coups), ``daemon.publisher.stats()``,
  ``daemon.source`` (the serial port), ``daemon.config``, ``daemon.ready``;
* writes: ``daemon.submit_wait(event)``: the event is journaled, then handled by
  the core, and the future gives back what the core produced;
* ``daemon.listeners`` for the live stream, ``daemon.metrics`` for the counters.

Handlers run on the daemon's own loop, like the core, so reading the table in a
handler is safe; nothing but ``submit_wait`` changes it.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request

from shoe_daemon import __version__
from shoe_daemon.api import errors
from shoe_daemon.api.audit import AuditLog, audit_path
from shoe_daemon.api.auth import Principal, TokenStore
from shoe_daemon.api.metrics import Metrics
from shoe_daemon.api.stream import Streams

log = logging.getLogger("shoe_daemon.api")

WRITE_TIMEOUT = 10.0   # s a write waits for the core before answering 503

DESCRIPTION = """\
The HTTP API of one Punto Banco table's shoe daemon: health, status, the coup being
dealt, recall of past coups, the shoe, alerts, the event journal, the dealer's bets
and their settlement, supervisor and technician actions, Prometheus metrics, and a
live WebSocket stream (`/stream`) of the same messages the daemon publishes to MQTT.

Reads need no token. Every write needs a bearer token of the right role
(`dealer`, `supervisor`, `technician`) and a `reason`; it is journaled as an event
before the core processes it, and written to the audit log. Errors are always
`{"error": {"status", "code", "message", ...}}`. Amounts are decimal strings.
See docs/api.md.
"""


class ApiContext:
    """What the routes share: the daemon, tokens, the audit log, metrics, streams."""

    def __init__(self, daemon, *, audit: AuditLog | None = None):
        self.daemon = daemon
        self.tokens = TokenStore(daemon.config.api.tokens)
        self.audit = audit or AuditLog(audit_path(daemon.config.journal.path), journal=daemon.journal)
        if getattr(daemon, "metrics", None) is None:
            daemon.metrics = Metrics(daemon)
        self.metrics: Metrics = daemon.metrics
        self.streams = Streams()
        daemon.listeners.append(self.streams.publish)
        self.write_timeout = WRITE_TIMEOUT
        # What a config reload has put in force (starts as the running configuration).
        self.live_config = daemon.config

    def record(self, request: Request | None, who: Principal | None, *, action: str, status: int, outcome: str,
               reason: str | None = None, data: dict | None = None, journal_seq: int | None = None,
               message: str | None = None, t: float | None = None) -> None:
        entry = {
            "t": t if t is not None else self.daemon.clock(),
            "user": who.user if who else None,
            "role": who.role if who else None,
            "action": action,
            "reason": reason,
            "data": data or {},
            "status": status,
            "outcome": outcome,
            "journal_seq": journal_seq,
            "message": message,
        }
        if request is not None:
            entry["request"] = {"method": request.method, "path": request.url.path,
                                "client": request.client.host if request.client else None}
        try:
            self.audit.write(entry)
        except OSError as exc:
            log.error("audit log %s: cannot write: %s", self.audit.path, exc)

    def forbidden(self, request: Request, who: Principal, message: str) -> None:
        self.record(request, who, action=f"{request.method} {request.url.path}", status=403,
                    outcome="forbidden", message=message)


def create_app(daemon, *, audit: AuditLog | None = None) -> FastAPI:
    from shoe_daemon.api.routes import build_router

    ctx = ApiContext(daemon, audit=audit)
    app = FastAPI(
        title="shoe-daemon",
        version=__version__,
        description=DESCRIPTION,
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.ctx = ctx
    errors.install(app)
    from shoe_daemon.api.metrics import RequestCounter
    from shoe_daemon.api.middleware import WriteGate

    # Writes: the token before the body, and the body capped (innermost of the middlewares, so the
    # request counter below sees its 401 and 413 too).
    app.add_middleware(WriteGate, tokens=lambda: ctx.tokens,
                       max_body=lambda: ctx.live_config.api.max_body_bytes)

    # Outermost: counts every answer. A plain ASGI middleware (not @app.middleware("http"), whose
    # task group and streams cost a request about ten more turns of the daemon's loop).
    app.add_middleware(RequestCounter, counter=lambda: ctx.metrics.requests)

    app.include_router(build_router(ctx))
    # The table display (static page + its config.json), open to read like the other GETs.
    from shoe_daemon import web

    web.mount(app, lambda: ctx.live_config)
    return app
