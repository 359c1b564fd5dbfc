"""A text card reader spewing random bytes at the real daemon: it keeps answering, keeps dealing,
keeps its memory, and stops on SIGTERM.

Before (issue 13): every unrecognised line raised an alert and republished the whole list; 50 MB
of random bytes kept /healthz unanswered for minutes at 100 % CPU and SIGTERM was ignored, and
4,000 lines took 1.65 GB. The driver's own bounds are tested in tests/sources; this is the daemon
as systemd runs it (a subprocess, Mosquitto, the API), with the flood still running when it is
asked to stop. The bounds below are generous: timing is the drills' job (bench/drills.py).
"""

from __future__ import annotations

import random
import threading
import time

import httpx

from shoe_daemon.core.events import Kind
from shoe_daemon.journal import Journal
from shoe_daemon.pty_line import PtyLine
from tests.e2e.harness import free_port, write_config


def rss_mb(daemon) -> float:
    return int(daemon.proc_status()["VmRSS"].split()[0]) / 1024


def test_a_flooded_text_link_keeps_the_daemon_answering_dealing_and_stoppable(tmp_path, mosquitto, mqtt_subscriber,
                                                                              daemon_factory):
    line = PtyLine(tmp_path / "reader")
    line.plug()
    api_port = free_port()
    journal = tmp_path / "journal.sqlite3"
    cfg = write_config(tmp_path / "daemon.toml", shoe_port=line.name, journal=journal, mqtt_port=mosquitto.port,
                       driver="text", burn="none", api_port=api_port, log_level="warning")
    sub = mqtt_subscriber(mosquitto.port, "baccarat/e2e/#")
    daemon = daemon_factory(cfg).start()
    rss_start = rss_mb(daemon)
    junk = random.Random(13).randbytes(1 << 20).replace(b"\r", b"~")   # ~4,000 random "lines" a MiB
    written = 0
    stop = threading.Event()

    def flood() -> None:
        nonlocal written
        while not stop.is_set():
            n = line.write_some(junk[written % len(junk):])
            written += n
            line.read()
            if not n:
                time.sleep(0.005)

    flooder = threading.Thread(target=flood, daemon=True)
    flooder.start()
    try:
        http = httpx.Client(base_url=f"http://127.0.0.1:{api_port}", timeout=10.0)
        deadline = time.monotonic() + 60
        probes = 0
        while (written < 8 << 20 or probes < 10) and time.monotonic() < deadline:
            assert http.get("/healthz").status_code == 200      # answered all along (10 s at most)
            probes += 1
            time.sleep(0.1)
        assert written >= 8 << 20, f"only {written} bytes went in within 60 s"
        assert rss_mb(daemon) - rss_start < 50                  # flat (before: gigabytes)
        # Cards still deal in the middle of the noise (a newline ends the junk's current line).
        stop.set()
        flooder.join(5)
        line.write(b"\r\n9H\r\n2C\r\nKS\r\n3D\r\n", timeout=10)
        sub.wait_for(lambda msgs: any(m.topic == "baccarat/e2e/coup/result" for m in msgs), timeout=20)
        # The flood again, and SIGTERM while it runs: a clean exit.
        stop.clear()
        flooder = threading.Thread(target=flood, daemon=True)
        flooder.start()
        time.sleep(1.0)
        assert daemon.stop() == 0
    finally:
        stop.set()
        flooder.join(5)
        line.close()
    with Journal.open(journal, readonly=True) as j:
        events = [e.event for e in j.events()]
    cards = [e.data["card"] for e in events if e.kind is Kind.CARD]
    faults = [e for e in events if e.kind is Kind.FAULT and e.source == "shoe"]
    assert cards == ["9H", "2C", "KS", "3D"]
    assert 0 < len(faults) < 200, len(faults)                   # coalesced: about one a second
