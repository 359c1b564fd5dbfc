"""The API's gate for writes: the token is checked before the body is read, and the body is capped.

A plain ASGI middleware in front of the app. For every request that may carry a body to act on
(any method but GET, HEAD and OPTIONS):

1. the ``Authorization: Bearer <token>`` header must hold a known token, else 401 — before one
   byte of the body is read (an anonymous client cannot make the daemon read, buffer or parse
   anything);
2. a ``Content-Length`` above ``[api] max_body_bytes`` is 413 at once; a body without a length
   (chunked) is read up to that size and is 413 the moment it passes it;
3. the body read is handed to the app as it came.

The role is checked afterwards, by the route (403 goes into the audit log there). WebSocket
connections (``/stream``, read-only) are not writes and pass.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from shoe_daemon.api.auth import REALM, TokenStore

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Writes that authenticate otherwise (none today): only their body cap applies. A route added
# here must check its caller itself, and read its body only after that.
PUBLIC_WRITE_PATHS: frozenset[str] = frozenset()


async def _reply(send: Send, status: int, code: str, message: str, headers: list[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps({"error": {"status": status, "code": code, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"), *headers]})  # fmt: skip
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


class WriteGate:
    """``WriteGate(app, tokens=lambda: store, max_body=lambda: n)``: both read per request, so a
    configuration reload (new tokens) takes effect at once."""

    def __init__(self, app: ASGIApp, *, tokens: Callable[[], TokenStore], max_body: Callable[[], int]):
        self.app = app
        self.tokens = tokens
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        header = _header(scope, b"authorization")
        problem = None
        if scope.get("path") in PUBLIC_WRITE_PATHS:
            pass
        elif not header:
            problem = ("this needs a bearer token: Authorization: Bearer <token>", None)
        else:
            scheme, _, token = header.strip().partition(" ")
            token = token.strip()
            if scheme.lower() != "bearer" or not token:
                problem = ("the Authorization header must be: Bearer <token>", "invalid_request")
            elif self.tokens().lookup(token) is None:
                problem = ("unknown token", "invalid_token")
        if problem is not None:
            message, error = problem
            realm = REALM if error is None else f'{REALM}, error="{error}"'
            await _reply(send, 401, "unauthorized", message, [(b"www-authenticate", realm.encode())])
            return
        limit = self.max_body()
        length = _header(scope, b"content-length")
        if length is not None:
            try:
                declared = int(length)
            except ValueError:
                await _reply(send, 400, "bad_request", "Content-Length is not a number")
                return
            if declared > limit:
                await _reply(send, 413, "too_large", f"the body is {declared} bytes; at most {limit} are taken "
                                                     "([api] max_body_bytes)")
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _reply(send, 413, "too_large", f"the body passed {limit} bytes ([api] max_body_bytes)")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()   # after the body: wait for the disconnect, as the server would

        await self.app(scope, replay, send)
