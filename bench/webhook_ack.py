"""Time to acknowledge: 200 concurrent `POST /v1/messages` with `"wait": false`, answered `202` by the web API.

The web API runs as `faa serve` runs it with WEB_PROCESSES=2 (one per core of the benchmark machine): a
supervisor and two web processes sharing a port on 127.0.0.1 (`bench/_web_process.py serve`); this process is
only the load generator (`bench/_load.py`: prepared requests on kept connections, as a webhook provider sends;
a burst runs on epoll, outside this process's event loop).
Each request has its own client_message_id and a valid member token; no worker runs, so the jobs just queue
(Redis is flushed after).

    .venv/bin/python bench/webhook_ack.py [--concurrency 200] [--rounds 5] [--processes 2] [--no-profile]

Measured client-side: from just before the request is written until the 202 body is read. The figure pools the
`rounds` bursts on kept connections; beside it are the fresh server's first burst (empty caches, new pool
connections) and a burst on new connections. After each burst the same burst goes to as many aiohttp processes
that only answer 202, started beside FAA's (`noop_server_ack_p99_ms`, and per round: the floor of this machine in
that second), and a fixed loop of Python is timed just before and after each burst (`cpu_probe_ms_per_round`, the
slower of the two): the speed of the machine, which changes within seconds, while the burst ran. The web
processes log at INFO, as `faa serve` does by default, into the file the benchmark names at start. After the clean
run one instrumented server process repeats a burst and reports where its time went (token lookup, inbox group
commit and its statements, enqueue, event loop lag, GC pauses). The last stdout line is the JSON of the figures;
target (reported, never asserted): ack p99 <= 25 ms, 0 errors.
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
import _load  # noqa: E402
import aiohttp  # noqa: E402
import asyncpg  # noqa: E402

from bot.ops import lifecycle  # noqa: E402

REDIS_DB = 15
MEMBERS = ("Anna", "Ben", "Tom", "Lea")
SEQUENTIAL = 50  # one at a time first: the service time of one request without queueing
TEXTS = (
    "I spent 12.50 euros on groceries at Lidl",
    "Tom has football practice on Thursday at 5",
    "How much did we spend on fuel this month?",
    "The dentist said Lea should floss more",
)


@contextlib.asynccontextmanager
async def server_process(
    cluster: h.Cluster, redis: str, *, profile: bool, pool_max: int, processes: int = 1, noop: bool = False
) -> AsyncIterator[str]:
    """Start `python bench/_web_process.py serve` and yield its base URL; stop it by closing its stdin."""
    config = {
        "admin_dsn": cluster.admin_dsn,
        "app_dsn": cluster.app_dsn,
        "redis_url": redis,
        "llm_base_url": "http://127.0.0.1:9/v1",  # required by the settings; the web process never calls it
        "pool_min": 2,
        "pool_max": pool_max,
        "profile": profile,
        "processes": processes,
        "noop": noop,
    }
    with h.log_file().open("ab") as log:  # the server's own errors land there too
        proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve().parent / "_web_process.py"), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            cwd=str(h.REPO),
        )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(config) + "\n")
        proc.stdin.flush()
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
        if not line.startswith("PORT "):
            raise RuntimeError(
                f"the web server process did not start (said {line!r}, exit code {proc.poll()}; see {h.log_file()})"
            )
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


class Requests:
    """The bodies of the benchmark: distinct client_message_ids, the members' tokens and texts in turn."""

    def __init__(self, family: h.Family) -> None:
        self.family = family
        self.sent = 0

    def make(self, tag: str, count: int) -> list[bytes]:
        out = []
        for number in range(self.sent, self.sent + count):
            body = {"text": TEXTS[number % len(TEXTS)], "client_message_id": f"{tag}-{number}", "wait": False}
            out.append(_load.post("/v1/messages", body, self.family.auth(MEMBERS[number % len(MEMBERS)])))
        self.sent += count
        return out


def cpu_probe() -> float:
    """Milliseconds this process takes for a fixed loop of Python: how fast the machine runs right now. Timed just
    before and just after each burst, it tells a burst slowed by the machine from one slowed by the server (the
    VM's speed changes; seen here: ~1.3 ms at its usual speed, ~2.3 ms for seconds at a time, now and then ~6)."""
    started = time.perf_counter()
    total = 0
    for number in range(60_000):
        total += number
    return round((time.perf_counter() - started) * 1000, 2)


def _errors(results: list[_load.Result]) -> list[str]:
    return [error for _, error in results if error is not None]


def _ok(results: list[_load.Result]) -> list[float]:
    return [ms for ms, error in results if error is None]


def _load_for(base_url: str) -> _load.Load:
    host, port = base_url.removeprefix("http://").split(":")
    return _load.Load(host, int(port))


async def measure(base_url: str, floor_url: str, family: h.Family, concurrency: int, rounds: int) -> dict[str, Any]:
    """The server's first burst (cold: empty caches, new pool connections), one request at a time, `rounds`
    bursts on kept connections (the figure), each followed by the same burst against the no-op servers (the
    machine's floor in that second), then one more burst on new connections."""
    load, floor_load, requests = _load_for(base_url), _load_for(floor_url), Requests(family)
    _load.settle_heap()
    cold = load.burst_on_new_connections(requests.make("cold", concurrency), expect=202)
    h.progress(f"first burst of the fresh server, each on a new connection: p99 {h.percentile(_ok(cold), 99):.1f} ms")
    load.open(concurrency)
    floor_load.open(concurrency)
    try:
        seq: list[float] = []
        for _ in range(SEQUENTIAL):
            seq += _ok(load.burst(requests.make("seq", 1), expect=202))
        h.progress(f"sequential: {SEQUENTIAL} requests one at a time, p50 {h.percentile(seq, 50):.2f} ms")
        floor_load.burst(requests.make("floor-warmup", concurrency), expect=202)
        pooled: list[_load.Result] = []
        floor: list[_load.Result] = []
        probes: list[float] = []
        for number in range(rounds):
            await asyncio.sleep(0.5)  # let the previous burst's jobs and Postgres settle
            burst = requests.make(f"burst{number}", concurrency)
            before = cpu_probe()
            got = load.burst(burst, expect=202)
            probes.append(max(before, cpu_probe()))
            await asyncio.sleep(0.1)
            floor_got = floor_load.burst(requests.make(f"floor{number}", concurrency), expect=202)
            pooled += got
            floor += floor_got
            ok_ms = _ok(got)
            h.progress(
                f"burst {number + 1}/{rounds}: {concurrency} at once, p50 {h.percentile(ok_ms, 50):.1f} ms, "
                f"p99 {h.percentile(ok_ms, 99):.1f} ms, max {max(ok_ms, default=math.nan):.1f} ms, "
                f"{len(_errors(got))} errors; the no-op servers right after: "
                f"p99 {h.percentile(_ok(floor_got), 99):.1f} ms; CPU probe {probes[-1]} ms"
            )
    finally:
        load.close()
        floor_load.close()
    await asyncio.sleep(0.5)
    fresh = load.burst_on_new_connections(requests.make("fresh", concurrency), expect=202)
    h.progress(f"a burst each on a new connection: p99 {h.percentile(_ok(fresh), 99):.1f} ms")
    errors = _errors(pooled) + _errors(cold) + _errors(fresh)
    for error in sorted(set(errors))[:5]:
        h.progress(f"error: {error}")
    ok_ms, floor_ms = _ok(pooled), _ok(floor)
    stats, seq_stats = h.summary(ok_ms), h.summary(seq)
    return {
        "ack_p50_ms": stats.get("p50"),
        "ack_p99_ms": stats.get("p99"),
        "errors": len(errors),
        "requests": len(pooled),
        "concurrency": concurrency,
        "rounds": rounds,
        "ack_p95_ms": stats.get("p95"),
        "ack_max_ms": stats.get("max"),
        "ack_p99_per_round_ms": _per_round_p99(ok_ms, concurrency),
        "noop_server_ack_p99_ms": h.summary(floor_ms).get("p99"),
        "noop_server_ack_p99_per_round_ms": _per_round_p99(floor_ms, concurrency),
        "noop_server_errors": len(_errors(floor)),
        "cpu_probe_ms_per_round": probes,
        "new_connections_burst_p99_ms": round(h.percentile(_ok(fresh), 99), 2),
        "cold_start_burst_p99_ms": round(h.percentile(_ok(cold), 99), 2),
        "sequential_ack_p50_ms": seq_stats.get("p50"),
        "sequential_ack_p99_ms": seq_stats.get("p99"),
        "burst_acks_per_s": _acks_per_s(ok_ms, concurrency),
    }


def _rounds(ms: list[float], concurrency: int) -> list[list[float]]:
    return [ms[i : i + concurrency] for i in range(0, len(ms), concurrency)]


def _per_round_p99(ms: list[float], concurrency: int) -> list[float]:
    return [round(h.percentile(r, 99), 2) for r in _rounds(ms, concurrency)]


def _acks_per_s(ms: list[float], concurrency: int) -> float | None:
    """Acks per second in a burst: its requests over its slowest ack, averaged over the bursts."""
    per_round = _rounds(ms, concurrency)
    return round(sum(len(r) / (max(r) / 1000) for r in per_round) / len(per_round), 1) if per_round else None


async def profile(base_url: str, family: h.Family, concurrency: int) -> dict[str, Any]:
    """One burst against the instrumented server for the phase timings, another under cProfile for its CPU."""
    load, requests = _load_for(base_url), Requests(family)
    load.open(concurrency)
    try:
        async with aiohttp.ClientSession() as session:  # the control route only; bursts go through `load`
            # The handlers enqueue after their 202: wait for them before each read, or their samples land in the
            # next burst's report.
            load.burst(requests.make("pwarmup", concurrency), expect=202)
            await asyncio.sleep(0.3)
            async with session.get(f"{base_url}/_bench/phases?reset=1") as response:
                await response.read()
            got = load.burst(requests.make("profiled", concurrency), expect=202)
            await asyncio.sleep(0.3)
            async with session.get(f"{base_url}/_bench/phases?reset=1&cprofile=1") as response:
                phases = await response.json()
            load.burst(requests.make("cprofiled", concurrency), expect=202)
            await asyncio.sleep(0.3)
            async with session.get(f"{base_url}/_bench/phases") as response:
                phases["cpu"] = (await response.json()).get("cpu")
    finally:
        load.close()
    phases["client_ack"] = {"n": len(_ok(got)), **h.summary(_ok(got), 3)}
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
            servers = {"cluster": cluster, "redis": redis, "pool_max": args.pool_max, "processes": args.processes}
            # Beside FAA, as many servers that only answer 202: how much of each burst's figure is the machine's floor.
            async with (
                server_process(**servers, profile=False) as base_url,
                server_process(**servers, profile=False, noop=True) as floor_url,
            ):
                result = await measure(base_url, floor_url, family, args.concurrency, args.rounds)
            result["web_processes"] = args.processes
            result["web_db_pool_max"] = args.pool_max
            result["web_event_loop"] = "asyncio" if lifecycle.uvloop is None else "uvloop"
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
    parser.add_argument(
        "--processes", type=int, default=2, help="WEB_PROCESSES of the measured server (default 2: one per core)"
    )
    parser.add_argument("--no-profile", dest="profile", action="store_false", help="skip the instrumented burst")
    args = parser.parse_args()
    if not (1 <= args.concurrency <= 1000 and 1 <= args.rounds <= 20 and 1 <= args.pool_max <= 90):
        parser.error("--concurrency must be 1..1000, --rounds 1..20, --pool-max 1..90")
    if not 1 <= args.processes <= 16:
        parser.error("--processes must be 1..16")
    return h.run_benchmark(
        run(args),
        lambda r: (
            f"ack p50 {r['ack_p50_ms']} ms, p99 {r['ack_p99_ms']} ms (target <= 25), "
            f"{r['errors']} errors of {r['requests']}"
        ),
    )


if __name__ == "__main__":
    raise SystemExit(main())
