"""The live stream: the messages the core publishes to MQTT, over a WebSocket.

``Streams.publish`` is one of ``Daemon.listeners``: the service calls it on the
loop for every Publish output, right after handing it to MQTT. Each client has
a bounded queue; a client too slow to keep up is closed (1013, try again later)
rather than allowed to hold the daemon's memory. A client first receives the
retained messages (``"retained": true``, like an MQTT subscriber joining), then
every message live; ``seq`` lets it drop a duplicate.
"""

from __future__ import annotations

import asyncio
import json

from starlette.websockets import WebSocket, WebSocketDisconnect

from shoe_daemon.core.outputs import Publish

QUEUE_MAX = 2000
CLOSE_TOO_SLOW = 1013
CLOSE_GOING_AWAY = 1001


def frame(msg: Publish, *, retained: bool = False) -> str:
    body = msg.encode().decode()
    head = json.dumps({"topic": msg.topic, "retain": msg.retain, "retained": retained}, separators=(",", ":"))
    return head[:-1] + ',"payload":' + body + "}"


def matches(patterns: list[str], topic: str) -> bool:
    """MQTT-style filters relative to the prefix: ``coup/card``, ``coup/#``, ``alerts/+``, ``#``."""
    if not patterns:
        return True
    levels = topic.split("/")
    for pattern in patterns:
        parts = pattern.split("/")
        for i, part in enumerate(parts):
            if part == "#":
                return True
            if i >= len(levels) or (part != "+" and part != levels[i]):
                break
        else:
            if len(parts) == len(levels):
                return True
    return False


class _Client:
    __slots__ = ("queue", "patterns", "closed_for")

    def __init__(self, patterns: list[str]):
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(QUEUE_MAX)
        self.patterns = patterns
        self.closed_for: int | None = None


class Streams:
    def __init__(self):
        self.clients: set[_Client] = set()

    def publish(self, msg: Publish) -> None:
        if not self.clients:
            return
        text = None
        for client in list(self.clients):
            if not matches(client.patterns, msg.topic):
                continue
            if text is None:
                text = frame(msg)
            try:
                client.queue.put_nowait(text)
            except asyncio.QueueFull:
                self._end(client, CLOSE_TOO_SLOW)

    def _end(self, client: _Client, code: int) -> None:
        self.clients.discard(client)
        client.closed_for = code
        while not client.queue.empty():
            client.queue.get_nowait()
        client.queue.put_nowait(None)

    def close_all(self) -> None:
        for client in list(self.clients):
            self._end(client, CLOSE_GOING_AWAY)

    async def serve(self, ws: WebSocket, retained_messages, patterns: list[str], send_retained: bool) -> None:
        await ws.accept()
        client = _Client(patterns)
        self.clients.add(client)   # before the retained ones go out: nothing published meanwhile is missed
        receiver = asyncio.ensure_future(_until_disconnect(ws))
        try:
            if send_retained:
                for msg in retained_messages:
                    if matches(patterns, msg.topic):
                        await ws.send_text(frame(msg, retained=True))
            while True:
                getter = asyncio.ensure_future(client.queue.get())
                done, _ = await asyncio.wait({getter, receiver}, return_when=asyncio.FIRST_COMPLETED)
                if receiver in done:
                    getter.cancel()
                    return
                text = getter.result()
                if text is None:
                    reason = "too slow: the stream's queue overflowed" if client.closed_for == CLOSE_TOO_SLOW \
                        else "the daemon is stopping"
                    await ws.close(client.closed_for or CLOSE_GOING_AWAY, reason)
                    return
                await ws.send_text(text)
        except (WebSocketDisconnect, RuntimeError, OSError):
            return
        finally:
            self.clients.discard(client)
            receiver.cancel()


async def _until_disconnect(ws: WebSocket) -> None:
    while True:
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return
