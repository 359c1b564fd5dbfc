"""PtyLine, the one pty helper: raw bytes both ways, a udev-style link, unplug as a pulled cable."""

import os

import serial

from shoe_daemon.pty_line import PtyLine


def test_bytes_cross_raw_both_ways_through_the_link(tmp_path):
    link = str(tmp_path / "dealing-shoe")
    with PtyLine(link) as line:
        assert line.name == link and os.path.realpath(link) == line.path
        port = serial.Serial(link, 9600, timeout=1)
        try:
            line.write(b"CARD QH 17\r\n\x00\xff")          # no CR/LF translation, no echo
            assert port.read(14) == b"CARD QH 17\r\n\x00\xff"
            port.write(b"LAMP P\r\n")
            got = b""
            while len(got) < 8:
                chunk = line.read(1.0)
                assert chunk, "nothing from the port"
                got += chunk
            assert got == b"LAMP P\r\n"
            assert line.read(0.05) == b""                   # and nothing echoed back
        finally:
            port.close()
    assert not os.path.lexists(link) and not line.plugged


def test_unplug_fails_the_reader_and_plug_comes_back_under_the_same_name(tmp_path):
    link = str(tmp_path / "shoe")
    line = PtyLine(link, hold_slave=False)
    first = line.plug()
    port = serial.Serial(link, 9600, timeout=0.2)
    try:
        line.unplug()
        assert not os.path.lexists(link)
        try:
            data = port.read(1)
        except serial.SerialException:
            data = None
        assert not data                                      # EOF or an error: the cable is gone
        assert line.plug() == first
        assert os.path.realpath(link) == line.path
        with serial.Serial(link, 9600, timeout=1) as again:
            line.write(b"y")
            assert again.read(1) == b"y"
    finally:
        port.close()
        line.close()


def test_write_gives_up_after_its_timeout_when_nobody_reads():
    line = PtyLine()
    line.plug()
    try:
        try:
            line.write(b"z" * (1 << 20), timeout=0.3)     # far more than a pty buffers
        except TimeoutError as exc:
            assert "not taken within 0.3 s" in str(exc)
        else:
            raise AssertionError("expected TimeoutError")
    finally:
        line.close()
