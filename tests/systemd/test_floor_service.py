"""The floor as its unit runs it: `python -m shoe_daemon floor --config ...` with NOTIFY_SOCKET
pointing at a datagram socket this test bound, a real Mosquitto, an SQLite database, under the
floor unit's MemoryDenyWriteExecute= and SystemCallFilter= (helpers.sandbox_argv): the schema is
migrated (Alembic, in a child process, under the same restrictions), READY=1 says the broker is
reached, a table's message is stored, SIGTERM -> STOPPING=1 and exit 0.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from shoe_daemon.floor.store import SCHEMA_VERSION
from tests.support.waiting import wait_until

from .helpers import NotifyListener, sandbox_argv
from .test_service_notify import child_env

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "systemd" / "shoe-daemon-floor.service"


@pytest.mark.timeout(90)
def test_the_floor_under_its_unit_notifies_ready_stores_and_stops(tmp_path, mosquitto):
    db = tmp_path / "floor.sqlite3"
    config = tmp_path / "floor.toml"
    config.write_text(f'[floor]\nprefix = "baccarat"\ndatabase = "sqlite:///{db}"\n\n'
                      f'[broker]\nhost = "127.0.0.1"\nport = {mosquitto.port}\nprotocol = "5"\n\n'
                      '[http]\nenabled = false\n')
    argv, sandbox = sandbox_argv([sys.executable, "-m", "shoe_daemon", "floor", "--config", str(config)], UNIT)
    log_path = tmp_path / "floor.log"
    with NotifyListener() as notify, open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ROOT, env=child_env(notify.path), stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        try:
            ready = notify.wait_for(lambda msgs: next((m for m in msgs if m.has("READY", "1")), None),
                                    timeout=40, what="READY=1")
            print(f"READY=1: {ready.get('STATUS')!r}; floor under {sandbox}")
            assert "storing every table under baccarat/" in (ready.get("STATUS") or "")
            payload = {"schema": 1, "seq": 1, "table_id": "t9", "type": "alerts", "t": time.time(), "alerts": []}
            table = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="table-t9", protocol=mqtt.MQTTv5)
            table.connect("127.0.0.1", mosquitto.port)
            table.loop_start()
            try:
                table.publish("baccarat/t9/alerts/active", json.dumps(payload), qos=1).wait_for_publish(5)
            finally:
                table.disconnect()
                table.loop_stop()

            def stored() -> bool:
                with sqlite3.connect(db) as conn:
                    return conn.execute("SELECT count(*) FROM messages WHERE table_id = 't9'").fetchone()[0] == 1

            wait_until(stored, 15, "the table's message in the floor's database")
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        msgs = notify.snapshot()
    log_text = log_path.read_text(errors="replace")
    assert rc == 0, log_text
    assert {m.pid for m in msgs} == {proc.pid}            # NotifyAccess=main
    assert any("schema" in (m.get("STATUS") or "") for m in msgs)
    stopping = [m for m in msgs if m.has("STOPPING", "1")]
    assert len(stopping) == 1 and stopping[0].t > ready.t
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone()[0] == f"{SCHEMA_VERSION:04d}"
