"""Reminder lateness: 1,000 reminders due within 60 s, fired by 2 worker processes, each delivered exactly once.

    .venv/bin/python bench/reminder_lateness.py [--reminders 1000] [--window 60] [--workers 2]

Starts everything it needs: embedded PostgreSQL (throwaway), the local Redis on database 15 (flushed), and
`faa worker` twice as separate processes (the production command, with settings from the environment). This
process schedules the reminders with the `schedule_reminder` tool, each for one member of 20 households, due
at random seconds over the window starting 20 s later, and enqueues their deferred jobs exactly as the worker
does after a message commits. Recipients are web members: a fired reminder is published on the member's Redis
notification channel, where this process timestamps its arrival.

Lateness = arrival of the notification − the reminder's due time. Missed = no notification and no sent outbox
row 15 s after the window; duplicated = a reminder with more than one notification or outbox row. The last
stdout line is the JSON of the figures; targets (reported, never asserted): p99 <= 2 s, 0 missed, 0 duplicated.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import asyncpg  # noqa: E402
from arq import create_pool  # noqa: E402
from arq.connections import RedisSettings as ArqRedisSettings  # noqa: E402

from engine.composition import close_deps, open_deps  # noqa: E402
from engine.deps import Deps  # noqa: E402
from engine.settings import Settings  # noqa: E402
from tools.context import ToolContext  # noqa: E402
from tools.registry import default_registry  # noqa: E402
from tools.storage.firings import Due  # noqa: E402
from worker.reminders import enqueue_fire  # noqa: E402

REDIS_DB = 15
HOUSEHOLDS = 20
MEMBERS = ("Anna", "Ben")
LEAD_S = 30.0  # from the start of scheduling to the first due time: scheduling must be done by then
SCHEDULERS = 8  # reminders scheduled concurrently, as messages of several members would be
AFTER_S = 15.0  # how long after the window a reminder may still arrive before it counts as missed


_SETTING_PREFIXES = tuple(f"{name}_" for name in "DATABASE REDIS LLM EMBEDDING ENGINE WORKER REMINDER WEB LOG".split())


def worker_environment(settings: Settings) -> dict[str, str]:
    """What an operator exports for `faa worker`; nothing of this shell's FAA settings leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_SETTING_PREFIXES)}
    db = settings.database
    env.update(
        DATABASE_URL=db.url or "",
        DATABASE_ADMIN_URL=db.admin_url or "",
        REDIS_URL=settings.redis.url,
        LLM_BASE_URL=settings.llm.base_url or "",
        LLM_API_KEY="bench-key",
        EMBEDDING_DIM=str(settings.embedding.dim),
        PYTHONPATH=str(h.REPO),
    )
    return env


@contextlib.asynccontextmanager
async def worker_processes(settings: Settings, count: int) -> AsyncIterator[list[subprocess.Popen[bytes]]]:
    """`faa worker` × count, stopped with SIGTERM (arq finishes or re-queues running jobs)."""
    workdir = Path(tempfile.mkdtemp(prefix="faa-bench-worker-"))  # no .env file there
    env = worker_environment(settings)
    # Logs go to files: a pipe nobody reads fills up after ~64 KB of log lines and blocks the worker mid-run.
    logs = [(workdir / f"worker-{n}.log").open("wb") for n in range(count)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bot.ops.cli", "worker"], cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=log
        )
        for log in logs
    ]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for proc, log in zip(procs, logs, strict=True):
            log.close()
            if proc.returncode != 0:
                tail = Path(log.name).read_bytes().decode(errors="replace")[-2000:]
                h.progress(f"worker {proc.pid} exited {proc.returncode}: {tail}")
        shutil.rmtree(workdir, ignore_errors=True)
        h.progress(f"{count} worker processes stopped")


async def wait_for_workers(redis: Any, procs: list[subprocess.Popen[bytes]]) -> None:
    """Until arq's health key shows a worker polling, and a moment more for the other ones to start."""
    deadline = time.monotonic() + 60
    while not await redis.exists("arq:queue:health-check"):
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            raise RuntimeError("a worker process did not start; run `faa worker` by hand to see why")
        await asyncio.sleep(0.1)
    await asyncio.sleep(2.0)


async def households(admin: asyncpg.Connection) -> list[h.Family]:
    zones = ("Europe/Berlin", "America/New_York", "Asia/Shanghai", "UTC")
    return [await h.make_family(admin, f"Bench {n}", MEMBERS, zones[n % len(zones)]) for n in range(HOUSEHOLDS)]


async def schedule_all(deps: Deps, families: list[h.Family], count: int, window_s: float) -> dict[int, datetime]:
    """Reminders due over the window; each one's deferred job enqueued once its row committed."""
    registry = default_registry()
    start = deps.clock.now().replace(microsecond=0) + timedelta(seconds=LEAD_S)
    rng = random.Random(7)
    offsets = [rng.randrange(int(window_s)) for _ in range(count)]
    due_at: dict[int, datetime] = {}
    gate = asyncio.Semaphore(SCHEDULERS)

    async def one(n: int) -> None:
        family = families[n % len(families)]
        member = MEMBERS[(n // len(families)) % len(MEMBERS)]
        when = start + timedelta(seconds=offsets[n])
        household_id, user_id = family.household_id, family.user_ids[member]
        async with gate:
            async with deps.db.household(household_id, user_id) as conn:
                ctx = ToolContext(conn, household_id, user_id, "UTC", deps.clock.now(), deps.embedder)
                args = registry.validate("schedule_reminder", {"text": f"Reminder {n}", "when": when.isoformat()})
                result = await registry.run(ctx, "schedule_reminder", args)
            due_at[result["reminder_id"]] = when
            await enqueue_fire(deps, Due(result["reminder_id"], household_id, when))

    await asyncio.gather(*(one(n) for n in range(count)))
    late = deps.clock.now() - start
    if late > timedelta(0):
        raise RuntimeError(f"scheduling ran {late.total_seconds():.1f}s into the window; raise LEAD_S")
    return due_at


async def listen(redis: Any, arrivals: list[tuple[int, float]], ready: asyncio.Event) -> None:
    """Timestamp every reminder notification published to any member."""
    pubsub = redis.pubsub()
    await pubsub.psubscribe(f"faa:{REDIS_DB}:notify:*")
    ready.set()
    try:
        async for item in pubsub.listen():
            if item.get("type") == "pmessage":
                arrivals.append((int(json.loads(item["data"])["reminder_id"]), time.time()))
    finally:
        await pubsub.aclose()


async def outbox_counts(admin: asyncpg.Connection) -> dict[int, tuple[int, int]]:
    rows = await admin.fetch(
        """SELECT (payload->>'reminder_id')::bigint AS reminder_id, count(*) AS rows,
                  count(*) FILTER (WHERE status = 'sent') AS sent
           FROM outbox WHERE inbox_id IS NULL GROUP BY 1"""
    )
    return {int(r["reminder_id"]): (int(r["rows"]), int(r["sent"])) for r in rows}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with h.postgres_cluster() as cluster:
        await h.migrate_cluster(cluster)
        async with h.redis_db(REDIS_DB) as redis_url, h.fake_llm() as llm:
            settings = h.make_settings(cluster, llm.base_url, redis_url)
            admin = await asyncpg.connect(cluster.admin_dsn)
            redis = await create_pool(ArqRedisSettings.from_dsn(redis_url))
            deps = await open_deps(settings, redis=redis)
            try:
                families = await households(admin)
                async with worker_processes(settings, args.workers) as procs:
                    await wait_for_workers(redis, procs)
                    h.progress(f"{args.workers} worker processes polling")
                    arrivals: list[tuple[int, float]] = []
                    ready = asyncio.Event()
                    listener = asyncio.create_task(listen(redis, arrivals, ready))
                    await ready.wait()
                    started = time.monotonic()
                    due_at = await schedule_all(deps, families, args.reminders, args.window)
                    h.progress(f"{len(due_at)} reminders scheduled in {time.monotonic() - started:.1f}s")
                    last_due = max(due_at.values())
                    while time.time() < last_due.timestamp() + AFTER_S:
                        if len({rid for rid, _ in arrivals} & due_at.keys()) == len(due_at):
                            await asyncio.sleep(2.0)  # let any duplicate show itself
                            break
                        await asyncio.sleep(0.5)
                    listener.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await listener
                counts = await outbox_counts(admin)
            finally:
                await close_deps(deps)
                await redis.aclose()
                await admin.close()
    return figures(due_at, arrivals, counts, args)


def figures(
    due_at: dict[int, datetime], arrivals: list[tuple[int, float]], counts: dict[int, tuple[int, int]], args: Any
) -> dict[str, Any]:
    per_reminder = Counter(rid for rid, _ in arrivals)
    first: dict[int, float] = {}
    for rid, at in arrivals:
        first[rid] = min(at, first.get(rid, at))
    lateness = [first[rid] - due.timestamp() for rid, due in due_at.items() if rid in first]
    missed = sum(1 for rid in due_at if rid not in first and counts.get(rid, (0, 0))[1] == 0)
    duplicated = sum(1 for rid in due_at if per_reminder[rid] > 1 or counts.get(rid, (0, 0))[0] > 1)
    return {
        "reminders": len(due_at),
        "workers": args.workers,
        "window_s": args.window,
        "delivered": len(first),
        "lateness_min_s": round(min(lateness), 3) if lateness else None,
        "lateness_p95_s": round(h.percentile(lateness, 95), 3) if lateness else None,
        "lateness_max_s": round(max(lateness), 3) if lateness else None,
        "lateness_p50_s": round(h.percentile(lateness, 50), 3) if lateness else None,
        "lateness_p99_s": round(h.percentile(lateness, 99), 3) if lateness else None,
        "missed": missed,
        "duplicated": duplicated,
    }


def summary(result: dict[str, Any]) -> str:
    return (
        f"{result['delivered']}/{result['reminders']} delivered by {result['workers']} workers: lateness "
        f"p50 {result['lateness_p50_s']} s, p99 {result['lateness_p99_s']} s (target <= 2), "
        f"missed {result['missed']}, duplicated {result['duplicated']} (targets 0)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reminders", type=int, default=1000)
    parser.add_argument("--window", type=float, default=60.0, help="seconds over which the reminders fall due")
    parser.add_argument("--workers", type=int, default=2, help="`faa worker` processes")
    args = parser.parse_args()
    return h.run_benchmark(run(args), summary)


if __name__ == "__main__":
    sys.exit(main())
