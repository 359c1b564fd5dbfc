"""The browser scoreboard: a static page that draws the table from MQTT over WebSockets.

The dealer's and supervisor's console (``static/console.html``, console.js, console.css;
docs/console.md) is served next to it at ``/console/``: it speaks to the HTTP API of the same
server (bearer token, role checks, audit log) and follows the table over its ``/stream``
WebSocket. Both pages share ``fonts.css`` (the vendored fonts), ``common.js`` and the
language catalogues ``i18n/<lang>.json``.

The display (``static/``: index.html, app.js, style.css and the vendored MQTT.js) is
served by the HTTP API at ``/display/``; it reads ``/display/config.json`` (see
:func:`display_config`) to find the broker's websockets listener, the topic prefix,
the table limits and the table id, then subscribes to ``<prefix>/#`` and redraws on
every message (docs/display.md). Everything it shows comes from the retained topics,
so a reload, a reconnect or a broker restart redraws the whole table.

    from shoe_daemon import web
    web.mount(app, config)        # in the API's app factory (FastAPI)

This module imports FastAPI only inside :func:`mount`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

STATIC_DIR = Path(__file__).resolve().parent / "static"
MOUNT_PATH = "/display"
CONSOLE_PATH = "/console"
MOSQUITTO_WS_PORT = 9001        # the conventional Mosquitto websockets listener (docs/display.md)
PROTOCOL_VERSION = 4            # MQTT 3.1.1: both Mosquitto and the embedded broker (amqtt) speak it
CONFIG_SCHEMA = 1


def static_dir() -> Path:
    """The directory holding index.html, app.js, style.css and vendor/."""
    return STATIC_DIR


def broker_ws_url(mqtt) -> str | None:
    """The websockets URL a browser uses for the broker of ``[mqtt]``, or None when there is none.

    * No ``host``: the embedded broker, whose websockets listener is ``embedded_ws_port``
      on 127.0.0.1 (it binds loopback only, so the display runs on the table PC); None
      when that port is not set.
    * A ``host``: that broker's websockets listener, by convention on port 9001
      (``listener 9001`` + ``protocol websockets`` in mosquitto.conf), ``wss://`` when
      the daemon's connection uses TLS. Another URL: ``display_config(..., ws_url=...)``
      or the page's ``?broker=`` parameter.
    """
    if mqtt.host is None:
        if mqtt.embedded_ws_port is None:
            return None
        return f"ws://127.0.0.1:{mqtt.embedded_ws_port}"
    scheme = "wss" if mqtt.tls_ca else "ws"
    host = f"[{mqtt.host}]" if ":" in mqtt.host else mqtt.host
    return f"{scheme}://{host}:{MOSQUITTO_WS_PORT}"


def _limit(b) -> dict[str, str]:
    # Decimals as strings: exact, and the page formats them.
    return {"min": str(b.min), "max": str(b.max), "table_max": str(b.table_max)}


def display_config(config, *, ws_url: str | None = None) -> dict[str, Any]:
    """What the page needs, as served at ``/display/config.json``.

    ``{"schema": 1, "table_id", "prefix", "decks", "broker": {"url", "protocol_version": 4},
    "limits": {"punto"|"banco"|"tie": {"min", "max", "table_max"}}, "profile", "lang"}``
    (``profile`` and ``lang``: ``[display]``, the defaults a page's ``?profile=``/``?lang=``
    override). ``broker.url`` is
    ``ws_url`` if given, else :func:`broker_ws_url` (None: no websockets listener is known;
    the page then says so). No credential ever goes in here: the file is public.
    """
    from shoe_daemon.publish.topics import normalize_prefix

    limits = config.table.limits
    return {
        "schema": CONFIG_SCHEMA,
        "table_id": config.table.id,
        "prefix": normalize_prefix(config.mqtt.prefix, config.table.id),
        "decks": config.table.decks,
        "broker": {"url": ws_url or broker_ws_url(config.mqtt), "protocol_version": PROTOCOL_VERSION},
        "limits": {"punto": _limit(limits.punto), "banco": _limit(limits.banco), "tie": _limit(limits.tie)},
        "seats": config.table.seats,
        "profile": config.display.profile,
        "lang": config.display.lang,
    }


def mount(app, config, *, path: str = MOUNT_PATH, ws_url: str | None = None,
          console_path: str | None = CONSOLE_PATH) -> None:
    """Serve the page on ``app`` (FastAPI): ``<path>/`` the static files, ``<path>/config.json``;
    and the console at ``<console_path>/`` (None: no console).

    ``config`` is the daemon's Config, or a callable returning the current one (so a
    configuration reload shows at the next page load). Call it before any catch-all
    route; the config route is added before the static mount so it wins.
    """
    from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
    from fastapi.staticfiles import StaticFiles

    path = "/" + path.strip("/")
    current: Callable[[], Any] = config if callable(config) else (lambda: config)

    async def config_json() -> JSONResponse:
        return JSONResponse(display_config(current(), ws_url=ws_url), headers={"Cache-Control": "no-store"})

    async def to_index() -> RedirectResponse:
        return RedirectResponse(url=path + "/", status_code=307)

    app.add_api_route(f"{path}/config.json", config_json, methods=["GET"], include_in_schema=False)
    app.add_api_route(path, to_index, methods=["GET"], include_in_schema=False)
    if console_path:
        console_path = "/" + console_path.strip("/")

        async def console_page() -> FileResponse:
            return FileResponse(STATIC_DIR / "console.html", headers={"Cache-Control": "no-store"})

        async def to_console() -> RedirectResponse:
            return RedirectResponse(url=console_path + "/", status_code=307)

        # The console's own files are the display's static folder too (fonts, common.js, i18n/).
        app.add_api_route(console_path + "/", console_page, methods=["GET"], include_in_schema=False)
        app.add_api_route(f"{console_path}/config.json", config_json, methods=["GET"], include_in_schema=False)
        app.add_api_route(console_path, to_console, methods=["GET"], include_in_schema=False)
        app.mount(console_path, StaticFiles(directory=str(STATIC_DIR)), name="console")
    app.mount(path, StaticFiles(directory=str(STATIC_DIR), html=True), name="display")
