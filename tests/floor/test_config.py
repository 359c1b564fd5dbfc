"""The floor's configuration: bad input is one clear line naming the key, and exit status 2."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from shoe_daemon.floor import schema
from shoe_daemon.floor.config import FloorConfigError, floor_config_from
from shoe_daemon.floor.store import SCHEMA_VERSION, Store
from tests.floor.harness import ROOT


@pytest.mark.parametrize("data, key", [
    ({"floor": {"database": "mysql://x"}}, "floor.database"),
    ({"floor": {"prefix": "baccarat/#"}}, "floor.prefix"),
    ({"floor": {"share_group": "a/b"}}, "floor.share_group"),
    ({"floor": {"colour": "red"}}, "floor.colour"),
    ({"broker": {"port": 70000}}, "broker.port"),
    ({"tables": [{"id": "T 1"}]}, "tables.0.id"),
    ({"tables": [{"id": "t1", "api_url": "ftp://x"}]}, "tables.0.api_url"),
])
def test_bad_values_name_their_key(data, key):
    with pytest.raises(FloorConfigError) as err:
        floor_config_from(data, where="floor.toml")
    assert str(err.value).startswith(f"config error: floor.toml: {key}: ")


def test_a_table_listed_twice_and_a_missing_token_file(tmp_path):
    with pytest.raises(FloorConfigError, match="table t1 is listed twice"):
        floor_config_from({"tables": [{"id": "t1"}, {"id": "t1"}]})
    with pytest.raises(FloorConfigError, match="tables.t1.token_file: cannot read"):
        floor_config_from({"tables": [{"id": "t1", "token_file": str(tmp_path / "none")}]})
    token = tmp_path / "t1.token"
    token.write_text("s3cret\n")
    cfg = floor_config_from({"tables": [{"id": "t1", "api_url": "http://10.0.0.1:8080/", "token_file": str(token)}]})
    assert cfg.table("t1").read_token() == "s3cret" and cfg.table("t1").api_url == "http://10.0.0.1:8080"


def test_floor_command_exits_2_on_a_bad_file_and_migrates_on_request(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[floor]\ndatabase = 'mysql://x'\n")
    proc = subprocess.run([sys.executable, "-m", "shoe_daemon", "floor", "--config", str(bad)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "floor.database" in proc.stderr
    broken = tmp_path / "broken.toml"
    broken.write_text("[floor\n")
    proc = subprocess.run([sys.executable, "-m", "shoe_daemon", "floor", "--config", str(broken)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "not valid TOML" in proc.stderr
    good = tmp_path / "floor.toml"
    good.write_text(f"[floor]\ndatabase = 'sqlite:///{tmp_path / 'f.sqlite3'}'\n")
    proc = subprocess.run([sys.executable, "-m", "shoe_daemon", "floor", "--config", str(good), "--migrate-only"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and f"schema version {SCHEMA_VERSION}" in proc.stdout


def test_floor_command_names_a_database_it_cannot_migrate_in_one_line_without_its_password(tmp_path):
    conf = tmp_path / "floor.toml"
    with socket.socket() as s:             # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conf.write_text(f"[floor]\ndatabase = 'postgresql://floor:s3cret-pw@127.0.0.1:{port}/floor'\n")
    proc = subprocess.run([sys.executable, "-m", "shoe_daemon", "floor", "--config", str(conf), "--migrate-only"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("shoe-daemon floor: cannot migrate the database: OperationalError") and str(port) in line
    assert "s3cret-pw" not in proc.stderr + proc.stdout


def test_the_migration_apart_refuses_a_newer_database_as_the_store_does(tmp_path):
    url = f"sqlite:///{tmp_path / 'f.sqlite3'}"
    assert schema.upgrade_apart(url) == SCHEMA_VERSION
    s = Store.open(url, migrate=False)
    with s.transaction():
        s.execute("UPDATE alembic_version SET version_num = '0007'")
    s.close()
    with pytest.raises(schema.SchemaError, match=r"^the database is at schema 7, newer than this floor \(2\)"):
        schema.upgrade_apart(url)
