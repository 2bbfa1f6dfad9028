"""Who sees a memory, event, reminder, list or list item: the toggle every page shows beside a row its member made
(everyone, only me, everyone but one member), through the `set_visibility` tool; and the same as JSON
(`/app/visibility/{kind}/{id}`)."""

from __future__ import annotations

from typing import get_args

from aiohttp import web
from pydantic import ValidationError

from bot.web.pages.render import error_page, redirect
from bot.web.pages.tooling import audience_fields, invalid, json_body, json_tool, member_tools, refusal, row_id
from tools.audience import Kind, SetVisibilityArgs, set_visibility
from tools.errors import ToolRetry

_KINDS = frozenset(get_args(Kind))
# Where a toggle sends the member back to: the page of the row's kind (a path of this site only).
_PAGES = {
    "memory": "/memories",
    "event": "/calendar",
    "reminder": "/reminders",
    "list": "/lists",
    "list_item": "/lists",
}


def _kind(request: web.Request) -> str:
    kind = request.match_info["kind"].replace("-", "_")
    if kind not in _KINDS:
        raise web.HTTPNotFound()
    return kind


async def change(request: web.Request) -> web.Response:
    """POST /visibility/{kind}/{id} with `audience`: "household", "private" or "hide:<member's name>"."""
    kind, item = _kind(request), row_id(request, "row_id")
    form = await request.post()
    try:
        args = SetVisibilityArgs.model_validate({"kind": kind, "id": item, **audience_fields(form)})
        async with member_tools(request) as ctx:
            await set_visibility(ctx, args)
    except ValidationError as exc:
        return error_page(request, 400, invalid(exc))
    except ToolRetry as exc:
        return error_page(request, *refusal(request, exc))
    return redirect(_PAGES[kind])


async def change_json(request: web.Request) -> web.Response:
    """POST /app/visibility/{kind}/{id} {"visibility": "private"} or {"hidden_from": "Sam"}."""
    kind, item = _kind(request), row_id(request, "row_id")
    return await json_tool(
        request, SetVisibilityArgs, set_visibility, {**await json_body(request), "kind": kind, "id": item}
    )
