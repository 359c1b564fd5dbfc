"""Configuration that must be refused with one clear line, not accepted and failing later:
MQTT wildcards in the topic prefix, an absurd queue bound, a directory as the journal file and a
text pattern that can backtrack catastrophically."""

from __future__ import annotations

import pytest

from shoe_daemon.config import ConfigError, load_config
from tests.e2e.harness import clean_env, run_cli


def error(tmp_path, toml: str) -> ConfigError:
    path = tmp_path / "c.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_config(path, {})
    assert "\n" not in str(info.value)
    return info.value


@pytest.mark.parametrize("prefix", ["baccarat/#", "baccarat/+/x", "+", "#", "$SYS/x", "/a", ""])
def test_mqtt_prefix_with_a_wildcard_or_a_leading_slash_is_refused(tmp_path, prefix):
    e = error(tmp_path, f'[mqtt]\nprefix = "{prefix}"\n')
    assert e.key == "mqtt.prefix", str(e)


def test_a_plain_prefix_is_fine(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[mqtt]\nprefix = "casino/floor-2/table 7/"\n')
    assert load_config(path, {}).mqtt.prefix == "casino/floor-2/table 7/"   # the publisher drops the '/'


@pytest.mark.parametrize("value", ["1e23", "1e22", "10000001", "1e7"])
def test_queue_max_has_a_sane_upper_bound(tmp_path, value):
    e = error(tmp_path, f"[mqtt]\nqueue_max = {value}\n")
    assert e.key == "mqtt.queue_max" and "at most 1000000" in str(e), str(e)


@pytest.mark.parametrize("path", ["/", "{tmp}", "{tmp}/", "/var/lib/shoe-daemon/", "."])
def test_a_directory_as_the_journal_is_refused(tmp_path, path):
    e = error(tmp_path, f'[journal]\npath = "{path.format(tmp=tmp_path)}"\n')
    assert e.key == "journal.path" and "directory" in str(e), str(e)


def test_check_config_refuses_a_directory_journal(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[journal]\npath = "/"\n')
    done = run_cli("run", "--check-config", "--config", str(path), env=clean_env())
    assert done.returncode != 0
    assert "journal.path" in done.stderr + done.stdout


@pytest.mark.parametrize("pattern", [
    r"^(?P<card>(\w+)+)$",                # nested quantifiers
    r"^(?P<card>(?:\s*\w)*)$",            # a variable quantifier inside a repeat
    r"(?P<card>(a*)*)x",                  # a repeat of something empty
    r"^(?P<card>(?:a|ab)*)c",             # quantified alternation, branches alike
    r"^.*.*=(?P<card>..)$",               # adjacent unbounded quantifiers, same characters
])
def test_a_text_pattern_that_can_backtrack_catastrophically_is_refused(tmp_path, pattern):
    e = error(tmp_path, f"[shoe]\ndriver = \"text\"\ntext_pattern = '{pattern}'\n")
    assert e.key == "shoe.text_pattern" and "backtrack" in str(e), str(e)


@pytest.mark.parametrize("pattern", [
    r"^\s*(?P<card>(?:10|[A2-9TJQK])[SHDC])\s*$",
    r"CARD=(?P<card>\w+)",
    r"^\s*\d+\s*,\s*(?P<card>\w\w)\s*$",
    r"^.*?(?P<card>[2-9TJQKA][SHDC])\s*$",
    r"^(?:\d{2})+;(?P<card>\w{2,3})$",
])
def test_ordinary_reader_patterns_are_accepted(tmp_path, pattern):
    path = tmp_path / "c.toml"
    path.write_text(f"[shoe]\ndriver = \"text\"\ntext_pattern = '{pattern}'\n")
    assert load_config(path, {}).shoe.text_pattern == pattern
