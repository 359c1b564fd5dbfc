"""Daemon configuration: a TOML file, overridden by environment variables.

``load_config(path, env)`` reads the TOML file (optional: every setting has a default, the
embedded demo's), then applies every ``SHOE_DAEMON__<SECTION>__<KEY>`` environment variable
(``SHOE_DAEMON__TABLE__LIMITS__PUNTO__MAX=20000``: double underscores between levels, any case),
then validates the whole with pydantic (``extra="forbid"``: a misspelt key is an error).

An environment value is taken as a string for a text setting and parsed as a TOML value
otherwise (``8080``, ``true``, ``1.5``, ``[1, 2]``, ``[{user = "a", ...}]``); a value that does
not parse as TOML is a string. A bad configuration raises :class:`ConfigError`, ONE line naming
the key and the problem, e.g. ``config error: mqtt.port: must be at most 65535 (got 70000)``.

The reference of every key is docs/configuration.md and systemd/shoe-daemon.example.toml.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import ipaddress
import os
import re
import stat
import tomllib
import types
import typing
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

ENV_PREFIX = "SHOE_DAEMON__"
MASK = "***"
SECRET_KEYS = ("password", "token")  # never echoed in error messages


class ConfigError(ValueError):
    """A bad configuration. ``str(e)`` is what to print: one line per problem (``config error: ...``),
    every problem of every section at once, so that one edit fixes them all.

    ``key`` is the dotted key of the first problem (``mqtt.port``, ``api.tokens[0].role``) or None
    when the problem is the file itself; ``problem`` that problem alone; ``more`` the other problems
    (``key: problem``); ``problems`` all of them; ``lines`` the printed lines.
    """

    def __init__(self, problem: str, key: str | None = None, *, where: str | None = None,
                 show_key: bool = True, more: list[str] | None = None):  # fmt: skip
        self.key = key
        self.problem = problem
        self.where = where
        self.more = list(more or [])
        head = "config error: " + (f"{where}: " if where else "")
        self.problems = [(f"{key}: " if key and show_key else "") + problem] + self.more
        self.lines = [head + line for line in self.problems]
        super().__init__("\n".join(self.lines))


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _KeyedError(ValueError):
    """Raised by a model validator to blame one key of the model (``key``), not the model."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(message)


class _UnknownKey(_KeyedError):
    """A key no model declares, found by a validator (``choices``: the keys it may have meant)."""

    def __init__(self, key: str, choices: list[str]):
        self.choices = choices
        super().__init__(key, f"unknown key {key}")


# --------------------------------------------------------------------------- [mqtt]


QUEUE_MAX_LIMIT = 1_000_000   # messages; about 1 GB of memory at the largest message size


class MqttConfig(_Section):
    """[mqtt] — where and how the daemon publishes.

    With no ``host`` the daemon starts an embedded broker on 127.0.0.1 (``embedded_port``).
    """

    host: str | None = None
    port: int = Field(1883, ge=1, le=65535)
    protocol: Literal["5", "3.1.1"] = "5"
    client_id: str | None = None             # default: shoe-daemon-<table_id>
    prefix: str | None = None                # default: baccarat/<table_id>
    username: str | None = None
    password: str | None = None
    tls_ca: str | None = None                # path to a CA bundle: enables TLS
    tls_cert: str | None = None              # client certificate (PEM)
    tls_key: str | None = None               # client key (PEM)
    tls_insecure: bool = False               # skip host name check (never in production)
    keepalive: int = Field(30, ge=5, le=3600)
    queue_max: int = Field(10000, ge=10, le=QUEUE_MAX_LIMIT)  # messages held while the broker is away
    queue_full: Literal["drop_oldest", "drop_newest"] = "drop_oldest"
    embedded_port: int = Field(1883, ge=1, le=65535)
    embedded_ws_port: int | None = None      # websockets listener of the embedded broker

    @field_validator("queue_max", mode="before")
    @classmethod
    def _queue_bound(cls, v: Any) -> Any:
        # Before int parsing: 1e23 would otherwise fail as "not an integer", not as too large.
        if isinstance(v, int | float) and not isinstance(v, bool) and v > QUEUE_MAX_LIMIT:
            raise ValueError(f"must be at most {QUEUE_MAX_LIMIT} (got {v})")
        return v

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, v: str | None) -> str | None:
        # The daemon publishes under the prefix: a wildcard or a NUL makes every publish invalid,
        # "$" topics are the broker's own, and a leading "/" is refused by the publisher.
        if v is None:
            return v
        if not v:
            raise ValueError("must not be empty (leave it out for the default baccarat/<table id>)")
        bad = [c for c in ("#", "+", "\0") if c in v]
        if bad:
            raise ValueError(f"must not contain the MQTT wildcard or NUL {bad[0]!r} (got {v!r})")
        if v.startswith("$"):
            raise ValueError(f"must not start with '$' (topics the broker reserves) (got {v!r})")
        if v.startswith("/"):
            raise ValueError(f"must not start with '/' (got {v!r})")   # a trailing '/' is dropped
        return v


# --------------------------------------------------------------------------- [table]


class BetLimit(_Section):
    """[table.limits.<bet>] — stake limits of one bet, in table currency units (decimals)."""

    min: Decimal = Field(ge=0)
    max: Decimal = Field(gt=0)
    # All players' stakes on this bet together (``total_max``, its earlier name, is still read).
    table_max: Decimal = Field(gt=0, validation_alias=AliasChoices("table_max", "total_max"))

    @model_validator(mode="after")
    def _ordered(self) -> BetLimit:
        if self.min > self.max:
            raise _KeyedError("min", f"must be at most max ({self.max}) (got {self.min})")
        if self.max > self.table_max:
            raise _KeyedError("max", f"must be at most table_max ({self.table_max}) (got {self.max})")
        return self


DEFAULT_LIMITS = {
    "punto": {"min": Decimal("10"), "max": Decimal("10000"), "table_max": Decimal("100000")},
    "banco": {"min": Decimal("10"), "max": Decimal("10000"), "table_max": Decimal("100000")},
    "tie": {"min": Decimal("5"), "max": Decimal("1000"), "table_max": Decimal("10000")},
}


class LimitsConfig(_Section):
    """[table.limits] — one sub-table per bet; a key left out keeps its default."""

    punto: BetLimit = BetLimit(**DEFAULT_LIMITS["punto"])
    banco: BetLimit = BetLimit(**DEFAULT_LIMITS["banco"])
    tie: BetLimit = BetLimit(**DEFAULT_LIMITS["tie"])

    @model_validator(mode="before")
    @classmethod
    def _fill(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {k: ({**DEFAULT_LIMITS[k], **v} if k in DEFAULT_LIMITS and isinstance(v, dict) else v)
                    for k, v in data.items()}  # fmt: skip
        return data


_TABLE_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class TableConfig(_Section):
    """[table] — the table and the house rules it deals by."""

    id: str = "table-1"
    decks: Literal[4, 6, 8] = 8
    seats: int = Field(7, ge=1, le=7)
    closing: Literal["confirm", "auto"] = "auto"
    cut_card: Literal["this_coup_last", "one_more"] = "one_more"
    burn: Literal["none", "fixed", "first_card_value"] = "first_card_value"
    burn_count: int = Field(1, ge=0, le=16)
    on_error: Literal["hold", "void", "continue"] = "hold"
    limits: LimitsConfig = LimitsConfig()
    odds_alert_edge: float = Field(0.0, ge=-1.0, le=1.0)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not v:
            raise ValueError("must not be empty")
        if len(v) > 64:
            raise ValueError(f"must be at most 64 characters (got {len(v)})")
        if not _TABLE_ID.fullmatch(v):
            raise ValueError(
                f"must use only a-z, 0-9 and '-' (not at either end): it goes into MQTT topics (got {v!r})"
            )
        return v

    @model_validator(mode="after")
    def _burn(self) -> TableConfig:
        if self.burn == "fixed" and self.burn_count < 1:
            raise _KeyedError("burn_count", f"must be at least 1 when burn = 'fixed' (got {self.burn_count})")
        return self


# --------------------------------------------------------------------------- [shoe]

# pyserial's standard rates (serial.SerialBase.BAUDRATES).
STANDARD_BAUDRATES = (
    50, 75, 110, 134, 150, 200, 300, 600, 1200, 1800, 2400, 4800, 9600, 19200, 38400, 57600,
    115200, 230400, 460800, 500000, 576000, 921600, 1000000, 1152000, 1500000, 2000000,
    2500000, 3000000, 3500000, 4000000,
)  # fmt: skip
# pyserial URL handlers (serial.serial_for_url): protocol_<scheme>.
PYSERIAL_SCHEMES = ("socket", "rfc2217", "loop", "spy", "hwgrep", "alt", "cp2110")


class ShoeConfig(_Section):
    """[shoe] — the serial dealing shoe: its port, and the driver that speaks its protocol.

    The port keys are declared here. Every other key belongs to a driver: ``driver`` is looked up
    in the driver registry (shoe_daemon/sources: built-ins, ``register_driver``, the
    ``shoe_daemon.drivers`` entry points) and its own settings model (``ShoeDriver.Settings``)
    validates its keys; ``driver_settings`` is the result, what the driver is built with. The
    built-in drivers' keys (``text_pattern``, ``link_timeout``) are accepted and checked whichever
    driver is chosen, as they always were, and are attributes of this model (``shoe.link_timeout``).
    The registry is imported when a configuration is validated, never when this module loads.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    driver: str = "protocol"
    port: str = "/dev/dealing-shoe"
    baudrate: int = 115200
    bytesize: Literal[5, 6, 7, 8] = 8
    parity: Literal["N", "E", "O"] = "N"
    stopbits: Literal[1, 1.5, 2] = 1
    exclusive: bool = True
    reconnect_min: float = Field(0.5, gt=0, le=3600)
    reconnect_max: float = Field(30.0, gt=0, le=3600)
    _driver_settings: Any = PrivateAttr(None)

    @property
    def driver_settings(self) -> Any:
        """The chosen driver's validated settings (an instance of its ``Settings`` model)."""
        return self._driver_settings

    @field_validator("driver")
    @classmethod
    def _driver(cls, v: str) -> str:
        from shoe_daemon.sources import DriverLoadError, UnknownDriver, get_driver

        try:
            driver = get_driver(v)
        except (UnknownDriver, DriverLoadError) as exc:
            raise ValueError(str(exc)) from None
        clash = sorted(set(driver.Settings.model_fields) & set(cls.model_fields))
        if clash:
            raise ValueError(f"shoe driver {v!r} is unusable: its settings redeclare [shoe] port keys "
                             f"({', '.join(clash)})")
        return v

    @field_validator("port")
    @classmethod
    def _port(cls, v: str) -> str:
        if not v:
            raise ValueError("must not be empty")
        if "://" in v:
            parts = urlsplit(v)
            scheme = parts.scheme.lower()
            if scheme not in PYSERIAL_SCHEMES:
                raise ValueError(
                    f"unknown pyserial URL scheme {scheme!r}: expected one of {', '.join(PYSERIAL_SCHEMES)} (got {v!r})"
                )
            if scheme in ("socket", "rfc2217"):
                try:
                    port = parts.port
                except ValueError:
                    port = None
                if not parts.hostname or port is None or not 1 <= port <= 65535:
                    raise ValueError(f"a {scheme}:// URL needs host:port with a port in 1-65535 (got {v!r})")
            return v
        if not v.startswith("/"):
            raise ValueError(
                f"must be a device path (e.g. /dev/dealing-shoe) or a pyserial URL "
                f"(socket://host:port, rfc2217://host:port, loop://) (got {v!r})"
            )
        return v

    @field_validator("baudrate")
    @classmethod
    def _baudrate(cls, v: int) -> int:
        if v not in STANDARD_BAUDRATES:
            raise ValueError(f"must be a standard rate such as 9600, 19200, 38400, 57600, 115200 (got {v})")
        return v

    @field_validator("parity", mode="before")
    @classmethod
    def _parity(cls, v: Any) -> Any:
        return v.upper() if isinstance(v, str) else v

    @model_validator(mode="after")
    def _backoff(self) -> ShoeConfig:
        if self.reconnect_max < self.reconnect_min:
            raise _KeyedError(
                "reconnect_max", f"must be at least reconnect_min ({self.reconnect_min}) (got {self.reconnect_max})"
            )
        return self

    @model_validator(mode="after")
    def _settings(self) -> ShoeConfig:
        from shoe_daemon.sources import BUILTIN_DRIVERS, get_driver

        given = dict(self.model_extra or {})
        chosen = get_driver(self.driver).Settings
        models = [chosen] + [m for m in (get_driver(n).Settings for n in BUILTIN_DRIVERS) if m is not chosen]
        owner = {}
        for model in reversed(models):     # the chosen driver owns a key it shares with a built-in
            owner.update(dict.fromkeys(model.model_fields, model))
        for key in given:
            if key not in owner:
                raise _UnknownKey(key, [*type(self).model_fields, *owner])
        values: dict[str, Any] = {}
        for model in reversed(models):
            mine = {k: v for k, v in given.items() if owner[k] is model}
            try:
                settings = model.model_validate(mine)
            except ValidationError as exc:
                key, problem, _ = _describe(exc.errors(include_url=False)[0], {})
                raise _KeyedError(key or "driver", problem) from None
            values.update(settings.model_dump())
            if model is chosen:
                self._driver_settings = settings
        object.__setattr__(self, "__pydantic_extra__", values)
        return self


# --------------------------------------------------------------------------- [journal]


DEFAULT_JOURNAL = "/var/lib/shoe-daemon/journal.sqlite3"


class JournalConfig(_Section):
    """[journal] — the event journal (SQLite)."""

    path: str = DEFAULT_JOURNAL
    synchronous: Literal["full", "normal"] = "full"

    @field_validator("path")
    @classmethod
    def _path(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be empty")
        if v.endswith(("/", "/.", "/..")) or v in (".", "..") or os.path.isdir(v):
            raise ValueError(f"is a directory: give the journal file's path, e.g. {DEFAULT_JOURNAL} (got {v!r})")
        return v


# --------------------------------------------------------------------------- [api]


TOKEN_HASH_PATTERN = r"^sha256:[0-9a-f]{64}$"


class ApiToken(_Section):
    """[[api.tokens]] — one bearer token: who, with which role. Exactly one of ``token``,
    ``token_file`` (a file only its owner can read: mode 0600 or stricter) or ``token_hash``
    (``"sha256:<64 hex>"``: the SHA-256 of the token, so the configuration holds no secret)."""

    user: str = Field(min_length=1, max_length=64)
    role: Literal["dealer", "supervisor", "pit", "technician"]
    token: SecretStr | None = None
    token_file: str | None = None
    token_hash: str | None = Field(None, pattern=TOKEN_HASH_PATTERN)

    @field_validator("token")
    @classmethod
    def _token(cls, v: SecretStr | None) -> SecretStr | None:
        if v is not None:
            _check_token(v.get_secret_value())
        return v

    @model_validator(mode="after")
    def _one_source(self, info: ValidationInfo) -> ApiToken:
        given = [k for k in ("token", "token_file", "token_hash") if getattr(self, k) is not None]
        if len(given) > 1:
            raise _KeyedError(given[1], f"give {given[0]} or {given[1]}, not both")
        if not given:
            raise ValueError("needs token or token_file (or token_hash = \"sha256:<hex>\")")
        ctx = info.context or {}
        if self.token_file is not None and ctx.get("read_secrets", True):
            _check_token_file_mode(self.token_file)
            try:
                text = Path(self.token_file).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise _KeyedError("token_file", f"cannot read {self.token_file}: {exc}") from None
            try:
                _check_token(text)
            except ValueError as exc:
                raise _KeyedError("token_file", f"{self.token_file}: the token {exc}") from None
            object.__setattr__(self, "token", SecretStr(text))
        return self

    def secret(self) -> str | None:
        """The token itself (None if it lives in a token_file that was not read, or only its hash is given)."""
        return self.token.get_secret_value() if self.token is not None else None

    def digest(self) -> bytes | None:
        """SHA-256 of the token (what the API compares), from the token or from ``token_hash``."""
        if self.token_hash is not None:
            return bytes.fromhex(self.token_hash.removeprefix("sha256:"))
        secret = self.secret()
        return None if secret is None else token_digest(secret)


def token_digest(token: str) -> bytes:
    """The SHA-256 the API compares; ``sha256:`` + its hex is what ``token_hash`` takes."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def _check_token_file_mode(path: str) -> None:
    try:
        st = os.stat(path)
    except OSError as exc:
        raise _KeyedError("token_file", f"cannot read {path}: {exc}") from None
    if st.st_mode & 0o077:
        raise _KeyedError(
            "token_file",
            f"{path} has mode {stat.S_IMODE(st.st_mode):04o}: a token file must be readable by its owner only "
            f"(chmod 600 {path}), or give token_hash instead",
        )


def _check_token(text: str) -> None:
    if not text.strip():
        raise ValueError("must not be empty")
    if any(c.isspace() for c in text):
        raise ValueError("must not contain white space")


def _is_loopback_host(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class ApiConfig(_Section):
    """[api] — the HTTP API (FastAPI) and its bearer tokens.

    Off loopback the bearer tokens would cross the network: then ``tls_cert`` + ``tls_key`` are
    required (HTTPS), or ``allow_plain_http_off_loopback = true``, which logs a warning at every start.
    """

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=1, le=65535)
    tokens: list[ApiToken] = []
    max_body_bytes: int = Field(65536, ge=1024, le=16 * 1024 * 1024)
    tls_cert: str | None = None
    tls_key: str | None = None
    allow_plain_http_off_loopback: bool = False

    @model_validator(mode="after")
    def _unique(self) -> ApiConfig:
        seen: dict[bytes, int] = {}
        for i, entry in enumerate(self.tokens):
            digest = entry.digest()
            if digest is None:
                continue
            if digest in seen:
                key = next(k for k in ("token_hash", "token_file", "token") if getattr(entry, k) is not None)
                raise _KeyedError(f"tokens[{i}].{key}", f"duplicate token (the same as api.tokens[{seen[digest]}])")
            seen[digest] = i
        return self

    @model_validator(mode="after")
    def _transport(self, info: ValidationInfo) -> ApiConfig:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise _KeyedError("tls_key" if self.tls_key is None else "tls_cert", "give both tls_cert and tls_key")
        ctx = info.context or {}
        if self.tls_cert is not None and ctx.get("read_secrets", True):
            for key in ("tls_cert", "tls_key"):
                path = getattr(self, key)
                if not os.access(path, os.R_OK):
                    raise _KeyedError(key, f"cannot read {path}")
        if (self.enabled and self.tls_cert is None and not self.allow_plain_http_off_loopback
                and not _is_loopback_host(self.host)):
            raise _KeyedError(
                "host",
                f"{self.host!r} is not a loopback address: bearer tokens would cross the network in plain "
                "HTTP. Set tls_cert and tls_key (HTTPS), or allow_plain_http_off_loopback = true",
            )
        return self

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    def by_token(self) -> dict[str, ApiToken]:
        """token -> entry (entries given by their token; a ``token_hash`` entry is not here)."""
        return {e.secret(): e for e in self.tokens if e.secret() is not None}  # type: ignore[misc]


# --------------------------------------------------------------------------- [camera], [log]


class CameraFuserConfig(_Section):
    """[camera.fuser] — how long a card must rest before the camera decides it (vision/fuser.py).

    Unset keys take the fuser's own defaults (settle 2 frames, then 3 agreeing votes, at most
    12 voting frames, mean confidence 0.98, a card gone after 5 frames unseen, moved = a quarter
    of its width, a decided card recalled for 15 frames after it is gone): about a second at rest
    from a 5-10 fps camera.
    """

    settle_frames: int | None = Field(None, ge=0)
    min_votes: int | None = Field(None, ge=1)
    max_frames: int | None = Field(None, ge=1)
    min_confidence: float | None = Field(None, ge=0.0, le=1.0)
    lost_frames: int | None = Field(None, ge=1)
    move_tolerance: float | None = Field(None, gt=0.0, le=1.0)
    recall_frames: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _votes(self) -> CameraFuserConfig:
        if self.min_votes is not None and self.max_frames is not None and self.max_frames < self.min_votes:
            raise _KeyedError("max_frames", f"must be at least min_votes ({self.min_votes}) (got {self.max_frames})")
        return self

    def options(self) -> dict[str, Any]:
        """The keyword arguments for ``CardFuser``: the keys that are set."""
        return self.model_dump(exclude_none=True)


class CameraRecognizerConfig(_Section):
    """[camera.recognizer] — another glyph model, or stricter / looser decisions (docs/camera.md)."""

    model: str | None = None                                   # a glyph model file (JSON)
    ok_threshold: float | None = Field(None, gt=0.5, le=1.0)   # default 0.985
    partial_threshold: float | None = Field(None, gt=0.5, le=1.0)
    workers: int | None = Field(None, ge=0, le=1)              # 1: a second process reads part of each frame's cards

    @field_validator("model")
    @classmethod
    def _model_file(cls, v: str | None) -> str | None:
        if v is not None and not Path(v).is_file():
            raise ValueError(f"no such file: {v}")
        return v


class CameraConfig(_Section):
    """[camera] — the overhead camera, a second card source (docs/camera.md). Off by default."""

    enabled: bool = False
    source: str | int | None = None          # device index or path, a stream URL, a video file or folder
    fps: float | None = Field(None, gt=0)    # paces a recorded source (a folder, a file); live cameras set their own
    zones: list[dict[str, Any]] = []         # [{name, polygon = [[x, y], ...]}], image pixels
    model: str | None = None                 # the casino's deck model (`shoe-daemon camera enroll`)
    fuser: CameraFuserConfig = CameraFuserConfig()
    recognizer: CameraRecognizerConfig = CameraRecognizerConfig()

    @field_validator("zones")
    @classmethod
    def _zones(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from shoe_daemon.vision.zones import ZoneError, parse_zones  # pure Python, no OpenCV

        try:
            parse_zones(v)
        except ZoneError as exc:
            key, _, problem = str(exc).partition(": ")
            raise _KeyedError(key.removeprefix("camera.zones"), problem) from None
        return v

    @field_validator("model")
    @classmethod
    def _deck_model(cls, v: str | None) -> str | None:
        from shoe_daemon.vision.deck import DeckModelError, load_deck_model  # numpy only, no OpenCV

        if v is None:
            return v
        if not Path(v).is_file():
            raise ValueError(f"no such file: {v}")
        try:
            load_deck_model(v)
        except DeckModelError as exc:
            raise ValueError(str(exc)) from None
        return v

    @model_validator(mode="after")
    def _usable(self) -> CameraConfig:
        if not self.enabled:
            return self
        if self.source is None or self.source == "":
            raise _KeyedError("source", "is required when camera.enabled = true (a device, a stream URL, a folder)")
        names = {z["name"] for z in self.zones}
        missing = [side for side in ("punto", "banco") if side not in names]
        if missing:
            raise _KeyedError("zones", f"needs a zone named {' and '.join(missing)} when camera.enabled = true "
                                       "(the boxes the daemon takes cards from)")
        return self


class LogConfig(_Section):
    """[log]"""

    level: Literal["debug", "info", "warning", "error", "critical"] = "info"

    @field_validator("level", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v


class DisplayConfig(_Section):
    """[display]: what the browser display and the console show by default (docs/display.md)."""

    # player: no odds, house edge or staff alerts; dealer: alerts, no odds; pit: odds and every alert.
    profile: Literal["player", "dealer", "pit"] = "dealer"
    lang: Literal["en", "ru", "bg", "fi"] = "en"

    @field_validator("profile", "lang", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v


# --------------------------------------------------------------------------- the whole


class Config(_Section):
    """The daemon's configuration: one model per TOML section."""

    table: TableConfig = TableConfig()
    shoe: ShoeConfig = Field(default_factory=ShoeConfig)   # built when needed: it loads the drivers
    journal: JournalConfig = JournalConfig()
    mqtt: MqttConfig = MqttConfig()
    api: ApiConfig = ApiConfig()
    camera: CameraConfig = CameraConfig()
    display: DisplayConfig = DisplayConfig()
    log: LogConfig = LogConfig()

    def redacted(self) -> dict[str, Any]:
        """The configuration as plain data (JSON/TOML-able) with every secret masked as ``***``:
        mqtt.password, api tokens, passwords in URLs (camera.source, mqtt.host, shoe.port)."""
        data = self.model_dump(mode="json")
        if data["mqtt"].get("password") is not None:
            data["mqtt"]["password"] = MASK
        for entry in data["api"]["tokens"]:
            if entry.get("token") is not None:
                entry["token"] = MASK
        for section, key in (("camera", "source"), ("mqtt", "host"), ("shoe", "port")):
            value = data[section].get(key)
            if isinstance(value, str):
                data[section][key] = _mask_url(value)
        return data


def _mask_url(value: str) -> str:
    if "://" not in value or "@" not in value:
        return value
    parts = urlsplit(value)
    if parts.password is None:
        return value
    netloc = f"{parts.username}:{MASK}@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


# --------------------------------------------------------------------------- loading


def load_config(
    path: str | os.PathLike[str] | None,
    env: Mapping[str, str] = os.environ,
    *,
    read_secrets: bool = True,
) -> Config:
    """Load the configuration: defaults < TOML file ``path`` (if given) < ``env``.

    ``read_secrets=False`` skips reading api token files (for tools that only need, say, the
    journal path and may not be allowed to read the secrets). Raises :class:`ConfigError`.
    """
    data: dict[str, Any] = {}
    if path is not None:
        data = _read_toml(Path(path))
    env_problems: list[str] = []
    origins = _apply_env(data, env, env_problems)
    try:
        config = validate_config(data, read_secrets=read_secrets, origins=origins)
    except ConfigError as exc:
        if not env_problems:
            raise
        raise ConfigError(env_problems[0], more=env_problems[1:] + exc.problems) from None
    if env_problems:
        raise ConfigError(env_problems[0], more=env_problems[1:])
    return config


def validate_config(data: Mapping[str, Any], *, read_secrets: bool = True,
                    origins: dict[tuple[str, ...], str] | None = None) -> Config:  # fmt: skip
    """The configuration from plain data (TOML-like tables), or :class:`ConfigError`.

    Also for settings that travel outside a config file, e.g. a fixture's ``camera_config``:
    ``validate_config({"camera": {...}}).camera``.
    """
    try:
        return Config.model_validate(data, context={"read_secrets": read_secrets})
    except ValidationError as exc:
        found = [_describe(err, origins or {}) for err in exc.errors(include_url=False)]
        key, problem, show_key = found[0]
        more = [f"{k}: {p}" if (k and show) else p for k, p, show in found[1:]]
        raise ConfigError(problem, key, show_key=show_key, more=more) from None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc.strerror or exc}", where=str(path)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"invalid TOML: not UTF-8 (byte {exc.start})", where=f"{path} line {line}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        if m:
            problem = msg[: m.start()].strip() + f" (column {m.group(2)})"
            raise ConfigError(f"invalid TOML: {problem}", where=f"{path} line {m.group(1)}") from None
        m = re.search(r"\(at end of document\)", msg)
        if m:
            line = text.count("\n") + 1
            raise ConfigError(f"invalid TOML: {msg[: m.start()].strip()} (at end of file)", where=f"{path} line {line}") from None
        raise ConfigError(f"invalid TOML: {msg}", where=str(path)) from None


def _apply_env(data: dict[str, Any], env: Mapping[str, str], problems: list[str]) -> dict[tuple[str, ...], str]:
    """Merge ``SHOE_DAEMON__...`` variables into ``data``; returns key path -> variable name.

    A variable that names no key adds a line to ``problems`` (reported with the others)."""
    origins: dict[tuple[str, ...], str] = {}
    shoe = data.get("shoe") if isinstance(data.get("shoe"), dict) else {}
    driver = next((env[n] for n in env if n.upper() == f"{ENV_PREFIX}SHOE__DRIVER"), shoe.get("driver"))
    for name in sorted(env):
        if not name.upper().startswith(ENV_PREFIX):
            continue
        parts = tuple(p.lower() for p in name[len(ENV_PREFIX) :].split("__"))
        if len(parts) < 2 or not all(parts):
            problems.append(f"environment variable {name} must name a key: {ENV_PREFIX}<SECTION>__<KEY> "
                            "(double underscores between levels)")
            continue
        annotation = _annotation_at(parts)
        if annotation is None and len(parts) == 2 and parts[0] == "shoe":
            annotation = _driver_key_annotation(parts[1], driver)
        value = _env_value(env[name], annotation)
        node = data
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
        origins[parts] = name
    return origins


def _env_value(raw: str, annotation: Any) -> Any:
    if annotation is not None and _wants_text(annotation):
        # A text setting: the string itself ("8080" stays a string); a quoted TOML string is unquoted.
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
            try:
                value = tomllib.loads(f"v = {raw}")["v"]
                if isinstance(value, str):
                    return value
            except tomllib.TOMLDecodeError:
                pass
        return raw
    if "\n" in raw or "\r" in raw:
        return raw
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw
    if isinstance(value, (_dt.date, _dt.time)):  # TOML dates are no setting's type
        return raw
    return value


def _unwrap(annotation: Any) -> list[Any]:
    """The members of an Optional/Union annotation (None removed)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return [a for a in typing.get_args(annotation) if a is not type(None)]
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    return [annotation]


def _wants_text(annotation: Any) -> bool:
    members = _unwrap(annotation)
    for m in members:
        if m in (str, SecretStr, Path):
            continue
        if typing.get_origin(m) is Literal and all(isinstance(a, str) for a in typing.get_args(m)):
            continue
        return False
    return bool(members)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    for m in _unwrap(annotation):
        if isinstance(m, type) and issubclass(m, BaseModel):
            return m
        if typing.get_origin(m) is list:
            (item,) = typing.get_args(m) or (None,)
            if isinstance(item, type) and issubclass(item, BaseModel):
                return item
    return None


def _annotation_at(parts: tuple[str | int, ...]) -> Any:
    """The type annotation of the setting at ``parts`` (None if unknown)."""
    model: type[BaseModel] | None = Config
    annotation: Any = None
    for part in parts:
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            return None
        annotation = model.model_fields[part].annotation
        model = _model_of(annotation)
    return annotation


def _driver_key_annotation(key: str, driver: Any) -> Any:
    """The annotation of a driver's own [shoe] key: the chosen driver's, else a built-in's."""
    from shoe_daemon.sources import BUILTIN_DRIVERS, get_driver

    for name in (driver if isinstance(driver, str) else "protocol", *BUILTIN_DRIVERS):
        try:
            fields = get_driver(name).Settings.model_fields
        except (KeyError, ImportError):
            continue  # validation names a bad driver
        if key in fields:
            return fields[key].annotation
    return None


def _model_at(parts: tuple[str | int, ...]) -> type[BaseModel] | None:
    model: type[BaseModel] | None = Config
    for part in parts:
        if isinstance(part, int):
            continue
        if model is None or part not in model.model_fields:
            return None
        model = _model_of(model.model_fields[part].annotation)
    return model


def _dotted(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


def _show(value: Any) -> str:
    if isinstance(value, SecretStr):
        return MASK
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return str(value)


def _origin(loc: tuple[str | int, ...], origins: dict[tuple[str, ...], str]) -> str | None:
    keys = tuple(p for p in loc if isinstance(p, str))
    for n in range(len(keys), 0, -1):
        if keys[:n] in origins:
            return origins[keys[:n]]
    return None


def _describe(err: Mapping[str, Any], origins: dict[tuple[str, ...], str]) -> tuple[str | None, str, bool]:
    """(dotted key, problem, whether the message starts with the key) for one pydantic error."""
    loc: tuple[str | int, ...] = tuple(err.get("loc", ()))
    kind = err["type"]
    ctx = err.get("ctx") or {}
    value = err.get("input")
    last = next((p for p in reversed(loc) if isinstance(p, str)), "")
    got = "" if last in SECRET_KEYS else f" (got {_show(value)})"
    exc = ctx.get("error")
    if kind == "value_error" and isinstance(exc, _UnknownKey):
        loc = loc + (exc.key,)
        return _dotted(loc), _unknown_key(loc, origins, exc.choices), False
    if kind == "value_error" and isinstance(exc, _KeyedError):
        sub = tuple(int(p) if p.isdigit() else p for p in re.split(r"[.\[\]]+", exc.key) if p)
        loc = loc + sub
        problem = str(exc)
    elif kind in ("value_error", "assertion_error"):
        problem = str(exc) if exc is not None else err["msg"]
    elif kind == "extra_forbidden":
        return _dotted(loc), _unknown_key(loc, origins), False
    elif kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace(" or ", ", ")
        problem = f"must be one of {expected}{got}"
    elif kind in ("less_than_equal", "less_than", "greater_than_equal", "greater_than"):
        bound = {"less_than_equal": ("at most", "le"), "less_than": ("less than", "lt"),
                 "greater_than_equal": ("at least", "ge"), "greater_than": ("greater than", "gt")}[kind]  # fmt: skip
        problem = f"must be {bound[0]} {ctx.get(bound[1])}{got}"
    elif kind in ("int_type", "int_parsing", "int_from_float"):
        problem = f"must be an integer{got}"
    elif kind in ("float_type", "float_parsing", "decimal_type", "decimal_parsing"):
        problem = f"must be a number{got}"
    elif kind in ("bool_type", "bool_parsing"):
        problem = f"must be true or false{got}"
    elif kind in ("string_type",):
        problem = f"must be a string{got}"
    elif kind in ("list_type",):
        problem = f"must be an array{got}"
    elif kind in ("dict_type", "model_type", "model_attributes_type"):
        problem = f"must be a table{got}"
    elif kind == "missing":
        problem = "is required"
    elif kind == "string_too_short":
        problem = "must not be empty" if ctx.get("min_length") == 1 else f"must be at least {ctx.get('min_length')} characters{got}"
    elif kind == "string_too_long":
        problem = f"must be at most {ctx.get('max_length')} characters"
    elif kind in ("decimal_max_digits", "decimal_max_places", "decimal_whole_digits"):
        problem = err["msg"][0].lower() + err["msg"][1:] + got
    else:
        problem = err["msg"][0].lower() + err["msg"][1:] + got
    key = _dotted(loc) or None
    origin = _origin(loc, origins)
    if origin and key:
        return key, f"{problem} (from {origin})", True
    return key, problem, True


def _unknown_key(loc: tuple[str | int, ...], origins: dict[tuple[str, ...], str],
                 choices: list[str] | None = None) -> str:  # fmt: skip
    name = str(loc[-1])
    parent = loc[:-1]
    if choices is None:
        model = _model_at(parent)
        choices = list(model.model_fields) if model is not None else []
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    if not close:
        close = [c for c in choices if c.startswith(name) or name.startswith(c)][:1]
    origin = _origin(loc, origins)
    src = f" (from {origin})" if origin else ""
    if not parent:
        hint = f" (did you mean [{close[0]}]?)" if close else f" (sections: {', '.join(choices)})"
        return f"unknown section [{name}]{src}{hint}"
    hint = f" (did you mean {close[0]}?)" if close else (f" (valid keys: {', '.join(choices)})" if choices else "")
    return f"unknown key {_dotted(loc)}{src}{hint}"
