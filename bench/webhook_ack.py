"""Acknowledgement cost: 200 concurrent `POST /v1/messages` with `"wait": false`, answered `202` by the web API,
as a ratio to plain aiohttp servers that only answer 202, measured in the same run on the same load.

    .venv/bin/python bench/webhook_ack.py [--concurrency 200] [--rounds 5] [--processes 2] [--no-profile]

The web API runs as `faa serve` runs it with WEB_PROCESSES=2: a supervisor and two web processes sharing a port
on 127.0.0.1 (`bench/_web_process.py serve`), logging at INFO as deployed, into the file the benchmark names at
start. A request is what a webhook's is: token lookup, the inbox row committed (group commit), the arq job
enqueued, then 202. Beside it run as many aiohttp processes whose handler reads the body and answers 202
(`noop`): the floor of this machine for the same HTTP exchange. This process is only the load generator
(`bench/_load.py`: prepared requests on kept connections, a burst on epoll outside any event loop). No worker
runs, so the jobs just queue (Redis database 15, flushed after).

Each of `rounds` rounds sends one burst to FAA and one to the no-op servers, in alternating order, so both meet
the machine in the same second. Per burst: every request's time client-side (written → 202 body read) and the CPU
time of each server's whole process tree (per-thread `schedstat`, `bench/_cpu.py`), plus PostgreSQL's during
FAA's bursts. The figures are ratios, which a shared or throttled machine moves far less than absolute times:

- `ack_p99_ratio_to_noop`: the median over rounds of FAA's burst p99 / the no-op servers' burst p99;
- `ack_cpu_ratio_to_noop`: the median over rounds of FAA's web-process CPU / the no-op servers' CPU for the same
  burst (a round in which a web process runs a full garbage collection is far off in both);
- `sequential_p50_ratio_to_noop`: FAA's p50 / theirs for 50 requests one at a time (service time, no queueing).

The absolute times and CPU microseconds are printed beside them (`ack_p99_ms`, `web_cpu_us_per_ack`,
`postgres_cpu_us_per_ack`, ...), with FAA's fresh first burst and a burst on new connections; none is a target.
Unless `--no-profile`, one instrumented FAA process then repeats a burst and reports where its time went (token
lookup, inbox group commit and its statements, enqueue, event loop lag, GC pauses, a cProfile by package). The
last stdout line is the JSON of the figures (reported, never asserted).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import statistics
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _cpu  # noqa: E402
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
import _load  # noqa: E402
import aiohttp  # noqa: E402
import asyncpg  # noqa: E402

from bot.ops import lifecycle  # noqa: E402

REDIS_DB = 15
MEMBERS = ("Anna", "Ben", "Tom", "Lea")
SEQUENTIAL = 50  # requests one at a time to each server: the service time without queueing
TEXTS = (
    "I spent 12.50 euros on groceries at Lidl",
    "Tom has football practice on Thursday at 5",
    "How much did we spend on fuel this month?",
    "The dentist said Lea should floss more",
)


@dataclass(frozen=True)
class Server:
    base_url: str
    pid: int  # the process `bench/_web_process.py serve` runs in; its web processes are its children


@contextlib.asynccontextmanager
async def server_process(
    cluster: h.Cluster, redis: str, *, profile: bool, pool_max: int, processes: int = 1, noop: bool = False
) -> AsyncIterator[Server]:
    """Start `python bench/_web_process.py serve` and yield it; stop it by closing its stdin."""
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
        kind = " (instrumented)" if profile else " (no-op)" if noop else ""
        h.progress(f"web server process {proc.pid} listening on {base_url}{kind}")
        yield Server(base_url, proc.pid)
    finally:
        with contextlib.suppress(OSError):
            proc.stdin.close()
        try:
            await asyncio.wait_for(asyncio.to_thread(proc.wait), 15)
        except TimeoutError:
            proc.terminate()  # only the process this benchmark started
            await asyncio.to_thread(proc.wait)
        h.progress(f"web server process {proc.pid} stopped (exit code {proc.returncode})")


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


def _errors(results: list[_load.Result]) -> list[str]:
    return [error for _, error in results if error is not None]


def _ok(results: list[_load.Result]) -> list[float]:
    return [ms for ms, error in results if error is None]


def _load_for(base_url: str) -> _load.Load:
    host, port = base_url.removeprefix("http://").split(":")
    return _load.Load(host, int(port))


@dataclass
class Side:
    """One server under the benchmark's load: its connections, its acks and the CPU its process tree spent."""

    name: str
    load: _load.Load
    cpu: _cpu.TreeCPU
    acks: list[_load.Result] = field(default_factory=list)
    p99_per_round: list[float] = field(default_factory=list)
    cpu_per_round: list[float] = field(default_factory=list)  # seconds

    async def burst(self, requests: list[bytes], postgres: _cpu.TreeCPU | None = None) -> list[_load.Result]:
        """One burst on the kept connections, with the CPU the server spent on it (read 0.1 s after the last ack,
        so that what a server does after answering counts too)."""
        self.cpu.start()
        if postgres is not None:
            postgres.start()
        got = self.load.burst(requests, expect=202)
        await asyncio.sleep(0.1)
        self.cpu_per_round.append(self.cpu.stop())
        if postgres is not None:
            postgres.stop()
        self.acks += got
        self.p99_per_round.append(round(h.percentile(_ok(got), 99), 2))
        return got


async def measure(
    faa_server: Server, noop_server: Server, postgres_pid: int | None, family: h.Family, concurrency: int, rounds: int
) -> dict[str, Any]:
    """FAA's first burst (cold: empty caches, new pool connections); requests one at a time to each server in
    turn; `rounds` rounds of one burst to each on kept connections, in alternating order (the figures); then one
    more burst to FAA on new connections."""
    requests = Requests(family)
    faa = Side("FAA", _load_for(faa_server.base_url), _cpu.TreeCPU(faa_server.pid))
    noop = Side("no-op", _load_for(noop_server.base_url), _cpu.TreeCPU(noop_server.pid))
    postgres = _cpu.TreeCPU(postgres_pid) if postgres_pid is not None else None
    _load.settle_heap()
    cold = faa.load.burst_on_new_connections(requests.make("cold", concurrency), expect=202)
    h.progress(f"FAA's first burst, each on a new connection: p99 {h.percentile(_ok(cold), 99):.1f} ms")
    faa.load.open(concurrency)
    noop.load.open(concurrency)
    try:
        sequential: dict[str, list[float]] = {"FAA": [], "no-op": []}
        for _ in range(SEQUENTIAL):
            for side in (faa, noop):
                sequential[side.name] += _ok(side.load.burst(requests.make("seq", 1), expect=202))
        seq_p50 = {name: h.percentile(ms, 50) for name, ms in sequential.items()}
        h.progress(
            f"one at a time, {SEQUENTIAL} each: p50 FAA {seq_p50['FAA']:.2f} ms, no-op {seq_p50['no-op']:.2f} ms"
        )
        noop.load.burst(requests.make("noop-warmup", concurrency), expect=202)
        for number in range(rounds):
            for side in (faa, noop) if number % 2 == 0 else (noop, faa):
                await asyncio.sleep(0.4)  # let the previous burst's work settle
                await side.burst(requests.make(f"{side.name}-{number}", concurrency), postgres if side is faa else None)
            h.progress(
                f"round {number + 1}/{rounds} ({'FAA' if number % 2 == 0 else 'no-op'} first): {concurrency} at once, "
                f"p99 FAA {faa.p99_per_round[-1]:.1f} ms / no-op {noop.p99_per_round[-1]:.1f} ms, "
                f"CPU FAA {_us(faa.cpu_per_round[-1], concurrency)} / no-op {_us(noop.cpu_per_round[-1], concurrency)}"
                f" µs per ack, {len(_errors(faa.acks[-concurrency:]))} errors"
            )
    finally:
        faa.load.close()
        noop.load.close()
    await asyncio.sleep(0.5)
    fresh = faa.load.burst_on_new_connections(requests.make("fresh", concurrency), expect=202)
    h.progress(f"FAA, a burst each on a new connection: p99 {h.percentile(_ok(fresh), 99):.1f} ms")
    errors = _errors(faa.acks) + _errors(cold) + _errors(fresh)
    for error in sorted(set(errors))[:5]:
        h.progress(f"error: {error}")
    acks = len(faa.acks)
    faa_stats, noop_stats = h.summary(_ok(faa.acks)), h.summary(_ok(noop.acks))
    measured_cpu = _cpu.available()
    return {
        "ack_p99_ratio_to_noop": _median_ratio(faa.p99_per_round, noop.p99_per_round),
        "ack_cpu_ratio_to_noop": _median_ratio(faa.cpu_per_round, noop.cpu_per_round) if measured_cpu else None,
        "sequential_p50_ratio_to_noop": _ratio(seq_p50["FAA"], seq_p50["no-op"]),
        "ack_p99_ratio_per_round": [_ratio(a, b) for a, b in zip(faa.p99_per_round, noop.p99_per_round, strict=True)],
        "ack_cpu_ratio_per_round": [_ratio(a, b) for a, b in zip(faa.cpu_per_round, noop.cpu_per_round, strict=True)]
        if measured_cpu
        else None,
        "ack_p50_ms": faa_stats.get("p50"),
        "ack_p99_ms": faa_stats.get("p99"),
        "noop_ack_p50_ms": noop_stats.get("p50"),
        "noop_ack_p99_ms": noop_stats.get("p99"),
        "web_cpu_us_per_ack": _us(faa.cpu.total, acks) if measured_cpu else None,
        "noop_cpu_us_per_ack": _us(noop.cpu.total, len(noop.acks)) if measured_cpu else None,
        "postgres_cpu_us_per_ack": _us(postgres.total, acks) if measured_cpu and postgres is not None else None,
        "errors": len(errors),
        "noop_errors": len(_errors(noop.acks)),
        "requests": acks,
        "concurrency": concurrency,
        "rounds": rounds,
        "ack_p99_per_round_ms": faa.p99_per_round,
        "noop_ack_p99_per_round_ms": noop.p99_per_round,
        "sequential_ack_p50_ms": round(seq_p50["FAA"], 2),
        "noop_sequential_ack_p50_ms": round(seq_p50["no-op"], 2),
        "cold_start_burst_p99_ms": round(h.percentile(_ok(cold), 99), 2),
        "new_connections_burst_p99_ms": round(h.percentile(_ok(fresh), 99), 2),
        "burst_acks_per_s": _acks_per_s(_ok(faa.acks), concurrency),
    }


def _ratio(ours: float, floor: float) -> float | None:
    return round(ours / floor, 2) if floor > 0 and not math.isnan(ours) and not math.isnan(floor) else None


def _median_ratio(ours: list[float], floor: list[float]) -> float | None:
    ratios = [r for r in (_ratio(a, b) for a, b in zip(ours, floor, strict=True)) if r is not None]
    return round(statistics.median(ratios), 2) if ratios else None


def _us(cpu_seconds: float, requests: int) -> float | None:
    return round(cpu_seconds / requests * 1e6, 1) if requests else None


def _rounds(ms: list[float], concurrency: int) -> list[list[float]]:
    return [ms[i : i + concurrency] for i in range(0, len(ms), concurrency)]


def _acks_per_s(ms: list[float], concurrency: int) -> float | None:
    """Acks per second in a burst: its requests over its slowest ack, averaged over the bursts."""
    per_round = _rounds(ms, concurrency)
    return round(sum(len(r) / (max(r) / 1000) for r in per_round) / len(per_round), 1) if per_round else None


async def profile(server: Server, family: h.Family, concurrency: int) -> dict[str, Any]:
    """One burst against the instrumented server for the phase timings, another under cProfile for its CPU."""
    base_url, load, requests = server.base_url, _load_for(server.base_url), Requests(family)
    load.open(concurrency)
    try:
        async with aiohttp.ClientSession() as session:  # the control route only; bursts go through `load`
            # Let each burst's last handlers finish before reading, or their samples land in the next report.
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


def postmaster(cluster: h.Cluster) -> int | None:
    """The PostgreSQL server's pid (its backends are its children), from the data folder's postmaster.pid."""
    try:
        return int((cluster.data_dir / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


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
            # Beside FAA, as many servers that only answer 202: the same exchange with nothing of FAA's in it.
            async with (
                server_process(**servers, profile=False) as faa,
                server_process(**servers, profile=False, noop=True) as noop,
            ):
                result = await measure(faa, noop, postmaster(cluster), family, args.concurrency, args.rounds)
            result["web_processes"] = args.processes
            result["web_db_pool_max"] = args.pool_max
            result["web_event_loop"] = "asyncio" if lifecycle.uvloop is None else "uvloop"
            if args.profile:
                async with server_process(cluster, redis, profile=True, pool_max=args.pool_max) as server:
                    result["profile"] = await profile(server, family, args.concurrency)
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
    parser.add_argument(
        "--rounds", type=int, default=5, help="rounds measured: one burst to FAA and one to the no-op servers each"
    )
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
            f"median round: ack p99 {r['ack_p99_ratio_to_noop']}x the no-op servers', web CPU per ack "
            f"{r['ack_cpu_ratio_to_noop']}x theirs (all rounds: {r['web_cpu_us_per_ack']} against "
            f"{r['noop_cpu_us_per_ack']} µs); "
            f"p99 {r['ack_p99_ms']} against {r['noop_ack_p99_ms']} ms; {r['errors']} errors of {r['requests']}"
        ),
    )


if __name__ == "__main__":
    raise SystemExit(main())
