"""Schemathesis against the OpenAPI schema the running daemon serves: no 5xx, responses as documented.

A daemon of its own (the fuzzer voids coups, starts shoes and reloads the
configuration). The ``schemathesis`` CLI runs against ``/openapi.json`` over real
HTTP; its configuration file gives every protected operation a token of the
role it needs, so generated bodies reach the handlers instead of stopping at
401/403 (the role checks themselves are tested in test_api.py). Bounded: a few
examples per operation, deterministic generation.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

ROLE = {
    ("POST", "/coup/card"): "dealer",
    ("POST", "/bets"): "dealer",
    ("GET", "/coups/{coup_id}/settlement"): "dealer",
    ("POST", "/alerts/{alert_id}/clear"): "supervisor",
    ("POST", "/alerts/{alert_id}/ack"): "supervisor",
    ("POST", "/coup/void"): "supervisor",
    ("POST", "/coup/resolve"): "supervisor",
    ("POST", "/coup/correct"): "supervisor",
    ("GET", "/audit"): "supervisor",
    ("POST", "/shoe/new"): "technician",
    ("POST", "/config/reload"): "technician",
}
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
MAX_EXAMPLES = 20


def schemathesis_config(stack) -> str:
    lines = []
    for (method, path), role in ROLE.items():
        lines += ["[[operations]]", f'include-name = "{method} {path}"',
                  f'headers = {{ Authorization = "Bearer {stack.tokens[role]}" }}', ""]
    return "\n".join(lines)


def test_schemathesis_finds_no_server_error(stack, tmp_path):
    # A few coups first, so that recall, settlement and alerts have something to show.
    stack.deal("2H", "8S", "3C", "KD", "9H", "9S", "KH", "TC")
    config = tmp_path / "schemathesis.toml"
    config.write_text(schemathesis_config(stack))
    exe = Path(sys.executable).with_name("schemathesis")
    cmd = [
        str(exe), "--no-color", "--config-file", str(config), "run", f"{stack.base}/openapi.json",
        "--checks", CHECKS, "--max-examples", str(MAX_EXAMPLES), "--phases", "examples,coverage,fuzzing",
        "--generation-deterministic", "--workers", "1",
        "--generation-with-security-parameters", "false", "--request-timeout", "15",
        "--suppress-health-check", "all",
    ]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": ""}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=100, cwd=tmp_path, env=env)
    output = run.stdout + run.stderr
    print(output[-6000:])  # the summary, shown with -s or on failure
    assert run.returncode == 0, output[-8000:]
    assert "No issues found" in output or " passed" in output, output[-4000:]
