"""The web process's composition root, and the supervisor of several web processes on one port."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

import structlog
from aiohttp import web
from arq import create_pool
from arq.connections import RedisSettings

from bot import lifecycle
from bot.api import create_app
from bot.email.inbound import EmailInbound, Notices
from bot.email.smtp_server import SmtpReceiver
from engine.composition import ConfigurationError, close_deps, open_deps
from engine.metrics import MULTIPROCESS_DIR
from engine.observability import configure_logging
from engine.settings import Settings

log = structlog.get_logger()

_STARTUP_S = 120.0  # a web process that has not said "ready" by then did not start


async def serve(
    settings: Settings,
    *,
    stop: asyncio.Event | None = None,
    reuse_port: bool = False,
    smtp: bool = True,
    started: Callable[[], None] | None = None,
) -> None:
    """Run the web API in this process until `stop` is set (or forever); with `smtp` also the SMTP receiver,
    if one is configured. `started` is called once both listen."""
    redis = await create_pool(RedisSettings.from_dsn(settings.redis.url))
    deps = await open_deps(settings, redis=redis)
    runner = web.AppRunner(create_app(deps), access_log=None)
    await runner.setup()
    site = web.TCPSite(
        runner, settings.web.host, settings.web.port, backlog=settings.web.backlog, reuse_port=reuse_port or None
    )
    await site.start()
    log.info("web.started", host=settings.web.host, port=settings.web.port, pid=os.getpid())
    receiver = SmtpReceiver(EmailInbound(deps, Notices(deps))) if smtp and settings.email.smtp_enabled else None
    try:
        if receiver is not None:
            await receiver.start()
        if started is not None:
            started()
        await (stop or asyncio.Event()).wait()
    finally:
        if receiver is not None:
            await receiver.stop()
        await runner.cleanup()
        await close_deps(deps)
        await redis.aclose()


async def serve_processes(settings: Settings, *, stop: asyncio.Event, ready: asyncio.Event | None = None) -> None:
    """Run WEB_PROCESSES web processes on WEB_PORT until `stop` is set (`ready` is set once all serve); this
    process only supervises them.

    The kernel spreads connections among the processes' sockets (SO_REUSEPORT). One that dies is restarted; one
    that cannot start stops them all with an error. Their counters meet in a shared directory (prometheus_client's
    multiprocess mode), so /metrics shows the sum whichever process answers. Only the first runs the SMTP
    receiver, which needs its port to itself.
    """
    metrics_dir = tempfile.mkdtemp(prefix="faa-web-metrics-")
    os.environ[MULTIPROCESS_DIR] = metrics_dir  # read by each spawned process when it imports prometheus_client
    spawn = multiprocessing.get_context("spawn")
    children: dict[int, tuple[BaseProcess, Connection]] = {}

    async def start(index: int) -> None:
        ours, theirs = spawn.Pipe()  # the child says "ready" on it; our end closing tells the child to stop
        process = spawn.Process(target=_web_process, args=(settings, theirs, index == 0), name=f"faa-web-{index}")
        process.start()
        theirs.close()
        children[index] = process, ours
        if not await asyncio.to_thread(_said_ready, ours):
            raise ConfigurationError(f"web process {index} did not start (exit code {process.exitcode}); see its log")
        log.info("web.process.started", index=index, pid=process.pid)

    try:
        await asyncio.gather(*(start(index) for index in range(settings.web.processes)))
        if ready is not None:
            ready.set()
        while not stop.is_set():
            for index, (process, ours) in list(children.items()):
                if not process.is_alive():
                    log.error("web.process.exited", index=index, pid=process.pid, exit_code=process.exitcode)
                    ours.close()
                    await start(index)
            try:
                await asyncio.wait_for(stop.wait(), 0.5)
            except TimeoutError:
                pass
    finally:
        for _, ours in children.values():
            ours.close()
        for process, _ in children.values():
            await asyncio.to_thread(process.join, 15)
            if process.is_alive():
                process.terminate()
        shutil.rmtree(metrics_dir, ignore_errors=True)
        os.environ.pop(MULTIPROCESS_DIR, None)


def _said_ready(connection: Connection) -> bool:
    try:
        return connection.poll(_STARTUP_S) and connection.recv_bytes() == b"ready"
    except (EOFError, OSError):  # the process exited before it served
        return False


def _web_process(settings: Settings, lifeline: Connection, smtp: bool) -> None:
    """A spawned web process: serves until its supervisor closes the pipe or goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the supervisor decides
    configure_logging(settings.log)

    async def run() -> None:
        stop = asyncio.Event()
        asyncio.get_running_loop().add_reader(lifeline.fileno(), stop.set)  # readable: the other end closed
        await serve(settings, stop=stop, reuse_port=True, smtp=smtp, started=lambda: lifeline.send_bytes(b"ready"))

    lifecycle.run(run())
