"""The lists page: the household's shared lists (shopping, to-do, packing, …) with their items — add, tick, assign,
take one off, clear the ticked ones — through the same list tools the model calls, and the same as JSON for scripts
and apps (`/app/lists…`, signed in, with the CSRF token in `X-CSRF-Token`)."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from pydantic import BaseModel, ValidationError

from bot.web.pages.render import VIEWER, html, redirect
from bot.web.pages.tooling import (
    audience_fields,
    invalid,
    json_body,
    json_error,
    json_tool,
    member_tools,
    refusal,
    row_id,
)
from tools.errors import ToolRetry
from tools.lists import (
    AddListItemsArgs,
    ClearDoneItemsArgs,
    RemoveListItemArgs,
    ShowListArgs,
    UpdateListItemArgs,
    add_list_items,
    clear_done_items,
    remove_list_item,
    show_list,
    update_list_item,
)


async def lists_page(request: web.Request, *, error: str | None = None, status: int = 400) -> web.Response:
    async with member_tools(request) as ctx:
        shown = await show_list(ctx, ShowListArgs(list_name=None, include_done=True))
    members = [m.name for m in ctx.members]
    others = [name for m, name in zip(ctx.members, members, strict=True) if m.id != request[VIEWER].user_id]
    return html(
        request,
        "lists.html",
        status=status if error else 200,
        lists=shown.lists,
        members=members,
        others=others,
        error=error,
    )


async def _form_act(request: web.Request, build: Any, action: Any) -> web.Response:
    """Run one list tool from a form; its complaint (or the form's) shown on the page."""
    form = await request.post()
    try:
        args = build({key: str(value) for key, value in form.items() if key != "csrf"})
        async with member_tools(request) as ctx:
            await action(ctx, args)
    except ValidationError as exc:
        return await lists_page(request, error=invalid(exc))
    except ToolRetry as exc:
        status, text = refusal(request, exc)
        return await lists_page(request, error=text, status=status)
    return redirect("/lists")


def _add_args(form: dict[str, Any]) -> AddListItemsArgs:
    item = {"text": form.get("text", ""), "quantity": form.get("quantity"), "assignee": form.get("assignee")}
    chosen = audience_fields(form)
    return AddListItemsArgs.model_validate(
        {"list_name": form.get("list_name") or "shopping", "items": [item], **chosen}
    )


async def add_item(request: web.Request) -> web.Response:
    return await _form_act(request, _add_args, add_list_items)


async def tick_item(request: web.Request) -> web.Response:
    item_id = row_id(request, "item_id")

    def build(form: dict[str, str]) -> UpdateListItemArgs:
        return UpdateListItemArgs.model_validate({"item_id": item_id, "done": form.get("done") == "1"})

    return await _form_act(request, build, update_list_item)


async def edit_item(request: web.Request) -> web.Response:
    """An item's quantity and who takes it, changed in place (an empty quantity leaves it as it is)."""
    item_id = row_id(request, "item_id")

    def build(form: dict[str, str]) -> UpdateListItemArgs:
        quantity = form.get("quantity", "").strip() or None
        return UpdateListItemArgs.model_validate(
            {"item_id": item_id, "assignee": form.get("assignee") or "nobody", "quantity": quantity}
        )

    return await _form_act(request, build, update_list_item)


async def assign_item(request: web.Request) -> web.Response:
    item_id = row_id(request, "item_id")

    def build(form: dict[str, str]) -> UpdateListItemArgs:
        return UpdateListItemArgs.model_validate({"item_id": item_id, "assignee": form.get("assignee") or "nobody"})

    return await _form_act(request, build, update_list_item)


async def remove_item(request: web.Request) -> web.Response:
    """One item taken off its list without a tick (not needed after all); a child's account only its own."""
    item_id = row_id(request, "item_id")

    def build(form: dict[str, str]) -> RemoveListItemArgs:
        return RemoveListItemArgs.model_validate({"item_id": item_id})

    return await _form_act(request, build, remove_list_item)


async def clear_items(request: web.Request) -> web.Response:
    def build(form: dict[str, str]) -> ClearDoneItemsArgs:
        return ClearDoneItemsArgs.model_validate({"list_name": form.get("list_name", "")})

    return await _form_act(request, build, clear_done_items)


# JSON ------------------------------------------------------------------------------------------------------------


async def _json_act(request: web.Request, model: type[BaseModel], action: Any, **fixed: Any) -> web.Response:
    return await json_tool(request, model, action, {**await json_body(request), **fixed})


async def lists_json(request: web.Request) -> web.Response:
    """GET /app/lists[?list_name=…&include_done=0]: the lists with their items, the ticked ones not yet cleared
    too (as the page shows them; `include_done=0` leaves them out)."""
    query = {"list_name": request.query.get("list_name"), "include_done": request.query.get("include_done") != "0"}
    try:
        args = ShowListArgs.model_validate(query)
        async with member_tools(request) as ctx:
            shown = await show_list(ctx, args)
    except ValidationError as exc:
        return json_error(400, "invalid", invalid(exc))
    except ToolRetry as exc:
        status, text = refusal(request, exc)
        return json_error(status, exc.problem, text)
    return web.json_response(shown.model_dump(mode="json"))


async def add_items_json(request: web.Request) -> web.Response:
    """POST /app/lists/items {"list_name": "shopping", "items": [{"text": "milk", "quantity": "2"}]} (and
    "visibility", "hidden_from")."""
    return await _json_act(request, AddListItemsArgs, add_list_items)


async def update_item_json(request: web.Request) -> web.Response:
    """POST /app/lists/items/{item_id} {"done": true} or {"assignee": "Tom"} or {"quantity": "3"}."""
    return await _json_act(request, UpdateListItemArgs, update_list_item, item_id=row_id(request, "item_id"))


async def remove_item_json(request: web.Request) -> web.Response:
    """POST /app/lists/items/{item_id}/remove (no body): take the item off its list without a tick; answers
    `{"list_name", "text", "cleared": [item_id]}`."""
    return await json_tool(request, RemoveListItemArgs, remove_list_item, {"item_id": row_id(request, "item_id")})


async def clear_json(request: web.Request) -> web.Response:
    """POST /app/lists/clear {"list_name": "shopping"}: take the ticked items off."""
    return await _json_act(request, ClearDoneItemsArgs, clear_done_items)
