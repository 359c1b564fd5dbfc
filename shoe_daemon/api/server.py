"""uvicorn in the daemon's own event loop, as one more task.

The daemon owns the signals (uvicorn's handlers are not installed) and binds the
socket itself, so a port that is taken is one clear log line, not an exit: the
table keeps dealing without its API.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket

import uvicorn

from shoe_daemon.api.app import create_app

log = logging.getLogger("shoe_daemon.api")

START_TIMEOUT = 5.0
STOP_TIMEOUT = 5.0
WARM_UP_TIMEOUT = 5.0


def is_loopback(host: str) -> bool:
    from shoe_daemon.config import _is_loopback_host

    return _is_loopback_host(host)


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self):
        yield  # SIGTERM/SIGINT stay the daemon's: it stops us


def bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio then sets TCP_NODELAY on every connection (else a keep-alive
    # response waits ~40 ms for the client's delayed ACK).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.set_inheritable(False)
    except OSError:
        sock.close()
        raise
    return sock


class ApiServer:
    def __init__(self, daemon):
        self.daemon = daemon
        self.app = create_app(daemon)
        cfg = daemon.config.api
        self.host, self.port = cfg.host, cfg.port
        self.scheme = "https" if cfg.tls else "http"
        tls = {"ssl_certfile": cfg.tls_cert, "ssl_keyfile": cfg.tls_key} if cfg.tls else {}
        self.config = uvicorn.Config(
            self.app, host=cfg.host, port=cfg.port, lifespan="off", log_level="warning", access_log=False,
            server_header=False, proxy_headers=False, timeout_graceful_shutdown=2, ws_ping_interval=20.0, **tls,
        )
        self.server = _Server(self.config)
        self.task: asyncio.Task | None = None
        self.sock: socket.socket | None = None

    @property
    def ctx(self):
        return self.app.state.ctx

    async def start(self) -> bool:
        cfg = self.daemon.config.api
        if not cfg.tls and not is_loopback(cfg.host):
            # Allowed by allow_plain_http_off_loopback only (config.py refuses it otherwise): say so
            # at every start, loudly.
            log.warning("HTTP API on %s WITHOUT TLS: bearer tokens cross the network in plain text "
                        "(allow_plain_http_off_loopback = true); set [api] tls_cert and tls_key", cfg.host)
        try:
            self.sock = bind(self.host, self.port)
        except OSError as exc:
            log.error("HTTP API not started: cannot listen on %s:%s: %s ([api] host/port)", self.host, self.port, exc)
            return False
        self.port = self.sock.getsockname()[1]
        self.task = asyncio.create_task(self.server.serve(sockets=[self.sock]), name="http-api")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while not self.server.started and not self.task.done() and loop.time() < deadline:
            await asyncio.sleep(0.01)
        if not self.server.started:
            log.error("HTTP API did not start on %s:%s", self.host, self.port)
            return False
        log.info("HTTP API on %s://%s:%s (docs at /docs)", self.scheme, self.host, self.port)
        await self._warm_up()
        return True

    async def _warm_up(self) -> None:
        """One request to our own /healthz before the table deals: the first request through
        uvicorn, Starlette and FastAPI imports and builds what they make lazily (about 0.1 s on
        the loop, 0.4 s on a loaded machine), which must not stall the loop while cards come in."""
        import ssl

        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.host, self.host)
        context = None
        if self.scheme == "https":   # our own certificate, on our own socket
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        writer = None
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, self.port, ssl=context),
                                                    WARM_UP_TIMEOUT)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            await asyncio.wait_for(reader.read(), WARM_UP_TIMEOUT)
        except (OSError, TimeoutError, ssl.SSLError) as exc:
            log.debug("HTTP API warm-up request failed (not needed to serve): %s", exc)
        finally:
            if writer is not None:
                writer.close()

    async def stop(self) -> None:
        if self.task is None:
            return
        self.ctx.streams.close_all()
        self.server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self.task), STOP_TIMEOUT)
        except (TimeoutError, asyncio.CancelledError):
            self.task.cancel()
        except BaseException as exc:  # noqa: BLE001 - the API must never stop the daemon's shutdown
            log.error("HTTP API stopped with an error: %r", exc)
        finally:
            self.task = None
            with contextlib.suppress(OSError):
                self.sock.close()
