"""The web-server process of `webhook_ack.py`: the web API composed as `faa serve` composes it, on 127.0.0.1.

    python bench/_web_process.py serve      # JSON config on the first line of stdin

It logs as `faa serve` does (INFO) to its stderr, the benchmark's log file. It prints `PORT <n>` once listening
and stops when its stdin closes (so it never outlives the benchmark). With `"processes": n` (n > 1) it runs
`bot.ops.supervisor.serve_processes`, as `faa serve` does with WEB_PROCESSES=n; with `"noop": true` as many aiohttp
servers that only answer 202 (the calibration). With `"profile": true` in the config (one process only) it adds
bench-only instrumentation of the intake path (`PhaseTimer`) and the route `GET /_bench/phases` that reports it.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import json
import multiprocessing
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)
from aiohttp import web  # noqa: E402

import bot.channels.intake  # noqa: E402
from bot.ops import lifecycle  # noqa: E402
from bot.ops.supervisor import serve_processes  # noqa: E402
from engine.deps import Deps  # noqa: E402
from engine.observability import configure_logging  # noqa: E402
from engine.settings import LogSettings  # noqa: E402
from tools.storage import households, inbox  # noqa: E402


class PhaseTimer:
    """Bench-only instrumentation of the intake path in the web process: where a request's time goes.

    It wraps module attributes the request path calls through (no product file changes): token lookup
    (`households.resolve_token`), the inbox group commit (a request's whole wait in `InboxWriter.accept`, each
    shared statement in `inbox.write_many` and its size) and the enqueue (`bot.channels.intake.enqueue_inbound`), plus a
    middleware for the handler's whole time and the event loop's lag.
    """

    def __init__(self) -> None:
        self.samples: dict[str, list[float]] = {}
        self.batches: list[int] = []  # messages per inbox statement
        self.inflight = 0
        self.max_inflight = 0
        self.profiler: cProfile.Profile | None = None

    def add(self, phase: str, seconds: float) -> None:
        self.samples.setdefault(phase, []).append(seconds * 1000.0)

    def report(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: {"n": len(v), **h.summary(v, 3)} for name, v in sorted(self.samples.items())}
        out["max_inflight"] = self.max_inflight
        out["inbox_statements"] = len(self.batches)
        out["inbox_batch_max"] = max(self.batches, default=0)
        if self.profiler is not None:
            self.profiler.disable()
            out["cpu"] = cpu_profile(self.profiler)
            self.profiler = None
        return out

    def reset(self, *, profile: bool = False) -> None:
        """Forget the samples; with `profile`, run cProfile from now until the next report."""
        self.samples.clear()
        self.batches.clear()
        self.max_inflight = 0
        if profile:
            self.profiler = cProfile.Profile()
            self.profiler.enable()

    def install(self, app: web.Application, deps: Deps) -> None:
        timer = self

        def timed(module: Any, name: str, phase: str) -> None:
            original = getattr(module, name)

            async def wrapper(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    timer.add(phase, time.perf_counter() - started)

            setattr(module, name, wrapper)

        timed(households, "resolve_token", "token_lookup_db")
        timed(inbox.InboxWriter, "accept", "inbox_accept")  # waiting for the group commit, and the commit
        timed(bot.channels.intake, "enqueue_inbound", "enqueue_redis")
        write_many = inbox.write_many

        async def counted(conn: Any, messages: Any) -> Any:
            timer.batches.append(len(messages))
            started = time.perf_counter()
            try:
                return await write_many(conn, messages)
            finally:
                timer.add("inbox_write_sql", time.perf_counter() - started)

        inbox.write_many = counted

        @web.middleware
        async def whole(request: web.Request, handler: Any) -> web.StreamResponse:
            timer.inflight += 1
            timer.max_inflight = max(timer.max_inflight, timer.inflight)
            started = time.perf_counter()
            try:
                return await handler(request)
            finally:
                timer.inflight -= 1
                if request.path == "/v1/messages":
                    timer.add("handler_total", time.perf_counter() - started)

        app.middlewares.insert(0, whole)
        gc_started: list[float] = []

        def collected(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                gc_started[:] = [time.perf_counter()]
            elif gc_started:
                timer.add(f"gc_pause_gen{info['generation']}", time.perf_counter() - gc_started[0])

        gc.callbacks.append(collected)

        async def stats(request: web.Request) -> web.Response:
            body = timer.report()
            if request.query.get("reset"):
                timer.reset(profile=bool(request.query.get("cprofile")))
            return web.json_response(body)

        app.router.add_get("/_bench/phases", stats)


_PACKAGES = ("aiohttp", "asyncpg", "arq", "redis", "pydantic", "pydantic_core", "structlog", "multidict", "yarl")


def _package(filename: str, name: str) -> str:
    if filename == "~":  # C functions: socket I/O and the selector are the kernel's share
        io = any(key in name for key in ("send", "recv", "poll", "select", "connect", "accept"))
        return "builtins: socket/select" if io else "builtins: other"
    if "site-packages/" in filename:
        package = filename.split("site-packages/", 1)[1].split("/", 1)[0]
        return package if package in _PACKAGES else f"other: {package}"
    if filename.startswith(str(h.REPO)) and "/.venv/" not in filename:
        return "faa (bot/engine/tools) + bench"
    if "/asyncio/" in filename:
        return "asyncio"
    return "stdlib: other"


def cpu_profile(profiler: cProfile.Profile, top: int = 15) -> dict[str, Any]:
    """A cProfile run summarised: own CPU time by package, and the functions with the most own time."""
    stats = pstats.Stats(profiler)
    by_package: dict[str, float] = {}
    rows = []
    for (filename, line, name), (_, calls, tottime, _cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        label = _package(filename, name)
        by_package[label] = by_package.get(label, 0.0) + tottime
        where = filename.rsplit("site-packages/", 1)[-1].replace(str(h.REPO) + "/", "")
        rows.append((tottime, calls, f"{where}:{line}({name})"))
    rows.sort(reverse=True)
    total = sum(by_package.values()) or 1.0
    shares = sorted(by_package.items(), key=lambda kv: -kv[1])
    return {
        "total_ms": round(total * 1000, 1),
        "own_time_share_by_package": {k: round(v / total, 3) for k, v in shares if v / total >= 0.005},
        "top_functions": [{"ms": round(t * 1000, 1), "calls": c, "function": f} for t, c, f in rows[:top]],
    }


async def _loop_lag(timer: PhaseTimer, stop: asyncio.Event, interval: float = 0.005) -> None:
    """How late the event loop wakes a 5 ms sleeper: the time a ready request waits for the CPU."""
    while not stop.is_set():
        started = time.perf_counter()
        await asyncio.sleep(interval)
        timer.add("event_loop_lag", time.perf_counter() - started - interval)


async def _serve_process(config: dict[str, Any]) -> None:
    configure_logging(LogSettings())  # stderr: the benchmark's log file, also for the processes started here
    h.loopback_only()
    cluster = h.Cluster(config["admin_dsn"], config["app_dsn"], Path(config.get("data_dir", ".")))
    settings = h.make_settings(
        cluster, config["llm_base_url"], config["redis_url"], pool_min=config["pool_min"], pool_max=config["pool_max"]
    )
    processes = config.get("processes", 1)
    if processes > 1:  # `faa serve` with WEB_PROCESSES: this process supervises, its children serve
        await _serve_processes(settings, processes)
        return
    timer = PhaseTimer() if config.get("profile") else None
    stop = asyncio.Event()
    async with h.web_server(settings, app_hook=timer.install if timer else None) as server:
        lag = asyncio.create_task(_loop_lag(timer, stop)) if timer else None
        print(f"PORT {server.base_url.rsplit(':', 1)[1]}", flush=True)
        await _stdin_closed()
        stop.set()
        if lag is not None:
            await lag


async def _serve_processes(settings: Any, processes: int) -> None:
    port = h.free_port()
    web_settings = settings.web.model_copy(update={"port": port, "processes": processes})
    stop, ready = asyncio.Event(), asyncio.Event()
    supervisor = asyncio.create_task(
        serve_processes(settings.model_copy(update={"web": web_settings}), stop=stop, ready=ready)
    )
    await asyncio.wait({supervisor, asyncio.create_task(ready.wait())}, return_when=asyncio.FIRST_COMPLETED)
    if supervisor.done():
        supervisor.result()  # raises why the web processes did not start
    print(f"PORT {port}", flush=True)
    await _stdin_closed()
    stop.set()
    await supervisor


async def _serve_noop(processes: int) -> None:
    """The calibration: `processes` aiohttp servers on one port whose handler reads the body and answers 202 with
    a body like the API's, nothing else. The load generator's figure against them is the floor of this machine."""
    port = h.free_port()
    spawn = multiprocessing.get_context("spawn")
    children = []
    for _ in range(processes):
        ours, theirs = spawn.Pipe()
        child = spawn.Process(target=_noop_server, args=(port, theirs))
        child.start()
        children.append((child, ours))
    for _, ours in children:
        await asyncio.to_thread(ours.recv_bytes)  # "ready"
    print(f"PORT {port}", flush=True)
    await _stdin_closed()
    for child, ours in children:
        ours.close()
        await asyncio.to_thread(child.join, 15)


def _noop_server(port: int, lifeline: Any) -> None:
    configure_logging(LogSettings())  # not structlog's default, stdout: that is the pipe that carries "PORT n"

    async def accepted(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response({"message_id": 1, "status": "queued", "duplicate": False}, status=202)

    async def run() -> None:
        app = web.Application()
        app.router.add_post("/v1/messages", accepted)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, backlog=1024, reuse_port=True).start()
        stop = asyncio.Event()
        asyncio.get_running_loop().add_reader(lifeline.fileno(), stop.set)
        lifeline.send_bytes(b"ready")
        await stop.wait()
        await runner.cleanup()

    lifecycle.run(run())


async def _stdin_closed() -> None:
    """Run until the parent closes our stdin (or dies)."""
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


def main(argv: list[str]) -> int:
    if argv[:1] != ["serve"]:
        print("usage: python bench/_web_process.py serve   (JSON config on the first line of stdin)", file=sys.stderr)
        return 2
    config = json.loads(sys.stdin.readline())
    lifecycle.run(_serve_noop(config["processes"]) if config.get("noop") else _serve_process(config))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
