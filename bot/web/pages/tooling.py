"""Pages act through the same tools the model calls (validation, timezones, roles, undo), in the member's household
transaction: a `ToolContext` for the signed-in member; and a tool's refusal as the member reads it — the status a
form or a JSON endpoint answers with and a text of the member's language, never the hint written for the model."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ValidationError

from bot.web.pages.render import VIEWER, texts
from bot.web.pages.security import DEPS
from tools.context import ToolContext
from tools.errors import ToolRetry
from tools.registry import describe_errors
from tools.storage import households
from tools.storage.web_sessions import SessionMember

_STATUS = {"invalid": 400, "not_found": 404, "not_allowed": 403}


@asynccontextmanager
async def member_tools(request: web.Request) -> AsyncIterator[ToolContext]:
    """A tool context of the signed-in member, in one transaction that sees what the member may see (RLS), knowing
    the household's members (their roles decide what the member may change; items are assigned by name)."""
    deps = request.app[DEPS]
    viewer: SessionMember = request[VIEWER]
    async with deps.db.household(viewer.household_id, viewer.user_id) as conn:
        yield ToolContext(
            conn=conn,
            household_id=viewer.household_id,
            user_id=viewer.user_id,
            timezone=viewer.timezone,
            now=deps.clock.now(),
            embedder=deps.embedder,
            members=await households.members(conn, viewer.household_id),
        )


def refusal(request: web.Request, exc: ToolRetry) -> tuple[int, str]:
    """The status and the member's text for a tool's refusal: 404 when the row is not there (or not the member's
    to see), 403 when their role does not allow the change, 400 for what they entered."""
    return _STATUS[exc.problem], exc.for_member or texts(request)(f"error.{exc.problem}")


def invalid(exc: ValidationError) -> str:
    """What is wrong with the fields a member entered, field by field."""
    return describe_errors(exc)


def json_error(status: int, code: str, message: str) -> web.Response:
    """A JSON endpoint's error, shaped like the web API's: `{"error": {"code", "message"}}`."""
    return web.json_response({"error": {"code": code, "message": message}}, status=status)


async def json_body(request: web.Request) -> dict[str, Any]:
    """The request's JSON object (an empty body is `{}`); 400 as JSON for anything else."""
    try:
        body = json.loads(await request.read() or b"{}")
    except ValueError:
        raise web.HTTPBadRequest(reason="The body is not JSON") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(reason="The body must be a JSON object")
    return body


async def json_tool(
    request: web.Request,
    model: type[BaseModel],
    action: Callable[[ToolContext, Any], Awaitable[BaseModel]],
    fields: dict[str, Any],
) -> web.Response:
    """Run one tool for a JSON endpoint: its result as JSON, or its refusal as a JSON error."""
    try:
        args = model.model_validate(fields)
        async with member_tools(request) as ctx:
            result = await action(ctx, args)
    except ValidationError as exc:
        return json_error(400, "invalid", invalid(exc))
    except ToolRetry as exc:
        status, text = refusal(request, exc)
        return json_error(status, exc.problem, text)
    return web.json_response(result.model_dump(mode="json"))


def audience_fields(form: Any) -> dict[str, Any]:
    """A form's `audience` choice as tool arguments: "household", "private" or "hide:<member's name>"."""
    choice = str(form.get("audience", "household") or "household")
    if choice.startswith("hide:"):
        return {"visibility": "household", "hidden_from": choice.removeprefix("hide:")}
    if choice not in ("household", "private"):
        raise web.HTTPBadRequest(reason="Unknown choice of who sees it")
    return {"visibility": choice, "hidden_from": None}


def row_id(request: web.Request, name: str) -> int:
    """A row id from the path; 404 for anything that cannot be one."""
    try:
        value = int(request.match_info[name])
    except ValueError:
        raise web.HTTPNotFound() from None
    if not 0 < value < 2**63:
        raise web.HTTPNotFound()
    return value
