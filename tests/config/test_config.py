"""Configuration: defaults, TOML, environment overrides, one clear message per mistake."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from pydantic import Field, ValidationError

from shoe_daemon.config import (
    ApiConfig,
    Config,
    ConfigError,
    MqttConfig,
    load_config,
)
from shoe_daemon.sources import BUILTIN_DRIVERS, _registered, get_driver, register_driver
from shoe_daemon.sources.base import DriverSettings, ShoeDriver

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "systemd" / "shoe-daemon.example.toml"


def load(tmp_path: Path, toml: str | None = None, **env: str) -> Config:
    path = None
    if toml is not None:
        path = tmp_path / "c.toml"
        path.write_text(toml)
    return load_config(path, env)


def error(tmp_path: Path, toml: str | None = None, **env: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, toml, **env)
    assert "\n" not in str(info.value)                             # one line
    return info.value


# --------------------------------------------------------------------------- defaults and the example


def test_bare_config_is_valid_with_demo_defaults(tmp_path):
    for cfg in (load_config(None, {}), load(tmp_path, ""), Config()):
        assert cfg.table.id == "table-1" and cfg.table.decks == 8 and cfg.table.seats == 7
        assert cfg.table.limits.punto.max == Decimal("10000") and cfg.table.limits.tie.min == Decimal("5")
        assert cfg.shoe.port == "/dev/dealing-shoe" and cfg.shoe.exclusive is True
        assert cfg.journal.path == "/var/lib/shoe-daemon/journal.sqlite3" and cfg.journal.synchronous == "full"
        assert cfg.api.host == "127.0.0.1" and cfg.api.port == 8080 and cfg.api.tokens == []
        assert cfg.camera.enabled is False and cfg.log.level == "info"
        assert cfg.mqtt == MqttConfig()


def test_example_config_loads_and_documents_every_key():
    cfg = load_config(EXAMPLE, {})
    assert cfg == Config()                                         # it shows the defaults
    text = EXAMPLE.read_text()
    for section, model in Config.model_fields.items():
        assert f"[{section}]" in text
        sub = model.annotation
        for key in sub.model_fields:                               # type: ignore[union-attr]
            if key != "limits":
                assert f"{key} =" in text or f"[[{section}.{key}]]" in text, f"{section}.{key} is not documented in the example"
    for name in BUILTIN_DRIVERS:                                   # the built-in drivers' own [shoe] keys
        for key in get_driver(name).Settings.model_fields:
            assert f"{key} =" in text, f"shoe.{key} ({name} driver) is not documented in the example"


def test_other_environment_variables_are_ignored(tmp_path):
    assert load(tmp_path, None, HOME="/root", SHOE_DAEMON_CONFIG="/x", PATH="/bin") == Config()


# --------------------------------------------------------------------------- file and environment


def test_file_values(tmp_path):
    cfg = load(tmp_path, """
[table]
id = "bac-07"
decks = 6
[table.limits.banco]
max = 2500.50
[shoe]
port = "socket://127.0.0.1:7000"
parity = "e"
stopbits = 1.5
[mqtt]
host = "broker"
[camera]
enabled = true
source = "/dev/video0"
fps = 15
zones = [{ name = "punto", polygon = [[0, 0], [10, 0], [10, 10]] }, { name = "banco", polygon = [[20, 0], [30, 0], [30, 10]] }]
fuser = { min_votes = 2 }
[log]
level = "DEBUG"
""")
    assert cfg.table.id == "bac-07" and cfg.table.decks == 6
    assert cfg.table.limits.banco.max == Decimal("2500.5") and cfg.table.limits.banco.min == Decimal("10")
    assert cfg.shoe.port == "socket://127.0.0.1:7000" and cfg.shoe.parity == "E" and cfg.shoe.stopbits == 1.5
    assert cfg.mqtt.host == "broker" and cfg.camera.fps == 15 and cfg.camera.zones[0]["name"] == "punto"
    assert cfg.camera.fuser.options() == {"min_votes": 2}
    assert cfg.log.level == "debug"


def test_environment_overrides_file_including_nested_limits(tmp_path):
    cfg = load(
        tmp_path,
        '[mqtt]\nport = 1884\nhost = "file-host"\n[table.limits.punto]\nmin = 20\n',
        SHOE_DAEMON__MQTT__PORT="8883",
        SHOE_DAEMON__MQTT__PROTOCOL="3.1.1",                      # a text setting stays text
        SHOE_DAEMON__MQTT__PASSWORD="12345",
        SHOE_DAEMON__TABLE__LIMITS__PUNTO__MAX="20000",
        SHOE_DAEMON__TABLE__LIMITS__TIE__MIN='"2.5"',
        shoe_daemon__table__decks="6",                             # any case
        SHOE_DAEMON__SHOE__EXCLUSIVE="false",
        SHOE_DAEMON__SHOE__RECONNECT_MAX="60",
        SHOE_DAEMON__CAMERA__ZONES='[{name = "banco", polygon = [[0, 0], [9, 0], [9, 9]]}]',
        SHOE_DAEMON__API__TOKENS='[{user = "d1", role = "dealer", token = "s3cret-token-1"}]',
        SHOE_DAEMON__JOURNAL__PATH="var/journal.sqlite3",
    )
    assert cfg.mqtt.port == 8883 and cfg.mqtt.host == "file-host" and cfg.mqtt.protocol == "3.1.1"
    assert cfg.mqtt.password == "12345"
    assert cfg.table.limits.punto.min == Decimal("20") and cfg.table.limits.punto.max == Decimal("20000")
    assert cfg.table.limits.punto.table_max == Decimal("100000") and cfg.table.limits.tie.min == Decimal("2.5")
    assert cfg.table.decks == 6 and cfg.shoe.exclusive is False and cfg.shoe.reconnect_max == 60.0
    assert cfg.camera.zones == [{"name": "banco", "polygon": [[0, 0], [9, 0], [9, 9]]}]
    assert cfg.api.tokens[0].secret() == "s3cret-token-1" and cfg.api.by_token()["s3cret-token-1"].user == "d1"
    assert cfg.journal.path == "var/journal.sqlite3"


def test_token_files(tmp_path):
    (tmp_path / "t1").write_text("token-one\n")
    (tmp_path / "t2").write_text("token-two")
    for name in ("t1", "t2"):
        (tmp_path / name).chmod(0o600)   # token files are refused unless only their owner may read them
    toml = f"""
[[api.tokens]]
user = "d1"
role = "dealer"
token_file = "{tmp_path / 't1'}"
[[api.tokens]]
user = "boss"
role = "supervisor"
token_file = "{tmp_path / 't2'}"
[[api.tokens]]
user = "tech"
role = "technician"
token = "inline-token"
"""
    cfg = load(tmp_path, toml)
    assert [t.secret() for t in cfg.api.tokens] == ["token-one", "token-two", "inline-token"]
    assert {t.user: t.role for t in cfg.api.by_token().values()} == {"d1": "dealer", "boss": "supervisor", "tech": "technician"}
    cfg = load_config(tmp_path / "c.toml", {}, read_secrets=False)   # e.g. the journal tool
    assert cfg.api.tokens[0].secret() is None and cfg.api.tokens[2].secret() == "inline-token"


# --------------------------------------------------------------------------- errors: one line naming the key


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[mqtt]\nport = 70000", "config error: mqtt.port: must be at most 65535 (got 70000)"),
        ("[table]\ndecks = 7", "config error: table.decks: must be one of 4, 6, 8 (got 7)"),
        ("[shoe]\nbaud = 9600", "config error: unknown key shoe.baud (did you mean baudrate?)"),
        ("[shoee]\nport = '/dev/x'", "config error: unknown section [shoee] (did you mean [shoe]?)"),
        ("[table]\nseats = 0", "config error: table.seats: must be at least 1 (got 0)"),
        ("[table]\nid = 'Table 1'", "config error: table.id: must use only a-z, 0-9 and '-'"),
        ("[table]\nclosing = 'manual'", "config error: table.closing: must be one of 'confirm', 'auto' (got 'manual')"),
        ("[table]\nburn = 'fixed'\nburn_count = 0", "config error: table.burn_count: must be at least 1 when burn = 'fixed'"),
        ("[table.limits.punto]\nmin = 500\nmax = 100", "config error: table.limits.punto.min: must be at most max (100) (got 500)"),
        ("[table.limits.tie]\nmax = 20000", "config error: table.limits.tie.max: must be at most table_max (10000) (got 20000)"),
        ("[table.limits.tie]\nmin = 'ten'", "config error: table.limits.tie.min: must be a number (got 'ten')"),
        ("[table.limits]\ntie = 5", "config error: table.limits.tie: must be a table (got 5)"),
        ("[table.limits.tie]\nmaxi = 5", "config error: unknown key table.limits.tie.maxi (did you mean max?)"),
        ("[shoe]\nbaudrate = 12345", "config error: shoe.baudrate: must be a standard rate"),
        ("[shoe]\nparity = 'X'", "config error: shoe.parity: must be one of 'N', 'E', 'O' (got 'X')"),
        ("[shoe]\nstopbits = 3", "config error: shoe.stopbits: must be one of 1, 1.5, 2 (got 3)"),
        ("[shoe]\nport = 'COM3'", "config error: shoe.port: must be a device path"),
        ("[shoe]\nport = 'socket://host'", "config error: shoe.port: a socket:// URL needs host:port"),
        ("[shoe]\nport = 'tcp://host:1'", "config error: shoe.port: unknown pyserial URL scheme 'tcp'"),
        ("[shoe]\ntext_pattern = '(?P<card>'", "config error: shoe.text_pattern: invalid regular expression"),
        ("[shoe]\ntext_pattern = '[2-9TJQKA][SHDC]'", "config error: shoe.text_pattern: must have a named group (?P<card>...)"),
        ("[shoe]\nreconnect_min = 5\nreconnect_max = 1", "config error: shoe.reconnect_max: must be at least reconnect_min (5.0) (got 1.0)"),
        ("[shoe]\nexclusive = 'yes please'", "config error: shoe.exclusive: must be true or false (got 'yes please')"),
        ("[shoe]\ndriver = 'protocl'", "config error: shoe.driver: unknown shoe driver 'protocl'; known: protocol, text"
                                       " (did you mean 'protocol'?)"),
        ("[shoe]\ndriver = 5", "config error: shoe.driver: must be a string (got 5)"),
        ("[shoe]\nlink_timeout = 0", "config error: shoe.link_timeout: must be greater than 0.0 (got 0)"),
        ("[shoe]\ndriver = 'text'\nlink_timeout = 'soon'", "config error: shoe.link_timeout: must be a number (got 'soon')"),
        ("[shoe]\nlink_timout = 3", "config error: unknown key shoe.link_timout (did you mean link_timeout?)"),
        ("[shoe]\ntext_patern = 'x'", "config error: unknown key shoe.text_patern (did you mean text_pattern?)"),
        ("[journal]\nsynchronous = 'off'", "config error: journal.synchronous: must be one of 'full', 'normal' (got 'off')"),
        ("[journal]\npath = ''", "config error: journal.path: must not be empty"),
        ("[mqtt]\nprotocol = 5", "config error: mqtt.protocol: must be one of '5', '3.1.1' (got 5)"),
        ("[mqtt]\nkeepalive = 'long'", "config error: mqtt.keepalive: must be an integer (got 'long')"),
        ("[api]\nport = 0", "config error: api.port: must be at least 1 (got 0)"),
        ("[api]\ntokens = { user = 'a' }", "config error: api.tokens: must be an array (got a table)"),
        ("[[api.tokens]]\nuser = 'a'\nrole = 'boss'\ntoken = 'tok-a'", "config error: api.tokens[0].role: must be one of 'dealer', 'supervisor', 'pit', 'technician' (got 'boss')"),
        ("[[api.tokens]]\nuser = 'a'\nrole = 'dealer'\ntoken = ''", "config error: api.tokens[0].token: must not be empty"),
        ("[[api.tokens]]\nuser = 'a'\nrole = 'dealer'", "config error: api.tokens[0]: needs token or token_file"),
        ("[[api.tokens]]\nuser = 'a'\nrole = 'dealer'\ntoken = 'x'\ntoken_file = '/y'", "config error: api.tokens[0].token_file: give token or token_file, not both"),
        ("[[api.tokens]]\nuser = 'a'\nrole = 'dealer'\ntoken_file = '/nonexistent/t'", "config error: api.tokens[0].token_file: cannot read /nonexistent/t"),
        ("[[api.tokens]]\nuser = 'a'\nrole = 'dealer'\ntoken = 'same'\n[[api.tokens]]\nuser = 'b'\nrole = 'supervisor'\ntoken = 'same'",
         "config error: api.tokens[1].token: duplicate token (the same as api.tokens[0])"),
        ("[[api.tokens]]\nuser = 'a'\nrole = 'dealer'\ntokn = 'x'", "config error: unknown key api.tokens[0].tokn (did you mean token?)"),
        ("[camera]\nenabled = 'maybe'", "config error: camera.enabled: must be true or false (got 'maybe')"),
        ("[camera]\nenabled = true", "config error: camera.source: is required when camera.enabled = true"),
        ("[camera]\nenabled = true\nsource = 0\nzones = [{name = 'punto', polygon = [[0, 0], [1, 0], [1, 1]]}]",
         "config error: camera.zones: needs a zone named banco when camera.enabled = true"),
        ("[camera]\nzones = [{name = 'punto', polygon = [[0, 0], [1, 0]]}]",
         "config error: camera.zones[0].polygon: must be a list of at least 3 [x, y] points"),
        ("[camera]\nzones = [{name = 'punto', polygon = [[0, 0], [1, 'a'], [1, 1]]}]",
         "config error: camera.zones[0].polygon[1]: must be [x, y] numbers (got [1, 'a'])"),
        ("[camera]\nzones = [{name = 'punto', polygon = [[0, 0], [1, 0], [1, 1]]}, {name = 'punto', polygon = [[0, 0], [1, 0], [1, 1]]}]",
         "config error: camera.zones[1].name: duplicate zone name 'punto'"),
        ("[camera]\nzones = [{name = 'punto', poly = [[0, 0], [1, 0], [1, 1]]}]",
         "config error: camera.zones[0].polygon: must be a list of at least 3 [x, y] points"),
        ("[camera]\nfsp = 10", "config error: unknown key camera.fsp (did you mean fps?)"),
        ("[camera]\nfps = 0", "config error: camera.fps: must be greater than 0.0 (got 0)"),
        ("[camera.fuser]\nmin_votes = 0", "config error: camera.fuser.min_votes: must be at least 1 (got 0)"),
        ("[camera.fuser]\nmin_votes = 5\nmax_frames = 3", "config error: camera.fuser.max_frames: must be at least min_votes (5) (got 3)"),
        ("[camera.fuser]\nsettle = 1", "config error: unknown key camera.fuser.settle (did you mean settle_frames?)"),
        ("[camera.recognizer]\nok_threshold = 1.5", "config error: camera.recognizer.ok_threshold: must be at most 1.0 (got 1.5)"),
        ("[camera.recognizer]\nmodel = '/nonexistent/glyphs.json'", "config error: camera.recognizer.model: no such file: /nonexistent/glyphs.json"),
        ("[log]\nlevel = 'verbose'", "config error: log.level: must be one of 'debug', 'info', 'warning', 'error', 'critical' (got 'verbose')"),
    ],
)
def test_each_error_names_its_key(tmp_path, toml, message):
    err = error(tmp_path, toml)
    assert str(err).startswith(message), str(err)


def test_error_attributes_and_all_problems_kept(tmp_path):
    with pytest.raises(ConfigError) as info:
        load(tmp_path, "[mqtt]\nport = 70000\nkeepalive = 1\n[table]\ndecks = 7\n")
    err = info.value
    assert err.key in ("mqtt.port", "table.decks", "mqtt.keepalive") and err.problem in str(err)
    assert len(err.more) == 2 and str(err).splitlines() == err.lines and len(err.lines) == 3   # one line each


def test_token_file_errors(tmp_path):
    (tmp_path / "empty").write_text("\n")
    (tmp_path / "a").write_text("dup")
    (tmp_path / "b").write_text("dup\n")
    for name in ("empty", "a", "b"):
        (tmp_path / name).chmod(0o600)
    base = "[[api.tokens]]\nuser = 'a'\nrole = 'dealer'\n"
    err = error(tmp_path, base + f"token_file = '{tmp_path / 'empty'}'")
    assert str(err).startswith("config error: api.tokens[0].token_file:") and "must not be empty" in str(err)
    err = error(tmp_path, base + f"token_file = '{tmp_path / 'a'}'\n" + base + f"token_file = '{tmp_path / 'b'}'")
    assert str(err).startswith("config error: api.tokens[1].token_file: duplicate token")
    assert "dup" not in str(err).replace("duplicate", "")          # never the secret


def test_environment_errors_name_the_variable(tmp_path):
    err = error(tmp_path, None, SHOE_DAEMON__MQTT__PORT="70000")
    assert str(err) == "config error: mqtt.port: must be at most 65535 (got 70000) (from SHOE_DAEMON__MQTT__PORT)"
    err = error(tmp_path, None, SHOE_DAEMON__SHOE__BAUD="9600")
    assert str(err) == "config error: unknown key shoe.baud (from SHOE_DAEMON__SHOE__BAUD) (did you mean baudrate?)"
    err = error(tmp_path, None, SHOE_DAEMON__TABLE__LIMITS__PUNTO__MAX="200000")
    assert str(err).startswith("config error: table.limits.punto.max: must be at most table_max (100000) (got 200000)")
    err = error(tmp_path, None, SHOE_DAEMON__TABLE="x")
    assert "SHOE_DAEMON__TABLE must name a key" in str(err)
    # a text setting takes the variable as it is: no TOML surprise for a password
    assert load(tmp_path, None, SHOE_DAEMON__MQTT__PASSWORD='["not", 1e5]').mqtt.password == '["not", 1e5]'


def test_bad_toml_gives_file_and_line(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[table]\nid = "t1"\ndecks = = 8\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, {})
    assert str(info.value).startswith(f"config error: {path} line 3: invalid TOML: ")
    path.write_text('[table]\nid = "t1\n')
    with pytest.raises(ConfigError, match=r"line 2: invalid TOML"):
        load_config(path, {})
    path.write_bytes(b'[table]\nid = "\xff"\n')
    with pytest.raises(ConfigError, match=r"line 2: invalid TOML: not UTF-8"):
        load_config(path, {})
    with pytest.raises(ConfigError, match=r"config error: .*missing.toml: cannot read the file: No such file"):
        load_config(tmp_path / "missing.toml", {})


# --------------------------------------------------------------------------- redaction


def test_redacted_masks_secrets(tmp_path):
    (tmp_path / "t").write_text("file-token-value")
    (tmp_path / "t").chmod(0o600)
    cfg = load(
        tmp_path,
        f"[[api.tokens]]\nuser = 'a'\nrole = 'dealer'\ntoken_file = '{tmp_path / 't'}'\n"
        "[[api.tokens]]\nuser = 'b'\nrole = 'technician'\ntoken = 'inline-token-value'\n"
        "[camera]\nsource = 'rtsp://cam:campass@10.0.0.9:554/stream'\n",
        SHOE_DAEMON__MQTT__PASSWORD="mqtt-pass-value",
        SHOE_DAEMON__MQTT__USERNAME="table-1",
    )
    data = cfg.redacted()
    text = json.dumps(data)
    for secret in ("file-token-value", "inline-token-value", "mqtt-pass-value", "campass"):
        assert secret not in text
    for secret in ("file-token-value", "inline-token-value"):     # API tokens are SecretStr: hidden in logs
        assert secret not in repr(cfg) and secret not in str(cfg.api)
    assert data["mqtt"]["password"] == "***" and data["mqtt"]["username"] == "table-1"
    assert [t["token"] for t in data["api"]["tokens"]] == ["***", "***"]
    assert data["api"]["tokens"][0]["token_file"] == str(tmp_path / "t")
    assert data["camera"]["source"] == "rtsp://cam:***@10.0.0.9:554/stream"
    assert data["table"]["limits"]["punto"]["max"] == "10000"
    assert Config().redacted()["mqtt"]["password"] is None          # nothing to mask


def test_models_are_frozen():
    with pytest.raises(ValidationError):
        Config().table.decks = 6                                   # type: ignore[misc]
    assert ApiConfig().enabled is True


# --------------------------------------------------------------------------- [shoe] driver and its own settings


class _MineSettings(DriverSettings):
    mine_speed: int = Field(9, ge=1, le=10)
    mine_mode: str = "fast"


class _MineDriver(ShoeDriver):
    Settings = _MineSettings

    def feed(self, data, now):
        return [], b""


@pytest.fixture
def mine():
    register_driver("mine", _MineDriver)
    yield _MineDriver
    _registered.pop("mine", None)


def test_a_registered_driver_is_configurable_with_its_own_settings(tmp_path, mine):
    cfg = load(tmp_path, "[shoe]\ndriver = 'mine'\nmine_speed = 3\nlink_timeout = 2.5\n")
    assert cfg.shoe.driver == "mine"
    assert cfg.shoe.driver_settings == _MineSettings(mine_speed=3)
    assert isinstance(get_driver(cfg.shoe.driver)(cfg.shoe.driver_settings).settings, _MineSettings)
    # the built-in drivers' keys stay where users have them, validated whichever driver is chosen
    assert cfg.shoe.link_timeout == 2.5 and cfg.shoe.mine_speed == 3
    assert cfg.shoe.model_dump()["mine_mode"] == "fast"
    err = error(tmp_path, "[shoe]\ndriver = 'mine'\nmine_speed = 11\n")
    assert str(err) == "config error: shoe.mine_speed: must be at most 10 (got 11)" and err.key == "shoe.mine_speed"
    err = error(tmp_path, "[shoe]\ndriver = 'mine'\nmine_sped = 1\n")
    assert str(err) == "config error: unknown key shoe.mine_sped (did you mean mine_speed?)"
    # another driver's keys are unknown while it is not the one chosen
    err = error(tmp_path, "[shoe]\ndriver = 'text'\nmine_speed = 3\n")
    assert str(err).startswith("config error: unknown key shoe.mine_speed")
    # an environment variable is typed by the driver's own model
    cfg = load(tmp_path, "[shoe]\ndriver = 'mine'\n", SHOE_DAEMON__SHOE__MINE_MODE="7", SHOE_DAEMON__SHOE__MINE_SPEED="4")
    assert cfg.shoe.driver_settings == _MineSettings(mine_speed=4, mine_mode="7")
    err = error(tmp_path, None, SHOE_DAEMON__SHOE__DRIVER="mine", SHOE_DAEMON__SHOE__MINE_SPEED="0")
    assert str(err) == "config error: shoe.mine_speed: must be at least 1 (got 0) (from SHOE_DAEMON__SHOE__MINE_SPEED)"


def test_unknown_driver_lists_the_registered_ones(tmp_path, mine):
    err = error(tmp_path, "[shoe]\ndriver = 'yours'\n")
    assert str(err) == "config error: shoe.driver: unknown shoe driver 'yours'; known: mine, protocol, text"
    assert err.key == "shoe.driver"


def test_built_in_driver_settings_reach_the_driver(tmp_path):
    cfg = load(tmp_path, "[shoe]\ndriver = 'text'\ntext_pattern = 'CARD (?P<card>\\w+)'\nlink_timeout = 7\n")
    assert cfg.shoe.driver_settings.text_pattern == r"CARD (?P<card>\w+)"
    assert cfg.shoe.link_timeout == 7.0 and isinstance(cfg.shoe.link_timeout, float)
    assert load(tmp_path, "").shoe.driver_settings.link_timeout == 3.0
    events, _ = get_driver("text")(cfg.shoe.driver_settings).feed(b"CARD QH\n", 1.0)
    assert [e.data["card"] for e in events] == ["QH"]


def test_a_driver_may_not_redeclare_the_port_keys(tmp_path):
    class Greedy(DriverSettings):
        port: str = "/dev/mine"

    class GreedyDriver(_MineDriver):
        Settings = Greedy

    register_driver("greedy", GreedyDriver)
    try:
        err = error(tmp_path, "[shoe]\ndriver = 'greedy'\n")
    finally:
        _registered.pop("greedy", None)
    assert str(err) == "config error: shoe.driver: shoe driver 'greedy' is unusable: its settings redeclare [shoe] port keys (port)"


def test_config_imports_no_driver_and_no_vision():
    code = ("import sys, shoe_daemon.config; "
            "print(sorted(m for m in sys.modules if m.startswith(('shoe_daemon.sources', 'shoe_daemon.vision', "
            "'firmware_protocol'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
