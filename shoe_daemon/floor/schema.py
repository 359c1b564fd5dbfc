"""The floor database's schema version, kept by Alembic (``migrations/``).

    upgrade("sqlite:///floor.db")            # or postgresql://...; returns the version reached

The revisions are numbered ``0001``, ``0002``...: the schema version is that number. The
floor itself reads and writes through the DB-API (sqlite3, psycopg 3: ``store.py``);
Alembic and SQLAlchemy are used here only, once at start, on a connection of their own.

- A fresh database is created at the newest revision; an older one is upgraded, each
  revision in order, all in one transaction (PostgreSQL: under an advisory lock, so two
  consumers starting together migrate once; SQLite: the first takes the write lock).
- A database made by the floor before Alembic (its own ``floor_schema`` table) is stamped
  at the version it records, then upgraded; ``floor_schema`` stays, unused.
- A database at a revision this code does not know (a newer floor wrote it) is refused.

``shoe-daemon floor`` migrates in a child process (``upgrade_apart``): Alembic and SQLAlchemy
are ~24 MB that the service would otherwise keep for a second's work.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MIGRATIONS = Path(__file__).with_name("migrations")
LOCK_ID = 7160016          # pg_advisory_xact_lock key: one migrating consumer at a time


class SchemaError(RuntimeError):
    pass


def sqlalchemy_url(url: str) -> str:
    """The floor's database URL as SQLAlchemy names it (psycopg 3 for PostgreSQL)."""
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url[len(scheme):]
    return url


def _alembic():
    try:
        from alembic import command
        from alembic.config import Config
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory
    except ImportError as exc:
        raise SchemaError("the floor's schema migrations need Alembic: pip install 'shoe-daemon[floor]'") from exc
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return command, config, MigrationContext, ScriptDirectory.from_config(config)


def head_version() -> int:
    return int(_alembic()[3].get_current_head())


def upgrade(url: str, to: str = "head") -> int:
    """Bring the database at ``url`` to the newest schema (or revision ``to``); returns its version."""
    command, config, MigrationContext, scripts = _alembic()      # first: says which extra is missing
    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    head = scripts.get_current_head()
    sa_url = sqlalchemy_url(url)
    sqlite = sa_url.startswith("sqlite:")
    engine = sa.create_engine(sa_url, poolclass=NullPool, connect_args={"timeout": 30} if sqlite else {})
    if sqlite:
        # pysqlite would run DDL outside any transaction: SQLAlchemy's recipe for a real one,
        # and IMMEDIATE takes the write lock first (a second floor on the same file waits).
        @sa.event.listens_for(engine, "connect")
        def _no_implicit_transactions(dbapi_connection, record) -> None:
            dbapi_connection.isolation_level = None

        @sa.event.listens_for(engine, "begin")
        def _begin_immediate(conn) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
    try:
        with engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text(f"SELECT pg_advisory_xact_lock({LOCK_ID})"))
            config.attributes["connection"] = conn
            current = MigrationContext.configure(conn).get_current_revision()
            if current is None:
                legacy = _legacy_version(conn)
                if legacy:
                    current = f"{legacy:04d}"
                    _known(scripts, current, head)
                    command.stamp(config, current)
            else:
                _known(scripts, current, head)
            command.upgrade(config, to)
            return int(MigrationContext.configure(conn).get_current_revision())
    finally:
        engine.dispose()


def upgrade_apart(url: str, timeout: float = 300.0) -> int:
    """``upgrade(url)`` in a child process (the URL, which may hold a password, on its stdin);
    its error, one line, as a :class:`SchemaError`."""
    try:
        proc = subprocess.run([sys.executable, "-m", "shoe_daemon.floor.schema"], input=url, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SchemaError(f"the schema migration did not finish in {timeout:.0f} s") from None
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        raise SchemaError(lines[-1] if lines else f"the schema migration failed (exit {proc.returncode})")
    return int(proc.stdout.strip())


def _main() -> int:
    try:
        print(upgrade(sys.stdin.read().strip()))
    except Exception as exc:  # noqa: BLE001 - one line for the parent, whatever the database said
        line = str(exc) if isinstance(exc, SchemaError) else f"cannot migrate the database: {type(exc).__name__}: {exc}"
        print(line.splitlines()[0], file=sys.stderr)
        return 1
    return 0


def _known(scripts, revision: str, head: str) -> None:
    from alembic.util import CommandError

    try:
        scripts.get_revision(revision)
    except CommandError:
        raise SchemaError(f"the database is at schema {revision.lstrip('0') or revision}, newer than this floor "
                          f"({int(head)}); upgrade shoe-daemon") from None


def _legacy_version(conn) -> int:
    """The version the floor's own migration list recorded before Alembic (0: none)."""
    import sqlalchemy as sa

    if not sa.inspect(conn).has_table("floor_schema"):
        return 0
    return int(conn.execute(sa.text("SELECT MAX(version) FROM floor_schema")).scalar() or 0)


if __name__ == "__main__":
    sys.exit(_main())
