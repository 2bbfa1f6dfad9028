"""The `faa` console script: every command an operator runs (`faa --help` lists them)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from dataclasses import replace

import asyncpg
from aiogram.exceptions import TelegramAPIError
from arq import create_pool
from arq.connections import RedisSettings
from pydantic import ValidationError

from bot.channels.telegram import client as telegram_client
from bot.channels.terminal.chat import chat
from bot.ops import admin, export, lifecycle, reembedding
from bot.ops.local_servers import local_endpoints, with_running_servers
from bot.ops.runtime import Runtime, migrate_runtime, resolve
from bot.ops.setup_link import public_base, setup_link
from bot.ops.supervisor import serve_processes
from bot.web.server import serve
from engine.errors import FAAError
from engine.observability import configure_logging
from engine.settings import Settings
from migrations.runner import MigrationError
from tools.storage import households
from worker.main import background_worker, run_worker


async def cmd_migrate(runtime: Runtime, args: argparse.Namespace) -> int:
    applied = await migrate_runtime(runtime)
    print("applied: " + ", ".join(applied) if applied else "schema is up to date")
    return 0


async def cmd_serve(runtime: Runtime, args: argparse.Namespace) -> int:
    """The web API until SIGINT or SIGTERM: in this process, or in WEB_PROCESSES processes it supervises. It starts
    no local model server, but uses those that run already (LOCAL_LLM_BASE_URL, LOCAL_EMBEDDING_BASE_URL)."""
    runtime = replace(runtime, settings=with_running_servers(runtime.settings))
    await migrate_runtime(runtime)
    await _announce_setup(runtime)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if runtime.settings.web.processes > 1:
        await serve_processes(runtime.settings, stop=stop)
    else:
        await serve(runtime.settings, stop=stop, started=lifecycle.serving)
    return 0


async def _announce_setup(runtime: Runtime) -> None:
    link = await setup_link(runtime)
    if link is not None:
        print(f"No household yet. Open this link to set up your family (it works once):\n  {link}", file=sys.stderr)


async def cmd_worker(runtime: Runtime, args: argparse.Namespace) -> int:
    async with local_endpoints(runtime.settings) as settings:
        await migrate_runtime(replace(runtime, settings=settings))
        await run_worker(settings, serve_metrics=True, started=lifecycle.serving)
    return 0


async def cmd_up(runtime: Runtime, args: argparse.Namespace) -> int:
    """Web API and worker in one process, on the embedded database unless DATABASE_URL is set, and on local
    models (started here, stopped on exit) unless an LLM endpoint is configured."""
    async with local_endpoints(runtime.settings) as settings:
        runtime = replace(runtime, settings=settings)
        await migrate_runtime(runtime)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with background_worker(settings):
            print(f"FAA is up: {public_base(settings)} (Ctrl-C stops)", file=sys.stderr)
            await _announce_setup(runtime)
            await serve(settings, stop=stop, started=lifecycle.serving)
    return 0


async def cmd_chat(runtime: Runtime, args: argparse.Namespace) -> int:
    """Chat; when no worker is running (no fresh health check in Redis), run one in this process. Without a
    configured LLM endpoint the local models are used: those of a running `faa up`, or started here."""
    redis = await create_pool(RedisSettings.from_dsn(runtime.settings.redis.url))
    try:
        running = await redis.exists("arq:queue:health-check")
    finally:
        await redis.aclose()
    async with local_endpoints(runtime.settings) as settings:
        runtime = replace(runtime, settings=settings)
        if running or args.no_worker:
            await chat(runtime.settings, runtime.admin_dsn, args.member, args.household)
            return 0
        await migrate_runtime(runtime)
        async with background_worker(runtime.settings):
            await chat(runtime.settings, runtime.admin_dsn, args.member, args.household)
    return 0


async def cmd_telegram_set_webhook(runtime: Runtime, args: argparse.Namespace) -> int:
    url = await telegram_client.set_webhook(runtime.settings.telegram, args.url, drop_pending=args.drop_pending)
    print(f"Telegram webhook set: {url} (updates: {', '.join(telegram_client.ALLOWED_UPDATES)})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Every `faa` command."""
    parser = argparse.ArgumentParser(prog="faa", description="FAA — the family AI assistant")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("migrate", help="apply database migrations").set_defaults(run=cmd_migrate)
    commands.add_parser("serve", help="run the web API").set_defaults(run=cmd_serve)
    commands.add_parser("worker", help="run a queue worker").set_defaults(run=cmd_worker)
    commands.add_parser(
        "up", help="run web API and worker together (embedded database and local models by default)"
    ).set_defaults(run=cmd_up)

    chat_parser = commands.add_parser("chat", help="chat with FAA from the terminal as a member")
    chat_parser.add_argument("--member", required=True, help="the member's name")
    chat_parser.add_argument("--household", help="household name or id (needed when there are several)")
    chat_parser.add_argument("--no-worker", action="store_true", help="never start an in-process worker")
    chat_parser.set_defaults(run=cmd_chat)

    reembed = commands.add_parser(
        "reembed", help="embed every memory again with EMBEDDING_MODEL at EMBEDDING_DIM (after changing either)"
    )
    reembed.add_argument(
        "--batch-size", type=int, default=reembedding.DEFAULT_BATCH, choices=range(1, 2049), metavar="1-2048"
    )
    reembed.set_defaults(run=reembedding.reembed)

    household = commands.add_parser("household", help="manage households").add_subparsers(dest="action", required=True)
    create = household.add_parser("create", help="create a household")
    create.add_argument("name")
    create.add_argument("--timezone", default="UTC", help="IANA timezone, e.g. Europe/Berlin")
    create.set_defaults(run=admin.household_create)
    digest = household.add_parser(
        "digests", help="show or choose the household's digests (times in the household's timezone)"
    )
    digest.add_argument("household", help="household name or id")
    digest.add_argument("--monthly", choices=("on", "off"), help="the previous month's expenses, with a chart")
    digest.add_argument("--day", type=int, choices=range(1, 29), metavar="1-28", help="day of the monthly digest")
    digest.add_argument("--time", type=admin.clock, help="time of the monthly digest, e.g. 08:00")
    digest.add_argument("--weekly", choices=("on", "off"), help="a summary of the last seven days")
    digest.add_argument("--weekday", choices=admin.WEEKDAYS, help="day of the weekly summary")
    digest.add_argument("--weekly-time", type=admin.clock, help="time of the weekly summary")
    digest.add_argument(
        "--morning-agenda",
        type=admin.clock_or_off,
        metavar="HH:MM|off",
        help="today's reminders and plans at this time",
    )
    digest.set_defaults(run=admin.household_digests)

    member = commands.add_parser("member", help="manage members").add_subparsers(dest="action", required=True)
    add = member.add_parser("add", help="add a member and print their API token")
    add.add_argument("name")
    add.add_argument("--household", required=True, help="household name or id")
    add.add_argument("--timezone", required=True, help="IANA timezone, e.g. Europe/Berlin")
    add.add_argument("--locale", default="en")
    add.add_argument("--role", default="adult", choices=households.ROLES)
    add.set_defaults(run=admin.member_add)
    rename = member.add_parser("rename", help="give a member another name")
    rename.add_argument("name", help="the member's name now")
    rename.add_argument("new_name")
    rename.add_argument("--household", required=True, help="household name or id")
    rename.set_defaults(run=admin.member_rename)
    role = member.add_parser("role", help="make a member an adult or a child (the owner stays the owner)")
    role.add_argument("name")
    role.add_argument("role", choices=("adult", "child"))
    role.add_argument("--household", required=True, help="household name or id")
    role.set_defaults(run=admin.member_role)
    remove = member.add_parser(
        "remove", help="remove a member: their private entries go, their household entries stay as a former member's"
    )
    remove.add_argument("name")
    remove.add_argument("--household", required=True, help="household name or id")
    remove.add_argument("--yes", action="store_true", help="confirm: this cannot be undone")
    remove.set_defaults(run=admin.member_remove)

    exporting = commands.add_parser(
        "export", help="write a household's (or a member's) data: expenses CSV, memories JSON, reminders/events ICS"
    )
    exporting.add_argument("--household", required=True, help="household name or id")
    exporting.add_argument("--member", help="only this member's data (their private memories included)")
    exporting.add_argument("--out", required=True, help="directory to write the files into")
    exporting.set_defaults(run=export.export)

    invite = commands.add_parser("invite", help="make a one-time code that links a chat channel to a member")
    invite.add_argument("--member", required=True, help="the member's name")
    invite.add_argument("--household", help="household name or id (needed when there are several)")
    invite.add_argument("--days", type=int, default=7, choices=range(1, 31), metavar="DAYS", help="valid for (1-30)")
    invite.set_defaults(run=admin.invite)

    telegram = commands.add_parser("telegram", help="the Telegram channel").add_subparsers(dest="action", required=True)
    webhook = telegram.add_parser("set-webhook", help="register the webhook (URL, secret, update types) with Telegram")
    webhook.add_argument("--url", help="public HTTPS URL of the webhook (default: TELEGRAM_WEBHOOK_URL)")
    webhook.add_argument("--drop-pending", action="store_true", help="discard updates Telegram still holds")
    webhook.set_defaults(run=cmd_telegram_set_webhook, database=False)
    return parser


def console() -> int:
    """The `faa` console script: a process of FAA's own."""
    return main(own_process=True)


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Run one `faa` command; `own_process` when this process runs nothing else (see `lifecycle.run`)."""
    args = build_parser().parse_args(argv)
    try:
        settings = Settings.load()
    except ValidationError as exc:
        print(f"faa: invalid settings (environment or .env):\n{exc}", file=sys.stderr)
        return 2
    configure_logging(settings.log)
    try:
        runtime = resolve(settings) if getattr(args, "database", True) else Runtime(settings)
        return lifecycle.run(args.run(runtime, args), own_process=own_process)
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


if __name__ == "__main__":
    sys.exit(console())
