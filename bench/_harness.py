"""Shared set-up for the benchmarks: the same real pieces the end-to-end tests start, sized like production.

- a throwaway embedded PostgreSQL 18 + pgvector cluster in a temp dir, migrated with EMBEDDING_DIM 384;
- the local Redis on a database number of the benchmark's own, flushed at start and end;
- the scripted OpenAI-compatible server from `tests/fakes/` (zero latency), timing its own handling;
- the web API on a real TCP socket on 127.0.0.1 and, when asked, an arq worker in the same event loop;
- a loopback-only guard: nothing here may open a connection to another host.

Progress goes to stderr; a benchmark's figures go to stdout as one JSON object on the last line.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import math
import os
import platform
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # `tests` is not an installed package; the benchmarks import from it

import asyncpg  # noqa: E402
from aiohttp import web  # noqa: E402
from arq import create_pool  # noqa: E402
from arq.connections import RedisSettings as ArqRedisSettings  # noqa: E402

from bot.ops import lifecycle  # noqa: E402
from bot.web.app import create_app  # noqa: E402
from engine.capabilities import routing  # noqa: E402
from engine.composition import close_deps, open_deps  # noqa: E402
from engine.deps import Deps  # noqa: E402
from engine.observability import configure_logging  # noqa: E402
from engine.settings import (  # noqa: E402
    DatabaseSettings,
    EmbeddingSettings,
    EngineSettings,
    LLMSettings,
    LogSettings,
    RedisSettings,
    Settings,
    WebSettings,
    WorkerSettings,
)
from migrations.runner import migrate  # noqa: E402
from tests import system  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tools.errors import EmbeddingError  # noqa: E402
from tools.infra import local_postgres  # noqa: E402
from tools.infra.clock import Clock  # noqa: E402
from tools.storage.database import dsn_with_user  # noqa: E402
from worker.main import background_worker  # noqa: E402

EMBEDDING_DIM = 384  # production's default (EmbeddingSettings.dim)
APP_ROLE = "faa_app"
REDIS_BASE = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379")

_T0 = time.monotonic()
_LOG_FILE: Path | None = None


# ---------------------------------------------------------------------------------------------------- output


def progress(message: str) -> None:
    """One human-readable progress line on stderr, with the seconds since the benchmark started."""
    print(f"[{time.monotonic() - _T0:7.1f}s] {message}", file=sys.stderr, flush=True)


def run_benchmark(
    body: Coroutine[Any, Any, dict[str, Any]],
    summary: Callable[[dict[str, Any]], str],
    *,
    runner: Callable[[Coroutine[Any, Any, dict[str, Any]]], dict[str, Any]] = lifecycle.run,
) -> int:
    """Run a benchmark loopback-only, logging to a file, print its summary to stderr and its figures as the last line.

    `runner` runs `body`: by default on the loop FAA's processes run on, as the parts of FAA hosted here do."""
    log_to_file()
    loopback_only()
    started = time.monotonic()
    result = runner(body)
    result["total_s"] = round(time.monotonic() - started, 1)
    result["python"] = interpreter()
    progress(summary(result))
    emit(result)
    return 0


def interpreter() -> str:
    """The Python the figures were measured on: version and the real path of the build, which moves the figures by
    more than the machine's noise (an optimised CPython against pyenv's default build: docs/operations.md)."""
    return f"{platform.python_version()} ({os.path.realpath(sys.executable)})"


def emit(figures: dict[str, Any]) -> None:
    """The benchmark's figures: one JSON object, the last line of stdout."""
    sys.stdout.flush()
    print(json.dumps(figures, sort_keys=False), flush=True)


def log_file() -> Path:
    """Where this benchmark's FAA processes log (one file per run, kept for a look afterwards)."""
    global _LOG_FILE
    if _LOG_FILE is None:
        handle, name = tempfile.mkstemp(prefix="faa-bench-", suffix=".log")
        os.close(handle)
        _LOG_FILE = Path(name)
        progress(f"FAA's log (INFO, JSON lines, as deployed): {_LOG_FILE}")
    return _LOG_FILE


def log_to_file() -> None:
    """Log as FAA does by default (INFO, JSON lines), into `log_file()` instead of the terminal: the figures
    include what logging costs, and the progress lines stay readable."""
    configure_logging(LogSettings(), stream=log_file().open("a", encoding="utf-8"))


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear between closest ranks; NaN for no values."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(values: Sequence[float], digits: int = 2) -> dict[str, float]:
    """p50 / p95 / p99 / mean / max of a list of milliseconds, rounded."""
    if not values:
        return {}
    return {
        "p50": round(percentile(values, 50), digits),
        "p95": round(percentile(values, 95), digits),
        "p99": round(percentile(values, 99), digits),
        "mean": round(sum(values) / len(values), digits),
        "max": round(max(values), digits),
    }


# ---------------------------------------------------------------------------------------------------- network


_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex


def _check_loopback(sock: socket.socket, address: Any) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6):
        return  # Unix sockets (PostgreSQL's) are local by definition
    host = address[0] if isinstance(address, tuple) else address
    try:
        loopback = ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise OSError(f"benchmark network guard: refusing to connect to {host!r} (loopback only)")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check_loopback(self, address)
    return _original_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check_loopback(self, address)
    return _original_connect_ex(self, address)


def loopback_only() -> None:
    """From now on this process may only connect to loopback addresses and Unix sockets."""
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]


# ---------------------------------------------------------------------------------------------------- PostgreSQL


@dataclass(frozen=True)
class Cluster:
    admin_dsn: str
    app_dsn: str
    data_dir: Path


@contextlib.contextmanager
def postgres_cluster() -> Iterator[Cluster]:
    """A throwaway embedded PostgreSQL 18 + pgvector cluster in a temp dir, deleted on exit."""
    root = Path(tempfile.mkdtemp(prefix="faa-bench-pg-"))
    started = time.monotonic()
    server = local_postgres.start(root / "data", temporary=True)
    admin = server.get_uri()
    progress(f"embedded PostgreSQL up in {time.monotonic() - started:.1f}s ({root})")
    try:
        yield Cluster(admin_dsn=admin, app_dsn=dsn_with_user(admin, APP_ROLE), data_dir=root / "data")
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)
        progress("embedded PostgreSQL stopped and deleted")


async def migrate_cluster(cluster: Cluster) -> None:
    """Migrate, then vacuum and analyze every database, as a server that has run a while has been.

    A new cluster's catalogs were never vacuumed: ~30 s after start autovacuum walks template1's and the app
    database's (an aggressive vacuum of pg_attribute, pg_depend and more), which landed inside measured bursts."""
    started = time.monotonic()
    await migrate(cluster.admin_dsn, embedding_dim=EMBEDDING_DIM, app_role=APP_ROLE)
    admin = await asyncpg.connect(cluster.admin_dsn)
    try:
        databases = await admin.fetch("SELECT datname FROM pg_database WHERE datallowconn")
    finally:
        await admin.close()
    for row in databases:
        conn = await asyncpg.connect(cluster.admin_dsn, database=row["datname"])
        try:
            await conn.execute("ANALYZE")
            await conn.execute("VACUUM (FREEZE)")  # after ANALYZE: its own updates of pg_statistic leave nothing
        finally:
            await conn.close()
    progress(f"migrated (EMBEDDING_DIM={EMBEDDING_DIM}) and vacuumed in {time.monotonic() - started:.1f}s")


Family = system.Family
free_port = system.free_port


async def make_family(
    admin: asyncpg.Connection, name: str, members: Sequence[str], tz: str = "Europe/Berlin"
) -> Family:
    """A household with members, created on the owner connection like `faa household create` / `faa member add`."""
    return await system.make_family(admin, name, dict.fromkeys(members, tz))


# ---------------------------------------------------------------------------------------------------- Redis


def redis_url(db: int) -> str:
    return f"{REDIS_BASE.rstrip('/')}/{db}"


@contextlib.asynccontextmanager
async def redis_db(db: int) -> AsyncIterator[str]:
    """The local Redis on database `db`, flushed at start and at end; yields its URL."""
    url = redis_url(db)
    pool = await create_pool(ArqRedisSettings.from_dsn(url))
    try:
        await pool.flushdb()
        yield url
    finally:
        with contextlib.suppress(Exception):
            await pool.flushdb()
        await pool.aclose()
        progress(f"Redis db {db} flushed")


# ---------------------------------------------------------------------------------------------------- fake LLM


@dataclass(frozen=True)
class Handled:
    """One request the fake server handled: which endpoint, when (perf_counter) and for how long (seconds)."""

    endpoint: str
    started: float
    seconds: float


class TimedFakeOpenAI(FakeOpenAI):
    """The scripted server, noting how long each request spent inside it (so callers can subtract it)."""

    def __init__(self, *, embedding_dim: int) -> None:
        super().__init__(embedding_dim=embedding_dim)
        self.handled: list[Handled] = []

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        try:
            return await super()._chat(request)
        finally:
            self.handled.append(Handled("chat", started, time.perf_counter() - started))

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        started = time.perf_counter()
        try:
            return await super()._embeddings(request)
        finally:
            self.handled.append(Handled("embeddings", started, time.perf_counter() - started))

    def reset(self) -> None:
        super().reset()
        self.handled.clear()


@contextlib.asynccontextmanager
async def fake_llm() -> AsyncIterator[TimedFakeOpenAI]:
    server = TimedFakeOpenAI(embedding_dim=EMBEDDING_DIM)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


# ---------------------------------------------------------------------------------------------------- FAA


def make_settings(
    cluster: Cluster,
    llm_base_url: str,
    redis: str,
    *,
    pool_min: int = 2,
    pool_max: int = 10,
    reply_wait_s: float = 25.0,
) -> Settings:
    """Production defaults (also INFO logging) except what a benchmark must pin: where things are, 384-d
    embeddings, no LLM retries."""
    return Settings(
        database=DatabaseSettings(
            url=cluster.app_dsn, admin_url=cluster.admin_dsn, app_role=APP_ROLE, pool_min=pool_min, pool_max=pool_max
        ),
        redis=RedisSettings(url=redis),
        llm=LLMSettings(base_url=llm_base_url, api_key="bench-key", model="scripted", max_retries=0, timeout_s=15),
        embedding=EmbeddingSettings(dim=EMBEDDING_DIM, model="scripted-embed"),
        engine=EngineSettings(),
        worker=WorkerSettings(),
        # A few members send the load: the per-member limit (a defence, not a cost) would refuse most of it.
        web=WebSettings(host="127.0.0.1", port=0, reply_wait_s=reply_wait_s, messages_per_minute=10_000_000),
        log=LogSettings(),
    )


@dataclass
class Web:
    base_url: str
    deps: Deps
    app: web.Application


@contextlib.asynccontextmanager
async def web_server(
    settings: Settings, *, app_hook: Callable[[web.Application, Deps], None] | None = None
) -> AsyncIterator[Web]:
    """The web API as `faa serve` composes it (bot/web/server.py), on a real TCP socket on 127.0.0.1, random port.

    `app_hook(app, deps)` may add bench-only middlewares or routes before the app is frozen.
    """
    redis = await create_pool(ArqRedisSettings.from_dsn(settings.redis.url))
    deps = await open_deps(settings, redis=redis)
    app = create_app(deps)
    if app_hook is not None:
        app_hook(app, deps)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0, backlog=settings.web.backlog)
        await site.start()
        host, port = runner.addresses[0][:2]
        yield Web(f"http://{host}:{port}", deps, app)
    finally:
        await runner.cleanup()
        await close_deps(deps)
        await redis.aclose()


@contextlib.asynccontextmanager
async def worker_in_loop(settings: Settings, *, clock: Clock | None = None) -> AsyncIterator[Any]:
    """An arq worker in this event loop, as `faa up` runs one (`worker.main.background_worker`), returned once its
    startup built its dependencies and embedded the capabilities' examples, so the first message is not timed with
    them; `clock` replaces the system clock."""
    async with background_worker(settings, clock=clock) as worker:
        deadline = time.monotonic() + 30
        while "engine" not in worker.ctx and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if "deps" in worker.ctx:
            with contextlib.suppress(EmbeddingError):  # the startup has said so; routing does without them
                await routing.warm(worker.ctx["deps"].embedder)  # joins the startup's embedding of them
        yield worker
