"""`shoe-daemon record` taps a live shoe (the emulator on a pty) while the real daemon deals through the tap;
the fixture then replays to the messages the live daemon published (times aside)."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from firmware_protocol.messages import Button, ButtonPressed, ShoeState, ShoeStateCode
from shoe_daemon.cli import main
from shoe_daemon.emulator import Disconnect, EmulatedShoe, stacked_scenario
from shoe_daemon.pty_line import PtyLine
from shoe_daemon.recording.check import diff
from shoe_daemon.recording.formats import CLOSE, HOST, LOST, OPEN, SHOE, read_fixture
from shoe_daemon.recording.replay import replay
from tests.recording.live import LiveDaemon, start_recorder, without_times

pytestmark = pytest.mark.timeout(120)


def session(tmp_path, shoe: EmulatedShoe, *, describe: str, settle: float = 1.2):
    """Emulator -> record (subprocess) -> live daemon; returns (fixture path, live lines, record's stderr).

    The shoe starts dealing once the daemon has the tap's pty open (a loaded machine may take a second
    to start the recorder: the scripted unplug must not happen before it taps the line).
    """
    shoe.open()
    config = tmp_path / "daemon.toml"
    config.write_text('[table]\nid = "fixture"\ndecks = 8\n')
    out = tmp_path / "live.shoelog"
    proc, printed = start_recorder("--port", shoe.path, "--out", str(out), "--link", str(tmp_path / "tap"),
                                   "--config", str(config), "--describe", describe)
    try:
        assert printed == str(tmp_path / "tap")
        live = LiveDaemon(str(tmp_path / "tap"), tmp_path).start()
        try:
            deadline = time.monotonic() + 20
            while not (live.daemon.source is not None and live.daemon.source.connected):
                assert time.monotonic() < deadline, "the daemon did not open the tap's pty"
                time.sleep(0.02)
            shoe.start()
            assert shoe.wait(40), "the emulated shoe did not finish"
            time.sleep(settle)        # the last ACKs and lights
        finally:
            live.stop()               # the daemon closes the tap's pty: the recording's last record
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    return out, live.lines, err


def test_record_a_live_session_and_replay_it(tmp_path, capsys):
    shoe = EmulatedShoe(decks=8, seed=11, pace=0.05, coups=4, shoes=None, link=str(tmp_path / "emu"))
    try:
        path, live, err = session(tmp_path, shoe, describe="four coups at the bench")
    finally:
        shoe.stop()
    assert "record: " in err and "1 host session(s)" in err

    fx = read_fixture(path)
    h = fx.header
    assert h.description == "four coups at the bench" and h.driver == "protocol"
    assert h.shoe["model"] == "EMU-SHOE" and h.shoe["protocol"] == "1"
    assert h.shoe["boot_id"] == f"{shoe.simulator.conn.boot_id:08x}"
    assert h.port["device"] == str(tmp_path / "emu") and h.port["baud"] == "115200"
    assert h.table["id"] == "fixture" and h.table["decks"] == "8"
    assert h.command.startswith("shoe-daemon record --port ") and abs(h.start - time.time()) < 120
    kinds = [r.kind for r in fx.records]
    assert OPEN in kinds and SHOE in kinds and HOST in kinds and kinds[-1] == CLOSE

    result = replay(fx)
    assert len(result.lines) == len(live) > 40
    problem = diff(without_times(live), without_times(result.lines), "live daemon", "replay")
    assert not problem, "\n" + problem
    assert result.info[1].startswith("dealer lights: the same")

    # The technician's round trip: make the check, then check.
    assert main(["replay", "--update-check", str(path)]) == 0
    assert main(["replay", "--check", str(path)]) == 0
    assert "live: ok" in capsys.readouterr().err


def test_record_follows_an_unplug(tmp_path):
    cards = ["4H", "2C", "5D", "KS", "9C", "8D", "3S", "AH", "7C", "6D"]
    actions = [ShoeState(ShoeStateCode.INSERTED), ButtonPressed(Button.NEW_SHOE)]
    steps = stacked_scenario(cards)
    actions += steps[:5] + [Disconnect(0.8)] + steps[5:]
    shoe = EmulatedShoe(pace=0.1, seed=3, scenario=actions, link=str(tmp_path / "emu"))
    try:
        path, live, err = session(tmp_path, shoe, describe="unplugged at the bench", settle=2.0)
    finally:
        shoe.stop()
    fx = read_fixture(path)
    kinds = [r.kind for r in fx.records]
    assert kinds.count(OPEN) == 2 and kinds.count(LOST) == 1, kinds
    lost = next(r for r in fx.records if r.kind == LOST)
    assert lost.data                                 # the port's own error text
    assert "2 host session(s)" in err

    result = replay(fx)
    alerts = [(json.loads(ln.split(" ", 3)[3])["action"], json.loads(ln.split(" ", 3)[3])["alert"]["kind"])
              for ln in result.lines if "/alerts/event " in ln]
    assert ("raised", "link_lost") in alerts and ("cleared", "link_lost") in alerts
    cards_dealt = [json.loads(ln.split(" ", 3)[3])["card"] for ln in result.lines if "/coup/card " in ln]
    assert cards_dealt == cards                      # nothing lost, nothing twice
    problem = diff(without_times(live), without_times(result.lines), "live daemon", "replay")
    assert not problem, "\n" + problem


def test_record_usage_errors(tmp_path, capsys):
    assert main(["record", "--port", "/dev/null", "--out", str(tmp_path / "x.txt")]) == 2
    assert "unknown fixture format" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "x.txt")


def test_record_a_plain_text_reader(tmp_path):
    """The text driver through the tap: a plain reader (a pty we write lines into) -> record -> live daemon."""
    pty = PtyLine()
    reader = pty.plug()
    config = tmp_path / "daemon.toml"
    config.write_text('[table]\nid = "fixture"\nburn = "none"\n[shoe]\ndriver = "text"\n')
    out = tmp_path / "reader.shoelog"
    proc, printed = start_recorder("--port", reader, "--out", str(out), "--link", str(tmp_path / "tap"),
                                   "--config", str(config), "--describe", "a plain reader")
    try:
        live = LiveDaemon(printed, tmp_path, driver="text", burn="none").start()
        try:
            deadline = time.monotonic() + 20
            while not (live.daemon.source is not None and live.daemon.source.connected):
                assert time.monotonic() < deadline
                time.sleep(0.02)
            time.sleep(0.2)
            for line in (b"4H\r\n", b"2C\r\n", b"5D\r\n", b"KS\r\n", b"9C\r\n", b"NOT A CARD\r\n", b"8D\r\n",
                         b"3S\r\n", b"AH\r\n"):
                pty.write(line)
                time.sleep(0.05)
            assert live.wait_for(lambda lines: sum("/coup/card " in ln for ln in lines) == 8)
            time.sleep(0.3)
        finally:
            live.stop()
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
        pty.close()
    fx = read_fixture(out)
    assert fx.header.driver == "text" and fx.header.shoe == {}
    assert b"".join(r.data for r in fx.records if r.kind == SHOE).count(b"\r\n") == 9
    result = replay(fx)
    problem = diff(without_times(live.lines), without_times(result.lines), "live daemon", "replay")
    assert not problem, "\n" + problem
    assert sum('"code":"unrecognised_line"' in ln for ln in result.lines if "/alerts/event " in ln) == 1
