"""``shoe-daemon floor``: the writer, the MQTT consumer, the gap checker and the web app, together.

    service = FloorService(config).start()      # returns once subscribed (or raises)
    ...
    service.stop()                              # commits what it received, then stops

Each part has its own thread and its own database connection; the web app runs on
uvicorn in a thread (``http.port`` 0: a free port, see ``service.url``).
"""

from __future__ import annotations

import logging
import socket
import threading
import time

from .config import FloorConfig
from .consumer import Consumer
from .gaps import GapChecker
from .ingest import Writer
from .metrics import FloorMetrics
from .store import Store

log = logging.getLogger(__name__)


class FloorService:
    def __init__(self, config: FloorConfig, *, web: bool | None = None) -> None:
        self.config = config
        self.metrics = FloorMetrics()
        self.web_enabled = config.http.enabled if web is None else web
        self.writer = Writer(config.floor.database, config.floor.prefix, self.metrics,
                             batch_max=config.floor.batch_max, batch_wait=config.floor.batch_wait)
        self.consumer = Consumer(config, self.writer, self.metrics)
        self.writer.consumer = self.consumer.client_id
        self.gaps = GapChecker(config, self.metrics)
        self.server = None
        self._server_thread: threading.Thread | None = None
        self.port: int | None = None
        self.started_at = time.time()

    @property
    def url(self) -> str | None:
        return f"http://{self.config.http.host}:{self.port}" if self.port else None

    def start(self, timeout: float = 15.0, *, migrate: bool = True) -> FloorService:
        """``migrate``: bring the schema up to date first (False: the caller did, as ``shoe-daemon floor``
        does in a child process)."""
        Store.open(self.config.floor.database, migrate=migrate).close()     # once, before the threads
        self.writer.start()
        self.gaps.start()
        if self.web_enabled:
            self._start_web()
        self.consumer.start()
        if not self.consumer.subscribed.wait(timeout):
            log.warning("floor: not subscribed at the broker %s:%s yet (not reached: retrying in the "
                        "background; or the subscription refused: see above)",
                        self.config.broker.host, self.config.broker.port)
        return self

    def _start_web(self) -> None:
        import uvicorn

        from .web import create_app

        app = create_app(self.config, self.metrics, started_at=self.started_at)
        port = self.config.http.port
        if port == 0:
            with socket.socket() as s:
                s.bind((self.config.http.host, 0))
                port = s.getsockname()[1]
        self.port = port
        cfg = uvicorn.Config(app, host=self.config.http.host, port=port, log_level="warning", access_log=False)
        self.server = uvicorn.Server(cfg)
        self._server_thread = threading.Thread(target=self.server.run, name="floor-web", daemon=True)
        self._server_thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            if not self._server_thread.is_alive():
                raise RuntimeError(f"the floor page could not listen on {self.config.http.host}:{port}")
            time.sleep(0.02)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """True once every message received so far is committed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.writer.queue.empty() and self.writer.idle.is_set():
                return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        self.consumer.stop()
        self.writer.stop()
        self.gaps.stop()
        if self.server is not None:
            self.server.should_exit = True
            if self._server_thread is not None:
                self._server_thread.join(10)
