"""The floor service's configuration file (TOML), validated by pydantic.

```toml
[floor]
prefix = "baccarat"                     # tables publish under <prefix>/<table_id>/...
database = "sqlite:////var/lib/shoe-daemon/floor.sqlite3"   # or postgresql://user@host/db
share_group = "floor"                   # MQTT 5 shared subscription group; "" for none
gap_grace = 5.0                         # seconds a hole in seq may stay open before it is a gap

[broker]
host = "127.0.0.1"
port = 1883
protocol = "5"

[http]
host = "127.0.0.1"
port = 8090

[[tables]]
id = "t1"
api_url = "http://10.0.1.11:8080"
token_file = "/etc/shoe-daemon/floor-t1.token"   # or token = "..."
```

Secrets (the broker password, the tables' read tokens) may come from files, so the
configuration itself can be committed without them.
"""

from __future__ import annotations

import os
import re
import tomllib
import uuid
from pathlib import Path
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

TABLE_ID = re.compile(r"^[a-z0-9-]{1,64}$")


class FloorConfigError(ValueError):
    """A bad floor configuration; ``str(e)`` is the line to print."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FloorSection(_Section):
    prefix: str = "baccarat"
    database: str = "sqlite:///floor.sqlite3"
    share_group: str = "floor"
    client_id: str | None = None       # default floor-<random>; fixed ids keep a broker session
    session_expiry: int = Field(0, ge=0, le=7 * 86400)  # 0: the share group takes over at once
    gap_grace: float = Field(5.0, gt=0, le=3600)
    gap_check_interval: float = Field(1.0, gt=0, le=60)
    batch_max: int = Field(500, ge=1, le=10000)
    batch_wait: float = Field(0.0, ge=0, le=1)   # 0: commit what is there; batches grow with the load
    recall_timeout: float = Field(5.0, gt=0, le=60)

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, v: str) -> str:
        v = v.strip("/")
        if not v or any(c in v for c in "#+"):
            raise ValueError("a topic prefix without wildcards, e.g. 'baccarat'")
        return v

    @field_validator("share_group")
    @classmethod
    def _group(cls, v: str) -> str:
        if any(c in v for c in "/#+"):
            raise ValueError("a share group name has no '/', '#' or '+'")
        return v

    @field_validator("database")
    @classmethod
    def _database(cls, v: str) -> str:
        if not (v.startswith("sqlite:///") or v.startswith(("postgresql://", "postgres://"))):
            raise ValueError("sqlite:///PATH or postgresql://USER@HOST[:PORT]/DB")
        return v


class BrokerSection(_Section):
    host: str = "127.0.0.1"
    port: int = Field(1883, ge=1, le=65535)
    protocol: Literal["5", "3.1.1"] = "5"
    username: str | None = None
    password: SecretStr | None = None
    password_file: str | None = None
    keepalive: int = Field(30, ge=5, le=3600)


class HttpSection(_Section):
    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(8090, ge=0, le=65535)
    lang: Literal["en", "ru", "bg", "fi"] = "en"    # the page's language (a page's ?lang= wins), as the display's


class TableEntry(_Section):
    id: str
    api_url: str | None = None
    token: SecretStr | None = None
    token_file: str | None = None
    name: str | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not TABLE_ID.match(v):
            raise ValueError("a table id is a-z, 0-9 and '-', at most 64 characters")
        return v

    @field_validator("api_url")
    @classmethod
    def _url(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith(("http://", "https://")):
            raise ValueError("an http:// or https:// URL")
        return v.rstrip("/") if v else v

    @model_validator(mode="after")
    def _one_token(self):
        if self.token is not None and self.token_file is not None:
            raise ValueError("token or token_file, not both")
        return self

    def read_token(self) -> str | None:
        if self.token is not None:
            return self.token.get_secret_value()
        if self.token_file:
            return Path(self.token_file).read_text().strip()
        return None


class FloorConfig(_Section):
    floor: FloorSection = FloorSection()
    broker: BrokerSection = BrokerSection()
    http: HttpSection = HttpSection()
    tables: list[TableEntry] = []

    @model_validator(mode="after")
    def _unique(self):
        ids = [t.id for t in self.tables]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"table {dup[0]} is listed twice")
        return self

    def table(self, table_id: str) -> TableEntry | None:
        return next((t for t in self.tables if t.id == table_id), None)

    def client_id(self) -> str:
        return self.floor.client_id or f"floor-{uuid.uuid4().hex[:10]}"

    def broker_password(self) -> str | None:
        b = self.broker
        if b.password is not None:
            return b.password.get_secret_value()
        if b.password_file:
            return Path(b.password_file).read_text().strip()
        return None


def load_floor_config(path: str | os.PathLike | None) -> FloorConfig:
    """The configuration at ``path`` (None: every default); FloorConfigError names the bad key."""
    data: dict = {}
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text())
        except OSError as exc:
            raise FloorConfigError(f"config error: cannot read {path}: {exc.strerror or exc}") from exc
        except tomllib.TOMLDecodeError as exc:
            raise FloorConfigError(f"config error: {path}: not valid TOML: {exc}") from exc
    return floor_config_from(data, where=str(path) if path else None)


def floor_config_from(data: dict, where: str | None = None) -> FloorConfig:
    try:
        config = FloorConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"]) or "(file)"
        head = f"config error: {where}: " if where else "config error: "
        raise FloorConfigError(f"{head}{key}: {err['msg']}") from exc
    for t in config.tables:
        if t.token_file and not os.access(t.token_file, os.R_OK):
            raise FloorConfigError(f"config error: tables.{t.id}.token_file: cannot read {t.token_file}")
    return config
