"""Fixtures of the floor tests: a private PostgreSQL (once per worker), a database per test."""

from __future__ import annotations

import logging
import uuid

import pytest

from tests.floor.pg import PostgresServer


@pytest.fixture(scope="session")
def pg_server():
    server = PostgresServer()
    try:
        server.start()
    except Exception:
        server.stop()
        raise
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server) -> str:
    return pg_server.create_database(f"floor_{uuid.uuid4().hex[:12]}")


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'floor.sqlite3'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'floor.sqlite3'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture(autouse=True)
def _quiet():
    for name in ("amqtt", "transitions", "uvicorn", "uvicorn.error"):
        logging.getLogger(name).setLevel(logging.WARNING)
