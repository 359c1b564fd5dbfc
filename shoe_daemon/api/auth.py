"""Bearer tokens with a role (``[[api.tokens]]``): who is calling, and may they.

Tokens are compared in constant time: the presented token is hashed (SHA-256, so
lengths do not show) and compared with every configured token's SHA-256 (given as
the token, a token file, or only its hash: ``token_hash = "sha256:<hex>"``) with
``hmac.compare_digest``, all of them, with no early exit. No token or a token we
do not know is 401 with ``WWW-Authenticate: Bearer``; a known token of the
wrong role is 403 (and goes into the audit log).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPBearer

from shoe_daemon.api.errors import ApiError
from shoe_daemon.config import token_digest

ROLES = ("dealer", "supervisor", "pit", "technician")
REALM = 'Bearer realm="shoe-daemon"'

# Only for the OpenAPI schema (securitySchemes); the checks below do the work.
bearer_scheme = HTTPBearer(auto_error=False, description="a token of [[api.tokens]] (role dealer, "
                                                          "supervisor or technician)")


@dataclass(frozen=True, slots=True)
class Principal:
    user: str
    role: str


def _digest(token: str) -> bytes:
    return token_digest(token)


class TokenStore:
    """token -> (user, role); ``update()`` swaps the whole set (config reload)."""

    def __init__(self, entries: Iterable = ()):
        self._entries: list[tuple[bytes, Principal]] = []
        self.update(entries)

    def update(self, entries: Iterable) -> None:
        out = []
        for entry in entries:
            digest = entry.digest()
            if digest is not None:
                out.append((digest, Principal(entry.user, entry.role)))
        self._entries = out

    def lookup(self, token: str) -> Principal | None:
        given = _digest(token)
        found = None
        for digest, who in self._entries:   # every one compared: the time does not say which matched
            if hmac.compare_digest(given, digest):
                found = who
        return found

    def __len__(self) -> int:
        return len(self._entries)


def unauthorized(message: str, error: str | None = None) -> ApiError:
    header = REALM if error is None else f'{REALM}, error="{error}"'
    return ApiError(401, message, headers={"WWW-Authenticate": header})


def authenticate(store: TokenStore, header: str | None) -> Principal:
    if not header:
        raise unauthorized("this needs a bearer token: Authorization: Bearer <token>")
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise unauthorized("the Authorization header must be: Bearer <token>", "invalid_request")
    who = store.lookup(token)
    if who is None:
        raise unauthorized("unknown token", "invalid_token")
    return who


def requires(store_of: Callable[[Request], TokenStore], on_forbidden: Callable[[Request, Principal, str], None],
             *roles: str):
    """A dependency: the caller's Principal if its role is one of ``roles``."""
    allowed = ", ".join(roles)

    async def dependency(request: Request, _credentials: Annotated[object, Depends(bearer_scheme)]) -> Principal:
        who = authenticate(store_of(request), request.headers.get("authorization"))
        if who.role not in roles:
            message = f"{who.user} has the role {who.role}; this needs {allowed}"
            on_forbidden(request, who, message)
            raise ApiError(403, message)
        return who

    return dependency
