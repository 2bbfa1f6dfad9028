"""The `faa` console script: the web side's commands plus `worker` and `up` (web and worker together)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from dataclasses import replace

import structlog
from arq import create_pool
from arq.connections import RedisSettings

from bot.chat import chat
from bot.cli import build_parser, run
from bot.local_servers import local_endpoints
from bot.runtime import Runtime, migrate_runtime
from bot.web import serve
from worker.main import background_worker, create_worker

log = structlog.get_logger()


async def cmd_worker(runtime: Runtime, args: argparse.Namespace) -> int:
    async with local_endpoints(runtime.settings) as settings:
        await migrate_runtime(replace(runtime, settings=settings))
        worker = create_worker(settings, serve_metrics=True)
        try:
            await worker.async_run()
        except asyncio.CancelledError:
            pass  # SIGTERM or SIGINT: arq cancelled its main task and re-queued the running jobs
        finally:
            await worker.close()  # closes the dependencies (on_shutdown) and the Redis pool
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
            print(f"FAA is up: http://{settings.web.host}:{settings.web.port} (Ctrl-C stops)", file=sys.stderr)
            await serve(settings, stop=stop)
    return 0


async def cmd_chat_with_worker(runtime: Runtime, args: argparse.Namespace) -> int:
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
            await chat(runtime, args.member, args.household)
            return 0
        await migrate_runtime(runtime)
        async with background_worker(runtime.settings):
            await chat(runtime, args.member, args.household)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser, commands = build_parser()
    commands.add_parser("worker", help="run a queue worker").set_defaults(run=cmd_worker)
    commands.add_parser(
        "up", help="run web API and worker together (embedded database and local models by default)"
    ).set_defaults(run=cmd_up)
    chat_parser = commands.choices["chat"]
    chat_parser.add_argument("--no-worker", action="store_true", help="never start an in-process worker")
    chat_parser.set_defaults(run=cmd_chat_with_worker)
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
