"""How well FAA answers: the golden set (bench/golden/cases.yaml, the dev split; `--cases bench/golden/test.yaml`
for the held-out test split) against whatever model endpoint is configured.

    .venv/bin/python bench/eval.py [--cases FILE] [--only ID_OR_CATEGORY ...] [--variant NAME] [--now ISO]
                                   [--timeout 600]

The endpoint comes from the environment / .env like `faa up` reads it (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL,
EMBEDDING_*); with none configured the local models are started as `faa up` starts them. Each case runs in a
fresh household of a throwaway embedded PostgreSQL, on a virtual clock that starts at `--now` (default Monday
2026-11-23 10:00 Europe/Berlin) and runs on in real time, through inbox → arq worker → engine; its earlier turns
go first. It is scored by its effects on the database (rows, amounts, currencies, categories, corrections,
forgotten rows, reminders with their times, recipients and rules, a clarifying question or not) and by the
numbers in the replies: the expected ones must be there, and every one must come from the member's messages, the
seeds, the household's rows or a journaled tool result. Progress and the tables (per category, route and
language) go to stderr; the last stdout line is JSON with `cases`, `pass_rate`, `llm_calls_mean`,
`tokens_in_mean`, `tokens_out_mean`, `tokens_evaluated_mean`, `latency_p50_s`, `latency_p95_s`,
`invented_number_replies`, `by_category`, `by_route`, `by_language`, `simple_record` and the failures.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402, I001  (first: it puts the repo root on sys.path)
import _golden as g  # noqa: E402
import _golden_report as report  # noqa: E402
import _golden_run as golden_run  # noqa: E402
import asyncpg  # noqa: E402
from _golden_score import REMINDER_TOOL, score  # noqa: E402
from _golden_time import VirtualClock, parse_start  # noqa: E402
from _llama_log import LlamaLog  # noqa: E402
from arq import create_pool  # noqa: E402
from arq.connections import RedisSettings as ArqRedisSettings  # noqa: E402

from bot.channels.live import ReplyWaiter  # noqa: E402
from bot.ops import lifecycle  # noqa: E402
from bot.ops.local_servers import local_endpoints, needs_local  # noqa: E402
from engine.composition import close_deps, open_deps  # noqa: E402
from engine.settings import Settings  # noqa: E402
from migrations.runner import migrate  # noqa: E402


def run_settings(configured: Settings, cluster: h.Cluster, redis: str, variant: str | None) -> Settings:
    """The harness's settings (throwaway database, benchmark Redis) with the configured model endpoints,
    engine limits and worker timeouts."""
    base = h.make_settings(cluster, "http://unused.invalid/v1", redis)
    engine = configured.engine
    if variant is not None:
        engine = engine.model_copy(update={"variants": {variant: 100}})
    return base.model_copy(
        update={
            "llm": configured.llm,
            "embedding": configured.embedding,
            "engine": engine,
            "worker": configured.worker,
            "local": configured.local,
        }
    )


def progress_line(number: int, total: int, result: g.CaseResult) -> str:
    if result.skipped or result.effects is None:
        return f"{number:3d}/{total} SKIP {result.case.id:<36} (no {REMINDER_TOOL} tool)"
    verdict = "pass" if result.passed else "FAIL"
    latency = sum(m.latency_s for m in result.messages)
    calls = sum(m.llm_calls for m in result.messages)
    line = f"{number:3d}/{total} {verdict} {result.case.id:<36} {latency:6.1f}s {calls} calls {result.route}"
    if not result.passed:
        line += f"  {'; '.join(result.reasons)[:200]}  reply: {result.effects.reply[:120]!r}"
    return line


async def run_cases(
    settings: Settings, cases: list[g.Case], timeout_s: float, clock: VirtualClock, llama_log: LlamaLog | None
) -> list[g.CaseResult]:
    """Every case in turn through a worker in this event loop, on the virtual clock; one progress line each."""
    results = []
    admin = await asyncpg.connect(settings.database.admin_url)
    redis = await create_pool(ArqRedisSettings.from_dsn(settings.redis.url))
    deps = await open_deps(settings, redis=redis, clock=clock)
    waiter = ReplyWaiter(redis)
    await waiter.start()
    reminder_tool = REMINDER_TOOL in deps.registry.names()
    try:
        async with h.worker_in_loop(settings, clock=clock):
            for number, case in enumerate(cases, 1):
                if case.needs_reminders and not reminder_tool:
                    result = score(case, [], reminder_tool=False)
                else:
                    messages = await golden_run.run_case(
                        deps,
                        admin,
                        waiter,
                        case,
                        clock=clock,
                        timeout_s=timeout_s,
                        reminder_tool=reminder_tool,
                        llama_log=llama_log,
                    )
                    result = score(case, messages, reminder_tool=reminder_tool)
                results.append(result)
                h.progress(progress_line(number, len(cases), result))
    finally:
        await waiter.stop()
        await close_deps(deps)
        await redis.aclose()
        await admin.close()
    return results


async def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    cases = g.load_cases(args.cases)
    if args.only:
        cases = [c for c in cases if c.id in args.only or c.category in args.only]
    configured = Settings.load()
    endpoint = "local models (no endpoint configured)" if any(needs_local(configured)) else configured.llm.base_url
    clock = VirtualClock(parse_start(args.now))
    h.progress(f"{len(cases)} cases against {endpoint}, each starting at {clock.start.isoformat()}")
    # With the local chat server, its log tells how many prompt tokens each message made it evaluate.
    llama_log = LlamaLog(configured.local.data_dir / "logs" / "llama.log") if needs_local(configured)[0] else None
    async with local_endpoints(configured, progress=h.progress) as configured:
        with h.postgres_cluster() as cluster:
            await migrate(cluster.admin_dsn, embedding_dim=configured.embedding.dim, app_role=h.APP_ROLE)
            async with h.redis_db(args.redis_db) as redis:
                settings = run_settings(configured, cluster, redis, args.variant)
                results = await run_cases(settings, cases, args.timeout, clock, llama_log)
    result = report.figures(results)
    result["model"] = settings.llm.model
    result["prompt_variants"] = settings.engine.variants
    result["virtual_start"] = clock.start.isoformat()
    print(report.table(result), file=sys.stderr)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, default=g.CASES_FILE, help="the golden set (YAML)")
    parser.add_argument("--only", nargs="*", help="case ids or categories to run (default: all)")
    parser.add_argument("--variant", help="run every case with this prompt version (default: ENGINE_VARIANTS)")
    parser.add_argument("--now", help="the virtual start of every case, ISO (default 2026-11-23T10:00, Berlin)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for one reply")
    parser.add_argument(
        "--redis-db", type=int, default=15, help="Redis database number, flushed (BENCH_REDIS_URL picks the server)"
    )
    args = parser.parse_args()
    # Not h.run_benchmark: its loopback-only guard would refuse a hosted endpoint, which is a valid target here.
    h.log_to_file()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # like Ctrl-C: the local servers get stopped
    started = time.monotonic()
    try:
        result = lifecycle.run(evaluate(args))
    except KeyboardInterrupt:
        return 130
    result["total_s"] = round(time.monotonic() - started, 1)
    h.progress(
        f"pass rate {result['pass_rate']} over {result['cases']} cases ({result['skipped']} skipped), "
        f"{result['invented_number_replies']} replies with invented numbers"
    )
    h.emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
