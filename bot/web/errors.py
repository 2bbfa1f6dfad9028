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
