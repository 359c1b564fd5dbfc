"""`shoe-daemon demo --fault unreadable=...` waits for a person at the console instead of hanging.

The demo is run as a user runs it (a subprocess, its own embedded broker and API); the test reads
the console's dealer URL from what it prints, signs in with it as a person would, sees the card
the shoe could not read waiting in the console, and enters it: the daemon takes it (the API
answers, the console says so, one card fewer is awaited).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request

from tests.support.mosquitto import wait_port
from tests.web.harness import wait_fonts


def _urls(proc, lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    deadline = time.monotonic() + 30
    while len(found) < 2 and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        m = re.search(r"(dealer|supervisor):\s+(http://\S+#token=\S+)", line)
        if m:
            found[m.group(1)] = m.group(2)
    assert len(found) == 2, "".join(lines)
    return found


def test_the_demo_with_unreadable_cards_waits_for_the_console_and_finishes(browser):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "shoe_daemon", "demo", "--fault", "unreadable=0.3", "--plain",
         "--seed", "11", "--pace", "0.05"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []
    try:
        urls = _urls(proc, lines)
        threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True).start()
        port = int(re.search(r":(\d+)/", urls["dealer"]).group(1))
        assert wait_port(port, timeout=20), "the demo's API did not come up"
        pages = {}
        for role, size in (("dealer", (800, 480)), ("supervisor", (1280, 800))):
            context = browser.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=True)
            page = context.new_page()
            page.goto(urls[role])
            wait_fonts(page)
            page.wait_for_selector("#console[data-screen=main]", timeout=10_000)
            pages[role] = page
        dealer, supervisor = pages["dealer"], pages["supervisor"]
        dealer.wait_for_selector("#picker:not([hidden])", timeout=30_000)
        assert dealer.get_attribute("#coup-view", "data-state") == "awaiting"
        assert supervisor.get_attribute("#console", "data-role") == "supervisor"
        waiting = dealer.evaluate("window.shoeConsole.state.coup.awaiting.unreadable")
        assert waiting >= 1
        dealer.click("#ranks [data-rank='K']")
        dealer.click("#suits [data-suit='S']")
        dealer.click("#enter-card")
        dealer.wait_for_selector("#message[data-kind]:not([hidden])", timeout=10_000)
        assert (dealer.get_attribute("#message", "data-kind"), dealer.inner_text("#message")) == \
            ("ok", "Card K♠ entered")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/journal?last=1000", timeout=5) as r:
            events = json.load(r)["events"]
        typed = [e["data"] for e in events if e["kind"] == "card" and e["source"] == "api"]
        assert [(d["card"], d["user"], d["role"]) for d in typed] == [("KS", "demo-dealer", "dealer")]
        assert proc.poll() is None, "".join(lines)     # still dealing, waiting for people, not gone
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)       # Ctrl-C: the demo stops its view, its shoe and its daemon
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        for context in list(browser.contexts):
            context.close()
