"""One error format for every failure: ``{"error": {"status", "code", "message", ...}}``."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

CODES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
    409: "conflict", 413: "too_large", 422: "invalid_request", 503: "unavailable",
}


class ApiError(Exception):
    def __init__(self, status: int, message: str, *, code: str | None = None,
                 headers: dict[str, str] | None = None, **extra: Any):
        super().__init__(message)
        self.status = status
        self.code = code or CODES.get(status, "error")
        self.message = message
        self.headers = headers
        self.extra = {k: v for k, v in extra.items() if v is not None}

    def body(self) -> dict:
        return {"error": {"status": self.status, "code": self.code, "message": self.message, **self.extra}}


def error_response(exc: ApiError) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status, headers=exc.headers)


def _loc(loc) -> str:
    return ".".join(str(p) for p in loc)


def _message(err: dict) -> str:
    msg = str(err.get("msg", "invalid"))
    ctx = err.get("ctx") or {}
    kind = err.get("type", "")
    if kind == "value_error":
        msg = msg.removeprefix("Value error, ")
    elif kind == "missing":
        msg = "is required"
    elif kind == "extra_forbidden":
        msg = "is not a field of this request"
    elif kind == "string_pattern_mismatch" and "amount" in _loc(err.get("loc", ())):
        msg = 'must be a positive decimal amount as a string, such as "25" or "12.50"'
    elif kind == "string_pattern_mismatch" and "coup_id" in _loc(err.get("loc", ())):
        msg = 'must be a coup id "<shoe>-<coup>", such as "1-12"'
    elif kind == "string_pattern_mismatch" and _loc(err.get("loc", ())).endswith("card"):
        msg = "must be a card code: rank A 2-9 T J Q K (or 10) then suit S H D C, e.g. TH"
    elif kind == "json_invalid":
        msg = f"the body is not valid JSON: {ctx.get('error', msg)}"
    return msg


def validation_error(errors: list[dict]) -> ApiError:
    details = [{"loc": _loc(e.get("loc", ())), "message": _message(e)} for e in errors]
    first = details[0] if details else {"loc": "body", "message": "invalid request"}
    more = f" (and {len(details) - 1} more)" if len(details) > 1 else ""
    where = f"{first['loc']}: " if first["loc"] else ""
    return ApiError(422, f"{where}{first['message']}{more}", details=details)


def install(app: FastAPI) -> None:
    from shoe_daemon.journal import RecallCorrupt

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RecallCorrupt)
    async def _recall_corrupt(request: Request, exc: RecallCorrupt) -> JSONResponse:
        # A stored coup that does not match the hash chain is never served, not even in a list.
        return error_response(ApiError(409, f"{exc.detail}: recall record fails verification; "
                                            "run `shoe-daemon journal verify --full`",
                                       code="recall_corrupt", coup_id=exc.coup_id))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_response(validation_error(list(exc.errors())))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = exc.detail if isinstance(exc.detail, str) else CODES.get(exc.status_code, "error")
        if exc.status_code == 400 and "parsing the body" in message:
            # A body that is not JSON (or not UTF-8) is a bad body like any other: 422.
            return error_response(ApiError(422, "body: the body is not valid JSON (UTF-8)",
                                           details=[{"loc": "body", "message": "not valid JSON (UTF-8)"}]))
        if exc.status_code == 404 and message == "Not Found":
            message = f"no such endpoint: {request.method} {request.url.path} (see /docs or docs/api.md)"
        return error_response(ApiError(exc.status_code, message, headers=getattr(exc, "headers", None)))
