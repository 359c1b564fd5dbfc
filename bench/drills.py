"""Fault drills on real parts: the daemon as a subprocess, Mosquitto, emulated shoes on ptys.

    .venv/bin/python -m bench drills             # every drill (a few minutes)
    .venv/bin/python -m bench.drills sigkill flapping   # some of them

Each drill deals real cards through a misbehaving world and then counts, against the ground truth
(the emulator's or this process's own list of cards dealt):

- dealt / journaled / published: cards dealt by the shoe, card events in the daemon's journal,
  ``coup/card`` messages a persistent subscriber got (first arrivals);
- lost: dealt but never published; doubled: published more than once (same shoe counter);
- wrong: ``coup/result`` messages whose hands, totals or winner differ from the rules' result of
  the cards dealt;
- RSS: the daemon's resident memory at its first sample after start and its peak (sampled every
  50 ms from /proc; a restarted daemon starts a new sample series, the peak is the highest);
- /healthz: the slowest answer of the HTTP API's liveness probe, polled every 50 ms while the
  daemon runs (the probe has a 2 s timeout; a miss counts as 2000 ms).

Targets (issue 13): 0 lost, 0 doubled, 0 wrong; RSS never more than 20 MB above its start;
/healthz always within 100 ms. Not in ``make test``: the drills take minutes.

Drills (``DRILLS``, one row each, all run by ``run_drill``): ``sigkill`` (10 SIGKILLs mid-coup,
restart on the same journal), ``broker`` (10 Mosquitto restarts mid-coup), ``unplug`` (10 cable
pulls mid-coup), ``flapping`` (a whole 8-deck shoe with clustered 1.5 s unplugs at a dealer's
pace), ``frames`` (1,000,000 random frames on the protocol link around a dealt shoe), ``lines``
(100,000 random lines on a text link around a dealt shoe), ``disk_full`` (the journal's tmpfs
fills mid-shoe while the shoe deals: dealing held with the stop light and an alert, then space
returns and dealing resumes by itself), ``read_only`` (the daemon restarts on a read-only journal
file system: held, then the file system becomes writable and it starts by itself). Those two
also check what the operator sees (sd_notify STATUS, stop light, alert, no traceback, no exit);
a check that fails makes the row NOT met. They mount a small tmpfs (tests/journal/fs.py): as
root with CAP_SYS_ADMIN; elsewhere their rows say "skipped" and why.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import random
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from firmware_protocol.connection import ShoeConnection
from firmware_protocol.messages import CardDrawn, Message
from shoe_daemon.core.events import Kind
from shoe_daemon.emulator import DealerScript, EmulatedShoe, Faults
from shoe_daemon.emulator.dealer import Disconnect, Pause
from shoe_daemon.journal import Journal
from shoe_daemon.pty_line import PtyLine
from tests.e2e.harness import DaemonProcess, NotifySocket, write_config
from tests.e2e.rules import coups_from_dealt
from tests.journal.fs import CannotMount, fill, mounted_tmpfs, remount
from tests.support.mosquitto import MosquittoServer, Subscriber, free_port

PREFIX = "baccarat/e2e"
RSS_TARGET_MB = 20
HEALTHZ_TARGET_MS = 100


@dataclass
class Row:
    name: str
    dealt: int = 0
    journaled: int = 0
    published: int = 0
    lost: int = 0
    doubled: int = 0
    wrong: int = 0
    rss_start_mb: float = 0.0
    rss_peak_mb: float = 0.0
    healthz_ms: float = 0.0
    healthz_p99: float = 0.0
    healthz_n: int = 0
    seconds: float = 0.0
    note: str = ""
    checks: dict[str, bool] = field(default_factory=dict)   # what the drill saw besides the counts
    skipped: str = ""                                          # why the drill could not run here

    @property
    def ok(self) -> bool:
        return (not self.lost and not self.doubled and not self.wrong and self.dealt > 0 and self.healthz_n > 0
                and self.published >= self.dealt and all(self.checks.values())
                and self.rss_peak_mb - self.rss_start_mb <= RSS_TARGET_MB and self.healthz_ms <= HEALTHZ_TARGET_MS)

    @property
    def verdict(self) -> str:
        if self.skipped:
            return f"skipped: {self.skipped}"
        failed = [name for name, passed in self.checks.items() if not passed]
        return "met" if self.ok else "NOT met" + (f" (failed: {', '.join(failed)})" if failed else "")


# --------------------------------------------------------------------------- the rig


PROBE = r"""
import http.client, os, sys, time
pidfile, port, out = sys.argv[1], int(sys.argv[2]), open(sys.argv[3], "w", buffering=1)
t0 = time.monotonic()
while True:
    time.sleep(0.05)
    try:
        pid = int(open(pidfile).read() or 0)
    except (OSError, ValueError):
        continue
    if pid == 0:
        continue
    try:
        rss = next(int(l.split()[1]) for l in open(f"/proc/{pid}/status") if l.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration):
        continue
    t = time.perf_counter()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2.0)
        c.request("GET", "/healthz")
        ok = c.getresponse().status == 200
        c.close()
    except OSError:
        ok = False
    ms = (time.perf_counter() - t) * 1000 if ok else 2000.0
    out.write(f"{time.monotonic() - t0:.3f} {pid} {rss:.1f} {ms:.2f}\n")
"""


class Monitor:
    """Samples the daemon's RSS and times /healthz every 50 ms, from a separate process (so this
    process's own work, e.g. writing junk to the line, cannot slow the probe down)."""

    def __init__(self, daemon: DaemonProcess, api_port: int, workdir: Path):
        self.daemon = daemon
        self.pidfile = workdir / "probe.pid"
        self.samples_path = workdir / "probe.txt"
        self.pidfile.write_text("")
        self.rss_start: float | None = None
        self.rss_peak = 0.0
        self.healthz_max = 0.0
        self.healthz: list[tuple[float, float]] = []   # (seconds since the probe started, ms)
        self._proc = subprocess.Popen([sys.executable, "-c", PROBE, str(self.pidfile), str(api_port),
                                       str(self.samples_path)])
        deadline = time.monotonic() + 20
        while not self.samples_path.exists() and time.monotonic() < deadline:   # the probe is up
            time.sleep(0.02)
        self._target: tuple[int, float] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        # Point the probe at the daemon once it has been up (READY=1) for a second.
        while not self._stop.wait(0.05):
            target = self._target
            want = str(target[0]) if target and time.monotonic() - target[1] >= 1.0 else ""
            if self.pidfile.read_text() != want:
                self.pidfile.write_text(want)

    def resume(self) -> None:
        """The daemon has just started (READY=1 came): probe it from a second on."""
        self._target = (self.daemon.pid, time.monotonic())

    def pause(self) -> None:
        """Stop probing now (before a kill or a stop: a daemon going away is not a slow probe)."""
        self._target = None
        self.pidfile.write_text("")

    def wait_probing(self, timeout: float = 10.0) -> None:
        """Return once the probe has timed the running daemon at least once (a burst that starts
        earlier would partly go unprobed)."""
        mark = f" {self.daemon.pid} "
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if mark in self.samples_path.read_text():
                    return
            time.sleep(0.02)

    def stop(self) -> None:
        if self._proc.poll() is not None:
            return
        self._stop.set()
        self._thread.join(2)
        self.pidfile.write_text("")
        time.sleep(0.1)
        self._proc.terminate()
        self._proc.wait(5)
        first_pid = None
        for line in self.samples_path.read_text().splitlines():
            try:
                t, pid, rss, ms = line.split()
            except ValueError:
                continue
            if first_pid is None:
                first_pid = pid
                self.rss_start = float(rss)
            self.rss_peak = max(self.rss_peak, float(rss))
            self.healthz.append((float(t), float(ms)))
            self.healthz_max = max(self.healthz_max, float(ms))


class Rig:
    """Broker, subscriber, daemon and monitor in a temporary directory."""

    def __init__(self, workdir: Path, *, driver: str = "protocol", shoe_port: str, journal_dir: Path | None = None):
        self.workdir = workdir
        self.broker = MosquittoServer(persistence=True, workdir=workdir / "broker")
        (workdir / "broker").mkdir()
        self.broker.start()
        self.sub = Subscriber(self.broker.port, f"{PREFIX}/#", client_id="drill-display", persistent=True).start()
        self.journal = (journal_dir or workdir) / "journal.sqlite3"
        self.api_port = free_port()
        cfg = write_config(workdir / "daemon.toml", shoe_port=shoe_port, journal=self.journal,
                           mqtt_port=self.broker.port, log_level="warning", driver=driver,
                           burn="none" if driver == "text" else None, api_port=self.api_port)
        text = cfg.read_text()
        # The shipped back-off: the drills check the daemon as installed.
        text = text.replace("reconnect_min = 0.05", "reconnect_min = 0.5").replace("reconnect_max = 0.25",
                                                                                   "reconnect_max = 30.0")
        cfg.write_text(text)
        self.notify = NotifySocket()
        self.daemon = DaemonProcess(cfg, notify=self.notify, workdir=workdir)
        self.monitor: Monitor | None = None

    def start(self) -> Rig:
        self.daemon.start()
        self.monitor = Monitor(self.daemon, self.api_port, self.workdir)
        self.monitor.resume()
        return self

    def restart(self, *, wait_ready: bool = True) -> None:
        """Start the daemon again (after a kill or a stop); probed from a second after READY=1."""
        self.daemon.start(wait_ready=wait_ready)
        if wait_ready:
            self.monitor.resume()

    def wait_status(self, text: str, since: int = 0, timeout: float = 20.0) -> bool:
        """Whether the daemon's sd_notify STATUS= said ``text`` (its start) in one of its
        notifications after the first ``since``, within ``timeout``."""
        return self.notify.wait(lambda: any(f.get("STATUS", "").startswith(text)
                                            for _, f in self.notify.messages[since:]), timeout)

    def logs_clean(self) -> bool:
        """No traceback in any of this drill's daemon logs."""
        return not any("Traceback" in p.read_text(errors="replace") for p in self.workdir.glob("daemon-*.log"))

    def published_cards(self) -> int:
        return sum(1 for m in self.sub.snapshot() if m.topic == f"{PREFIX}/coup/card" and not m.retain)

    def alert_raised(self, code: str, cause: str) -> bool:
        """Whether an ``alerts/active`` message listed an alert of that code whose text names the cause."""
        for topic, body in self.stream():
            if topic == "alerts/active":
                for alert in body.get("alerts", []):
                    message = alert.get("message", "")
                    if code in json.dumps(alert) and (cause in message or cause.replace("_", " ") in message):
                        return True
        return False

    def finish(self) -> None:
        """Stop sampling, then stop the daemon (a daemon shutting down is not a slow /healthz)."""
        if self.monitor:
            self.monitor.stop()
        self.daemon.stop()

    def close(self) -> None:
        if self.monitor:
            self.monitor.stop()
        with contextlib.suppress(Exception):
            self.daemon.cleanup()
        self.sub.stop()
        self.broker.cleanup()
        self.notify.close()

    # -- counting ------------------------------------------------------------------------------
    def stream(self) -> list[tuple[str, dict]]:
        """What the display got, in arrival order, each message once: a redelivery of the same
        message (same seq, same bytes: QoS 1, a broker restart) is dropped; anything else counts."""
        seen: set[tuple[int, bytes]] = set()
        out = []
        for m in self.sub.snapshot():
            if m.retain or not m.topic.startswith(PREFIX + "/"):
                continue
            body = json.loads(m.payload)
            key = (body.get("seq", -1), bytes(m.payload))
            if key not in seen:
                seen.add(key)
                out.append((m.topic[len(PREFIX) + 1:], body))
        return out

    def count(self, row: Row, dealt: list, truth: dict | None, by_code: bool = False) -> None:
        """Fill ``row``; ``dealt`` is (counter, card) per card, or card codes with ``by_code`` (a text
        reader has no counter: its cards are compared in order by code)."""
        stream = self.stream()
        published = [b["card"] if by_code else (b["counter"], b["card"]) for s, b in stream if s == "coup/card"]
        with Journal.open(self.journal, readonly=True) as j:
            journaled = [e.event.data for e in j.events() if e.event.kind is Kind.CARD]
        if by_code:   # multisets of codes: a card missing is lost, one extra is doubled
            row.lost = sum((collections.Counter(dealt) - collections.Counter(published)).values())
            row.doubled = sum((collections.Counter(published) - collections.Counter(dealt)).values())
        row.dealt, row.journaled, row.published = len(dealt), len(journaled), len(published)
        pub = collections.Counter(published)
        if not by_code:
            row.lost = sum((collections.Counter(dealt) - pub).values())
            row.doubled = sum(n - 1 for n in pub.values() if n > 1)
        if truth is not None:
            for s, r in stream:
                if s != "coup/result":
                    continue
                exp = truth.get((r["shoe"], r["coup"]))
                if exp is None or (r["punto"], r["banco"], r["winner"]) != (exp.punto, exp.banco, exp.winner):
                    row.wrong += 1
        if self.monitor:
            self.monitor.stop()
            row.rss_start_mb = self.monitor.rss_start or 0.0
            row.rss_peak_mb = self.monitor.rss_peak
            row.healthz_ms = self.monitor.healthz_max
            times = sorted(ms for _, ms in self.monitor.healthz)
            if times:
                row.healthz_p99 = times[int(0.99 * (len(times) - 1))]
                row.healthz_n = len(times)
            if os.environ.get("DRILLS_VERBOSE"):
                print("   slowest /healthz (s, ms):", sorted(self.monitor.healthz, key=lambda x: -x[1])[:8],
                      flush=True)

    def wait_mid_coup(self, after: int, timeout: float = 30.0) -> int:
        """Wait for a card message, arrived after the first ``after`` messages, that leaves its coup
        open; returns how many messages had arrived then (the next call's ``after``)."""
        def mid(msgs):
            for i in range(len(msgs) - 1, after - 1, -1):
                m = msgs[i]
                if m.topic == f"{PREFIX}/coup/card" and not m.retain and json.loads(m.payload).get("next_side"):
                    return len(msgs)
            return None
        return self.sub.wait_for(mid, timeout=timeout)

    def wait_results(self, n: int, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            self.sub.wait_for(lambda msgs: sum(1 for m in msgs if m.topic == f"{PREFIX}/coup/result"
                                               and not m.retain) >= n, timeout=timeout)


def dealt_of(shoe) -> list[tuple[int, str]]:
    return [(d.counter, d.card) for d in shoe.dealt]


# --------------------------------------------------------------------------- one runner, one row per drill


@dataclass
class Run:
    """What a drill's act works with: the rig (started unless the drill starts it), its row (for
    notes and checks), the emulated shoe or the pty peer, and the journal's tmpfs (or None)."""

    rig: Rig
    row: Row
    shoe: EmulatedShoe | None
    peer: PtyLine | None
    fs: Path | None


@dataclass
class Dealt:
    """The ground truth an act returns: the cards dealt ((counter, card), or codes with
    ``by_code``), the rules' result of each coup, and how many results to wait for."""

    cards: list
    truth: dict
    coups: int
    by_code: bool = False


@dataclass(frozen=True)
class Drill:
    """One row of the table. ``shoe``: EmulatedShoe keywords (a shoe dealing on a pty), or None for
    a pty whose far end the act drives itself (``Run.peer``); ``journal_fs``: the journal on a
    tmpfs of that size; ``start``: False when the act starts the daemon and the shoe itself."""

    title: str
    act: Callable[[Run], Dealt]
    shoe: dict | None = None
    driver: str = "protocol"
    journal_fs: str | None = None
    start: bool = True


def run_drill(drill: Drill, tmp: Path) -> Row:
    """Set up the rig for ``drill``, run its act, count, and take it all down again."""
    row = Row(drill.title)
    with contextlib.ExitStack() as stack:
        fs = None
        if drill.journal_fs:
            try:
                fs = stack.enter_context(mounted_tmpfs(tmp / "fs", drill.journal_fs))
            except CannotMount as exc:
                row.skipped = str(exc)
                return row
        shoe = peer = None
        if drill.shoe is not None:
            shoe = EmulatedShoe(link=str(tmp / "shoe"), **drill.shoe)
            shoe.open()
            stack.callback(shoe.stop)
            link = shoe.link
        else:
            peer = PtyLine(tmp / "shoe")
            link = peer.plug()
            stack.callback(peer.close)
        rig = Rig(tmp, driver=drill.driver, shoe_port=link, journal_dir=fs)
        stack.callback(rig.close)
        if drill.start:
            rig.start()
            if shoe is not None:
                shoe.start()
        dealt = drill.act(Run(rig, row, shoe, peer, fs))
        rig.wait_results(dealt.coups, 30)
        rig.finish()
        rig.count(row, dealt.cards, dealt.truth, by_code=dealt.by_code)
    return row


def shoe_finished(run: Run, timeout: float) -> Dealt:
    """Wait for the emulated shoe to deal its script; what it dealt."""
    run.shoe.wait(timeout)
    dealt = run.shoe.dealt
    return Dealt(dealt_of(run.shoe), coups_from_dealt(dealt), len({(d.shoe, d.coup) for d in dealt if d.coup}))


# --------------------------------------------------------------------------- the acts


def act_sigkill(run: Run, times: int = 10) -> Dealt:
    rig, shoe = run.rig, run.shoe
    seq = kills = 0
    for _ in range(times):
        try:
            seq = rig.wait_mid_coup(seq)
        except TimeoutError:
            break   # the shoe ran out before every kill: the row says how many there were
        rig.monitor.pause()
        time.sleep(0.1)
        rig.daemon.kill()
        kills += 1
        time.sleep(0.3)
        rig.restart()
    run.row.note = f"{kills} kills, shoe {'finished' if shoe.simulator.done else 'still dealing'}"
    return shoe_finished(run, 120)


def act_broker(run: Run, times: int = 10) -> Dealt:
    seq = 0
    for _ in range(times):
        seq = run.rig.wait_mid_coup(seq)
        run.rig.broker.restart(down_for=0.5)
    return shoe_finished(run, 120)


def act_unplug(run: Run, times: int = 10) -> Dealt:
    seq = 0
    for _ in range(times):
        seq = run.rig.wait_mid_coup(seq)
        run.shoe.simulator.inject(Disconnect(1.0))
    dealt = shoe_finished(run, 120)
    run.row.note = f"{run.shoe.disconnects} unplugs"
    return dealt


def act_flapping(run: Run) -> Dealt:
    dealt = shoe_finished(run, 300)
    run.row.note = (f"{run.shoe.disconnects} unplugs, "
                    f"{run.shoe.simulator.conn.counters.overwritten_unacked} overwritten")
    return dealt


def write_serviced(line: PtyLine, data: bytes, service: Callable[[], object]) -> None:
    """Write all of ``data`` to the pty, calling ``service`` while its buffer is full (the far end
    must keep reading what the daemon writes, and keep its own timers)."""
    view = memoryview(data)
    while view:
        n = line.write_some(view)
        if n:
            view = view[n:]
            continue
        select.select([], [line.master], [], 0.01)
        service()


def act_frames(run: Run, n_frames: int = 1_000_000) -> Dealt:
    rng = random.Random(1305)
    peer = run.peer
    conn = ShoeConnection(now=time.monotonic(), boot_id=0xD7111)
    script = DealerScript(decks=8, seed=1305, shoes=1, coups=60)
    actions = [a for a in script if isinstance(a, Message)]

    def service():
        data = peer.read()
        if data:
            conn.receive_data(data, time.monotonic())
            conn.events()
        out = conn.tick(time.monotonic())
        if out:
            write_serviced(peer, out, peer.read)

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and conn.last_acked == 0 and not conn.host_present(time.monotonic()):
        service()
        time.sleep(0.01)
    run.rig.monitor.wait_probing()
    per_action = n_frames // max(1, len(actions))
    sent = 0
    for action in actions:
        junk = bytearray()
        for _ in range(per_action):
            junk += rng.randbytes(rng.randint(1, 70)).replace(b"\x00", b"\x01") + b"\x00"
        sent += per_action
        write_serviced(peer, bytes(junk), service)
        service()
        write_serviced(peer, conn.send(action, time.monotonic()), service)
        service()
    end = time.monotonic() + 15
    while time.monotonic() < end and conn.unacked:
        service()
        time.sleep(0.01)
    run.row.note = f"{sent:,} junk frames, {len(actions)} shoe events"
    return Dealt([(d.counter, d.card) for d in script.dealt], coups_from_dealt(script.dealt), 60)


def act_lines(run: Run, n_lines: int = 100_000) -> Dealt:
    rng = random.Random(1306)
    peer = run.peer
    script = DealerScript(decks=8, seed=1306, shoes=1, coups=60, burn=False)
    cards = [a for a in script if isinstance(a, CardDrawn)]
    run.rig.monitor.wait_probing()
    per_card = n_lines // max(1, len(cards))
    for c in cards:
        # "~" first: a random line must not happen to be a card code (it would be a real card).
        junk = b"".join(b"~" + rng.randbytes(rng.randint(0, 60)).replace(b"\n", b"?").replace(b"\r", b"?")
                        + b"\r\n" for _ in range(per_card))
        write_serviced(peer, junk, peer.read)
        write_serviced(peer, f"{c.card}\r\n".encode(), peer.read)
        peer.read()
    run.row.note = f"{per_card * len(cards):,} junk lines"
    return Dealt([c.card for c in cards], coups_from_dealt(script.dealt), 60, by_code=True)


HOLD = 3.0   # s the journal's file system stays full or read-only in the two journal drills


def act_disk_full(run: Run) -> Dealt:
    """Mid-shoe, the journal's file system fills up while the shoe deals. The daemon must hold the
    dealing (STATUS says so, nothing more is published), light the stop, and, once the filler is
    deleted, resume by itself with an alert saying what happened; the dealer stops at the stop
    light and goes on once it is off."""
    rig, shoe, checks = run.rig, run.shoe, run.row.checks
    rig.wait_results(8, 60)                              # some coups dealt as usual first
    rig.wait_mid_coup(len(rig.sub.snapshot()))
    lit, said = len(shoe.simulator.lights_log), len(rig.notify.messages)
    filler = fill(run.fs)
    checks["held"] = rig.wait_status("journal unavailable (disk_full)", said, 20)
    checks["stop light"] = _wait(lambda: any(e.lights.name == "ERROR_STOP"
                                            for _, e in shoe.simulator.lights_log[lit:]), 10)
    shoe.simulator.inject(Pause(HOLD + 1.5))             # the dealer sees it and stops
    published = rig.published_cards()
    time.sleep(HOLD)
    checks["nothing published while held"] = rig.published_cards() == published
    checks["no exit"] = rig.daemon.running
    said = len(rig.notify.messages)
    filler.unlink()
    checks["resumed"] = rig.wait_status("dealing: table", said, 20)
    dealt = shoe_finished(run, 120)
    checks["alert"] = rig.alert_raised("journal_unavailable", "disk_full")
    checks["no traceback"] = rig.logs_clean()
    run.row.note = f"held {HOLD:.0f} s after {published} cards"
    return dealt


def act_read_only(run: Run) -> Dealt:
    """The daemon is restarted (a reboot, say) and its journal's file system comes up read-only.
    It must hold the start (STATUS says why, the stop light over a link that acknowledges nothing;
    no exit, no traceback, nothing published) and start
    by itself once the file system is writable again, with an alert; the cards the shoe dealt
    meanwhile wait in its ring (PROTOCOL.md 9.1) and none is lost."""
    rig, shoe, checks = run.rig, run.shoe, run.row.checks
    rig.start()
    shoe.start()
    rig.wait_results(4, 60)                              # some coups dealt as usual first
    rig.monitor.pause()
    rig.daemon.stop()
    remount(run.fs, readonly=True)
    said, lit = len(rig.notify.messages), len(shoe.simulator.lights_log)
    rig.restart(wait_ready=False)
    checks["held"] = rig.wait_status("journal unavailable (read_only)", said, 20)
    checks["stop light"] = _wait(lambda: any(e.lights.name == "ERROR_STOP"
                                            for _, e in shoe.simulator.lights_log[lit:]), 10)
    published = rig.published_cards()
    time.sleep(HOLD)
    checks["nothing published while held"] = rig.published_cards() == published
    checks["no exit"] = rig.daemon.running
    said = len(rig.notify.messages)
    remount(run.fs, readonly=False)
    checks["resumed"] = rig.wait_status("dealing: table", said, 30)   # by itself: nobody restarts it
    rig.daemon.wait_ready(30)
    rig.monitor.resume()
    dealt = shoe_finished(run, 120)
    checks["alert"] = rig.alert_raised("journal_unavailable", "read_only")
    checks["no traceback"] = rig.logs_clean()
    run.row.note = (f"held {HOLD:.0f} s + the start's retry; "
                    f"{shoe.simulator.conn.counters.overwritten_unacked} overwritten in the shoe's ring")
    return dealt


def _wait(predicate: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


DRILLS = {
    # A whole shoe at 0.1 s a card (about 45 s): room for ten kill-and-restart cycles of ~3 s.
    "sigkill": Drill("SIGKILL mid-coup x10", act_sigkill, shoe=dict(decks=8, seed=1301, pace=0.1, shoes=1)),
    "broker": Drill("broker restart mid-coup x10", act_broker,
                    shoe=dict(decks=8, seed=1302, pace=0.05, coups=60, shoes=1)),
    "unplug": Drill("unplug mid-coup x10", act_unplug, shoe=dict(decks=8, seed=1303, pace=0.05, coups=60, shoes=1)),
    "flapping": Drill("flapping shoe, whole 8-deck shoe", act_flapping,
                      shoe=dict(decks=8, seed=1304, pace=0.12, shoes=1,
                                faults=Faults(disconnect=0.03, disconnect_time=1.5))),
    "frames": Drill("1,000,000 random frames, protocol link", act_frames),
    "lines": Drill("100,000 random lines, text link", act_lines, driver="text"),
    "disk_full": Drill("disk full mid-shoe and recovered", act_disk_full, journal_fs="8m",
                       shoe=dict(decks=8, seed=1307, pace=0.05, coups=40, shoes=1)),
    # A dealer's pace: the shoe's 64-event ring holds what is dealt while the daemon is away
    # (the hold, the start's 2 s retry and the start itself, ~8 s).
    "read_only": Drill("read-only journal at start", act_read_only, journal_fs="8m", start=False,
                       shoe=dict(decks=8, seed=1308, pace=0.2, coups=30, shoes=1)),
}


def table(rows: list[Row]) -> str:
    head = (f"{'drill':40} {'dealt':>6} {'journ.':>6} {'publ.':>6} {'lost':>5} {'doubl.':>6} {'wrong':>5} "
            f"{'RSS start/peak MB':>18} {'/healthz max (p99, n)':>24} {'time':>6}  verdict")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r.name:40} {r.dealt:6d} {r.journaled:6d} {r.published:6d} {r.lost:5d} {r.doubled:6d} "
                     f"{r.wrong:5d} {r.rss_start_mb:8.1f}/{r.rss_peak_mb:<9.1f} {r.healthz_ms:7.1f} ms ({r.healthz_p99:5.1f}, {r.healthz_n:4d}) "
                     f"{r.seconds:5.0f}s  {r.verdict}"
                     + (f"  ({r.note})" if r.note else ""))
    lines.append(f"targets: 0 lost, 0 doubled, 0 wrong; RSS <= start + {RSS_TARGET_MB} MB; "
                 f"/healthz <= {HEALTHZ_TARGET_MS} ms")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[Row]:
    names = (sys.argv[1:] if argv is None and __name__ == "__main__" else argv) or list(DRILLS)
    rows = []
    keep = bool(os.environ.get("BENCH_DIR"))
    base = Path(os.environ.get("BENCH_DIR") or tempfile.mkdtemp(prefix="drills-"))
    for name in names:
        tmp = base / name
        tmp.mkdir(parents=True, exist_ok=True)
        t = time.monotonic()
        try:
            row = run_drill(DRILLS[name], tmp)
        except Exception as exc:  # a drill that breaks is a row that says so, not a lost table
            row = Row(DRILLS[name].title,
                      note=f"drill failed: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:120]}")
        row.seconds = time.monotonic() - t
        rows.append(row)
        print(f"  {name}: done in {row.seconds:.0f} s", flush=True)
    print(table(rows), flush=True)
    if not keep:
        shutil.rmtree(base, ignore_errors=True)
    return rows


if __name__ == "__main__":
    main()
