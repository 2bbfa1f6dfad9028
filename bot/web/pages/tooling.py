"""Pages act through the same tools the model calls (validation, timezones, undo), in the member's household
transaction: a `ToolContext` for the signed-in member."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from bot.web.pages.render import VIEWER
from bot.web.pages.security import DEPS
from tools.context import ToolContext
from tools.storage.web_sessions import SessionMember


@asynccontextmanager
async def member_tools(request: web.Request) -> AsyncIterator[ToolContext]:
    """A tool context of the signed-in member, in one transaction that sees what the member may see (RLS)."""
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
        )
