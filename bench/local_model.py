"""The local chat model under a family's traffic: llama.cpp's own server as `faa up` runs it, against the setup FAA
ran before it (llama-cpp-python 0.3.16's single-slot server with its RAM prompt cache), both measured in this run.

    .venv/bin/python bench/local_model.py [--seed 7] [--redis-db 12] [--setups baseline,current]

The models and servers are prepared as `faa up` prepares them (LOCAL_DATA_DIR; the baseline's environment is
built once in `<LOCAL_DATA_DIR>/baseline-venv`). Each setup in turn gets a fresh chat server, warmed up the way that
setup warmed up at start, a throwaway embedded PostgreSQL database and an arq worker in this event loop, then:

- the mix: 48 messages of the golden dev set (simple records, questions, reminders and their changes, list adds,
  budgets, events, small talk) in a seeded random order, each from one of 4 members of one of 3 households, one
  after the other through inbox → arq worker → engine → outbox;
- one at a time: 12 more messages, 4 per household, in 3 fresh households;
- the burst: the same 12 sent at once in 3 other fresh households, to the last reply; then each burst answer is
  compared with its one-at-a-time answer (the capability that took it, the reply, what it stored).

Per setup: latency p50/p95 per capability and for simple records, new prompt tokens the server evaluated per mix
message (its own log lines; p50/p95) and the share of prompt tokens it took from its cache, mix and burst messages per
minute, the burst's time to its last reply, answers lost and answers that differ, and the server's resident memory
(peak and at the end). The last stdout line is JSON: the current setup's figures, and the baseline's prefixed
`baseline_`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import random
import re
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402, I001  (first: it puts the repo root on sys.path)
import _golden as g  # noqa: E402
import asyncpg  # noqa: E402
from _golden_run import send  # noqa: E402
from _golden_time import VirtualClock  # noqa: E402
from _llama_log import LlamaLog  # noqa: E402
from arq import create_pool  # noqa: E402
from arq.connections import RedisSettings as ArqRedisSettings  # noqa: E402

from bot.channels.live import ReplyWaiter  # noqa: E402
from bot.ops.local_models import CHAT_MODEL, ensure_built, ensure_chat_model, ensure_runtime  # noqa: E402
from bot.ops.local_servers import (  # noqa: E402
    ServerCommand,
    llama_command,
    local_endpoints,
    warm_up,
    with_local_endpoints,
)
from bot.ops.shared_servers import ChildServer  # noqa: E402
from engine.composition import close_deps, open_deps  # noqa: E402
from engine.llm import OpenAILLM  # noqa: E402
from engine.prompts import PromptBook  # noqa: E402
from engine.settings import Settings  # noqa: E402
from migrations.runner import migrate  # noqa: E402
from tests import system  # noqa: E402

MEMBERS = ("Anna", "Ben", "Mia", "Tom")
HOUSEHOLDS = 3
# How many messages of each golden category the mix and the burst take: what families send most, most often.
MIX = {
    "expense": 6, "fact": 6, "health": 4, "plan": 2, "reminder": 6, "lists": 6, "question": 6, "reminder_op": 3,
    "chat": 3, "event": 2, "budgets": 2, "income": 2,
}  # fmt: skip
BURST = {"expense": 3, "fact": 2, "health": 1, "reminder": 3, "lists": 2, "question": 1}
TIMEOUT_S = 600.0

# The setup FAA ran until llama.cpp's own server replaced it: llama-cpp-python's server, one request at a time,
# its RAM cache of evaluated prompts capped at 150 MB, and a warm-up of the ten routes families used most.
BASELINE_REQUIREMENT = "llama-cpp-python[server]==0.3.16"
BASELINE_WARM_ROUTES = (
    "expense", "fact", "sum", "lookup", "reminder", "update", "forget", "reminder_change", "router", "chat",
)  # fmt: skip


def baseline_command(python: Path, model: Path, settings: Settings, log: Path) -> ServerCommand:
    local = settings.local
    argv = [
        str(python), "-m", "llama_cpp.server",
        "--model", str(model),
        "--model_alias", CHAT_MODEL.name,
        "--host", "127.0.0.1",
        "--port", str(local.llm_port),
        "--n_ctx", str(local.context_tokens),
        "--n_threads", str(local.threads or 2),
        "--cache", "true",
        "--cache_size", str(150 * 10**6),
        "--n_batch", "256",
    ]  # fmt: skip
    return ServerCommand("llama.cpp", argv, local.llm_port, "/v1/models", log, local.data_dir / "leases")


async def baseline_warm_up(settings: Settings) -> None:
    version = PromptBook.load(settings.engine.prompts_file).get("default")
    llm = OpenAILLM.from_settings(settings.llm.model_copy(update={"max_output_tokens": 1}))
    try:
        for route in BASELINE_WARM_ROUTES:
            system_prompt = version.route_system(route)
            await llm.complete([{"role": "system", "content": system_prompt}, {"role": "user", "content": "Message:"}])
    finally:
        await llm.close()


# ---------------------------------------------------------------------------------------------------- messages


@dataclass(frozen=True)
class Message:
    case: g.Case
    household: int
    member: str

    @property
    def text(self) -> str:
        return self.case.text


def pick(cases: Sequence[g.Case], counts: dict[str, int], rng: random.Random, taken: set[str]) -> list[g.Case]:
    """`counts[category]` single-message cases of each category, not taken before, in a random order."""
    chosen: list[g.Case] = []
    for category, count in counts.items():
        pool = [c for c in cases if c.category == category and not c.turns and c.id not in taken]
        chosen += rng.sample(pool, count)
    taken.update(c.id for c in chosen)
    rng.shuffle(chosen)
    return chosen


def assign(cases: Sequence[g.Case], rng: random.Random) -> list[Message]:
    return [Message(case, rng.randrange(HOUSEHOLDS), rng.choice(MEMBERS)) for case in cases]


def spread(cases: Sequence[g.Case]) -> list[Message]:
    """The burst's messages: household by turns, a different member each time, 4 messages a household."""
    return [Message(case, i % HOUSEHOLDS, MEMBERS[(i // HOUSEHOLDS) % len(MEMBERS)]) for i, case in enumerate(cases)]


# ---------------------------------------------------------------------------------------------------- one setup


@dataclass
class Answer:
    message: Message
    route: str
    reply: str
    stored: list[str]
    latency_s: float
    prompt_tokens: int  # the whole prompt of every call (the API's usage)
    evaluated: int | None  # of which the server evaluated anew (its log); None in the burst
    lost: bool


@contextlib.asynccontextmanager
async def chat_server(setup: str, settings: Settings) -> AsyncIterator[tuple[Settings, ChildServer, LlamaLog]]:
    """A fresh chat server of `setup` on the local port, warmed up; the settings pointed at it."""
    local = settings.local
    log = local.data_dir / "logs" / f"bench-{setup}.log"
    log.unlink(missing_ok=True)
    venv = local.data_dir / "venv"
    python = await ensure_runtime(venv, (), progress=h.progress)
    model = await ensure_chat_model(python, local.data_dir / "models", progress=h.progress)
    if setup == "baseline":
        baseline = await ensure_runtime(local.data_dir / "baseline-venv", (BASELINE_REQUIREMENT,), progress=h.progress)
        command = baseline_command(baseline, model, settings, log)
    else:
        server_program = await ensure_built(venv, local.data_dir / "llama.cpp", progress=h.progress)
        command = dataclasses.replace(llama_command(server_program, model, local), log_file=log)
    server = ChildServer(command, local.start_timeout_s)
    await server.start()
    try:
        if not server.started_here:
            raise RuntimeError(f"a server already listens on {command.port}: stop it first")
        ready = with_local_endpoints(settings, command.base_url + "/v1", None)
        started = time.monotonic()
        await (baseline_warm_up(ready) if setup == "baseline" else warm_up(ready))
        h.progress(f"{setup}: warmed up in {time.monotonic() - started:.1f}s")
        yield ready, server, LlamaLog(log)
    finally:
        await server.stop()


def memory_mb(pid: int) -> dict[str, float]:
    """The process's resident memory now and at its peak (VmRSS, VmHWM), in MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    values = {key: int(re.search(rf"^{key}:\s+(\d+) kB", status, re.M).group(1)) for key in ("VmRSS", "VmHWM")}  # type: ignore[union-attr]
    return {"rss_mb": round(values["VmRSS"] / 1024), "peak_rss_mb": round(values["VmHWM"] / 1024)}


class Families:
    """The benchmark's households, made on demand: `family(round, n)` is household n of a round of three."""

    def __init__(self, admin: asyncpg.Connection) -> None:
        self.admin = admin
        self.made: dict[tuple[str, int], system.Family] = {}

    async def family(self, round_name: str, number: int) -> system.Family:
        key = (round_name, number)
        if key not in self.made:
            name = f"bench-{round_name}-{number}-{uuid.uuid4().hex[:6]}"
            self.made[key] = await system.make_family(self.admin, name, dict.fromkeys(MEMBERS, "Europe/Berlin"))
        return self.made[key]


async def answer(
    deps: Any,
    admin: asyncpg.Connection,
    waiter: ReplyWaiter,
    clock: VirtualClock,
    family: system.Family,
    message: Message,
    llama_log: LlamaLog | None,
    reading: asyncio.Lock,
) -> Answer:
    position = llama_log.position() if llama_log is not None else 0
    sent = await send(deps, waiter, family.principal(message.member), clock, message.text, TIMEOUT_S)
    async with reading:  # one connection: the burst's answers read it one after another
        return await _answered(admin, family, message, sent, llama_log, position)


async def _answered(
    admin: asyncpg.Connection,
    family: system.Family,
    message: Message,
    sent: Any,
    llama_log: LlamaLog | None,
    position: int,
) -> Answer:
    turn = await admin.fetchrow(
        "SELECT coalesce(trace ->> 'route', '-') AS route, tokens_in FROM interactions WHERE inbox_id = $1",
        sent.inbox_id,
    )
    stored = await admin.fetch(
        """SELECT content, amount, currency FROM memories
           WHERE household_id = $1 AND source_inbox_id = $2 ORDER BY id""",
        family.household_id,
        sent.inbox_id,
    )
    return Answer(
        message=message,
        route=turn["route"] if turn else "-",
        reply=sent.reply,
        stored=[f"{row['content']} {row['amount'] or ''} {row['currency'] or ''}".strip() for row in stored],
        latency_s=sent.latency_s,
        prompt_tokens=int(turn["tokens_in"] or 0) if turn else 0,
        evaluated=llama_log.since(position)[0] if llama_log is not None else None,
        lost=sent.error is not None or not sent.reply,
    )


async def measure(
    setup: str, configured: Settings, cluster: h.Cluster, redis: str, mix: list[Message], burst: list[Message]
) -> dict[str, Any]:
    base = h.make_settings(cluster, "http://unused.invalid/v1", redis)
    settings = base.model_copy(update={"embedding": configured.embedding, "local": configured.local})
    clock = VirtualClock()
    async with chat_server(setup, settings) as (ready, server, llama_log):
        admin = await asyncpg.connect(ready.database.admin_url)
        pool = await create_pool(ArqRedisSettings.from_dsn(ready.redis.url))
        deps = await open_deps(ready, redis=pool, clock=clock)
        waiter = ReplyWaiter(pool)
        await waiter.start()
        families = Families(admin)
        reading = asyncio.Lock()
        try:
            async with h.worker_in_loop(ready, clock=clock):
                clock.restart()
                mix_started = time.monotonic()
                mixed = []
                for number, message in enumerate(mix, 1):
                    family = await families.family("mix", message.household)
                    mixed.append(await answer(deps, admin, waiter, clock, family, message, llama_log, reading))
                    done = mixed[-1]
                    h.progress(
                        f"{setup} mix {number}/{len(mix)} {done.latency_s:5.1f}s {done.evaluated:5d} new tokens "
                        f"{done.route:<16} {message.case.id}"
                    )
                mix_s = time.monotonic() - mix_started
                alone = []
                for message in burst:
                    family = await families.family("alone", message.household)
                    alone.append(await answer(deps, admin, waiter, clock, family, message, None, reading))
                h.progress(f"{setup}: the burst's messages one at a time in {sum(a.latency_s for a in alone):.1f}s")
                households = [await families.family("burst", m.household) for m in burst]
                burst_started = time.monotonic()
                together = await asyncio.gather(
                    *[
                        answer(deps, admin, waiter, clock, family, m, None, reading)
                        for family, m in zip(households, burst, strict=True)
                    ]
                )
                burst_s = time.monotonic() - burst_started
                h.progress(f"{setup}: the burst of {len(burst)} answered in {burst_s:.1f}s")
                memory = memory_mb(server.held.pid) if server.held is not None else {}
        finally:
            await waiter.stop()
            await close_deps(deps)
            await pool.aclose()
            await admin.close()
    return figures(mixed, mix_s, alone, list(together), burst_s, memory)


# ---------------------------------------------------------------------------------------------------- figures


def figures(
    mixed: list[Answer], mix_s: float, alone: list[Answer], together: list[Answer], burst_s: float, memory: dict
) -> dict[str, Any]:
    by_route: dict[str, list[float]] = defaultdict(list)
    for done in mixed:
        by_route[done.route].append(done.latency_s)
    simple = [done.latency_s for done in mixed if done.message.case.simple_record]
    evaluated = [float(done.evaluated or 0) for done in mixed]
    prompt = sum(done.prompt_tokens for done in mixed)
    differing = [
        {"id": a.message.case.id, "alone": [a.route, a.reply, a.stored], "burst": [b.route, b.reply, b.stored]}
        for a, b in zip(alone, together, strict=True)
        if (a.route, a.reply, a.stored) != (b.route, b.reply, b.stored)
    ]
    return {
        "messages": len(mixed),
        "latency_by_capability": {
            route: {
                "n": len(values),
                "p50_s": round(h.percentile(values, 50), 1),
                "p95_s": round(h.percentile(values, 95), 1),
            }
            for route, values in sorted(by_route.items())
        },
        "capability_p95_max_s": round(max(h.percentile(v, 95) for v in by_route.values()), 1),
        "simple_record_p50_s": round(h.percentile(simple, 50), 2),
        "simple_record_p95_s": round(h.percentile(simple, 95), 2),
        "prompt_tokens_p50": round(h.percentile(evaluated, 50)),
        "prompt_tokens_p95": round(h.percentile(evaluated, 95)),
        "prefix_cache_hit_rate": round(1 - sum(evaluated) / prompt, 3) if prompt else None,
        "mix_messages_per_minute": round(len(mixed) / mix_s * 60, 1),
        "burst_messages": len(together),
        "burst_last_reply_s": round(burst_s, 1),
        "burst_messages_per_minute": round(len(together) / burst_s * 60, 1),
        "burst_lost": sum(done.lost for done in together),
        "burst_differing": differing,
        "one_at_a_time_s": round(sum(done.latency_s for done in alone), 1),
        "server_rss_mb": memory.get("rss_mb"),
        "server_peak_rss_mb": memory.get("peak_rss_mb"),
    }


def _latency(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50_s": round(h.percentile(values, 50), 1), "p95_s": round(h.percentile(values, 95), 1)}


def summary(result: dict[str, Any]) -> str:
    lines = []
    for prefix in ("baseline_", ""):
        if f"{prefix}messages" not in result:
            continue
        r = {key.removeprefix(prefix): value for key, value in result.items() if key.startswith(prefix)}
        lines.append(
            f"{'baseline' if prefix else 'current'}: simple record p50 {r['simple_record_p50_s']} s p95 "
            f"{r['simple_record_p95_s']} s; capability p95 at most {r['capability_p95_max_s']} s; new prompt tokens "
            f"p95 {r['prompt_tokens_p95']}, cache hit {r['prefix_cache_hit_rate']}; burst of {r['burst_messages']} in "
            f"{r['burst_last_reply_s']} s ({r['burst_lost']} lost, {len(r['burst_differing'])} differing); peak RSS "
            f"{r['server_peak_rss_mb']} MB"
        )
    return "\n".join(lines)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    cases = [c for c in g.load_cases() if not c.turns]
    rng = random.Random(args.seed)
    taken: set[str] = set()
    mix = assign(pick(cases, MIX, rng, taken), rng)
    burst = spread(pick(cases, BURST, rng, taken))
    configured = Settings.load()
    if configured.llm.configured:
        raise SystemExit("an LLM endpoint is configured: this benchmark measures the local model only")
    result: dict[str, Any] = {"seed": args.seed}
    async with local_endpoints(configured, with_chat=False, progress=h.progress) as with_embeddings:
        with h.postgres_cluster() as cluster:
            await migrate(cluster.admin_dsn, embedding_dim=with_embeddings.embedding.dim, app_role=h.APP_ROLE)
            for setup in args.setups.split(","):
                async with h.redis_db(args.redis_db) as redis:
                    measured = await measure(setup, with_embeddings, cluster, redis, mix, burst)
                prefix = "baseline_" if setup == "baseline" else ""
                result.update({prefix + key: value for key, value in measured.items()})
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--redis-db", type=int, default=12)
    parser.add_argument("--setups", default="baseline,current", help="comma-separated: baseline, current")
    return h.run_benchmark(run(parser.parse_args()), summary)


if __name__ == "__main__":
    sys.exit(main())
