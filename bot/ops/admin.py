"""`faa` commands that administer households: create one, choose its digests, add, rename, re-role and remove
members, invite to channels.

They run on the owner's connection (`Runtime.admin_dsn`), as an operator's tools; managing members goes through
`tools.members`, whose rules the household page follows too, with the household owner's rights.
"""

from __future__ import annotations

import argparse
from datetime import time, timedelta
from typing import TypedDict

import asyncpg

from bot.channels.terminal.chat import find_principal
from bot.ops.runtime import Runtime, migrate_runtime
from bot.ops.setup_link import public_base
from tools.members import Manager, remove_member, rename_member, set_role
from tools.permissions import OPERATOR
from tools.storage import database, digests, households, identities

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


async def household_create(runtime: Runtime, args: argparse.Namespace) -> int:
    await migrate_runtime(runtime)
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        household_id = await households.create_household(conn, args.name, args.timezone)
    finally:
        await conn.close()
    print(f"household {household_id} created: {args.name}")
    return 0


WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def clock(text: str) -> time:
    try:
        value = time.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time like 08:00") from None
    return value.replace(second=0, microsecond=0)


def clock_or_off(text: str) -> time | str:
    return "off" if text.lower() == "off" else clock(text)


class _DigestChange(TypedDict, total=False):
    """The options of `digests.configure` that the command line gave."""

    enabled: bool
    day_of_month: int
    weekday: int
    at_time: time


def _digest_changes(args: argparse.Namespace) -> dict[str, _DigestChange]:
    monthly, weekly, morning = _DigestChange(), _DigestChange(), _DigestChange()
    if args.monthly is not None:
        monthly["enabled"] = args.monthly == "on"
    if args.day is not None:
        monthly["day_of_month"] = args.day
    if args.time is not None:
        monthly["at_time"] = args.time
    if args.weekly is not None:
        weekly["enabled"] = args.weekly == "on"
    if args.weekday is not None:
        weekly["weekday"] = WEEKDAYS.index(args.weekday) + 1
    if args.weekly_time is not None:
        weekly["at_time"] = args.weekly_time
    if args.morning_agenda == "off":
        morning["enabled"] = False
    elif args.morning_agenda is not None:
        morning["enabled"], morning["at_time"] = True, args.morning_agenda
    return {kind: change for kind, change in (("monthly", monthly), ("weekly", weekly), ("morning", morning)) if change}


async def household_digests(runtime: Runtime, args: argparse.Namespace) -> int:
    """Show or change which digests a household gets and when (local time in the household's timezone)."""
    await migrate_runtime(runtime)
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        async with conn.transaction():
            household_id = await households.find_household(conn, args.household)
            await database.scope(conn, household_id)
            for kind, fields in _digest_changes(args).items():
                await digests.configure(conn, household_id, kind, **fields)
            current = await digests.schedules(conn, household_id)
    finally:
        await conn.close()
    print(f"household {household_id} digests ({current[0].timezone if current else 'UTC'}):")
    for item in current:
        when = {
            "monthly": f"on day {item.day_of_month} at {item.at_time:%H:%M}",
            "weekly": f"on {WEEKDAYS[item.weekday - 1]} at {item.at_time:%H:%M}",
            "morning": f"at {item.at_time:%H:%M}",
        }[item.kind]
        print(f"  {item.kind:<8} {'on ' if item.enabled else 'off'} {when}")
    return 0


async def member_add(runtime: Runtime, args: argparse.Namespace) -> int:
    await migrate_runtime(runtime)
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        async with conn.transaction():
            household_id = await households.find_household(conn, args.household)
            user_id, token = await households.add_member(
                conn, household_id, args.name, timezone=args.timezone, locale=args.locale, role=args.role
            )
    finally:
        await conn.close()
    print(f"member {user_id} added: {args.name} ({args.role}, {args.timezone})")
    print(f"API token (shown once): {token}")
    return 0


async def invite(runtime: Runtime, args: argparse.Namespace) -> int:
    await migrate_runtime(runtime)
    principal, name = await find_principal(runtime.admin_dsn, args.member, args.household)
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        ttl = timedelta(days=args.days)
        code = await identities.create_invite(conn, principal.household_id, principal.user_id, ttl)
        web_code = await identities.create_invite(conn, principal.household_id, principal.user_id, ttl)
    finally:
        await conn.close()
    print(f"one-time invite code for {name} (valid {args.days} days): {code}")
    print(f"  Telegram: send /start {code} to the bot")
    print(f"  Threema or email: send JOIN {code}")
    print(f"  Web app: open {public_base(runtime.settings)}/join/{web_code} (a sign-in link of its own)")
    return 0


async def _managed(runtime: Runtime, args: argparse.Namespace) -> tuple[asyncpg.Connection, int, households.Member]:
    """The owner's connection, in a transaction scoped to the household, and the member named."""
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        await conn.execute("BEGIN")
        household_id = await households.find_household(conn, args.household)
        await database.scope(conn, household_id)
        return conn, household_id, await households.find_member(conn, household_id, args.name)
    except BaseException:
        await conn.close()
        raise


async def _finish(conn: asyncpg.Connection, done: bool) -> None:
    try:
        await conn.execute("COMMIT" if done else "ROLLBACK")
    finally:
        await conn.close()


async def member_rename(runtime: Runtime, args: argparse.Namespace) -> int:
    await migrate_runtime(runtime)
    conn, household_id, member = await _managed(runtime, args)
    done = False
    try:
        renamed = await rename_member(conn, household_id, Manager(OPERATOR), member.id, args.new_name)
        done = True
    finally:
        await _finish(conn, done)
    print(f"member {member.id} renamed: {member.name} -> {renamed.name}")
    return 0


async def member_role(runtime: Runtime, args: argparse.Namespace) -> int:
    await migrate_runtime(runtime)
    conn, household_id, member = await _managed(runtime, args)
    done = False
    try:
        await set_role(conn, household_id, Manager(OPERATOR), member.id, args.role)
        done = True
    finally:
        await _finish(conn, done)
    print(f"member {member.id} ({member.name}) is now: {args.role}")
    return 0


async def member_remove(runtime: Runtime, args: argparse.Namespace) -> int:
    if not args.yes:
        print(
            f"faa: removing {args.name} deletes their private entries and sign-ins for good; "
            "their household entries stay as a former member's. Repeat with --yes to do it."
        )
        return 2
    await migrate_runtime(runtime)
    conn, household_id, member = await _managed(runtime, args)
    done = False
    try:
        removed = await remove_member(conn, household_id, Manager(OPERATOR), member.id)
        done = True
    finally:
        await _finish(conn, done)
    print(
        f"member {member.id} ({member.name}) removed: {removed.private_memories} private memories, "
        f"{removed.reminders} reminders, {removed.events} events, {removed.lists} lists and {removed.list_items} "
        f"list items deleted; {removed.anonymised_memories} household memories kept as a former member's"
    )
    return 0
