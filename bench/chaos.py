"""Fault tolerance: a flood of messages through `faa serve` and three `faa worker` processes while their peers fail,
and what became of every message.

    .venv/bin/python bench/chaos.py [--messages 1000] [--quick] [--only redis_restart,postgres_freeze]

Everything runs on this machine and is its own: a redis-server on a free port, an embedded PostgreSQL cluster in a
temp dir, the scripted OpenAI-compatible server from tests/fakes (an expense message gets a `store` plan and a
reply), the web API and three workers as subprocesses configured through the environment (bench/_chaos_faults.py).
A client posts each message (`POST /v1/messages`, `wait: false`, its own client_message_id) at `--rate` a second
and, like a webhook's sender, posts it again until it is acknowledged (2xx). Replies are counted where the web
channel delivers them: Redis pub/sub, subscribed by this process.

Scenarios (each on a household of its own, one after another, each drained before the next):
- duplicate_posts: every message posted three times at once;
- worker_kills: ten SIGKILLs of a random worker during the flood, each worker started again at once;
- web_kill: the web process SIGKILLed at 30 % of the flood and started again;
- redis_restart: Redis SIGKILLed at 30 % and started again empty 5 s later;
- postgres_freeze: every PostgreSQL process SIGSTOPped at 30 % for `--freeze-s` (30) seconds;
- postgres_immediate: `pg_ctl restart -m immediate` at 30 %.

Per scenario, one JSON line: sent, posts (with the duplicates), acknowledged, answered_exactly_once, lost
(acknowledged, never answered), failed (answered with an apology), replies_without_effect (answered "done" without
its stored expense),
duplicate_effects, duplicate_sends, kills, recovery_s (from the fault's end until every message acknowledged before
it was answered), drain_s (from the last acknowledgement until the last reply), the API's non-2xx answers, and any
FAA process that exited by itself. Targets: 0 lost, 0 without effect, 0 duplicate effects, duplicate sends <= kills.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _chaos_faults as faults  # noqa: E402
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import aiohttp  # noqa: E402
import asyncpg  # noqa: E402
import redis.asyncio as redis_asyncio  # noqa: E402
from redis.exceptions import RedisError  # noqa: E402

from tests.e2e.scripts import analysis, expense_plan, is_analysis, member_message  # noqa: E402
from tests.fakes.openai_server import ChatRequest, Scripted  # noqa: E402
from tools.infra import local_postgres  # noqa: E402
from tools.storage.database import dsn_with_user  # noqa: E402

WORKERS = 3
SCENARIOS = ("duplicate_posts", "worker_kills", "web_kill", "redis_restart", "postgres_freeze", "postgres_immediate")


def model(request: ChatRequest) -> Scripted:
    """An expense message is stored, and its reply written in the same call."""
    step = expense_plan(member_message(request)) if is_analysis(request) else None
    if step is None:
        return Scripted(content="Saved.")
    return analysis("record", plan=[step], reply=f"Saved {step['args']['amount']} EUR for groceries.")


class Replies:
    """Every reply the web channel publishes (Redis pub/sub), per inbox id, with when it was first seen. Resubscribes
    after Redis comes back; nothing is published while it is down."""

    def __init__(self, redis_url: str) -> None:
        self.redis_url = redis_url
        self.count: collections.Counter[int] = collections.Counter()
        self.first: dict[int, float] = {}

    async def listen(self) -> None:
        while True:
            client = redis_asyncio.from_url(self.redis_url)
            try:
                pubsub = client.pubsub()
                await pubsub.psubscribe("faa:0:reply:*")
                async for message in pubsub.listen():
                    if message["type"] == "pmessage":
                        inbox_id = int(message["channel"].rsplit(b":", 1)[1])
                        self.count[inbox_id] += 1
                        self.first.setdefault(inbox_id, time.monotonic())
            except (RedisError, OSError):
                await asyncio.sleep(0.1)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await client.aclose()


@dataclass
class Run:
    """What the scenario's client saw."""

    acked: dict[int, float] = field(default_factory=dict)  # message number → when first acknowledged
    statuses: collections.Counter[str] = field(default_factory=collections.Counter)
    posts: int = 0
    kills: int = 0
    fault_end: float = 0.0


@dataclass
class Bench:
    args: argparse.Namespace
    cluster: h.Cluster
    server: Any  # the embedded PostgreSQL handle
    redis: faults.RedisServer
    faa: faults.Faa
    replies: Replies
    session: aiohttp.ClientSession

    async def post(self, run: Run, token: str, number: int, copy: int) -> None:
        """Post one message until it is acknowledged, as a webhook's sender retries (gives up after 5 minutes)."""
        body = {"text": text(number), "client_message_id": f"m{number}", "wait": False}
        headers = {"Authorization": f"Bearer {token}"}
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                async with self.session.post(
                    f"{self.faa.base_url}/v1/messages", json=body, headers=headers
                ) as response:
                    run.statuses[str(response.status)] += copy == 0 or response.status >= 300
                    if response.status < 300:
                        run.acked.setdefault(number, time.monotonic())
                        return
                    if response.status < 500 and response.status != 429:
                        return  # refused for good: not acknowledged
            except (aiohttp.ClientError, TimeoutError):
                run.statuses["connection error"] += 1
            await asyncio.sleep(1.0)


def text(number: int) -> str:
    return f"I spent {1 + number // 100}.{number % 100:02d} euros on groceries"


async def scenario(bench: Bench, name: str, offset: int) -> dict[str, Any]:
    n = bench.args.messages
    admin = await asyncpg.connect(bench.cluster.admin_dsn)
    try:
        family = await h.make_family(admin, f"Chaos {name}", ["Anna"])
    finally:
        await admin.close()
    token = family.tokens["Anna"]
    run = Run()
    copies = 3 if name == "duplicate_posts" else 1
    fault = FAULTS.get(name)
    kill_at = {int(n * (0.1 + 0.7 * k / 10)) for k in range(10)} if name == "worker_kills" else set()
    posts: list[asyncio.Task[None]] = []
    fault_task: asyncio.Task[None] | None = None
    h.progress(f"{name}: {n} messages at {bench.args.rate}/s")
    started = time.monotonic()
    for i in range(n):
        await asyncio.sleep(max(0.0, started + i / bench.args.rate - time.monotonic()))
        posts += [asyncio.create_task(bench.post(run, token, offset + i, c)) for c in range(copies)]
        if fault is not None and i == int(n * 0.3):
            fault_task = asyncio.create_task(fault(bench, run))
        if i in kill_at:
            bench.faa.kill_worker(random.randrange(WORKERS))
            run.kills += 1
            run.fault_end = time.monotonic()
    await asyncio.gather(*posts)
    if fault_task is not None:
        await fault_task
    last_ack = max(run.acked.values(), default=time.monotonic())
    numbers = {offset + i for i in range(n)}
    run.posts = n * copies
    return await outcome(bench, family.household_id, name, numbers, run, last_ack)


async def outcome(
    bench: Bench, household_id: int, name: str, numbers: set[int], run: Run, last_ack: float
) -> dict[str, Any]:
    """Wait until every acknowledged message is answered (or `--settle-s` passes without progress), then count."""
    by_text = {text(number): number for number in numbers}
    previous, quiet_since = -1, time.monotonic()
    while True:
        rows, stored = await _rows(bench, household_id)
        answered = {r["id"] for r in rows if bench.replies.count[r["id"]] > 0}
        acked_rows = [r for r in rows if by_text[r["text"]] in run.acked]
        if len(answered) != previous:
            previous, quiet_since = len(answered), time.monotonic()
        if len(answered) >= len(run.acked) or time.monotonic() - quiet_since > bench.args.settle_s:
            break
        await asyncio.sleep(1.0)
    counts = bench.replies.count
    first = bench.replies.first
    before_fault_end = [r["id"] for r in acked_rows if run.acked[by_text[r["text"]]] <= run.fault_end]
    result = {
        "scenario": name,
        "sent": len(numbers),
        "posts": run.posts,
        "acknowledged": len(run.acked),
        "answered_exactly_once": sum(counts[r["id"]] == 1 for r in acked_rows),
        "lost": len(run.acked) - sum(counts[r["id"]] > 0 for r in acked_rows),
        "failed": sum(r["status"] == "failed" for r in acked_rows),
        "replies_without_effect": sum(
            counts[r["id"]] > 0 and r["status"] == "done" and stored.get(r["id"], 0) == 0 for r in acked_rows
        ),
        "duplicate_effects": sum(max(0, c - 1) for c in stored.values()),
        "duplicate_sends": sum(max(0, counts[r["id"]] - 1) for r in rows),
        "kills": run.kills,
        "recovery_s": round(
            max((first.get(i, time.monotonic()) for i in before_fault_end), default=run.fault_end) - run.fault_end, 1
        )
        if run.fault_end
        else None,
        "drain_s": round(
            max((first.get(r["id"], time.monotonic()) for r in acked_rows), default=last_ack) - last_ack, 1
        ),
        "api_answers": dict(run.statuses),
        "exited_by_themselves": bench.faa.exited(),
    }
    print(json.dumps(result), flush=True)
    return result


async def _rows(bench: Bench, household_id: int) -> tuple[list[asyncpg.Record], dict[int, int]]:
    """The household's inbox rows and stored memories per message, read on a connection of its own (the database
    may have restarted since the last look); nothing while it is unreachable."""
    try:
        conn = await asyncpg.connect(bench.cluster.admin_dsn, timeout=5)
    except (OSError, asyncpg.PostgresError, TimeoutError):
        return [], {}
    try:
        rows = await conn.fetch("SELECT id, text, status FROM inbox WHERE household_id = $1", household_id)
        memories = await conn.fetch(
            "SELECT source_inbox_id, count(*) AS n FROM memories WHERE household_id = $1 GROUP BY 1", household_id
        )
        return rows, {m["source_inbox_id"]: m["n"] for m in memories}
    finally:
        await conn.close()


async def _web_kill(bench: Bench, run: Run) -> None:
    bench.faa.kill_web()
    run.kills, run.fault_end = 1, time.monotonic()


async def _redis_restart(bench: Bench, run: Run) -> None:
    bench.redis.kill()
    await asyncio.sleep(5)
    bench.redis.start()
    run.kills, run.fault_end = 1, time.monotonic()


async def _postgres_freeze(bench: Bench, run: Run) -> None:
    await faults.freeze_postgres(bench.cluster.data_dir, bench.args.freeze_s)
    run.fault_end = time.monotonic()


async def _postgres_immediate(bench: Bench, run: Run) -> None:
    await asyncio.to_thread(faults.restart_postgres_immediately, bench.server, bench.cluster.data_dir)
    run.kills, run.fault_end = 1, time.monotonic()


FAULTS: dict[str, Callable[[Bench, Run], Awaitable[None]]] = {
    "web_kill": _web_kill,
    "redis_restart": _redis_restart,
    "postgres_freeze": _postgres_freeze,
    "postgres_immediate": _postgres_immediate,
}


async def _ready(bench: Bench) -> None:
    """The web API answers /health and the workers answer a first message."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        with contextlib.suppress(aiohttp.ClientError):
            async with bench.session.get(f"{bench.faa.base_url}/health") as response:
                if response.status == 200:
                    break
        await asyncio.sleep(0.5)
    admin = await asyncpg.connect(bench.cluster.admin_dsn)
    try:
        family = await h.make_family(admin, "Chaos warm-up", ["Anna"])
    finally:
        await admin.close()
    await bench.post(Run(), family.tokens["Anna"], 0, 0)
    while not bench.replies.count and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    h.progress(f"web API and {WORKERS} workers up")


@contextlib.contextmanager
def postgres() -> Iterator[tuple[h.Cluster, Any]]:
    """The embedded cluster and its handle (the immediate restart needs it), deleted on exit."""
    root = Path(tempfile.mkdtemp(prefix="faa-chaos-pg-"))
    server = local_postgres.start(root / "data", temporary=True)
    admin = server.get_uri()
    try:
        yield h.Cluster(admin, dsn_with_user(admin, h.APP_ROLE), root / "data"), server
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


async def main(args: argparse.Namespace) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    with postgres() as (cluster, server):
        await h.migrate_cluster(cluster)
        redis = faults.RedisServer()
        redis.start()
        async with h.fake_llm() as llm:
            llm.script(model)
            faa = faults.Faa.configured(cluster, redis.url, llm.base_url)
            replies = Replies(redis.url)
            listener = asyncio.create_task(replies.listen())
            faa.start_web()
            faa.start_workers(WORKERS)
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
                bench = Bench(args, cluster, server, redis, faa, replies, session)
                try:
                    await _ready(bench)
                    names = [s for s in SCENARIOS if not args.only or s in args.only.split(",")]
                    for index, name in enumerate(names):
                        results.append(await scenario(bench, name, (index + 1) * 100_000))
                finally:
                    listener.cancel()
                    faa.stop()
                    redis.kill()
    return {"scenarios": results, "messages_per_scenario": args.messages, "workers": WORKERS}


def _summary(result: dict[str, Any]) -> str:
    return "; ".join(
        f"{r['scenario']}: lost {r['lost']}, without effect {r['replies_without_effect']}, "
        f"duplicate effects {r['duplicate_effects']}, duplicate sends {r['duplicate_sends']} (kills {r['kills']})"
        for r in result["scenarios"]
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1000, help="messages per scenario")
    parser.add_argument("--quick", action="store_true", help="150 messages per scenario and a 10 s freeze")
    parser.add_argument("--rate", type=float, default=15.0, help="messages posted per second")
    parser.add_argument("--freeze-s", type=float, default=30.0, help="how long PostgreSQL stays SIGSTOPped")
    parser.add_argument("--settle-s", type=float, default=300.0, help="give up waiting after this long without a reply")
    parser.add_argument("--only", default="", help="comma-separated scenarios: " + ",".join(SCENARIOS))
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.messages, arguments.freeze_s = 150, 10.0
    sys.exit(h.run_benchmark(main(arguments), _summary))
