"""Time to acknowledge: 200 concurrent `POST /v1/messages` with `"wait": false`, answered `202` by the web API.

The web API runs as a real TCP server on 127.0.0.1 (random port) in a separate process (`bench/_web_process.py
serve`, composed like `faa serve`); this process is only the load generator. Each request has its own
client_message_id and a valid member token; no worker runs, so the jobs just queue (Redis is flushed after).

    .venv/bin/python bench/webhook_ack.py [--concurrency 200] [--rounds 5] [--no-profile]

Measured client-side: from just before the request is sent until the 202 body is read. After the clean run a
second server process with bench-only instrumentation repeats one burst and reports where the server's time
went (token lookup, inbox group commit and its statements, enqueue, event loop lag). The last stdout line is the
JSON of the figures; target (reported, never asserted): ack p99 <= 25 ms, 0 errors.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import aiohttp  # noqa: E402
import asyncpg  # noqa: E402

REDIS_DB = 15
MEMBERS = ("Anna", "Ben", "Tom", "Lea")
WARMUP = 20
SEQUENTIAL = 50  # one at a time first: the service time of one request without queueing
REQUEST_TIMEOUT_S = 20.0
TEXTS = (
    "I spent 12.50 euros on groceries at Lidl",
    "Tom has football practice on Thursday at 5",
    "How much did we spend on fuel this month?",
    "The dentist said Lea should floss more",
)


@contextlib.asynccontextmanager
async def server_process(cluster: h.Cluster, redis: str, *, profile: bool, pool_max: int) -> AsyncIterator[str]:
    """Start `python bench/_web_process.py serve` and yield its base URL; stop it by closing its stdin."""
    config = {
        "admin_dsn": cluster.admin_dsn,
        "app_dsn": cluster.app_dsn,
        "redis_url": redis,
        "llm_base_url": "http://127.0.0.1:9/v1",  # required by the settings; the web process never calls it
        "pool_min": 2,
        "pool_max": pool_max,
        "profile": profile,
    }
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve().parent / "_web_process.py"), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=str(h.REPO),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(config) + "\n")
        proc.stdin.flush()
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
        if not line.startswith("PORT "):
            raise RuntimeError(f"the web server process did not start (said {line!r}, exit code {proc.poll()})")
        base_url = f"http://127.0.0.1:{int(line.split()[1])}"
        h.progress(f"web API process {proc.pid} listening on {base_url}{' (instrumented)' if profile else ''}")
        yield base_url
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), 15)
        except TimeoutError:
            proc.terminate()  # only the process this benchmark started
            await asyncio.to_thread(proc.wait)
        h.progress(f"web API process {proc.pid} stopped (exit code {proc.returncode})")


class Load:
    """The load generator: one client session, distinct client_message_ids, members' tokens in turn."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str, family: h.Family) -> None:
        self.session = session
        self.base_url = base_url
        self.family = family
        self.sent = 0

    async def one(self, tag: str, gate: asyncio.Event | None = None) -> tuple[float, str | None]:
        number = self.sent
        self.sent += 1
        member = MEMBERS[number % len(MEMBERS)]
        body = {"text": TEXTS[number % len(TEXTS)], "client_message_id": f"{tag}-{number}", "wait": False}
        if gate is not None:
            await gate.wait()
        started = time.perf_counter()
        try:
            async with self.session.post(
                f"{self.base_url}/v1/messages", json=body, headers=self.family.auth(member)
            ) as response:
                payload = await response.read()
                error = None if response.status == 202 else f"HTTP {response.status}: {payload[:200]!r}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        return (time.perf_counter() - started) * 1000, error

    async def burst(self, tag: str, concurrency: int) -> list[tuple[float, str | None]]:
        """`concurrency` requests released at the same instant."""
        gate = asyncio.Event()
        tasks = [asyncio.create_task(self.one(tag, gate)) for _ in range(concurrency)]
        await asyncio.sleep(0)  # let every task reach the gate
        gate.set()
        return await asyncio.gather(*tasks)

    async def sequential(self, tag: str, count: int) -> list[tuple[float, str | None]]:
        return [await self.one(tag) for _ in range(count)]


def _session() -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=0)  # no client-side cap: all requests go at once
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S))


def _errors(results: list[tuple[float, str | None]]) -> list[str]:
    return [error for _, error in results if error is not None]


async def measure(base_url: str, family: h.Family, concurrency: int, rounds: int) -> dict[str, Any]:
    """Warm up, time requests one at a time, then `rounds` bursts of `concurrency` requests released at once."""
    async with _session() as session:
        load = Load(session, base_url, family)
        warm = await load.burst("warmup", WARMUP)
        h.progress(f"warm-up: {WARMUP} concurrent requests, {len(_errors(warm))} errors")
        seq = [ms for ms, error in await load.sequential("seq", SEQUENTIAL) if error is None]
        h.progress(f"sequential: {SEQUENTIAL} requests one at a time, p50 {h.percentile(seq, 50):.2f} ms")
        bursts: list[tuple[float, str | None]] = []
        per_round_p99, per_round_rps = [], []
        for number in range(rounds):
            await asyncio.sleep(0.5)  # let the previous burst's connections and Postgres settle
            got = await load.burst(f"burst{number}", concurrency)
            bursts += got
            ok_ms = [ms for ms, error in got if error is None]
            per_round_p99.append(round(h.percentile(ok_ms, 99), 2))
            per_round_rps.append(concurrency / (max(ok_ms, default=math.inf) / 1000))
            h.progress(
                f"burst {number + 1}/{rounds}: {concurrency} concurrent, p50 {h.percentile(ok_ms, 50):.1f} ms, "
                f"p99 {h.percentile(ok_ms, 99):.1f} ms, max {max(ok_ms, default=math.nan):.1f} ms, "
                f"{len(_errors(got))} errors"
            )
    errors = _errors(bursts)
    for error in sorted(set(errors))[:5]:
        h.progress(f"error: {error}")
    stats, seq_stats = h.summary([ms for ms, error in bursts if error is None]), h.summary(seq)
    return {
        "ack_p50_ms": stats.get("p50"),
        "ack_p99_ms": stats.get("p99"),
        "errors": len(errors),
        "requests": len(bursts),
        "concurrency": concurrency,
        "rounds": rounds,
        "ack_p95_ms": stats.get("p95"),
        "ack_max_ms": stats.get("max"),
        "ack_p99_per_round_ms": per_round_p99,
        "sequential_ack_p50_ms": seq_stats.get("p50"),
        "sequential_ack_p99_ms": seq_stats.get("p99"),
        "burst_acks_per_s": round(sum(per_round_rps) / len(per_round_rps), 1) if per_round_rps else None,
    }


async def profile(base_url: str, family: h.Family, concurrency: int) -> dict[str, Any]:
    """One burst against the instrumented server for the phase timings, another under cProfile for its CPU."""
    async with _session() as session:
        load = Load(session, base_url, family)
        await load.burst("pwarmup", WARMUP)
        async with session.get(f"{base_url}/_bench/phases?reset=1") as response:
            await response.read()
        got = await load.burst("profiled", concurrency)
        async with session.get(f"{base_url}/_bench/phases?reset=1&cprofile=1") as response:
            phases = await response.json()
        await load.burst("cprofiled", concurrency)
        async with session.get(f"{base_url}/_bench/phases") as response:
            phases["cpu"] = (await response.json()).get("cpu")
    ok_ms = [ms for ms, error in got if error is None]
    phases["client_ack"] = {"n": len(ok_ms), **h.summary(ok_ms, 3)}
    return phases


def show_profile(phases: dict[str, Any]) -> None:
    for name, stats in phases.items():
        if isinstance(stats, dict) and "p50" in stats:
            h.progress(
                f"  {name:28s} n={stats['n']:4d}  p50 {stats['p50']:8.3f}  p99 {stats['p99']:8.3f}  "
                f"max {stats['max']:8.3f} ms"
            )
    h.progress(f"  max requests in the handler at once: {phases.get('max_inflight')}")
    h.progress(
        f"  inbox statements for the burst: {phases.get('inbox_statements')} "
        f"(largest {phases.get('inbox_batch_max')} messages)"
    )
    cpu = phases.get("cpu") or {}
    h.progress(f"  web process CPU during a burst (cProfile, own time): {cpu.get('total_ms')} ms")
    for package, share in (cpu.get("own_time_share_by_package") or {}).items():
        h.progress(f"    {share * 100:5.1f}%  {package}")
    for row in (cpu.get("top_functions") or [])[:8]:
        h.progress(f"    {row['ms']:7.1f} ms  {row['calls']:6d} calls  {row['function']}")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    with h.postgres_cluster() as cluster:
        await h.migrate_cluster(cluster)
        admin = await asyncpg.connect(cluster.admin_dsn)
        try:
            family = await h.make_family(admin, "Acks", MEMBERS)
        finally:
            await admin.close()
        async with h.redis_db(REDIS_DB) as redis:
            async with server_process(cluster, redis, profile=False, pool_max=args.pool_max) as base_url:
                result = await measure(base_url, family, args.concurrency, args.rounds)
            result["web_db_pool_max"] = args.pool_max
            if args.profile:
                async with server_process(cluster, redis, profile=True, pool_max=args.pool_max) as base_url:
                    result["profile"] = await profile(base_url, family, args.concurrency)
                show_profile(result["profile"])
        admin = await asyncpg.connect(cluster.admin_dsn)
        try:
            # Every acknowledged message is in the inbox (a measurement, not an assertion).
            result["inbox_rows"] = await admin.fetchval("SELECT count(*) FROM inbox")
        finally:
            await admin.close()
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=200, help="requests released at once per burst")
    parser.add_argument("--rounds", type=int, default=5, help="bursts measured (their samples are pooled)")
    parser.add_argument("--pool-max", type=int, default=10, help="the web process's DATABASE_POOL_MAX (default 10)")
    parser.add_argument("--no-profile", dest="profile", action="store_false", help="skip the instrumented burst")
    args = parser.parse_args()
    if not (1 <= args.concurrency <= 1000 and 1 <= args.rounds <= 20 and 1 <= args.pool_max <= 90):
        parser.error("--concurrency must be 1..1000, --rounds 1..20, --pool-max 1..90")
    return h.run_benchmark(
        run(args),
        lambda r: (
            f"ack p50 {r['ack_p50_ms']} ms, p99 {r['ack_p99_ms']} ms (target <= 25), "
            f"{r['errors']} errors of {r['requests']}"
        ),
    )


if __name__ == "__main__":
    raise SystemExit(main())
