"""A real Mosquitto for the tests, a collecting subscriber, and a probe that connects, publishes
and vanishes (what a broker lets a client do).

``MosquittoServer`` writes a mosquitto.conf in a temp dir (listener on 127.0.0.1
only) and runs ``mosquitto -c`` as a child process; ``restart()`` keeps the port,
for broker-restart fault tests. A missing binary is a failure, never a skip: run
``scripts/system-deps.sh`` (as root) to install it.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.properties import Properties

INSTALL_HINT = "install it with scripts/system-deps.sh (as root), or: apt-get install -y mosquitto"


class MosquittoNotInstalled(RuntimeError):
    pass


def find_binary(name: str) -> str:
    path = shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}", f"/usr/local/sbin/{name}") if os.access(p, os.X_OK)),
        None,
    )
    if path is None:
        raise MosquittoNotInstalled(f"{name} is not installed: {INSTALL_HINT}")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 10.0, host: str = "127.0.0.1") -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.01)
    return False


def make_password_file(path: str | os.PathLike, users: dict[str, str]) -> Path:
    """A Mosquitto password file made with ``mosquitto_passwd -b``."""
    path = Path(path)
    tool = find_binary("mosquitto_passwd")
    path.unlink(missing_ok=True)
    for i, (user, password) in enumerate(users.items()):
        args = [tool, "-b"] + (["-c"] if i == 0 else []) + [str(path), user, password]
        subprocess.run(args, check=True, capture_output=True, timeout=10)
    os.chmod(path, 0o600)
    return path


class MosquittoServer:
    """``mosquitto -c <generated conf>`` on 127.0.0.1:``port``."""

    def __init__(
        self,
        port: int | None = None,
        websockets_port: int | None = None,
        password_file: str | os.PathLike | None = None,
        persistence: bool = False,
        workdir: str | os.PathLike | None = None,
        extra_conf: Iterable[str] = (),
    ) -> None:
        self.binary = find_binary("mosquitto")
        self.port = port or free_port()
        self.websockets_port = websockets_port
        self.password_file = Path(password_file) if password_file else None
        self.persistence = persistence
        self.extra_conf = list(extra_conf)
        self._own_dir = workdir is None
        self.dir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="mosquitto-"))
        self.conf_path = self.dir / "mosquitto.conf"
        self.log_path = self.dir / "mosquitto.log"
        self.proc: subprocess.Popen | None = None
        self.start_seconds: float | None = None   # how long the last start() took

    @property
    def host(self) -> str:
        return "127.0.0.1"

    def conf_text(self) -> str:
        user = pwd.getpwuid(os.getuid()).pw_name
        lines = [
            f"user {user}",      # as root mosquitto would switch to 'mosquitto' and lose our temp dir
            "per_listener_settings false",
            f"allow_anonymous {'false' if self.password_file else 'true'}",
            f"listener {self.port} 127.0.0.1",
        ]
        if self.websockets_port:
            lines += [f"listener {self.websockets_port} 127.0.0.1", "protocol websockets"]
        if self.password_file:
            lines.append(f"password_file {self.password_file}")
        if self.persistence:
            lines += ["persistence true", f"persistence_location {self.dir}/", "autosave_interval 1800"]
        else:
            lines.append("persistence false")
        lines += ["log_type error", "log_type warning", "log_type notice", "log_type information",
                  "connection_messages true", "log_timestamp true"]
        lines += self.extra_conf
        return "\n".join(lines) + "\n"

    def start(self, timeout: float = 10.0) -> MosquittoServer:
        if self.running:
            return self
        t0 = time.monotonic()
        self.conf_path.write_text(self.conf_text())
        log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                [self.binary, "-c", str(self.conf_path)],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        finally:
            log.close()
        ports = [self.port] + ([self.websockets_port] if self.websockets_port else [])
        deadline = t0 + timeout
        for port in ports:
            while not wait_port(port, timeout=0.05):
                if self.proc.poll() is not None:
                    raise RuntimeError(f"mosquitto exited with {self.proc.returncode}:\n{self.log_text()}")
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"mosquitto did not listen on {port} within {timeout} s:\n{self.log_text()}")
        self.start_seconds = time.monotonic() - t0
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (Mosquitto saves its persistence file) and wait for the port to close."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: a crash, nothing saved."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)

    def restart(self, down_for: float = 0.0) -> MosquittoServer:
        self.stop()
        if down_for:
            time.sleep(down_for)
        return self.start()

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def cleanup(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> MosquittoServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.cleanup()


def probe(port: int, *, protocol: str = "5", username: str | None = None, password: str | None = None,
          will: str | None = None, publish: Iterable[str] = (), transport: str = "tcp",
          host: str = "127.0.0.1") -> str:
    """Connect (as ``username`` or anonymously; with a forged retained Last Will on ``will``), publish
    a forged retained message on each topic of ``publish`` if let in, then vanish without DISCONNECT
    (the broker sends the will, if it took it). Returns the CONNECT's result as paho words it
    ("Success", "Not authorized", ...), or "no answer" within 5 s. ``protocol``: "5" or "3.1.1"."""
    done = threading.Event()
    result: list[str] = []
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"probe-{uuid.uuid4().hex[:10]}",
                         protocol=mqtt.MQTTv5 if protocol == "5" else mqtt.MQTTv311, transport=transport)
    if username is not None:
        client.username_pw_set(username, password)
    if will is not None:
        client.will_set(will, '{"state":"offline","forged":true}', qos=1, retain=True)
    client.on_connect = lambda c, u, f, rc, p: (result.append(str(rc)), done.set())
    client.connect_async(host, port)
    client.loop_start()
    try:
        done.wait(5)
        if result == ["Success"]:
            for topic in publish:
                client.publish(topic, '{"winner":"forged"}', qos=1, retain=True).wait_for_publish(5)
    finally:
        client.loop_stop()
        if client.socket():
            client.socket().close()
    return result[0] if result else "no answer"


@dataclass(frozen=True)
class Received:
    topic: str
    payload: bytes
    qos: int
    retain: bool

    def json(self):
        import json

        return json.loads(self.payload)


class Subscriber:
    """A paho client that collects every message it gets into ``messages``.

    It (re)subscribes on every connect. ``persistent=True`` keeps a broker-side
    session (fixed client id, no clean start, session expiry) so QoS 1 messages
    published while it is away are queued for it by the broker.
    """

    def __init__(
        self,
        port: int,
        topics: str | list[str] = "#",
        *,
        host: str = "127.0.0.1",
        qos: int = 1,
        protocol: str = "5",
        client_id: str | None = None,
        persistent: bool = False,
        username: str | None = None,
        password: str | None = None,
        transport: str = "tcp",
    ) -> None:
        self.host, self.port = host, port
        self.topics = [topics] if isinstance(topics, str) else list(topics)
        self.qos = qos
        self.v5 = protocol == "5"
        self.persistent = persistent
        self.client_id = client_id or f"test-sub-{uuid.uuid4().hex[:10]}"
        self.messages: list[Received] = []
        self.subscribed = threading.Event()
        self.connects = 0
        self._cond = threading.Condition()
        kwargs = {} if self.v5 else {"clean_session": not persistent}
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2, client_id=self.client_id,
            protocol=mqtt.MQTTv5 if self.v5 else mqtt.MQTTv311, transport=transport, **kwargs,
        )
        if username is not None:
            self.client.username_pw_set(username, password)
        self.client.reconnect_delay_set(0.1, 0.5)
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = self._on_subscribe
        self.client.on_message = self._on_message

    def start(self, timeout: float = 10.0) -> Subscriber:
        props = None
        if self.v5:
            props = None
            if self.persistent:
                from paho.mqtt.packettypes import PacketTypes

                props = Properties(PacketTypes.CONNECT)
                props.SessionExpiryInterval = 3600
            self.client.connect_async(self.host, self.port, 30, clean_start=not self.persistent, properties=props)
        else:
            self.client.connect_async(self.host, self.port, 30)
        self.client.loop_start()
        if not self.subscribed.wait(timeout):
            self.stop()
            raise TimeoutError(f"subscriber did not subscribe to {self.topics} on port {self.port}")
        return self

    def stop(self) -> None:
        try:
            self.client.disconnect()
        finally:
            self.client.loop_stop()

    def __enter__(self) -> Subscriber:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            return
        self.connects += 1
        client.subscribe([(t, self.qos) for t in self.topics])

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties):
        self.subscribed.set()

    def _on_message(self, client, userdata, message):
        with self._cond:
            self.messages.append(Received(message.topic, bytes(message.payload), message.qos, bool(message.retain)))
            self._cond.notify_all()

    def snapshot(self) -> list[Received]:
        with self._cond:
            return list(self.messages)

    def on_topic(self, topic: str) -> list[Received]:
        return [m for m in self.snapshot() if m.topic == topic]

    def wait_for(self, predicate: Callable[[list[Received]], object], timeout: float = 10.0):
        """Wait until ``predicate(messages)`` is truthy and return its value; TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                value = predicate(list(self.messages))
                if value:
                    return value
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    got = "\n".join(f"  {m.topic} retain={m.retain} {m.payload[:120]!r}" for m in self.messages[-20:])
                    raise TimeoutError(f"condition not met within {timeout} s; last messages:\n{got}")
                self._cond.wait(min(remaining, 0.1))
