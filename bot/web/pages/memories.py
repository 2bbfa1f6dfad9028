"""The memories page: the household's memories (and the member's own private ones) newest first, a search,
edit, forget and undo — through the memory tools, so a page changes memories exactly as a message would."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from bot.web.pages.render import html, redirect
from bot.web.pages.tooling import member_tools
from tools.errors import ToolRetry
from tools.memories import (
    MemoryIdsArgs,
    SearchArgs,
    UpdateMemoryFieldsArgs,
    forget,
    restore,
    search,
    update_memory_fields,
)

PAGE_SIZE = 50


def _ids(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip().isdigit()][:50]


async def memories_page(request: web.Request) -> web.Response:
    query = request.query.get("q", "").strip()[:200]
    args: dict[str, Any] = {"order": "newest", "limit": PAGE_SIZE}
    if query:
        args["filter"] = {"field": "content", "op": "contains", "value": query}
    async with member_tools(request) as ctx:
        found = await search(ctx, SearchArgs.model_validate(args))
    return html(
        request,
        "memories.html",
        memories=found.memories,
        query=query,
        undo=",".join(str(i) for i in _ids(request.query.get("forgotten", ""))),
        restored=bool(request.query.get("restored")),
    )


def _memory_id(request: web.Request) -> int:
    try:
        return int(request.match_info["memory_id"])
    except ValueError:
        raise web.HTTPNotFound() from None


async def forget_memory(request: web.Request) -> web.Response:
    memory_id = _memory_id(request)
    async with member_tools(request) as ctx:
        result = await forget(ctx, MemoryIdsArgs(memory_ids=[memory_id]))
    if not result.forgotten:
        raise web.HTTPNotFound(reason="No such memory")
    return redirect(f"/memories?forgotten={memory_id}")


async def restore_memories(request: web.Request) -> web.Response:
    ids = _ids(str((await request.post()).get("ids", "")))
    if not ids:
        raise web.HTTPBadRequest(reason="Nothing to restore")
    async with member_tools(request) as ctx:
        await restore(ctx, MemoryIdsArgs(memory_ids=ids))
    return redirect("/memories?restored=1")


def _changes(form: Any) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    content = str(form.get("content", "")).strip()
    if content:
        changes["content"] = content
    category = str(form.get("category", "")).strip().lower()
    changes["category"] = category or None
    amount = str(form.get("amount", "")).strip().replace(",", ".")
    currency = str(form.get("currency", "")).strip().upper()
    if amount:
        try:
            changes["amount"] = Decimal(amount)
        except InvalidOperation:
            raise web.HTTPBadRequest(reason=f"{amount!r} is not an amount") from None
        changes["currency"] = currency or None
    return changes


async def edit_memory(request: web.Request) -> web.Response:
    memory_id = _memory_id(request)
    try:
        args = UpdateMemoryFieldsArgs(memory_id=memory_id, **_changes(await request.post()))
        async with member_tools(request) as ctx:
            await update_memory_fields(ctx, args)
    except ValidationError as exc:
        raise web.HTTPBadRequest(reason="; ".join(str(e["msg"]) for e in exc.errors())) from None
    except ToolRetry as exc:
        raise web.HTTPBadRequest(reason=exc.message) from None
    return redirect(f"/memories#memory-{memory_id}")
