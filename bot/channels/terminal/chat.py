"""The terminal chat: a member types, FAA answers — through the same inbox → queue → engine → outbox path."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from arq import create_pool
from arq.connections import RedisSettings

from bot.channels import intake
from bot.channels.live import ReplyWaiter, follow_notifications
from bot.channels.terminal import CHANNEL
from engine.composition import close_deps, open_deps
from engine.settings import Settings
from tools.storage import households
from tools.storage.households import Principal

ReadLine = Callable[[str], Awaitable[str | None]]


async def _stdin_line(prompt: str) -> str | None:
    def read() -> str | None:
        try:
            return input(prompt)
        except EOFError:
            return None

    return await asyncio.to_thread(read)


async def find_principal(admin_dsn: str, member: str, household: str | None) -> tuple[Principal, str]:
    """Look the member up with the owner's connection (`admin_dsn`): the terminal is an operator's tool."""
    conn = await asyncpg.connect(admin_dsn)
    try:
        if household is None:
            household_id = await households.the_only_household(conn)
        else:
            household_id = await households.find_household(conn, household)
        found = await households.find_member(conn, household_id, member)
    finally:
        await conn.close()
    return Principal(found.id, household_id), found.name


async def _print_notifications(redis: Any, user_id: int) -> None:
    """Reminders that arrive while the member chats are printed as they come (all stay in the feed)."""
    async with follow_notifications(redis, user_id) as notes:
        async for note in notes:
            options = "".join(f"\n  [{n}] {option}" for n, option in enumerate(note.get("options") or [], 1))
            print(f"\nFAA: {note['text']}{options}", flush=True)


async def chat(
    settings: Settings, admin_dsn: str, member: str, household: str | None, *, read_line: ReadLine = _stdin_line
) -> None:
    """Chat as `member` until Ctrl-D or /quit; `admin_dsn` is the owner's connection the member is looked up with."""
    principal, name = await find_principal(admin_dsn, member, household)
    redis = await create_pool(RedisSettings.from_dsn(settings.redis.url))
    deps = await open_deps(settings, redis=redis)
    waiter = ReplyWaiter(redis)
    await waiter.start()
    notes = asyncio.create_task(_print_notifications(redis, principal.user_id))
    print(f"Chatting as {name}. Ctrl-D or /quit ends.", file=sys.stderr)
    try:
        while (line := await read_line(f"{name}> ")) is not None:
            text = line.strip()
            if text in ("/quit", "/exit"):
                break
            if not text:
                continue
            row, _ = await intake.accept(
                deps,
                principal,
                channel=CHANNEL,
                external_id=f"{principal.user_id}:{uuid.uuid4().hex}",
                text=text,
                trace_id=uuid.uuid4().hex,
                enqueue=False,
            )
            future = waiter.expect(row.id)  # before the job exists, so the reply cannot slip past
            await intake.enqueue_inbound(deps, row)
            try:
                reply = await asyncio.wait_for(future, settings.engine.max_seconds + 30)
            except TimeoutError:
                print(f"FAA: (still working on message {row.id}; the answer will be kept)")
                continue
            print(f"FAA: {reply['reply']}")
            for number, option in enumerate(reply.get("options") or [], 1):
                print(f"  [{number}] {option}")
    finally:
        notes.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await notes
        await waiter.stop()
        await close_deps(deps)
        await redis.aclose()
