"""The API under bad input and bad intent, over real HTTP (uvicorn) on a real daemon.

- writes: the token is checked before one byte of the body is read; bodies are capped (413);
- request types are strict (``index: false``, ``seat: "1"`` are 422) and the published schema's
  amount pattern is exactly what the code takes;
- a recall row altered in the journal file is refused (409 naming the coup), never served;
- tokens given only by their SHA-256 work; HTTPS with [api] tls_cert/tls_key; plain HTTP off
  loopback only with the loud opt-in.
"""

from __future__ import annotations

import logging
import re
import shutil
import socket
import sqlite3
import ssl
import subprocess
import time

import httpx
import pytest

from shoe_daemon.config import ConfigError, load_config, token_digest
from tests.api.harness import Stack


class HardStack(Stack):
    """The harness's stack with more [api] settings; ``hash_role``'s token is configured by its hash."""

    def __init__(self, tmp, *, api_lines=(), hash_role=None, host=None):
        self._api_lines = list(api_lines)
        self._hash_role = hash_role
        self._host = host
        super().__init__(tmp)

    def write_config(self, **overrides) -> None:
        super().write_config(**overrides)
        text = self.config_path.read_text()
        port_line = f"port = {self.api_port}\n"
        text = text.replace(port_line, port_line + "".join(line + "\n" for line in self._api_lines), 1)
        if self._host is not None:
            text = text.replace('[api]\nenabled = true\nhost = "127.0.0.1"', f'[api]\nenabled = true\nhost = "{self._host}"')
        if self._hash_role is not None:
            token = self.tokens[self._hash_role]
            text = text.replace(f'token = "{token}"', f'token_hash = "sha256:{token_digest(token).hex()}"')
        self.config_path.write_text(text)


MAX_BODY = 4096


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    s = HardStack(tmp_path_factory.mktemp("hard"), api_lines=[f"max_body_bytes = {MAX_BODY}"], hash_role="dealer")
    try:
        s.start()
        yield s
    finally:
        s.stop()


def raw_request(port: int, head: str, body: bytes = b"", wait: float = 3.0) -> bytes:
    """Send ``head`` (and ``body``) on a fresh socket; what comes back within ``wait`` s."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as sock:
        sock.sendall(head.encode() + body)
        sock.settimeout(wait)
        data = b""
        try:
            while True:            # the gate's replies close the connection
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except TimeoutError:
            pass
        return data


# --------------------------------------------------------------------------- token before body, body cap


def test_an_anonymous_write_is_401_before_its_body_is_read(stack):
    """A 100 MB body announced without a token: 401 at once, without waiting for (or reading) the
    body. Before, the daemon read and parsed the whole body first (and then said 422)."""
    head = (f"POST /bets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {100 * 1024 * 1024}\r\n\r\n")
    started = time.monotonic()
    reply = raw_request(stack.api_port, head, b'{"reason": "x", "bets": [')
    assert reply.startswith(b"HTTP/1.1 401"), reply[:200]
    assert b"www-authenticate: Bearer" in reply.lower().replace(b"bearer", b"Bearer")
    assert time.monotonic() - started < 2.0
    bad = raw_request(stack.api_port, head.replace("Host: x", "Host: x\r\nAuthorization: Bearer not-a-token"))
    assert bad.startswith(b"HTTP/1.1 401") and b"unknown token" in bad


def test_a_body_over_the_cap_is_413(stack):
    auth = f"Authorization: Bearer {stack.tokens['dealer']}\r\n"
    head = f"POST /bets HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n"
    reply = raw_request(stack.api_port, head)
    assert reply.startswith(b"HTTP/1.1 413") and b"max_body_bytes" in reply, reply[:300]

    def chunks():                                  # no Content-Length: chunked, cut at the cap
        yield b'{"reason": "' + b"x" * 1000
        for _ in range(10):
            yield b"x" * 1000
        yield b'", "bets": []}'

    r = stack.http.post("/bets", content=chunks(), headers={**stack.auth("dealer"), "Content-Type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"
    # Under the cap the same route works, with the token given by its hash only.
    ok = stack.post("/bets", {"reason": "small", "bets": [{"seat": 1, "kind": "banco", "amount": "20"}]}, "dealer")
    assert ok.status_code == 200, ok.text


def test_reads_need_no_token_and_are_not_gated(stack):
    assert stack.get("/healthz").status_code == 200
    assert stack.get("/coups").status_code == 200


# --------------------------------------------------------------------------- strict types, schema = code


@pytest.mark.parametrize("path,role,body,loc", [
    ("/coup/correct", "supervisor", {"reason": "x", "index": False, "card": "KH"}, "body.index"),
    ("/coup/correct", "supervisor", {"reason": "x", "index": "0", "card": "KH"}, "body.index"),
    ("/bets", "dealer", {"reason": "x", "bets": [{"seat": "1", "kind": "banco", "amount": "20"}]}, "body.bets.0.seat"),
    ("/bets", "dealer", {"reason": "x", "bets": [{"seat": True, "kind": "banco", "amount": "20"}]}, "body.bets.0.seat"),
    ("/bets", "dealer", {"reason": "x", "bets": [{"seat": 1.0, "kind": "banco", "amount": "20"}]}, "body.bets.0.seat"),
    ("/shoe/new", "technician", {"reason": "x", "decks": "8"}, "body.decks"),
])
def test_request_types_are_strict(stack, path, role, body, loc):
    r = stack.post(path, body, role)
    assert r.status_code == 422, r.text
    assert r.json()["error"]["details"][0]["loc"] == loc


def test_the_published_amount_pattern_is_what_the_code_takes(stack):
    schema = stack.get("/openapi.json").json()
    pattern = schema["components"]["schemas"]["BetIn"]["properties"]["amount"]["pattern"]
    candidates = ["0", "00", "0.0", "0.000000", "0.000001", "0.5", "1", "20", "25.50", "007", "12.345678",
                  "12.3456789", "-5", "1e3", " 20", "20 ", "999999999999", "1000000000000", "0020.00"]
    for amount in candidates:
        r = stack.post("/bets", {"reason": "agree", "bets": [{"seat": 1, "kind": "banco", "amount": amount}]}, "dealer")
        in_schema = re.search(pattern, amount) is not None
        error = r.json().get("error", {}) if r.status_code != 200 else {}
        refused_as_amount = r.status_code == 422 and (
            any(d["loc"] == "body.bets.0.amount" for d in error.get("details") or [])
            or error.get("code") == "invalid_request")
        # Matching the schema: taken, or refused only by the table's limits (a 422 "over_limit").
        assert in_schema != refused_as_amount, (amount, in_schema, r.status_code, r.text)


# --------------------------------------------------------------------------- recall from the journal file


def test_an_altered_recall_row_is_refused_with_409(stack):
    stack.deal("9H", "2C", "KS", "3D")                  # Punto 9, Banco 5: punto wins
    coup_id = stack.get("/coups", params={"last": 1}).json()["coups"][-1]["coup_id"]
    assert stack.get(f"/coups/{coup_id}").json()["winner"] == "punto"
    journal = stack.daemon.config.journal.path
    conn = sqlite3.connect(journal)
    try:
        original = conn.execute("SELECT result FROM coups WHERE coup_id = ?", (coup_id,)).fetchone()[0]
        for forged in (original.replace('"winner":"punto"', '"winner":"banco"'),
                       b'{"winner":"\xff"}'):              # and a row that is not even UTF-8
            conn.execute("UPDATE coups SET result = CAST(? AS TEXT) WHERE coup_id = ?", (forged, coup_id))
            conn.commit()
            for path in (f"/coups/{coup_id}", "/coups?last=100"):
                r = stack.get(path)
                assert r.status_code == 409, (path, r.status_code, r.text)
                err = r.json()["error"]
                assert err["code"] == "recall_corrupt" and err["coup_id"] == coup_id
                assert "recall record fails verification" in err["message"] and "banco" not in r.text
    finally:
        conn.execute("UPDATE coups SET result = ? WHERE coup_id = ?", (original, coup_id))
        conn.commit()
        conn.close()
    assert stack.get(f"/coups/{coup_id}").json()["winner"] == "punto"


# --------------------------------------------------------------------------- transport


def make_cert(tmp) -> tuple[str, str]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate (scripts/system-deps.sh installs it)")
    cert, key = tmp / "api.crt", tmp / "api.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=60)  # fmt: skip
    key.chmod(0o600)
    return str(cert), str(key)


def test_https_with_a_certificate(tmp_path):
    cert, key = make_cert(tmp_path)
    s = HardStack(tmp_path, api_lines=[f'tls_cert = "{cert}"', f'tls_key = "{key}"'])
    s.base = f"https://127.0.0.1:{s.api_port}"
    s.http.close()
    s.http = httpx.Client(base_url=s.base, timeout=10.0, verify=ssl.create_default_context(cafile=cert))
    try:
        s.start()
        assert s.get("/healthz").json() == {"status": "ok"}
        assert s.post("/coup/void", {"reason": "x"}, "supervisor").status_code in (200, 409)
        with pytest.raises(httpx.HTTPError):                     # no plain HTTP on that port
            httpx.get(f"http://127.0.0.1:{s.api_port}/healthz", timeout=3).raise_for_status()
    finally:
        s.stop()


def test_off_loopback_needs_tls_or_the_loud_opt_in(tmp_path, caplog):
    base = tmp_path / "c.toml"
    base.write_text('[api]\nhost = "0.0.0.0"\n')
    with pytest.raises(ConfigError, match="api.host: '0.0.0.0' is not a loopback address"):
        load_config(base, env={})
    base.write_text('[api]\nhost = "0.0.0.0"\nallow_plain_http_off_loopback = true\n')
    assert load_config(base, env={}).api.host == "0.0.0.0"
    base.write_text('[api]\nhost = "0.0.0.0"\ntls_cert = "/nonexistent.crt"\n')
    with pytest.raises(ConfigError, match="give both tls_cert and tls_key"):
        load_config(base, env={})
    # The opt-in starts, and says so at every start (a warning in the log).
    (tmp_path / "d").mkdir()
    s = HardStack(tmp_path / "d", host="0.0.0.0", api_lines=["allow_plain_http_off_loopback = true"])
    caplog.set_level(logging.WARNING, logger="shoe_daemon.api")
    try:
        s.start()
        assert s.get("/healthz").status_code == 200
        assert any("WITHOUT TLS" in r.getMessage() for r in caplog.records), caplog.text
    finally:
        s.stop()


def test_token_files_readable_by_others_are_refused(tmp_path):
    tok = tmp_path / "tok"
    tok.write_text("a-token-of-the-dealer\n")
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"[[api.tokens]]\nuser = 'd'\nrole = 'dealer'\ntoken_file = '{tok}'\n")
    for mode in (0o666, 0o644, 0o640, 0o604, 0o620):
        tok.chmod(mode)
        with pytest.raises(ConfigError, match=f"api.tokens\\[0\\].token_file: {tok} has mode {mode:04o}"):
            load_config(cfg, env={})
    tok.chmod(0o600)
    assert load_config(cfg, env={}).api.tokens[0].digest() == token_digest("a-token-of-the-dealer")
    cfg.write_text("[[api.tokens]]\nuser = 'd'\nrole = 'dealer'\ntoken_hash = 'sha256:abc'\n")
    with pytest.raises(ConfigError, match="token_hash"):
        load_config(cfg, env={})


# --------------------------------------------------------------------------- the audit log at start


def test_a_cut_audit_log_is_found_at_start_and_alerted(stack):
    from pathlib import Path

    from shoe_daemon.journal.audit import audit_path

    for i in range(2):
        assert stack.post("/coup/void", {"reason": f"audit me {i}"}, "supervisor").status_code in (200, 409)
    apath = audit_path(stack.daemon.config.journal.path)
    lines = apath.read_text().splitlines(keepends=True)
    assert len(lines) >= 2
    apath.write_text("".join(lines[:-1]))                  # the last line deleted
    stack.restart()
    active = stack.get("/alerts", params={"state": "active"}).json()["active"]
    found = [a for a in active if a["evidence"].get("code") == "audit_log_mismatch"]
    assert found and found[0]["severity"] == "error" and "missing" in found[0]["message"], active
    assert Path(f"{apath}.corrupt-1").exists()             # set aside, never deleted
    # The new log verifies against the journal from its first line on.
    assert stack.post("/coup/void", {"reason": "after"}, "supervisor").status_code in (200, 409)
    from shoe_daemon.journal import Journal
    from shoe_daemon.journal.audit import verify_audit

    with Journal.open(stack.daemon.config.journal.path, readonly=True) as j:
        assert verify_audit(j, apath).ok
