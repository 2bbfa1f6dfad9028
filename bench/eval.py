"""How well FAA answers: the golden set (bench/golden/cases.yaml) against whatever model endpoint is configured.

    .venv/bin/python bench/eval.py [--only ID_OR_CATEGORY ...] [--variant fast] [--timeout 600]

The endpoint comes from the environment / .env like `faa up` reads it (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL,
EMBEDDING_*); with none configured the local models are started as `faa up` starts them. Each case runs in a
fresh household of a throwaway embedded PostgreSQL, through inbox → arq worker → engine, and is scored by its
effects on the database (rows, amounts, currencies, categories, reminders, a clarifying question or not) and
the exact numbers in the reply. Progress and the per-category table go to stderr; the last stdout line is JSON
with `cases`, `pass_rate`, `llm_calls_mean`, `latency_p50_s` and `latency_p95_s` (and the details).
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _golden as g  # noqa: E402
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import asyncpg  # noqa: E402
from arq import create_pool  # noqa: E402
from arq.connections import RedisSettings as ArqRedisSettings  # noqa: E402

from bot import lifecycle  # noqa: E402
from bot.live import ReplyWaiter  # noqa: E402
from bot.local_servers import local_endpoints, needs_local  # noqa: E402
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


async def run_cases(settings: Settings, cases: list[g.Case], timeout_s: float) -> list[g.CaseResult]:
    """Every case in turn through a worker in this event loop; one progress line per case."""
    results = []
    admin = await asyncpg.connect(settings.database.admin_url)
    redis = await create_pool(ArqRedisSettings.from_dsn(settings.redis.url))
    deps = await open_deps(settings, redis=redis)
    waiter = ReplyWaiter(redis)
    await waiter.start()
    try:
        async with h.worker_in_loop(settings):
            for number, case in enumerate(cases, 1):
                if case.needs == "reminders" and g.REMINDER_TOOL not in deps.registry.names():
                    results.append(g.CaseResult(case, None, passed=False, skipped=True))
                    h.progress(f"{number:3d}/{len(cases)} SKIP {case.id:<32} (no {g.REMINDER_TOOL} tool)")
                    continue
                effects = await g.run_case(deps, admin, waiter, case, timeout_s=timeout_s)
                today = datetime.now(ZoneInfo(g.TIMEZONE)).date()
                result = g.score(case, effects, today=today)
                results.append(result)
                verdict = "SKIP" if result.skipped else "pass" if result.passed else "FAIL"
                line = f"{number:3d}/{len(cases)} {verdict} {case.id:<32} {effects.latency_s:6.1f}s"
                line += f" {effects.llm_calls} calls"
                if not result.passed:
                    line += f"  {'; '.join(result.reasons)[:160]}  reply: {effects.reply[:120]!r}"
                h.progress(line)
    finally:
        await waiter.stop()
        await close_deps(deps)
        await redis.aclose()
        await admin.close()
    return results


def _stats(results: list[g.CaseResult]) -> dict[str, Any]:
    scored = [r for r in results if not r.skipped and r.effects is not None]
    latencies = [r.effects.latency_s for r in scored if r.effects is not None]
    calls = [r.effects.llm_calls for r in scored if r.effects is not None]
    return {
        "cases": len(scored),
        "passed": sum(r.passed for r in scored),
        "pass_rate": round(sum(r.passed for r in scored) / len(scored), 3) if scored else None,
        "llm_calls_mean": round(sum(calls) / len(calls), 2) if calls else None,
        "latency_p50_s": round(h.percentile(latencies, 50), 1) if latencies else None,
        "latency_p95_s": round(h.percentile(latencies, 95), 1) if latencies else None,
        "skipped": sum(r.skipped for r in results),
    }


def figures(results: list[g.CaseResult], settings: Settings) -> dict[str, Any]:
    out = _stats(results)
    categories = dict.fromkeys(r.case.category for r in results)
    out["by_category"] = {c: _stats([r for r in results if r.case.category == c]) for c in categories}
    out["by_language"] = {lang: _stats([r for r in results if r.case.lang == lang]) for lang in ("en", "zh")}
    out["model"] = settings.llm.model
    out["prompt_variants"] = settings.engine.variants
    out["failed"] = [r.case.id for r in results if not r.passed and not r.skipped]
    return out


def table(result: dict[str, Any]) -> str:
    lines = [f"{'category':<12}{'cases':>6}{'pass':>7}{'calls':>7}{'p50 s':>8}{'p95 s':>8}{'skipped':>9}"]
    for name, row in [*result["by_category"].items(), ("all", result)]:
        rate = "-" if row["pass_rate"] is None else f"{row['pass_rate']:.0%}"
        lines.append(
            f"{name:<12}{row['cases']:>6}{rate:>7}{row['llm_calls_mean'] or '-':>7}"
            f"{row['latency_p50_s'] or '-':>8}{row['latency_p95_s'] or '-':>8}{row['skipped']:>9}"
        )
    return "\n".join(lines)


async def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    cases = g.load_cases(args.cases)
    if args.only:
        cases = [c for c in cases if c.id in args.only or c.category in args.only]
    configured = Settings.load()
    endpoint = "local models (no endpoint configured)" if any(needs_local(configured)) else configured.llm.base_url
    h.progress(f"{len(cases)} cases against {endpoint}")
    async with local_endpoints(configured, progress=h.progress) as configured:
        with h.postgres_cluster() as cluster:
            await migrate(cluster.admin_dsn, embedding_dim=configured.embedding.dim, app_role=h.APP_ROLE)
            async with h.redis_db(args.redis_db) as redis:
                settings = run_settings(configured, cluster, redis, args.variant)
                results = await run_cases(settings, cases, args.timeout)
    result = figures(results, settings)
    print(table(result), file=sys.stderr)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=Path, default=g.CASES_FILE, help="the golden set (YAML)")
    parser.add_argument("--only", nargs="*", help="case ids or categories to run (default: all)")
    parser.add_argument("--variant", help="run every case with this prompt version (default: ENGINE_VARIANTS)")
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
    h.progress(f"pass rate {result['pass_rate']} over {result['cases']} cases ({result['skipped']} skipped)")
    h.emit(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
