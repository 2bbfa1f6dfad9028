"""`faa` commands that live in the web side: migrate, household, member, serve, chat (the parser's base)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Callable, Coroutine
from datetime import time, timedelta
from typing import Any

import asyncpg
from aiogram.exceptions import TelegramAPIError
from pydantic import ValidationError

from bot import lifecycle
from bot.chat import chat, find_principal
from bot.runtime import Runtime, migrate_runtime, resolve
from bot.telegram import client as telegram_client
from bot.web import serve, serve_processes
from engine.errors import FAAError
from engine.observability import configure_logging
from engine.settings import Settings
from migrations.runner import MigrationError
from tools.storage import digests, households, identities

Command = Callable[[Runtime, argparse.Namespace], Coroutine[Any, Any, int]]


async def cmd_migrate(runtime: Runtime, args: argparse.Namespace) -> int:
    applied = await migrate_runtime(runtime)
    print("applied: " + ", ".join(applied) if applied else "schema is up to date")
    return 0


async def cmd_household_create(runtime: Runtime, args: argparse.Namespace) -> int:
    await migrate_runtime(runtime)
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        household_id = await households.create_household(conn, args.name, args.timezone)
    finally:
        await conn.close()
    print(f"household {household_id} created: {args.name}")
    return 0


_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _clock(text: str) -> time:
    try:
        value = time.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time like 08:00") from None
    return value.replace(second=0, microsecond=0)


def _clock_or_off(text: str) -> time | str:
    return "off" if text.lower() == "off" else _clock(text)


def _digest_changes(args: argparse.Namespace) -> dict[str, dict[str, object]]:
    changes: dict[str, dict[str, object]] = {}
    monthly = {"enabled": args.monthly, "day_of_month": args.day, "at_time": args.time}
    weekday = None if args.weekday is None else _WEEKDAYS.index(args.weekday) + 1
    weekly = {"enabled": args.weekly, "weekday": weekday, "at_time": args.weekly_time}
    morning: dict[str, object] = {}
    if args.morning_agenda is not None:
        at = args.morning_agenda
        morning = {"enabled": False} if at == "off" else {"enabled": True, "at_time": at}
    for kind, fields in (("monthly", monthly), ("weekly", weekly), ("morning", morning)):
        given = {
            k: (v == "on" if k == "enabled" and isinstance(v, str) else v) for k, v in fields.items() if v is not None
        }
        if given:
            changes[kind] = given
    return changes


async def cmd_household_digests(runtime: Runtime, args: argparse.Namespace) -> int:
    """Show or change which digests a household gets and when (local time in the household's timezone)."""
    await migrate_runtime(runtime)
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        async with conn.transaction():
            household_id = await households.find_household(conn, args.household)
            await conn.execute("SELECT set_config('app.household_id', $1, true)", str(household_id))
            for kind, fields in _digest_changes(args).items():
                await digests.configure(conn, household_id, kind, **fields)  # type: ignore[arg-type]
            current = await digests.schedules(conn, household_id)
    finally:
        await conn.close()
    print(f"household {household_id} digests ({current[0].timezone if current else 'UTC'}):")
    for item in current:
        when = {
            "monthly": f"on day {item.day_of_month} at {item.at_time:%H:%M}",
            "weekly": f"on {_WEEKDAYS[item.weekday - 1]} at {item.at_time:%H:%M}",
            "morning": f"at {item.at_time:%H:%M}",
        }[item.kind]
        print(f"  {item.kind:<8} {'on ' if item.enabled else 'off'} {when}")
    return 0


async def cmd_member_add(runtime: Runtime, args: argparse.Namespace) -> int:
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


async def cmd_invite(runtime: Runtime, args: argparse.Namespace) -> int:
    await migrate_runtime(runtime)
    principal, name = await find_principal(runtime, args.member, args.household)
    conn = await asyncpg.connect(runtime.admin_dsn)
    try:
        code = await identities.create_invite(
            conn, principal.household_id, principal.user_id, timedelta(days=args.days)
        )
    finally:
        await conn.close()
    print(f"one-time invite code for {name} (valid {args.days} days): {code}")
    print(f"  Telegram: send /start {code} to the bot")
    print(f"  Threema or email: send JOIN {code}")
    return 0


async def cmd_serve(runtime: Runtime, args: argparse.Namespace) -> int:
    """The web API until SIGINT or SIGTERM: in this process, or in WEB_PROCESSES processes it supervises."""
    await migrate_runtime(runtime)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if runtime.settings.web.processes > 1:
        await serve_processes(runtime.settings, stop=stop)
    else:
        await serve(runtime.settings, stop=stop)
    return 0


async def cmd_chat(runtime: Runtime, args: argparse.Namespace) -> int:
    await chat(runtime, args.member, args.household)
    return 0


async def cmd_telegram_set_webhook(runtime: Runtime, args: argparse.Namespace) -> int:
    url = await telegram_client.set_webhook(runtime.settings.telegram, args.url, drop_pending=args.drop_pending)
    print(f"Telegram webhook set: {url} (updates: {', '.join(telegram_client.ALLOWED_UPDATES)})")
    return 0


def build_parser() -> tuple[argparse.ArgumentParser, Any]:
    """The parser and its sub-command group, which the worker's entrypoint extends."""
    parser = argparse.ArgumentParser(prog="faa", description="FAA — the family AI assistant")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("migrate", help="apply database migrations").set_defaults(run=cmd_migrate)
    commands.add_parser("serve", help="run the web API").set_defaults(run=cmd_serve)

    chat_parser = commands.add_parser("chat", help="chat with FAA from the terminal as a member")
    chat_parser.add_argument("--member", required=True, help="the member's name")
    chat_parser.add_argument("--household", help="household name or id (needed when there are several)")
    chat_parser.set_defaults(run=cmd_chat)

    household = commands.add_parser("household", help="manage households").add_subparsers(dest="action", required=True)
    create = household.add_parser("create", help="create a household")
    create.add_argument("name")
    create.add_argument("--timezone", default="UTC", help="IANA timezone, e.g. Europe/Berlin")
    create.set_defaults(run=cmd_household_create)
    digest = household.add_parser(
        "digests", help="show or choose the household's digests (times in the household's timezone)"
    )
    digest.add_argument("household", help="household name or id")
    digest.add_argument("--monthly", choices=("on", "off"), help="the previous month's expenses, with a chart")
    digest.add_argument("--day", type=int, choices=range(1, 29), metavar="1-28", help="day of the monthly digest")
    digest.add_argument("--time", type=_clock, help="time of the monthly digest, e.g. 08:00")
    digest.add_argument("--weekly", choices=("on", "off"), help="a summary of the last seven days")
    digest.add_argument("--weekday", choices=_WEEKDAYS, help="day of the weekly summary")
    digest.add_argument("--weekly-time", type=_clock, help="time of the weekly summary")
    digest.add_argument(
        "--morning-agenda", type=_clock_or_off, metavar="HH:MM|off", help="today's reminders and plans at this time"
    )
    digest.set_defaults(run=cmd_household_digests)

    member = commands.add_parser("member", help="manage members").add_subparsers(dest="action", required=True)
    add = member.add_parser("add", help="add a member and print their API token")
    add.add_argument("name")
    add.add_argument("--household", required=True, help="household name or id")
    add.add_argument("--timezone", required=True, help="IANA timezone, e.g. Europe/Berlin")
    add.add_argument("--locale", default="en")
    add.add_argument("--role", default="adult", choices=households.ROLES)
    add.set_defaults(run=cmd_member_add)

    invite = commands.add_parser("invite", help="make a one-time code that links a chat channel to a member")
    invite.add_argument("--member", required=True, help="the member's name")
    invite.add_argument("--household", help="household name or id (needed when there are several)")
    invite.add_argument("--days", type=int, default=7, choices=range(1, 31), metavar="DAYS", help="valid for (1-30)")
    invite.set_defaults(run=cmd_invite)

    telegram = commands.add_parser("telegram", help="the Telegram channel").add_subparsers(dest="action", required=True)
    webhook = telegram.add_parser("set-webhook", help="register the webhook (URL, secret, update types) with Telegram")
    webhook.add_argument("--url", help="public HTTPS URL of the webhook (default: TELEGRAM_WEBHOOK_URL)")
    webhook.add_argument("--drop-pending", action="store_true", help="discard updates Telegram still holds")
    webhook.set_defaults(run=cmd_telegram_set_webhook, database=False)
    return parser, commands


def run(parser: argparse.ArgumentParser, argv: list[str] | None = None) -> int:
    args = parser.parse_args(argv)
    try:
        settings = Settings.load()
    except ValidationError as exc:
        print(f"faa: invalid settings (environment or .env):\n{exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log)
    try:
        runtime = resolve(settings) if getattr(args, "database", True) else Runtime(settings)
        return lifecycle.run(args.run(runtime, args))
    except (FAAError, MigrationError) as exc:
        print(f"faa: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except TelegramAPIError as exc:
        print(f"faa: Telegram: {exc.message}", file=sys.stderr)
        return 2
    except (OSError, asyncpg.InterfaceError, asyncpg.InvalidAuthorizationSpecificationError) as exc:
        print(f"faa: cannot reach a service: {exc}", file=sys.stderr)
        return 1
    except asyncpg.PostgresError as exc:
        print(f"faa: the database refused: {exc}", file=sys.stderr)
        return 2
