"""A real daemon for the API tests: emulated shoe on a pty, real Mosquitto, API on a free port.

The daemon runs ``Daemon.run`` on its own event loop in a thread, exactly as in
production (journal first, then the core, then the sinks; uvicorn is a task of
that loop). The shoe is an ``EmulatedShoe`` with an empty scenario: the tests
inject the cards they want (``deal``), so every coup is known in advance.
Tokens are made up per run (none lives in the repo).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
from pathlib import Path

import httpx

from firmware_protocol.messages import CardDrawn, CardUnreadable, UnreadableReason
from shoe_daemon.emulator import EmulatedShoe
from tests.support.mosquitto import MosquittoServer, free_port
from tests.support.waiting import wait_until

ROLES = ("dealer", "supervisor", "pit", "technician")


def toml_config(tmp: Path, *, shoe_path: str, mqtt_port: int, api_port: int, tokens: dict[str, str],
                limits: dict | None = None, extra: str = "", synchronous: str = "normal") -> str:
    lines = [
        "[table]", 'id = "api-test"', "decks = 8", 'burn = "none"', "burn_count = 0", 'closing = "auto"',
        'on_error = "hold"', "",
    ]
    for kind, lim in (limits or {}).items():
        lines += [f"[table.limits.{kind}]"] + [f'{k} = "{v}"' for k, v in lim.items()] + [""]
    lines += [
        "[shoe]", f'port = "{shoe_path}"', 'driver = "protocol"', "reconnect_min = 0.1", "reconnect_max = 0.5", "",
        "[journal]", f'path = "{tmp / "journal.sqlite3"}"', f'synchronous = "{synchronous}"', "",
        "[mqtt]", 'host = "127.0.0.1"', f"port = {mqtt_port}", "",
        "[api]", "enabled = true", 'host = "127.0.0.1"', f"port = {api_port}", "",
    ]
    for role, token in tokens.items():
        lines += ["[[api.tokens]]", f'user = "{role}-1"', f'role = "{role}"', f'token = "{token}"', ""]
    return "\n".join(lines) + extra


DEFAULT_LIMITS = {
    "punto": {"min": "10", "max": "500", "table_max": "1000"},
    "banco": {"min": "10", "max": "500", "table_max": "1000"},
    "tie": {"min": "5", "max": "100", "table_max": "200"},
}


class Stack:
    """Mosquitto + emulated shoe + daemon (with its API) for one test module."""

    def __init__(self, tmp: Path, limits: dict | None = None, extra_toml: str = "", synchronous: str = "normal"):
        """``extra_toml``: more configuration (e.g. a [camera] section), appended to the file;
        ``synchronous``: the journal's (normal here: the API tests need no fsync per commit)."""
        from shoe_daemon.config import load_config
        from shoe_daemon.service import Daemon

        self.tmp = tmp
        self.broker = MosquittoServer().start()
        self.shoe = EmulatedShoe(decks=8, seed=1, pace=0.0, scenario=[], link=str(tmp / "shoe"))
        self.shoe.open()
        self.tokens = {role: secrets.token_urlsafe(24) for role in ROLES}
        self.api_port = free_port()
        self.config_path = tmp / "shoe-daemon.toml"
        self.limits = limits or DEFAULT_LIMITS
        self.extra_toml = extra_toml
        self.synchronous = synchronous
        self.write_config()
        config = load_config(self.config_path, env={})
        self.daemon = Daemon(config, config_path=str(self.config_path))
        self.base = f"http://127.0.0.1:{self.api_port}"
        self.http = httpx.Client(base_url=self.base, timeout=10.0)
        self.counter = 0
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self.rc: int | None = None
        self._thread = threading.Thread(target=self._run, name="daemon", daemon=True)

    def write_config(self, **overrides) -> None:
        kw = dict(shoe_path=str(self.tmp / "shoe"), mqtt_port=self.broker.port, api_port=self.api_port,
                  tokens=self.tokens, limits=self.limits, extra=self.extra_toml, synchronous=self.synchronous)
        kw.update(overrides)
        self.config_path.write_text(toml_config(self.tmp, **kw))

    # -- life ------------------------------------------------------------------------------
    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def main():
            self._stop = asyncio.Event()
            return await self.daemon.run(self._stop)

        self.rc = self._loop.run_until_complete(main())

    def start(self, timeout: float = 15.0) -> Stack:
        self.shoe.start()
        self._thread.start()
        self.wait(lambda: self.get("/readyz").status_code == 200, timeout, "the daemon to be ready")
        return self

    def _stop_daemon(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(15)
        assert not self._thread.is_alive(), "the daemon did not stop"

    def restart(self, timeout: float = 15.0) -> None:
        """Stop the daemon and start a new one on the same journal, shoe and port."""
        from shoe_daemon.config import load_config
        from shoe_daemon.service import Daemon

        self._stop_daemon()
        self._loop.close()
        self.http.close()
        self.daemon = Daemon(load_config(self.config_path, env={}), config_path=str(self.config_path))
        self.http = httpx.Client(base_url=self.base, timeout=10.0)
        self._loop = asyncio.new_event_loop()
        self._stop = None
        self._thread = threading.Thread(target=self._run, name="daemon", daemon=True)
        self._thread.start()
        self.wait(lambda: self.get("/readyz").status_code == 200, timeout, "the restarted daemon to be ready")

    def stop(self) -> None:
        try:
            self._stop_daemon()
        finally:
            self.http.close()
            self.shoe.stop()
            self.broker.cleanup()

    # -- HTTP ------------------------------------------------------------------------------
    def get(self, path: str, role: str | None = None, **kw) -> httpx.Response:
        return self.http.get(path, headers=self.auth(role), **kw)

    def post(self, path: str, body=None, role: str | None = None, **kw) -> httpx.Response:
        return self.http.post(path, json=body, headers=self.auth(role), **kw)

    def auth(self, role: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"} if role else {}

    def wait(self, predicate, timeout: float = 10.0, what: str = "a condition"):
        """``wait_until(predicate)``, reading an API that does not answer yet as "not yet"."""
        def attempt():
            try:
                return predicate()
            except httpx.TransportError:
                return None

        return wait_until(attempt, timeout, what)

    # -- the table -------------------------------------------------------------------------
    def open_coup(self) -> str:
        """The coup bets go to (the next coup, between coups)."""
        return self.get("/coup/current").json()["bets_open_for"]

    def metric(self, name_and_labels: str) -> float:
        """One sample of /metrics (0 when absent)."""
        for line in self.get("/metrics").text.splitlines():
            if line.startswith(name_and_labels + " "):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    # -- the shoe ----------------------------------------------------------------------------
    def last_seq(self) -> int:
        return self.get("/journal", params={"last": 1}).json()["last_seq"]

    def deal(self, *cards: str, unreadable: tuple[int, ...] = ()) -> None:
        """The shoe draws these cards (positions in ``unreadable`` leave unread); waits until the
        core has handled them all."""
        card_events = self._count_cards()
        actions = []
        for i, card in enumerate(cards):
            self.counter += 1
            if i in unreadable:
                actions.append(CardUnreadable(self.counter, UnreadableReason.NO_READ))
            else:
                actions.append(CardDrawn(card, self.counter, 100))
        self.shoe.inject(*actions)
        self.wait(lambda: self._count_cards() >= card_events + len(cards), 10, f"the shoe's cards {cards}")

    def _count_cards(self) -> int:
        events = self.get("/journal", params={"last": 1000}).json()["events"]
        return sum(1 for e in events if e["source"] == "shoe" and e["kind"] in ("card", "card_unreadable"))


def ws_messages(ws, n: int, timeout: float = 5.0, where=lambda m: True) -> list[dict]:
    """Up to ``n`` messages matching ``where`` from a websockets sync client."""
    out = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        try:
            raw = ws.recv(timeout=max(0.01, deadline - time.monotonic()))
        except TimeoutError:
            break
        msg = json.loads(raw)
        if where(msg):
            out.append(msg)
    return out
