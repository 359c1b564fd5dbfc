"""Process wiring: sources -> journal -> core -> sinks, on one asyncio loop.

Everything here is I/O; every game fact comes from the core (``Table``). The
order per event is fixed: append to the journal (durable), then hand to the
core, then render its outputs. A crash between any two steps loses nothing:
on start the journal is verified and the current shoe replayed into a fresh
core, and the retained state is published again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable

from shoe_daemon import __version__
from shoe_daemon.events import Event
from shoe_daemon.outputs import Publish, RecordCoup, SetLights, canonical_json
from shoe_daemon.sdnotify import Notifier

log = logging.getLogger("shoe_daemon")

EXIT_JOURNAL_CORRUPT = 3
BATCH_MAX = 256          # events journaled in one transaction (group commit)
WATCHDOG_STALL = 10.0    # s without progress from the reader before pings stop
RESUME_SCAN = 200        # journaled events searched for the shoe link's resume point
BACKLOG_MAX = 2000       # messages waiting for a connected broker before a source thread is held back
BACKLOG_WAIT = 0.5       # s a source thread is held back at most (its link keeps its own timers)


class _Rendered(list):
    """The core's outputs, each rendered as the core appends it (see Table.handle): the dealt card's
    message is on its way while the core computes the result, roads, statistics and odds of the
    coup it ends."""

    __slots__ = ("_render",)

    def __init__(self, render: Callable[[object], None]):
        super().__init__()
        self._render = render

    def append(self, out) -> None:
        super().append(out)
        self._render(out)


class Daemon:
    def __init__(self, config, *, notifier: Notifier | None = None, clock: Callable[[], float] = time.time,
                 config_path: str | None = None):
        self.config = config
        self.notifier = notifier or Notifier()
        self.clock = clock
        self.started = time.monotonic()
        self.ready = asyncio.Event()
        self.journal = None
        self.table = None
        self.publisher = None
        self.broker = None
        self.source = None
        self.camera = None
        self.listeners: list[Callable[[Publish], None]] = []   # e.g. the API's live stream
        self._queue: asyncio.Queue[list[Event]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.events_processed = 0
        self.config_path = config_path        # the file the API's config reload re-reads
        self.api = None                       # shoe_daemon.api.ApiServer, when [api] is enabled
        self.metrics = None                   # shoe_daemon.api.metrics.Metrics (its own registry)
        self._waiters: dict[int, tuple[Event, asyncio.Future]] = {}

    # -- start-up ----------------------------------------------------------------
    def open_journal(self):
        from shoe_daemon.journal import Journal

        self.notifier.status("verifying journal")
        self.journal = Journal.open(self.config.journal.path, synchronous=self.config.journal.synchronous)
        return self.journal

    def build_table(self):
        from shoe_daemon.table import Table, limits_from_config

        self.table = Table.from_config(self.config)
        self.table.limits = limits_from_config(self.config.table.limits)
        return self.table

    def replay(self) -> int:
        """Feed the current shoe's journaled events to the fresh core; returns the count."""
        self.notifier.status("replaying the current shoe")
        from shoe_daemon.game import odds

        # The exact odds' table (about 0.2 s, once per process) is built now, not by the first
        # new shoe dealt: that would hold the loop and every card behind it.
        odds.setup()
        n = 0
        # A fresh core's first retained state took the first message seqs in the journal's first
        # run: take them again, so that a replay numbers its messages as the live run did.
        self.table.retained()
        for _seq, event in self.journal.current_shoe_events():
            # Only state is rebuilt here; what was published before the crash stays
            # published, and the retained topics go out again once connected.
            for out in self.table.handle(event):
                if isinstance(out, RecordCoup):
                    # A crash between an event's append and its coup record lost the record
                    # (derived data, not in the chain): write it again.
                    stored = self.journal.coup(out.coup_id)
                    if stored is None or stored.result != json.loads(canonical_json(out.result)):
                        self.journal.record_coup(out.coup_id, out.shoe, out.coup, out.result)
            n += 1
        return n

    def start_mqtt(self):
        from shoe_daemon.publish.mqtt import MqttPublisher

        mqtt = self.config.mqtt
        if mqtt.host is None:
            from shoe_daemon.publish.broker import EmbeddedBroker

            self.broker = EmbeddedBroker(port=mqtt.embedded_port, ws_port=mqtt.embedded_ws_port)
            self.broker.start()
            mqtt = self.broker.client_config(mqtt)
        # On this loop (when running): a message goes to the broker's socket from render(), with no
        # thread hand-off; paho's socket is read by the same loop.
        self.publisher = MqttPublisher(
            mqtt, table_id=self.config.table.id, version=__version__, on_alert=self._publisher_alert,
            loop=self._loop,
        )
        for out in self.table.retained():
            self.publisher.publish(out.topic, out.encode(), out.qos, out.retain)
        self.publisher.start()

    def start_camera(self):
        """The overhead camera, when configured: a second card source (OpenCV loads only here)."""
        from shoe_daemon.sources.camera_source import CameraSource

        self.camera = CameraSource(self.config.camera, self._from_thread)
        self.camera.start()

    def start_source(self):
        from shoe_daemon.sources import get_driver
        from shoe_daemon.sources.serial_source import SerialSource

        driver = get_driver(self.config.shoe.driver)(self.config.shoe)
        if hasattr(driver, "resume"):
            from shoe_daemon.sources.protocol_driver import resume_point

            # Continue the shoe's link session after the last event journaled (newest first).
            recent = [entry.event for entry in reversed(self.journal.last_events(RESUME_SCAN))]
            driver.resume(resume_point(recent))
        self.source = SerialSource(self.config.shoe, self.wrap_driver(driver), self._from_thread)
        self.source.start()

    def wrap_driver(self, driver):
        """The driver the serial source runs: this one. `shoe-daemon replay` overrides it to put the
        recorded timestamps on the bytes it replays (shoe_daemon/recording/replay.py)."""
        return driver

    async def start_api(self) -> None:
        """The HTTP API (uvicorn) as a task of this loop; a port it cannot bind is logged, not fatal."""
        try:
            from shoe_daemon.api import ApiServer
        except ImportError as exc:
            log.error("HTTP API disabled: it needs the 'api' extra (fastapi, uvicorn, prometheus-client): %s", exc)
            return
        try:
            self.api = ApiServer(self)
            await self.api.start()
        except Exception:  # the table deals on without its API
            log.exception("HTTP API not started")
            self.api = None

    # -- the loop ---------------------------------------------------------------------
    def _from_thread(self, events: list[Event]) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, events)
        self._hold_back()

    def _hold_back(self) -> None:
        """Flow control, for a shoe dealing faster than the broker takes the messages (an emulator at
        full speed): the source thread waits while the publisher's backlog to a connected broker is
        large, so the shoe waits for its ACKs instead of the publisher's queue filling up to its
        limit (memory, then dropped messages). Never while the broker is away: then the queue is
        the buffer, and dealing goes on."""
        publisher = self.publisher
        deadline = None
        while getattr(publisher, "backlog", 0) > BACKLOG_MAX and getattr(publisher, "connected", False):
            now = time.monotonic()
            if deadline is None:
                deadline = now + BACKLOG_WAIT
            elif now >= deadline:
                return
            time.sleep(0.002)

    def submit(self, events: list[Event]) -> None:
        """Events from the loop's own thread (API, internal alerts)."""
        self._queue.put_nowait(events)

    def submit_wait(self, event: Event) -> asyncio.Future:
        """submit() one event; the future resolves to (journal seq, the event as journaled, the
        core's outputs) once the core has handled it, or to the journal's exception."""
        future = self._loop.create_future()
        self._waiters[id(event)] = (event, future)
        self._queue.put_nowait([event])
        return future

    def _publisher_alert(self, kind: str, evidence: dict) -> None:
        # Called on the loop's thread (or a publishing thread): becomes an ordinary journaled event.
        from shoe_daemon.events import Kind

        event = Event(self.clock(), Kind.FAULT, "mqtt", {"code": kind, **evidence})
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, [event])

    def process(self, batch: list[Event]) -> None:
        # prepare() may read the core's state (a new shoe carries the active alerts and the message
        # seq): such an event starts a batch of its own, so the events before it are handled first.
        cuts = [i for i in range(1, len(batch)) if self.table.prepare(batch[i]) is not batch[i]]
        if cuts:
            for a, b in zip([0, *cuts], [*cuts, len(batch)], strict=True):
                self.process(batch[a:b])
            return
        waiters = [self._waiters.pop(id(event), (None, None))[1] for event in batch] if self._waiters else None
        batch = [self.table.prepare(event) for event in batch]
        started = time.perf_counter()
        try:
            seqs = self.journal.append_many(batch)
        except Exception as exc:
            for future in waiters or ():
                if future is not None and not future.done():
                    future.set_exception(exc)
            raise
        if self.metrics is not None:
            self.metrics.journaled(batch, time.perf_counter() - started)
        for i, event in enumerate(batch):
            outs = self.table.handle(event, _Rendered(self.render))
            if waiters and waiters[i] is not None and not waiters[i].done():
                waiters[i].set_result((seqs[i], event, outs))
        self.events_processed += len(batch)
        if not self.ready.is_set() and self.source is not None and self.source.connected:
            self._set_ready()

    def render(self, out) -> None:
        if isinstance(out, Publish):
            started = time.perf_counter()
            self.publisher.publish(out.topic, out.encode(), out.qos, out.retain)
            for listener in self.listeners:
                listener(out)
            if self.metrics is not None:
                self.metrics.published(out, time.perf_counter() - started)
        elif isinstance(out, SetLights):
            if self.source is not None:
                self.source.set_lights(out.state)
        elif isinstance(out, RecordCoup):
            self.journal.record_coup(out.coup_id, out.shoe, out.coup, out.result)

    def _set_ready(self) -> None:
        self.ready.set()
        elapsed = time.monotonic() - self.started
        log.info("ready in %.3f s", elapsed)
        self.notifier.ready(f"dealing: table {self.config.table.id}")

    async def _watchdog(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            if self.source is not None and time.monotonic() - self.source.last_progress >= WATCHDOG_STALL:
                continue  # a stuck reader: let systemd restart us
            if self.ready.is_set():
                self.notifier.watchdog()
            else:
                # Still waiting for the shoe: a healthy loop asks for more start-up time.
                self.notifier.notify(f"EXTEND_TIMEOUT_USEC={int(interval * 3e6)}")

    async def run(self, stop: asyncio.Event) -> int:
        from shoe_daemon.journal import JournalCorrupt, JournalVersionError

        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        try:
            self.open_journal()
        except (JournalCorrupt, JournalVersionError) as exc:
            log.error("%s; refusing to deal. Set the journal aside and start a fresh one with "
                      "`shoe-daemon journal recover --out FILE --carry-shoe` (docs/journal.md).", exc)
            self.notifier.status(f"journal corrupt: {exc}")
            return EXIT_JOURNAL_CORRUPT
        self.build_table()
        replayed = self.replay()
        log.info("journal verified; %d events of the current shoe replayed", replayed)
        self.start_mqtt()
        self.start_source()
        if self.config.camera.enabled:
            self.start_camera()
        self.notifier.status(f"waiting for the shoe on {self.config.shoe.port}")
        if self.config.api.enabled:
            await self.start_api()
        watchdog = None
        interval = self.notifier.watchdog_interval()
        if interval:
            watchdog = asyncio.create_task(self._watchdog(interval))
        getter = None
        stopper = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                getter = asyncio.create_task(self._queue.get())
                # Until ready, look at the port often: READY=1 must not wait for a first event.
                timeout = 0.5 if self.ready.is_set() else 0.02
                done, _ = await asyncio.wait({getter, stopper}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                if getter not in done:
                    getter.cancel()
                    if not self.ready.is_set() and self.source.connected:
                        self._set_ready()
                    continue
                batch = getter.result()
                while len(batch) < BATCH_MAX and not self._queue.empty():
                    batch = batch + self._queue.get_nowait()
                self.process(batch)
        finally:
            self.notifier.stopping("shutting down")
            stopper.cancel()
            if watchdog:
                watchdog.cancel()
            if self.api is not None:
                await self.api.stop()
            self.shutdown()
        return 0

    def shutdown(self) -> None:
        if self.camera is not None:
            self.camera.stop()
        if self.source is not None:
            self.source.stop()
            # Events read before the port closed are still journaled.
            while self._queue is not None and not self._queue.empty():
                self.process(self._queue.get_nowait())
        if self.publisher is not None:
            self.publisher.stop(timeout=2.0)
        if self.broker is not None:
            self.broker.stop()
        if self.journal is not None:
            self.journal.close()
