"""`shoe-daemon replay`: --check fails with a readable diff on one altered byte or one altered expected line."""

from __future__ import annotations

import io

import pytest

from firmware_protocol.codec import Decoder
from firmware_protocol.messages import CardDrawn
from shoe_daemon.cli import main
from shoe_daemon.commands.replay import Progress
from shoe_daemon.recording.check import check_path, read_check, write_check
from shoe_daemon.recording.formats import SHOE, Record, read_fixture, write_fixture
from shoe_daemon.recording.replay import replay
from tests.recording.conftest import FIXTURES, LIBRARY

pytestmark = pytest.mark.timeout(120)


def alter_record(path, index: int, data: bytes) -> None:
    fx = read_fixture(path)
    old = fx.records[index]
    fx.records[index] = Record(old.t, old.kind, data)
    write_fixture(path, fx)


def test_check_passes_on_copies(copy_fixture, capsys):
    copy_fixture("error-extra-card")
    path = copy_fixture("text-driver")
    assert main(["replay", "--check", str(path.parent)]) == 0
    err = capsys.readouterr().err
    assert "error-extra-card: ok (53 messages" in err
    assert "2 of 2 fixtures match their check files" in err


def test_an_altered_card_line_fails_with_a_readable_diff(copy_fixture, capsys):
    """One byte of a plain reader's line: 9x becomes another suit; the diff names the card and the fields."""
    path = copy_fixture("text-driver")
    fx = read_fixture(path)
    index = next(i for i, r in enumerate(fx.records) if r.kind == SHOE and len(r.data) == 4 and r.data[1:2] in b"SHDC")
    line = fx.records[index].data
    suit = b"S" if line[1:2] != b"S" else b"H"
    alter_record(path, index, line[:1] + suit + line[2:])

    assert main(["replay", "--check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "text-driver: FAILED: outputs differ from text-driver.chk.gz" in err
    assert out.startswith(f"--- {check_path(path)} (expected)\n+++ text-driver (replay)\n@@ ")
    old, new = line[:2].decode(), (line[:1] + suit).decode()
    assert f'"card":"{new}"' in out
    assert any(ln.startswith("-") and f'"card":"{old}"' in ln for ln in out.splitlines())
    assert f'card: "{old}" -> "{new}"' in out            # the field-by-field note under the hunk
    assert "message line(s) differ" in out


def test_an_altered_shoe_frame_byte_fails(copy_fixture, capsys):
    """One byte of a ShoeLink card frame: the CRC drops it, the card never arrives, the check fails."""
    path = copy_fixture("error-extra-card")
    fx = read_fixture(path)
    index = next(i for i, r in enumerate(fx.records) if r.kind == SHOE
                 and any(isinstance(m, CardDrawn) and m.card == "7C" for m in Decoder().feed(r.data)))
    data = bytearray(fx.records[index].data)
    data[len(data) // 2] ^= 0x01
    alter_record(path, index, bytes(data))

    assert main(["replay", "--check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "error-extra-card: FAILED" in err
    assert any(ln.startswith("-") and '"kind":"extra_card"' in ln for ln in out.splitlines())  # the alert is gone
    assert "message line(s) differ" in out


def test_an_altered_expected_line_fails_with_a_readable_diff(copy_fixture, capsys):
    path = copy_fixture("error-missing-card")
    chk = check_path(path)
    lines = read_check(chk)
    i = next(i for i, ln in enumerate(lines) if "alerts/event" in ln and '"kind":"missing_card"' in ln)
    good = lines[i]
    lines[i] = good.replace('"severity":"error"', '"severity":"warning"', 1)
    assert lines[i] != good
    write_check(chk, lines)

    assert main(["replay", "--check", str(path)]) == 1
    out, err = capsys.readouterr()
    assert "error-missing-card: FAILED" in err
    assert "-" + lines[i] in out.splitlines() and "+" + good in out.splitlines()
    assert f'#   message {i + 1} (baccarat/fixture/alerts/event): alert.severity: "warning" -> "error"' in out
    assert out.splitlines()[-1].startswith("# 1 message line(s) differ")


def test_update_check_and_a_missing_check(copy_fixture, capsys):
    path = copy_fixture("tamper-lid-open")
    chk = check_path(path)
    good = chk.read_bytes()
    chk.unlink()
    assert main(["replay", "--check", str(path)]) == 2
    assert "no check file tamper-lid-open.chk: make it with `shoe-daemon replay --update-check" in capsys.readouterr().err
    assert main(["replay", "--update-check", str(path)]) == 0
    assert "tamper-lid-open: updated tamper-lid-open.chk (59 messages" in capsys.readouterr().err
    assert chk.read_bytes() == good
    assert main(["replay", "--update-check", str(path)]) == 0
    assert "unchanged" in capsys.readouterr().err


def test_list_and_print(capsys):
    assert main(["replay", "--list"]) == 0
    out = capsys.readouterr().out
    for path in FIXTURES:
        fx = read_fixture(path)
        assert any(ln.startswith(fx.name + " ") and ln.endswith(fx.header.description) for ln in out.splitlines())
    assert main(["replay", "--print", str(LIBRARY / "error-extra-card.shoelog")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == read_check(LIBRARY / "error-extra-card.chk")


def test_usage_errors(tmp_path, capsys):
    assert main(["replay"]) == 2
    (tmp_path / "x.txt").write_text("")
    assert main(["replay", str(tmp_path / "x.txt")]) == 2
    assert "not a fixture" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["replay", "--speed", "fast", str(tmp_path)])


def test_recorded_timing_gives_the_same_outputs(copy_fixture):
    """--speed 10 (paced by the recording) and max give the same messages: timing does not leak in."""
    path = copy_fixture("reader-unplug-replug")
    fx = read_fixture(path)
    paced = replay(fx, speed=10)
    assert paced.elapsed >= 0.8 * fx.duration / 10
    assert paced.lines == read_check(check_path(path))


def test_progress_bar_only_on_a_terminal():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    plain = io.StringIO()
    Progress("x", plain)(5, 10)
    assert plain.getvalue() == ""
    tty = Tty()
    bar = Progress("clean-8-decks", tty)
    bar(5, 10)
    bar(5, 10)                     # unchanged percentage: not redrawn
    bar(10, 10)
    assert tty.getvalue().count("\r[") == 2 and " 50% clean-8-decks" in tty.getvalue()
    assert "[" + "#" * 30 + "] 100%" in tty.getvalue()
    bar.clear()
    assert tty.getvalue().endswith("\r")



def test_replay_publishes_to_a_broker(mosquitto, mqtt_subscriber, capsys):
    """--broker: the same messages reach a real Mosquitto, in order, then the status goes offline."""
    sub = mqtt_subscriber(mosquitto.port, "baccarat/fixture/#")
    sub.subscribed.wait(5)
    path = LIBRARY / "error-extra-card.shoelog"
    assert main(["replay", "--check", "--broker", f"127.0.0.1:{mosquitto.port}", str(path)]) == 0
    expected = read_check(check_path(path))
    sub.wait_for(lambda ms: any(m.topic.endswith("/status") and b"offline" in m.payload for m in ms))
    got = [f"{m.topic} 1 {'r' if m.retain else '-'} {m.payload.decode()}" for m in sub.snapshot()
           if not m.topic.endswith("/status")]
    assert [line.split(" ", 3)[3] for line in got] == [line.split(" ", 3)[3] for line in expected]
    assert [line.split(" ", 1)[0] for line in got] == [line.split(" ", 1)[0] for line in expected]
