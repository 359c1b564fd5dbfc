"""`shoe-daemon demo` ends cleanly however it is run or stopped, and leaves no temporary folder.

- Started with SIGINT ignored (a background job of a script, CI, nohup): the view it starts ignores
  SIGINT too, so the demo stopping the view with SIGINT waited 5 s and died on TimeoutExpired.
- Stopped with SIGTERM (or SIGHUP): the view, the emulated shoe and the daemon stop, the folder goes.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

from tests.e2e.harness import PYTHON, ROOT, clean_env


def demo(tmp_path, *args, **popen) -> subprocess.Popen:
    env = clean_env(TMPDIR=str(tmp_path))       # the demo's folder is made under TMPDIR
    return subprocess.Popen([PYTHON, "-m", "shoe_daemon", "demo", "--plain", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def leftovers(tmp_path) -> list[str]:
    return sorted(p.name for p in tmp_path.glob("shoe-daemon-demo-*"))


def views_of(port: str) -> list[int]:
    """Processes still running a monitor on the demo's broker port."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"monitor" in cmd and f"127.0.0.1:{port}".encode() in cmd:
            pids.append(int(pid))
    return pids


def test_coups_with_sigint_ignored_ends_cleanly(tmp_path):
    proc = demo(tmp_path, "--coups", "2", "--pace", "0.02", "--seed", "5",
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "TimeoutExpired" not in err, err
    assert "demo: 2 coups settled" in err and "result:" in out, out + err
    assert leftovers(tmp_path) == []


def test_sigterm_stops_everything_and_removes_the_folder(tmp_path):
    proc = demo(tmp_path, "--pace", "0.05", "--seed", "7")
    try:
        first = proc.stderr.readline()
        port = re.search(r"embedded broker on 127\.0\.0\.1:(\d+)", first).group(1)
        folder = re.search(r"daemon log (\S+)/daemon\.log", first).group(1)
        assert os.path.isdir(folder) and leftovers(tmp_path) == [os.path.basename(folder)]
        deadline = time.monotonic() + 60
        while "result:" not in proc.stdout.readline():      # a coup went through: everything is up
            assert time.monotonic() < deadline and proc.poll() is None
        assert views_of(port), "the test does not see the demo's view"
        # The view is told to keep the display and console links under its screen.
        argv = open(f"/proc/{views_of(port)[0]}/cmdline", "rb").read().decode().split("\0")
        notes = [argv[i + 1] for i, a in enumerate(argv) if a == "--note"]
        assert any("/display/" in n for n in notes) and any("/console/#token=" in n and "supervisor" in n
                                                             for n in notes), argv
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "SIGTERM: stopping" in err, err
    assert leftovers(tmp_path) == [], "the demo left its folder behind"
    assert views_of(port) == [], "the view outlived the demo"


def test_a_daemon_that_cannot_start_is_one_line_and_an_exit(tmp_path):
    import socket

    with socket.socket() as taken:                      # the broker port the demo is told to use
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        proc = demo(tmp_path, "--coups", "1", "--port", str(port))
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "Traceback" not in err, err
    assert "demo: the daemon stopped: RuntimeError: the embedded MQTT broker cannot start" in err
    assert time.monotonic() - started < 60              # not the view's 30 s start wait on top
    (kept,) = leftovers(tmp_path)                      # kept for its log, which the line names
    assert f"{kept}/daemon.log" in err and "the daemon failed" in (tmp_path / kept / "daemon.log").read_text()


def test_http_and_ws_ports_are_the_ones_asked_for_and_the_view_keeps_the_console(tmp_path):
    from tests.support.mosquitto import free_port

    http_port, ws_port = free_port(), free_port()
    proc = demo(tmp_path, "--coups", "2", "--pace", "0", "--seed", "3", "--http-port", str(http_port),
                "--ws-port", str(ws_port))
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert f"browser display: http://127.0.0.1:{http_port}/display/" in err
    assert f"console (a card the shoe cannot read waits for a person there): http://127.0.0.1:{http_port}/console/" in err
    # The monitor was told to keep the console's links under its view.
    assert re.search(rf"supervisor: http://127\.0\.0\.1:{http_port}/console/#token=\S+", err)
