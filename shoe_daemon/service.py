"""Process wiring: sources -> journal -> core -> sinks, on one asyncio loop.

Everything here is I/O; every game fact comes from the core (``Table``). The
order per event is fixed: append to the journal (durable), then hand to the
core, then render its outputs. A crash between any two steps loses nothing:
on start the journal is verified and the current shoe replayed into a fresh
core, and the retained state is published again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from shoe_daemon import __version__
from shoe_daemon.events import Event
from shoe_daemon.outputs import Publish, RecordCoup, SetLights
from shoe_daemon.sdnotify import Notifier

log = logging.getLogger("shoe_daemon")

EXIT_JOURNAL_CORRUPT = 3
BATCH_MAX = 256          # events journaled in one transaction (group commit)
WATCHDOG_STALL = 10.0
RESUME_SCAN = 200        # journaled events searched for the shoe link's resume point    # s without progress from the reader before pings stop


class Daemon:
    def __init__(self, config, *, notifier: Notifier | None = None, clock: Callable[[], float] = time.time):
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
        self.listeners: list[Callable[[Publish], None]] = []   # e.g. the API's live stream
        self._queue: asyncio.Queue[list[Event]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.events_processed = 0

    # -- start-up ----------------------------------------------------------------
    def open_journal(self):
        from shoe_daemon.journal import Journal

        self.notifier.status("verifying journal")
        self.journal = Journal.open(self.config.journal.path, synchronous=self.config.journal.synchronous)
        return self.journal

    def build_table(self):
        from shoe_daemon.table import Table

        self.table = Table.from_config(self.config)
        return self.table

    def replay(self) -> int:
        """Feed the current shoe's journaled events to the fresh core; returns the count."""
        self.notifier.status("replaying the current shoe")
        n = 0
        for _seq, event in self.journal.current_shoe_events():
            # Only state is rebuilt here; what was published before the crash stays
            # published, and the retained topics go out again once connected.
            self.table.handle(event)
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
        self.publisher = MqttPublisher(
            mqtt, table_id=self.config.table.id, version=__version__, on_alert=self._publisher_alert
        )
        for out in self.table.retained():
            self.publisher.publish(out.topic, out.encode(), out.qos, out.retain)
        self.publisher.start()

    def start_source(self):
        from shoe_daemon.sources import get_driver
        from shoe_daemon.sources.serial_source import SerialSource

        driver = get_driver(self.config.shoe.driver)(self.config.shoe)
        if hasattr(driver, "resume"):
            from shoe_daemon.sources.protocol_driver import resume_point

            # Continue the shoe's link session after the last event journaled (newest first).
            recent = [entry.event for entry in reversed(self.journal.last_events(RESUME_SCAN))]
            driver.resume(resume_point(recent))
        self.source = SerialSource(self.config.shoe, driver, self._from_thread)
        self.source.start()

    # -- the loop ---------------------------------------------------------------------
    def _from_thread(self, events: list[Event]) -> None:
        self._loop.call_soon_threadsafe(self._queue.put_nowait, events)

    def submit(self, events: list[Event]) -> None:
        """Events from the loop's own thread (API, internal alerts)."""
        self._queue.put_nowait(events)

    def _publisher_alert(self, kind: str, evidence: dict) -> None:
        # Called from paho's thread: becomes an ordinary journaled event.
        from shoe_daemon.events import Kind

        event = Event(self.clock(), Kind.FAULT, "mqtt", {"code": kind, **evidence})
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, [event])

    def process(self, batch: list[Event]) -> None:
        batch = [self.table.prepare(event) for event in batch]
        self.journal.append_many(batch)
        for event in batch:
            for out in self.table.handle(event):
                self.render(out)
        self.events_processed += len(batch)
        if not self.ready.is_set() and self.source is not None and self.source.connected:
            self._set_ready()

    def render(self, out) -> None:
        if isinstance(out, Publish):
            self.publisher.publish(out.topic, out.encode(), out.qos, out.retain)
            for listener in self.listeners:
                listener(out)
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
            if self.source is None or time.monotonic() - self.source.last_progress < WATCHDOG_STALL:
                self.notifier.watchdog()

    async def run(self, stop: asyncio.Event) -> int:
        from shoe_daemon.journal import JournalCorrupt

        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        try:
            self.open_journal()
        except JournalCorrupt as exc:
            log.error("journal %s is corrupt: %s; refusing to deal. "
                      "Run `shoe-daemon journal recover` (docs/operations.md).", self.config.journal.path, exc)
            self.notifier.status(f"journal corrupt: {exc}")
            return EXIT_JOURNAL_CORRUPT
        self.build_table()
        replayed = self.replay()
        log.info("journal verified; %d events of the current shoe replayed", replayed)
        self.start_mqtt()
        self.start_source()
        watchdog = None
        interval = self.notifier.watchdog_interval()
        if interval:
            watchdog = asyncio.create_task(self._watchdog(interval))
        getter = None
        stopper = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                getter = asyncio.create_task(self._queue.get())
                done, _ = await asyncio.wait({getter, stopper}, timeout=0.5, return_when=asyncio.FIRST_COMPLETED)
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
            stopper.cancel()
            if watchdog:
                watchdog.cancel()
            self.shutdown()
        return 0

    def shutdown(self) -> None:
        self.notifier.stopping("shutting down")
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
