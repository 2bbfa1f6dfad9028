"""The data page: downloads of the member's own data and (adults) the household's, as a zip of expenses.csv,
memories.json, reminders.ics and events.ics; and "forget everything about me", which asks for a typed confirmation
and then runs the same `forget_me` tool the chat runs after its yes/no question."""

from __future__ import annotations

import asyncio

import structlog
from aiohttp import web

from bot.web.pages.render import VIEWER, html
from bot.web.pages.security import clear_session
from bot.web.pages.tooling import member_tools
from tools.exports import export_files, zipped
from tools.forgetting import ForgetMeArgs, forget_me

log = structlog.get_logger()

CONFIRMATION = "FORGET"


async def data_page(request: web.Request, *, error: str | None = None) -> web.Response:
    return html(request, "data.html", status=400 if error else 200, error=error, confirmation=CONFIRMATION)


async def _download(request: web.Request, *, household: bool) -> web.Response:
    viewer = request[VIEWER]
    async with member_tools(request) as ctx:
        name = await ctx.conn.fetchval("SELECT name FROM households WHERE id = $1", viewer.household_id)
        files = await export_files(
            ctx.conn,
            viewer.household_id,
            None if household else viewer.user_id,
            viewer_id=viewer.user_id,
            timezone=viewer.timezone,
            now=ctx.now,
            name=str(name) if household else f"{name}: {viewer.name}",
        )
    log.info("data.exported", household=household)
    stamp = ctx.now.strftime("%Y-%m-%d")
    filename = f"faa-{'household' if household else 'my-data'}-{stamp}.zip"
    return web.Response(
        body=await asyncio.to_thread(zipped, files),
        content_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"},
    )


async def export_mine(request: web.Request) -> web.Response:
    return await _download(request, household=False)


async def export_household(request: web.Request) -> web.Response:
    return await _download(request, household=True)


async def forget(request: web.Request) -> web.Response:
    form = await request.post()
    if str(form.get("confirm", "")).strip().upper() != CONFIRMATION:  # "forget" means it as well
        texts = {"en": f"Type {CONFIRMATION} to confirm.", "zh": f"请输入 {CONFIRMATION} 以确认。"}
        return await data_page(request, error=texts["zh" if request[VIEWER].locale.startswith("zh") else "en"])
    async with member_tools(request) as ctx:
        await forget_me(ctx, ForgetMeArgs())
    log.info("member.forgotten", channel="web")
    del request[VIEWER]  # signed out: the goodbye page shows no member's navigation
    response = html(request, "forgotten.html")
    clear_session(response)
    return response
