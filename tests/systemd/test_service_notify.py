"""The daemon as systemd runs it: `python -m shoe_daemon run --config ...` with NOTIFY_SOCKET and
WATCHDOG_USEC pointing at a datagram socket this test bound, an emulated shoe on a pty, and a real
Mosquitto. READY=1, STATUS=, WATCHDOG=1 in rhythm, SIGTERM -> STOPPING=1, exit 0, `offline` retained.

The daemon runs under the unit's MemoryDenyWriteExecute= (as PR_SET_MDWE, where the kernel has it)
and SystemCallFilter= (rebuilt with libseccomp, where python3-seccomp is installed): see
helpers.sandbox_argv. So this also shows the whole daemon works under those restrictions.

Stalls of the reader are tested in test_watchdog.py (in-process: a frozen reader thread cannot be
made from outside the process).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shoe_daemon.emulator import EmulatedShoe
from tests.support.mosquitto import Subscriber

from .helpers import NotifyListener, sandbox_argv

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "shoe-daemon.service"
TABLE = "sdnotify-t1"
WATCHDOG_USEC = 400_000          # systemd would kill us after 0.4 s without a ping


def write_config(path: Path, shoe_link: str, broker_port: int, journal: Path) -> None:
    path.write_text(f"""
[table]
id = "{TABLE}"
[shoe]
port = "{shoe_link}"
reconnect_min = 0.1
reconnect_max = 0.5
[journal]
path = "{journal}"
synchronous = "normal"
[mqtt]
host = "127.0.0.1"
port = {broker_port}
[api]
enabled = false
[log]
level = "info"
""")


def child_env(notify_path: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("SHOE_DAEMON__") and k not in ("NOTIFY_SOCKET", "WATCHDOG_PID", "WATCHDOG_USEC")}
    env["NOTIFY_SOCKET"] = notify_path
    # WATCHDOG_PID is left unset: sd_watchdog_enabled() then takes the pings to be ours (systemd
    # sets it to the main pid, which the test only learns after the spawn).
    env["WATCHDOG_USEC"] = str(WATCHDOG_USEC)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def kinds(msgs) -> list[str]:
    """The sequence of READY / WATCHDOG / STOPPING notifications (STATUS-only ones left out)."""
    out = []
    for m in msgs:
        for key in ("READY", "WATCHDOG", "STOPPING"):
            if m.has(key, "1"):
                out.append(key)
    return out


@pytest.mark.timeout(60)
def test_ready_status_watchdog_stopping_offline(tmp_path, mosquitto, mqtt_subscriber):
    topic_status = f"baccarat/{TABLE}/status"
    sub = mqtt_subscriber(mosquitto.port, f"baccarat/{TABLE}/#")
    shoe = EmulatedShoe(decks=8, seed=11, pace=0.05, link=str(tmp_path / "dealing-shoe")).start()
    config = tmp_path / "shoe-daemon.toml"
    write_config(config, shoe.path, mosquitto.port, tmp_path / "journal.sqlite3")
    argv, sandbox = sandbox_argv([sys.executable, "-m", "shoe_daemon", "run", "--config", str(config)], UNIT)
    log_path = tmp_path / "daemon.log"
    with NotifyListener() as notify, open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=child_env(notify.path), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        try:
            spawned = time.monotonic()
            ready = notify.wait_for(lambda msgs: next((m for m in msgs if m.has("READY", "1")), None),
                                    timeout=20, what="READY=1")
            print(f"READY=1 {ready.t - spawned:.2f} s after the spawn; daemon under {sandbox}")

            # The daemon deals: cards reach the broker.
            sub.wait_for(lambda msgs: sum(m.topic.endswith("/coup/card") for m in msgs) >= 5, timeout=15)
            # Pings in rhythm for 2 s (every WATCHDOG_USEC / 2 = 0.2 s).
            t0 = time.monotonic()
            notify.wait_for(lambda msgs: sum(m.has("WATCHDOG", "1") and m.t > t0 for m in msgs) >= 10,
                            timeout=10, what="10 WATCHDOG=1")
            assert proc.poll() is None, f"daemon exited early:\n{log_path.read_text()}"

            proc.send_signal(signal.SIGTERM)
            term_at = time.monotonic()
            rc = proc.wait(timeout=20)
            print(f"exit status {rc}, {time.monotonic() - term_at:.2f} s after SIGTERM")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            shoe.stop()
        msgs = notify.snapshot()
    log_text = log_path.read_text(errors="replace")
    assert rc == 0, log_text

    # Every notification came from the main pid (NotifyAccess=main would drop the others).
    assert {m.pid for m in msgs} == {proc.pid}

    # STATUS= lines say what it is doing: before READY (journal, replay), with READY, with STOPPING.
    statuses = [m.get("STATUS") for m in msgs if m.get("STATUS")]
    print("STATUS lines:", statuses)
    i_ready = next(i for i, m in enumerate(msgs) if m.has("READY", "1"))
    assert any("journal" in (m.get("STATUS") or "") for m in msgs[:i_ready]), statuses
    assert msgs[i_ready].get("STATUS"), "READY=1 should say what the daemon is doing"
    stopping = [m for m in msgs if m.has("STOPPING", "1")]
    assert len(stopping) == 1 and stopping[0].get("STATUS")
    assert stopping[0].t >= term_at

    # Order: READY once, WATCHDOG pings, STOPPING last (no ping after it).
    seq = kinds(msgs)
    assert seq[0] == "READY", seq[:5]
    assert seq[-1] == "STOPPING", seq[-5:]
    assert set(seq[1:-1]) == {"WATCHDOG"}, seq
    pings_after_ready = [m.t for m in msgs[i_ready:] if m.has("WATCHDOG", "1")]
    assert len(pings_after_ready) >= 10
    # systemd would have restarted us if two pings were ever WATCHDOG_USEC apart.
    gaps = [b - a for a, b in zip([ready.t, *pings_after_ready], pings_after_ready + [stopping[0].t], strict=True)]
    print(f"{len(pings_after_ready)} pings after READY; largest gap {max(gaps):.3f} s (limit {WATCHDOG_USEC / 1e6} s)")
    assert max(gaps) < WATCHDOG_USEC / 1e6, gaps

    # `offline` was published retained on the way out: a display that connects now sees it.
    with Subscriber(mosquitto.port, topic_status) as late:
        status = late.wait_for(lambda got: next((m for m in got if m.topic == topic_status), None), timeout=10)
    assert status.retain
    assert json.loads(status.payload)["state"] == "offline"
    # ... by the daemon itself, before a clean DISCONNECT (not by the broker as the Last Will).
    client_id = f"shoe-daemon-{TABLE}"
    broker_log = mosquitto.log_text()
    assert f"Client {client_id} disconnected" in broker_log, broker_log[-2000:]
    assert f"Client {client_id} closed its connection" not in broker_log
    online = [m for m in sub.snapshot() if m.topic == topic_status]
    assert [json.loads(m.payload)["state"] for m in online][-2:] == ["online", "offline"]
