"""The memories page: the household's memories (and the member's own private ones) newest first, a search,
edit, forget and undo — through the memory tools, so a page changes memories exactly as a message would — and the
same as JSON (`/app/memories/…`)."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

import structlog
from aiohttp import web
from pydantic import ValidationError

from bot.web.pages.render import html, redirect
from bot.web.pages.tooling import invalid, json_body, json_tool, member_tools, refusal, row_id
from tools.context import ToolContext
from tools.errors import EmbeddingError, ToolRetry
from tools.memories import (
    Memory,
    MemoryIdsArgs,
    SearchArgs,
    UpdateMemoryFieldsArgs,
    forget_exactly,
    restore_exactly,
    search,
    update_memory_fields,
)

PAGE_SIZE = 50
NEAR_SIZE = 5
log = structlog.get_logger()


def _ids(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip().isdigit() and 0 < int(part) < 2**63][:50]


async def memories_page(request: web.Request, *, error: str | None = None, status: int = 200) -> web.Response:
    query = request.query.get("q", "").strip()[:200]
    args: dict[str, Any] = {"order": "newest", "limit": PAGE_SIZE}
    if query:  # the words, the category or a tag shown on a card
        args["filter"] = {
            "any": [
                {"field": "content", "op": "contains", "value": query},
                {"field": "category", "op": "contains", "value": query},
                {"field": "tags", "op": "contains", "value": query},
            ]
        }
    async with member_tools(request) as ctx:
        found = await search(ctx, SearchArgs.model_validate(args))
        near = await _near(ctx, query, {m.memory_id for m in found.memories}) if query else []
        others = [m.name for m in ctx.members if m.id != ctx.user_id]
    return html(
        request,
        "memories.html",
        status=status,
        memories=found.memories,
        near=near,
        query=query,
        undo=",".join(str(i) for i in _ids(request.query.get("forgotten", ""))),
        restored=bool(request.query.get("restored")),
        others=others,
        error=error,
    )


async def _near(ctx: ToolContext, query: str, shown: set[int]) -> list[Memory]:
    """The memories nearest to the words by meaning (the embedder the chat's search uses) that the words did not
    find already: "dentist" finds "Mia's check-up at Dr. Berg". Shown under their own heading, as nearest, not as
    matches. Without the embedder the page still shows what the words found."""
    try:
        wanted = {"query": query, "order": "relevance", "limit": min(NEAR_SIZE + len(shown), 50)}
        meant = await search(ctx, SearchArgs.model_validate(wanted))
    except EmbeddingError as exc:
        log.warning("web.memories.near_unavailable", transient=exc.transient)
        return []
    return [memory for memory in meant.memories if memory.memory_id not in shown][:NEAR_SIZE]


async def _refused(request: web.Request, exc: ToolRetry) -> web.Response:
    status, text = refusal(request, exc)
    return await memories_page(request, error=text, status=status)


async def forget_memory(request: web.Request) -> web.Response:
    memory_id = row_id(request, "memory_id")
    try:
        async with member_tools(request) as ctx:
            await forget_exactly(ctx, MemoryIdsArgs(memory_ids=[memory_id]))
    except ToolRetry as exc:
        return await _refused(request, exc)
    return redirect(f"/memories?forgotten={memory_id}")


async def restore_memories(request: web.Request) -> web.Response:
    ids = _ids(str((await request.post()).get("ids", "")))
    if not ids:
        raise web.HTTPBadRequest(reason="Nothing to restore")
    try:
        async with member_tools(request) as ctx:
            await restore_exactly(ctx, MemoryIdsArgs(memory_ids=ids))
    except ToolRetry as exc:
        return await _refused(request, exc)
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
    memory_id = row_id(request, "memory_id")
    try:
        args = UpdateMemoryFieldsArgs(memory_id=memory_id, **_changes(await request.post()))
        async with member_tools(request) as ctx:
            await update_memory_fields(ctx, args)
    except ValidationError as exc:
        return await memories_page(request, error=invalid(exc), status=400)
    except ToolRetry as exc:
        return await _refused(request, exc)
    return redirect(_back(await request.post(), f"/memories#memory-{memory_id}"))


def _back(form: Any, default: str) -> str:
    """Where a form asks to go after it (the money page corrects expenses here): a path of the money or memories
    page only."""
    back = str(form.get("back", ""))
    return back if re.fullmatch(r"/(money|memories)(\?[A-Za-z0-9=&%_.:-]*)?(#[a-z0-9-]+)?", back) else default


# JSON ------------------------------------------------------------------------------------------------------------


async def edit_memory_json(request: web.Request) -> web.Response:
    """POST /app/memories/{memory_id} {"amount": "26.50", "currency": "EUR"}: the fields to change, as
    `update_memory_fields` takes them."""
    memory_id = row_id(request, "memory_id")
    return await json_tool(
        request, UpdateMemoryFieldsArgs, update_memory_fields, {**await json_body(request), "memory_id": memory_id}
    )


async def forget_memory_json(request: web.Request) -> web.Response:
    """POST /app/memories/{memory_id}/forget: 404 when there is no such memory, 403 when it is not the member's to
    forget."""
    memory_id = row_id(request, "memory_id")
    return await json_tool(request, MemoryIdsArgs, forget_exactly, {"memory_ids": [memory_id]})
