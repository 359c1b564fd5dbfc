"""Process wiring: sources -> journal -> core -> sinks, on one asyncio loop.

Everything here is I/O; every game fact comes from the core (``Table``), fed
through the one ``Pipeline`` (shoe_daemon/core/pipeline.py): append to the
journal (durable), then hand to the core, then render its outputs. A crash between any two steps loses nothing:
on start the journal is verified and the current shoe replayed into a fresh
core, and the retained state is published again.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import time
from collections.abc import Callable

from shoe_daemon import __version__
from shoe_daemon.core.events import Event, Kind
from shoe_daemon.core.outputs import Lights, Publish, RecordCoup, SetLights, canonical_json
from shoe_daemon.sdnotify import Notifier

log = logging.getLogger("shoe_daemon")

EXIT_JOURNAL_CORRUPT = 3
EXIT_JOURNAL_UNAVAILABLE = 4   # read-only or full file system at start: systemd restarts it, not in a loop
START_WAIT = 60.0        # s a start waits for a writable journal (retrying) before it exits with 4
START_RETRY = 2.0        # s between those tries
JOURNAL_RETRY = 1.0      # s between looks at a journal that refused a write while dealing
BATCH_MAX = 256          # events journaled in one transaction (group commit)
GC_YOUNG_THRESHOLD = 20_000  # the cyclic collector's young generation while dealing (Daemon.run)
WATCHDOG_STALL = 10.0    # s without progress from the reader before pings stop
RESUME_SCAN = 200        # journaled events searched for the shoe link's resume point
REPUBLISH_TAIL = 512     # journaled events whose messages are published again after a restart
BACKLOG_MAX = 2000       # messages waiting for a connected broker before a source thread is held back
BACKLOG_WAIT = 0.5       # s a source thread is held back at most (its link keeps its own timers)


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
        self.pipeline = None                  # shoe_daemon.core.pipeline.Pipeline, once the table is built
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
        # While run() deals, a batch's journal commit is made durable off the loop (Journal.sync in
        # a thread): what the batch made waits here until then (nothing published that is not
        # journaled), and so do the API's writes' answers.
        self._deferring = False
        self._unsynced_out: list[Publish] = []
        self._unsynced_results: list[tuple[asyncio.Future, tuple]] = []
        self._sync_task: asyncio.Future | None = None   # Journal.sync running in a thread
        self._republish: list[Publish] = []   # the replayed tail's messages, for start_mqtt
        self._standby = None                  # the shoe link that lights the stop while a start is held
        self._gc_threshold: tuple[int, ...] | None = None   # the collector's, before run() set its own

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The asyncio loop ``run`` runs on (None before it starts): where other threads hand work."""
        return self._loop

    # -- start-up ----------------------------------------------------------------
    def open_journal(self):
        from shoe_daemon.journal import Journal

        self.notifier.status("verifying journal")
        self.journal = Journal.open(self.config.journal.path, synchronous=self.config.journal.synchronous)
        return self.journal

    def build_table(self):
        from shoe_daemon.core.pipeline import Pipeline
        from shoe_daemon.core.table import Table

        self.table = Table.from_config(self.config)
        self.pipeline = Pipeline(self.table, journal=_TimedJournal(self), emit=self.render)
        return self.table

    def replay(self) -> int:
        """Feed the current shoe's journaled events to the fresh core; returns the count."""
        self.notifier.status("replaying the current shoe")
        from shoe_daemon.game import odds

        # The exact odds' table (about 0.2 s, once per process) is built now, not by the first
        # new shoe dealt: that would hold the loop and every card behind it.
        odds.setup()

        def rewrite_lost_record(out) -> None:
            # Only state is rebuilt here; what was published before the crash stays published,
            # and the retained topics go out again once connected. A crash between an event's
            # append and its coup record lost the record (derived data, not in the chain): write it again.
            if isinstance(out, RecordCoup):
                stored = self.journal.coup(out.coup_id)
                if stored is None or stored.result != json.loads(canonical_json(out.result)):
                    self.journal.record_coup(out.coup_id, out.shoe, out.coup, out.result)

        # The messages of the last events journaled may never have reached the broker (a kill
        # between the journal's commit and the publisher's socket, or a backlog waiting for it):
        # they go out again once connected, with their own seq and bytes (subscribers dedupe by seq).
        entries = list(self.journal.current_shoe_events())
        tail_from = max(0, len(entries) - REPUBLISH_TAIL)
        position = 0
        self._republish = []

        def on_output(out) -> None:
            rewrite_lost_record(out)
            if position > tail_from and isinstance(out, Publish):
                self._republish.append(out)

        def events():
            nonlocal position
            for _seq, event in entries:
                position += 1
                yield event

        return self.pipeline.restore(events(), on_output)

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
        # The replayed tail's messages, then the retained state they do not carry, in seq order (a
        # display drops a message whose seq is below one it has seen).
        first = {(m.topic, m.payload["seq"]): m for m in self._republish}
        for m in self.table.retained():
            first.setdefault((m.topic, m.payload["seq"]), m)
        self._republish = []
        for out in sorted(first.values(), key=lambda m: m.payload["seq"]):
            self.publisher.publish(out.topic, out.encode(), out.qos, out.retain)
        self.publisher.start()

    def start_camera(self):
        """The overhead camera, when configured: a second card source (OpenCV loads only here)."""
        from shoe_daemon.sources.camera_source import CameraSource

        self.camera = CameraSource(self.config.camera, self._from_thread)
        self.camera.start()

    def start_source(self):

        driver = self._new_driver()
        # A driver may continue its shoe's session after the last events journaled (newest first).
        driver.resume([entry.event for entry in reversed(self.journal.last_events(RESUME_SCAN))])
        self.source = self._new_source(driver)
        self.source.start()

    def _new_driver(self):
        from shoe_daemon.sources import get_driver

        shoe = self.config.shoe
        return get_driver(shoe.driver)(shoe.driver_settings)

    def _new_source(self, driver):
        from shoe_daemon.sources.serial_source import SerialSource

        return SerialSource(self.config.shoe, self.wrap_driver(driver), self._from_thread)

    def _start_standby(self) -> None:
        """While the start is held (the journal cannot be written): the shoe's link only to light
        its stop, when the driver can keep it without acknowledging events (the shoe keeps what is
        dealt meanwhile; the real start fetches it). Started once; stopped by _stop_standby."""
        if self._standby is not None:
            return
        driver = self._new_driver()
        if not driver.standby():
            return
        self._standby = self._new_source(driver)
        self._standby.set_lights(Lights.ERROR)
        self._standby.start()
        log.warning("shoe link opened for the stop light only: no card is taken until the journal can be written")

    def _stop_standby(self) -> None:
        if self._standby is not None:
            self._standby.stop()
            self._standby = None

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
        event = Event(self.clock(), Kind.FAULT, "mqtt", {"code": kind, **evidence})
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, [event])

    def process(self, batch: list[Event]) -> list[Event]:
        """Feed a batch through the pipeline; returns the events the journal refused (empty when
        all went through): not handled, not published, to be fed again once it takes writes. A
        person's write among them fails at once (the API answers 503) and is not fed again."""
        from shoe_daemon.core.errors import NotJournaled

        waiters = {id(e): self._waiters.pop(id(e))[1] for e in batch if id(e) in self._waiters} if self._waiters else {}
        pending: list[Event] = []
        try:
            handled = self.pipeline.feed(batch)
        except NotJournaled as refused:
            handled, pending, cause = refused.handled, refused.pending, refused.__cause__
            if not _journal_unavailable(cause):
                for future in waiters.values():
                    if not future.done():
                        future.set_exception(cause)
                raise cause from None
            kept = []
            for event in pending:
                future = waiters.pop(id(event), None)
                if future is None:
                    kept.append(event)
                elif not future.done():
                    future.set_exception(cause)
            pending = kept
        for original, item in zip(batch, handled, strict=False):
            future = waiters.get(id(original))
            if future is not None and not future.done():
                if self._deferring:
                    self._unsynced_results.append((future, (item.seq, item.event, item.outputs)))
                else:
                    future.set_result((item.seq, item.event, item.outputs))
        self.events_processed += len(handled)
        if not self.ready.is_set() and self.source is not None and self.source.connected:
            self._set_ready()
        return pending

    async def _hold_for_journal(self, pending: list[Event], stop: asyncio.Event) -> None:
        """The journal's file system refused a write while dealing (full, read-only, I/O error):
        hold the dealing (nothing is handled or published, the queue keeps what arrives), light the
        shoe's stop, say why, and go on by itself once the journal takes writes again, the held
        events first and an alert saying what happened."""
        since = self.clock()
        cause = self.journal.writable() or "io_error"
        log.error("journal unavailable (%s) while dealing: dealing held, %d event(s) waiting; "
                  "resuming by itself once the journal can be written", cause, len(pending))
        self.notifier.status(f"journal unavailable ({cause}): dealing held")
        if self.source is not None:
            self.source.set_lights(Lights.ERROR)
        while not stop.is_set():
            if self.journal.writable() is None:
                self.journal.flush_pending()
                alert = Event(self.clock(), Kind.FAULT, "journal", {
                    "code": "journal_unavailable", "severity": "warning", "cause": cause, "since": since,
                    "held": len(pending), "text": f"the journal could not be written ({cause.replace('_', ' ')}) "
                    f"for {self.clock() - since:.1f} s: dealing was held, no event lost"})
                pending = self.process([alert, *pending])
                await self._flush(stop)
                if not pending:
                    log.warning("the journal is writable again: dealing resumed")
                    self.notifier.status(f"dealing: table {self.config.table.id}")
                    if self.source is not None:
                        self.source.set_lights(self.table.lights)   # the core's, as before the hold
                    return
            try:
                await asyncio.wait_for(stop.wait(), JOURNAL_RETRY)
            except TimeoutError:
                pass
        log.error("stopped while the journal was unavailable: %d event(s) not journaled", len(pending))

    async def _flush(self, stop: asyncio.Event) -> None:
        """Make the journal's last commits durable in a thread (an fsync is milliseconds, at times
        hundreds on a busy disk: never on the loop, which answers the API and the broker), then send
        what they made. A disk that fails the fsync holds it all, retried, until it passes."""
        while self.journal is not None:
            task, self._sync_task = self._sync_task, None
            try:
                if task is not None:
                    await task                  # started by the append, while the core worked
                if not self.journal.unsynced:
                    break
                await asyncio.to_thread(self.journal.sync)
            except OSError as exc:
                log.error("journal: cannot sync to disk (%s): nothing is published until it can; retrying", exc)
                try:
                    await asyncio.wait_for(stop.wait(), JOURNAL_RETRY)
                except TimeoutError:
                    continue
                return    # stopping: shutdown() tries once more
        self._send_synced()

    def _start_sync(self) -> None:
        """A batch was just committed: make it durable in a thread now, while the core handles it
        on the loop (the fsync waits on the disk, the core on the CPU); _flush waits for both."""
        if self._deferring and (self._sync_task is None or self._sync_task.done()):
            self._sync_task = self._loop.run_in_executor(None, self.journal.sync)

    def _send_synced(self) -> None:
        outs, self._unsynced_out = self._unsynced_out, []
        for out in outs:
            self._send(out)
        results, self._unsynced_results = self._unsynced_results, []
        for future, result in results:
            if not future.done():
                future.set_result(result)

    def render(self, out) -> None:
        if isinstance(out, Publish):
            if self._deferring:
                self._unsynced_out.append(out)      # sent by _flush once its event is on disk
            else:
                self._send(out)
        elif isinstance(out, SetLights):
            if self.source is not None:
                self.source.set_lights(out.state)
        elif isinstance(out, RecordCoup):
            from shoe_daemon.journal import JournalUnavailable

            try:
                self.journal.record_coup(out.coup_id, out.shoe, out.coup, out.result)
            except JournalUnavailable as exc:
                # The journal keeps the row and writes it once the disk takes writes again (the
                # next append, or the hold that a refused append starts, flushes it).
                log.warning("recall record of coup %s kept for later: %s", out.coup_id, exc)

    def _send(self, out: Publish) -> None:
        started = time.perf_counter()
        self.publisher.publish(out.topic, out.encode(), out.qos, out.retain)
        for listener in self.listeners:
            listener(out)
        if self.metrics is not None:
            self.metrics.published(out, time.perf_counter() - started)

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

    async def _start_journal(self, stop: asyncio.Event) -> int | None:
        """Open, verify and replay the journal; None when done, else the exit status.

        A journal that cannot be written (read-only or full file system, I/O error) is not a crash:
        nothing is dealt, STATUS= says why, and it is tried again every START_RETRY s; after
        START_WAIT s the daemon exits with EXIT_JOURNAL_UNAVAILABLE (the unit restarts it after
        RestartSec, so a start is tried about once a minute, never in a tight loop)."""
        from shoe_daemon.journal import JournalCorrupt, JournalUnavailable, JournalVersionError

        began = time.monotonic()
        deadline = began + START_WAIT
        said = cause = None
        while True:
            try:
                self.open_journal()
                why = self.journal.writable()
                if why is not None:
                    raise JournalUnavailable(f"{self.journal.path}: the journal's file system is "
                                             f"{why.replace('_', ' ')} (less than {self.journal.RESERVE_BYTES} "
                                             "bytes free, or not writable)", cause=why)
                self.build_table()
                replayed = self.replay()
                log.info("journal verified; %d events of the current shoe replayed", replayed)
                if said is not None:
                    held = round(time.monotonic() - began, 1)
                    log.warning("the journal is writable again after %.1f s: starting", held)
                    # Nothing could be published while it lasted (nothing is, unless journaled): the
                    # outage is journaled now, and so shows as an alert (warning: it is over).
                    from shoe_daemon.core.events import Kind

                    self.submit([Event(self.clock(), Kind.FAULT, "journal", {
                        "code": "journal_unavailable", "severity": "warning", "cause": cause,
                        "text": f"the journal could not be written at start for {held} s ({cause}); "
                                "dealing was held", "held_s": held})])
                return None
            except (JournalCorrupt, JournalVersionError) as exc:
                log.error("%s; refusing to deal. Set the journal aside and start a fresh one with "
                          "`shoe-daemon journal recover --out FILE --carry-shoe` (docs/journal.md).", exc)
                self.notifier.status(f"journal corrupt: {exc}")
                return EXIT_JOURNAL_CORRUPT
            except (JournalUnavailable, OSError) as exc:
                if self.journal is not None:
                    self.journal.close()
                    self.journal = None
                cause = getattr(exc, "cause", "io_error")
                if said != str(exc):
                    log.error("journal unavailable (%s): %s; dealing held: nothing is dealt or published until "
                              "the journal can be written; retrying every %g s (exit status %d after %g s)",
                              cause, exc, START_RETRY, EXIT_JOURNAL_UNAVAILABLE, START_WAIT)
                    said = str(exc)
                self.notifier.status(f"journal unavailable ({cause}): dealing held: {exc}")
                self._start_standby()
                if time.monotonic() >= deadline:
                    log.error("journal still unavailable after %g s: exiting with status %d",
                              START_WAIT, EXIT_JOURNAL_UNAVAILABLE)
                    return EXIT_JOURNAL_UNAVAILABLE
                self.notifier.notify(f"EXTEND_TIMEOUT_USEC={int((START_RETRY + 30) * 1e6)}")
                try:
                    await asyncio.wait_for(stop.wait(), START_RETRY)
                except TimeoutError:
                    continue
                return 0

    def check_audit(self) -> None:
        """Verify the API's audit log against its record in the journal (docs/journal.md): a file
        that fails is moved aside and an error alert is raised (journaled like any fault)."""
        if not self.config.api.enabled:
            return
        from shoe_daemon.journal import JournalError
        from shoe_daemon.journal.audit import audit_path, check_at_start

        path = audit_path(self.config.journal.path)
        try:
            result = check_at_start(self.journal, path)
        except (JournalError, OSError) as exc:
            log.error("audit log %s: cannot verify it: %s", path, exc)
            return
        if result.adopted:
            log.info("audit log %s: %d line(s) recorded in the journal (it had no record of them)", path,
                     result.adopted)
        if result.report.ok:
            return
        log.error("%s; moved aside as %s; a new audit log starts (docs/journal.md)", result.report.summary(),
                  result.set_aside)
        self.submit([Event(self.clock(), Kind.FAULT, "audit", {
            "code": "audit_log_mismatch", "severity": "error", "text": result.report.problem,
            "file": str(path), "set_aside": result.set_aside})])

    async def run(self, stop: asyncio.Event) -> int:
        self._loop = asyncio.get_running_loop()
        self._queue = asyncio.Queue()
        try:
            status = await self._start_journal(stop)
        finally:
            self._stop_standby()      # before the real link opens the port
        if status is not None:
            return status
        self.journal.defer_sync()      # durable off the loop: _flush
        # Under synchronous=normal nothing waits for a sync: each message leaves as the core makes it.
        self._deferring = self.journal.deferred
        self.check_audit()
        self.start_mqtt()
        self.start_source()
        if self.config.camera.enabled:
            self.start_camera()
        self.notifier.status(f"waiting for the shoe on {self.config.shoe.port}")
        if self.config.api.enabled:
            await self.start_api()
        # Start-up is over, and what it built (modules, the app, the replayed shoe) lives as long
        # as the process: frozen, it is no longer walked by every full collection (50-100 ms of
        # the loop each, 300 ms on a loaded machine, while cards come in).
        gc.collect()
        gc.freeze()
        # A card allocates a few hundred short-lived dicts and lists that reference counting frees;
        # at CPython's young-generation threshold (700) the collector ran every few cards, ~10 % of
        # the CPU a card (bench pipeline). 20,000 young objects are a few MB at most.
        self._gc_threshold = gc.get_threshold()
        gc.set_threshold(GC_YOUNG_THRESHOLD, *self._gc_threshold[1:])
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
                pending = self.process(batch)
                await self._flush(stop)
                if pending:
                    await self._hold_for_journal(pending, stop)
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
        gc.unfreeze()   # what start-up froze goes back to the collector (a test process runs many daemons)
        if self._gc_threshold is not None:
            gc.set_threshold(*self._gc_threshold)
            self._gc_threshold = None
        if self.camera is not None:
            self.camera.stop()
        if self.source is not None:
            self.source.stop()
            # Events read before the port closed are still journaled.
            while self._queue is not None and not self._queue.empty():
                self.process(self._queue.get_nowait())
        self._deferring = False
        if self.journal is not None and self.publisher is not None:
            try:
                self.journal.sync()
                self._send_synced()
            except OSError as exc:
                log.error("journal: cannot sync to disk (%s): %d message(s) not published (a restart publishes "
                          "the last events' messages again)", exc, len(self._unsynced_out))
        if self.publisher is not None:
            self.publisher.stop(timeout=2.0)
        if self.broker is not None:
            self.broker.stop()
        if self.journal is not None:
            self.journal.close()


class _TimedJournal:
    """The pipeline's journal: the daemon's, with the time each group commit takes measured."""

    def __init__(self, daemon: Daemon):
        self._daemon = daemon

    def append_many(self, events: list[Event]) -> list[int]:
        started = time.perf_counter()
        seqs = self._daemon.journal.append_many(events)
        if self._daemon.metrics is not None:
            self._daemon.metrics.journaled(events, time.perf_counter() - started)
        self._daemon._start_sync()
        return seqs


def _journal_unavailable(exc: BaseException | None) -> bool:
    from shoe_daemon.journal import JournalUnavailable

    return isinstance(exc, JournalUnavailable)
