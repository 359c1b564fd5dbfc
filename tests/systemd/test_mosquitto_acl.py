"""The shipped Mosquitto configuration (systemd/mosquitto-table.conf + .acl), on a real Mosquitto.

The files as shipped, with only the ports and file paths substituted, run by the test's own
``mosquitto -c``: a display's credentials read but cannot publish under the table's prefix (nor
leave a Last Will there), anonymous clients and wrong passwords are refused, the daemon's
credentials write, and the daemon's publisher works through it.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from pathlib import Path

import pytest

from shoe_daemon.config import MqttConfig
from shoe_daemon.publish.mqtt import MqttPublisher
from tests.support.mosquitto import Subscriber, find_binary, free_port, make_password_file, probe, wait_port

pytestmark = pytest.mark.timeout(90)

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "systemd" / "mosquitto-table.conf"
ACL = ROOT / "systemd" / "mosquitto-table.acl"
PREFIX = "baccarat/t1"


@pytest.fixture
def broker(tmp_path):
    passwords = {"shoe-daemon": "daemon-secret-1", "display": "display-secret-1"}
    passwd = make_password_file(tmp_path / "passwd", passwords)
    acl = tmp_path / "acl"
    acl.write_text(ACL.read_text())
    port, ws_port = free_port(), free_port()
    text = CONF.read_text()
    for old, new in (("/etc/mosquitto/shoe-daemon.passwd", str(passwd)), ("/etc/mosquitto/shoe-daemon.acl", str(acl)),
                     ("listener 1883 ", f"listener {port} "), ("listener 9001 ", f"listener {ws_port} ")):
        assert old in text, old
        text = text.replace(old, new)
    user = pwd.getpwuid(os.getuid()).pw_name
    conf = tmp_path / "mosquitto.conf"
    # As root, mosquitto would switch to its own user and lose the test's temp dir.
    conf.write_text(f"user {user}\npersistence false\nlog_type all\n" + text)
    log = open(tmp_path / "log", "wb")
    proc = subprocess.Popen([find_binary("mosquitto"), "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT)
    try:
        assert wait_port(port) and wait_port(ws_port), (tmp_path / "log").read_text()
        yield port, ws_port, passwords
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def test_display_reads_but_cannot_write_the_daemon_writes(broker):
    port, ws_port, pw = broker
    with Subscriber(port, f"{PREFIX}/#", username="display", password=pw["display"]) as display:
        assert probe(port, username="display", password=pw["display"],
                     publish=[f"{PREFIX}/coup/result", f"{PREFIX}/status"]) == "Success"
        assert probe(port, username="display", password=pw["display"], will=f"{PREFIX}/status") == "Success"
        assert probe(port) != "Success"                                        # anonymous
        assert probe(port, username="shoe-daemon", password="wrong") != "Success"
        assert probe(port, username="shoe-daemon", password=pw["shoe-daemon"],
                     publish=[f"{PREFIX}/coup/card"]) == "Success"
        display.wait_for(lambda ms: any(m.topic == f"{PREFIX}/coup/card" for m in ms))
        time.sleep(0.5)                         # forged messages or wills would be here by now
        assert {m.topic for m in display.snapshot()} == {f"{PREFIX}/coup/card"}
    # Over websockets, as the browser display connects: reads with the display user.
    with Subscriber(ws_port, f"{PREFIX}/#", username="display", password=pw["display"], transport="websockets") as ws:
        ws.wait_for(lambda ms: [m.topic for m in ms] == [f"{PREFIX}/coup/card"])
    assert probe(ws_port, transport="websockets") != "Success"


def test_the_daemons_publisher_through_the_shipped_config(broker):
    port, _ws, pw = broker
    config = MqttConfig(host="127.0.0.1", port=port, username="shoe-daemon", password=pw["shoe-daemon"])
    with Subscriber(port, f"{PREFIX}/#", username="display", password=pw["display"]) as display:
        pub = MqttPublisher(config, table_id="t1", version="1", reconnect_min_delay=0.1)
        pub.publish("shoe", b'{"seq":1}', retain=True)
        pub.start()
        display.wait_for(lambda ms: {m.topic for m in ms} >= {f"{PREFIX}/shoe", f"{PREFIX}/status"})
        pub.stop(timeout=5)
        display.wait_for(lambda ms: any(m.topic == f"{PREFIX}/status" and b"offline" in m.payload for m in ms))
