"""Every problem of every section at once: one `config error:` line each, "did you mean" kept.

A technician with three typos fixes them in one edit, not three edit-and-retry rounds."""

from __future__ import annotations

import pytest

from shoe_daemon.config import ConfigError, load_config
from tests.e2e.harness import clean_env, run_cli

THREE_TYPOS = """\
[table]
deks = 8
[shoe]
baud = 9600
[mqtt]
prot = 1883
"""


def problems(tmp_path, toml: str, **env: str) -> ConfigError:
    path = tmp_path / "c.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_config(path, env)
    return info.value


def test_three_typos_in_three_sections_are_three_lines(tmp_path):
    err = problems(tmp_path, THREE_TYPOS)
    assert str(err).splitlines() == [
        "config error: unknown key table.deks (did you mean decks?)",
        "config error: unknown key shoe.baud (did you mean baudrate?)",
        "config error: unknown key mqtt.prot (did you mean port?)",
    ]
    assert err.key == "table.deks" and len(err.more) == 2


def test_typos_values_and_environment_together(tmp_path):
    err = problems(tmp_path, THREE_TYPOS + "keepalive = 1\n[log]\nlevel = 'loud'\n",
                   SHOE_DAEMON__API__PORT="0", SHOE_DAEMON__NOSECTION="1")
    lines = str(err).splitlines()
    assert all(line.startswith("config error: ") for line in lines)
    assert lines[0].startswith("config error: environment variable SHOE_DAEMON__NOSECTION must name a key")
    for text in ("table.deks (did you mean decks?)", "shoe.baud (did you mean baudrate?)",
                 "mqtt.prot (did you mean port?)", "mqtt.keepalive: must be at least", "log.level: must be one of",
                 "api.port: must be at least 1 (got 0) (from SHOE_DAEMON__API__PORT)"):
        assert sum(text in line for line in lines) == 1, (text, lines)
    assert len(lines) == 7


def test_a_lone_bad_environment_variable_is_still_an_error(tmp_path):
    err = problems(tmp_path, "", SHOE_DAEMON__X="1")
    assert str(err).startswith("config error: environment variable SHOE_DAEMON__X must name a key")


def test_run_prints_them_all_and_exits_2(tmp_path):
    cfg = tmp_path / "daemon.toml"
    cfg.write_text(THREE_TYPOS)
    proc = run_cli("run", "--config", str(cfg), env=clean_env())
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 3 and all(ln.startswith("config error: unknown key ") and "did you mean" in ln
                                   for ln in lines), proc.stderr
