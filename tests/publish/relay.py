"""A TCP relay between the publisher and a real broker, which a test can hold and cut.

``hold_replies()`` stops forwarding what the broker sends (PUBACKs stay behind the
relay: the publisher's window fills with unacknowledged messages), ``cut()`` closes
every relayed connection at once (the link drops, as a network fault would), and
``release()`` lets replies and new connections through again. Plain sockets and
threads; it listens on 127.0.0.1 only.
"""

from __future__ import annotations

import socket
import threading


class Relay:
    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.target = (host, target_port)
        self._listener = socket.create_server((host, 0))
        self.port = self._listener.getsockname()[1]
        self._held = threading.Event()
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._closed = False
        self.connections = 0
        threading.Thread(target=self._accept, name="relay-accept", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._closed:
                    client.close()
                    upstream.close()
                    return
                self._pairs.append((client, upstream))
                self.connections += 1
            threading.Thread(target=self._pipe, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, True), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, replies: bool) -> None:
        held: list[bytes] = []
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                break
            if not data:
                break
            if replies and self._held.is_set():
                held.append(data)          # kept back; dropped with the connection if it is cut
                continue
            try:
                for chunk in held:
                    dst.sendall(chunk)
                held.clear()
                dst.sendall(data)
            except OSError:
                break
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def hold_replies(self) -> None:
        self._held.set()

    def release(self) -> None:
        self._held.clear()

    def cut(self) -> None:
        """Close every relayed connection now (both sides)."""
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._listener.close()
        self.cut()

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
