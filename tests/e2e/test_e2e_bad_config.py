"""A bad configuration stops ``shoe-daemon run`` before anything starts: exit status 2 and ONE line
on stderr naming the key at fault (from the file or from a SHOE_DAEMON__ environment variable)."""

from __future__ import annotations

import pytest

from tests.e2e.harness import clean_env, run_cli

GOOD = """\
[table]
id = "e2e"
[shoe]
port = "/dev/null"
[journal]
path = "{journal}"
[mqtt]
host = "127.0.0.1"
port = 1883
[api]
enabled = false
"""

CASES = {
    "port-out-of-range": ('port = 1883', 'port = 70000', {}, ["mqtt.port", "65535", "70000"]),
    "misspelt-key": ('host = "127.0.0.1"', 'hots = "127.0.0.1"', {}, ["mqtt.hots", "did you mean host"]),
    "env-decks": ("", "", {"SHOE_DAEMON__TABLE__DECKS": "7"},
                  ["table.decks", "SHOE_DAEMON__TABLE__DECKS", "7"]),
    "unknown-section": ("[api]", "[apii]", {}, ["[apii]", "did you mean [api]"]),
    "bad-toml": ('port = 1883', 'port = 18 83', {}, ["invalid TOML", "line 9"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_config_exits_2_with_one_line_naming_the_key(tmp_path, case):
    old, new, env, expected = CASES[case]
    journal = tmp_path / "journal.sqlite3"
    cfg = tmp_path / "daemon.toml"
    cfg.write_text(GOOD.format(journal=journal).replace(old, new, 1))
    for args in (["run", "--config", str(cfg)], ["run", "--config", str(cfg), "--check-config"]):
        proc = run_cli(*args, env=clean_env(**env))
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert lines[0].startswith("config error: "), lines[0]
        for text in expected:
            assert text in lines[0], lines[0]
        assert proc.stdout == ""
    assert not journal.exists(), "the daemon touched the journal with a bad configuration"


def test_good_config_checks_ok(tmp_path):
    cfg = tmp_path / "daemon.toml"
    cfg.write_text(GOOD.format(journal=tmp_path / "journal.sqlite3"))
    proc = run_cli("run", "--config", str(cfg), "--check-config", env=clean_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == "config OK"
