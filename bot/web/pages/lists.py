"""The lists page: the household's shared lists (shopping, to-do, packing, …) with their items — add, tick, assign,
clear the ticked ones — through the same list tools the model calls, and the same as JSON for scripts and apps
(`/app/lists…`, signed in, with the CSRF token in `X-CSRF-Token`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ValidationError

from bot.web.pages.render import VIEWER, html, redirect
from bot.web.pages.tooling import member_tools
from tools.context import ToolContext
from tools.errors import ToolRetry
from tools.lists import (
    AddListItemsArgs,
    ClearDoneItemsArgs,
    ShowListArgs,
    UpdateListItemArgs,
    add_list_items,
    clear_done_items,
    show_list,
    update_list_item,
)
from tools.registry import describe_errors
from tools.storage import households


@asynccontextmanager
async def _tools(request: web.Request) -> AsyncIterator[ToolContext]:
    """The member's tool context, knowing the household's members (items are assigned by name)."""
    async with member_tools(request) as ctx:
        ctx.members = await households.members(ctx.conn, request[VIEWER].household_id)
        yield ctx


async def lists_page(request: web.Request, *, error: str | None = None) -> web.Response:
    async with _tools(request) as ctx:
        shown = await show_list(ctx, ShowListArgs(list_name=None, include_done=True))
        members = [m.name for m in ctx.members]
    return html(request, "lists.html", status=400 if error else 200, lists=shown.lists, members=members, error=error)


def _item_id(request: web.Request) -> int:
    try:
        item_id = int(request.match_info["item_id"])
    except ValueError:
        raise web.HTTPNotFound() from None
    if not 0 < item_id < 2**63:
        raise web.HTTPNotFound()
    return item_id


async def _form_act(request: web.Request, build: Any, action: Any) -> web.Response:
    """Run one list tool from a form; its complaint (or the form's) shown on the page."""
    form = await request.post()
    try:
        args = build({key: str(value) for key, value in form.items() if key != "csrf"})
        async with _tools(request) as ctx:
            await action(ctx, args)
    except ValidationError as exc:
        return await lists_page(request, error=describe_errors(exc))
    except ToolRetry as exc:
        return await lists_page(request, error=exc.message)
    return redirect("/lists")


async def add_item(request: web.Request) -> web.Response:
    def build(form: dict[str, str]) -> AddListItemsArgs:
        item = {"text": form.get("text", ""), "quantity": form.get("quantity"), "assignee": form.get("assignee")}
        return AddListItemsArgs.model_validate({"list_name": form.get("list_name") or "shopping", "items": [item]})

    return await _form_act(request, build, add_list_items)


async def tick_item(request: web.Request) -> web.Response:
    item_id = _item_id(request)

    def build(form: dict[str, str]) -> UpdateListItemArgs:
        return UpdateListItemArgs.model_validate({"item_id": item_id, "done": form.get("done") == "1"})

    return await _form_act(request, build, update_list_item)


async def assign_item(request: web.Request) -> web.Response:
    item_id = _item_id(request)

    def build(form: dict[str, str]) -> UpdateListItemArgs:
        return UpdateListItemArgs.model_validate({"item_id": item_id, "assignee": form.get("assignee") or "nobody"})

    return await _form_act(request, build, update_list_item)


async def clear_items(request: web.Request) -> web.Response:
    def build(form: dict[str, str]) -> ClearDoneItemsArgs:
        return ClearDoneItemsArgs.model_validate({"list_name": form.get("list_name", "")})

    return await _form_act(request, build, clear_done_items)


# JSON ------------------------------------------------------------------------------------------------------------


def _problem(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


async def _json_act(request: web.Request, model: type[BaseModel], action: Any, **fixed: Any) -> web.Response:
    try:
        body = json.loads(await request.read() or b"{}")
        if not isinstance(body, dict):
            return _problem(400, "the body must be a JSON object")
        args = model.model_validate({**body, **fixed})
        async with _tools(request) as ctx:
            result: BaseModel = await action(ctx, args)
    except ValueError as exc:  # bad JSON; pydantic's ValidationError is a ValueError too
        return _problem(400, describe_errors(exc) if isinstance(exc, ValidationError) else "the body is not JSON")
    except ToolRetry as exc:
        return _problem(400 if "no list" not in exc.message and "no item" not in exc.message else 404, exc.message)
    return web.json_response(result.model_dump(mode="json"))


async def lists_json(request: web.Request) -> web.Response:
    """GET /app/lists[?list_name=…&include_done=1]: the lists with their items."""
    query = {"list_name": request.query.get("list_name"), "include_done": request.query.get("include_done") == "1"}
    try:
        args = ShowListArgs.model_validate(query)
        async with _tools(request) as ctx:
            shown = await show_list(ctx, args)
    except ValidationError as exc:
        return _problem(400, describe_errors(exc))
    except ToolRetry as exc:
        return _problem(404, exc.message)
    return web.json_response(shown.model_dump(mode="json"))


async def add_items_json(request: web.Request) -> web.Response:
    """POST /app/lists/items {"list_name": "shopping", "items": [{"text": "milk", "quantity": "2"}]}."""
    return await _json_act(request, AddListItemsArgs, add_list_items)


async def update_item_json(request: web.Request) -> web.Response:
    """POST /app/lists/items/{item_id} {"done": true} or {"assignee": "Tom"} or {"quantity": "3"}."""
    return await _json_act(request, UpdateListItemArgs, update_list_item, item_id=_item_id(request))


async def clear_json(request: web.Request) -> web.Response:
    """POST /app/lists/clear {"list_name": "shopping"}: take the ticked items off."""
    return await _json_act(request, ClearDoneItemsArgs, clear_done_items)
