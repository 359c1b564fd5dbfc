"""A private PostgreSQL for the floor tests: initdb + pg_ctl in a temp dir, on a free port.

Never the machine's own PostgreSQL service: the cluster lives in its own directory,
listens on 127.0.0.1 on a free port with its socket in that directory, and is
stopped (``pg_ctl stop -m immediate``) and deleted at the end. PostgreSQL refuses to
run as root, so as root the cluster runs as the ``postgres`` system user (``runuser``).
A missing PostgreSQL is a failure, never a skip: run scripts/system-deps.sh.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile

from tests.support.mosquitto import free_port, wait_port

INSTALL_HINT = "install it with scripts/system-deps.sh (as root), or: apt-get install -y postgresql"


def _bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    path = found[-1] if found else shutil.which(name)
    if not path:
        raise RuntimeError(f"PostgreSQL's {name} is not installed: {INSTALL_HINT}")
    return path


class PostgresServer:
    def __init__(self, *, fsync: bool = False) -> None:
        # The tests need no durability against power loss (fsync off: faster); the benchmark
        # measures commits as a floor makes them (fsync on, PostgreSQL's default).
        self.fsync = fsync
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="floor-pg-")
        self.data = os.path.join(self.dir, "data")
        self.log = os.path.join(self.dir, "pg.log")
        self.user = None
        self._prefix: list[str] = []
        if os.geteuid() == 0:
            self.user = "postgres"
            pw = pwd.getpwnam(self.user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self._prefix = ["runuser", "-u", self.user, "--"]
        self.db_user = self.user or pwd.getpwuid(os.getuid()).pw_name

    def _run(self, *args: str, timeout: float = 60) -> None:
        proc = subprocess.run([*self._prefix, *args], capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}\n"
                               f"{self.log_text()}")

    def start(self) -> PostgresServer:
        self._run(_bin("initdb"), "-D", self.data, "-A", "trust", "-U", self.db_user, "--no-sync", "-E", "UTF8")
        return self.resume()

    def resume(self) -> PostgresServer:
        """Start the cluster (again, on the same port)."""
        opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.dir} -c fsync={'on' if self.fsync else 'off'} -c max_connections=50"
        self._run(_bin("pg_ctl"), "-D", self.data, "-l", self.log, "-o", opts, "-w", "-t", "30", "start")
        if not wait_port(self.port, 10):
            raise RuntimeError(f"PostgreSQL did not listen on {self.port}:\n{self.log_text()}")
        return self

    def pause(self) -> None:
        """Stop the server (fast shutdown: clients are disconnected), keeping the cluster."""
        self._run(_bin("pg_ctl"), "-D", self.data, "-m", "fast", "-w", "stop", timeout=30)

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://{self.db_user}@127.0.0.1:{self.port}/{db}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def log_text(self) -> str:
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self) -> None:
        if os.path.isdir(self.data):
            try:
                self._run(_bin("pg_ctl"), "-D", self.data, "-m", "immediate", "-w", "stop", timeout=30)
            except RuntimeError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
