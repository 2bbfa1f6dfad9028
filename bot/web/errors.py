"""The web API's errors."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from tools.errors import FAAError


class ApiError(FAAError, web.HTTPException):
    """A request the API refuses, raised as its own JSON response: `{"error": {"code", "message", …}}`. The client
    must change the request: never transient."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        self.status_code = status
        self.code = code
        self.message = message
        self.extra = extra
        super().__init__(
            text=json.dumps({"error": {"code": code, "message": message, **extra}}), content_type="application/json"
        )


def unavailable(retry_after_s: int) -> ApiError:
    """503 with Retry-After: a peer FAA needs (the database) is down for now; the same request can pass later."""
    error = ApiError(503, "unavailable", "FAA is briefly unavailable; try again shortly", retry_after_s=retry_after_s)
    error.headers["Retry-After"] = str(retry_after_s)
    return error
