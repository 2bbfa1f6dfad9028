"""`faa export`: a household's or one member's data as files in a directory — expenses.csv, memories.json,
reminders.ics and events.ics (see `tools.exports`). Private memories are in a member's own export only."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

import asyncpg

from bot.ops.runtime import Runtime, migrate_runtime
from tools.exports import export_files
from tools.storage import database, households


async def export(runtime: Runtime, args: argparse.Namespace) -> int:
    await migrate_runtime(runtime)
    out = Path(args.out)
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        async with conn.transaction():
            household_id = await households.find_household(conn, args.household)
            await database.scope(conn, household_id)
            member = await households.find_member(conn, household_id, args.member) if args.member else None
            if member is not None:
                await conn.execute("SELECT set_config('app.user_id', $1, true)", str(member.id))
            name = await conn.fetchval("SELECT name FROM households WHERE id = $1", household_id)
            timezone = member.timezone if member else await households.household_timezone(conn, household_id)
            files = await export_files(
                conn,
                household_id,
                None if member is None else member.id,
                viewer_id=None if member is None else member.id,
                timezone=timezone,
                now=datetime.now(UTC),
                name=str(name) if member is None else f"{name}: {member.name}",
            )
    finally:
        await conn.close()
    out.mkdir(parents=True, exist_ok=True)
    for file_name, data in files.items():
        (out / file_name).write_bytes(data)
        print(f"{out / file_name}: {len(data)} bytes")
    return 0
