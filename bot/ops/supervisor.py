"""Several web processes on one port: spawned, watched, restarted when one dies, and stopped together."""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import shutil
import signal
import tempfile
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

import structlog

from bot.ops import lifecycle
from bot.web.server import serve
from engine.errors import ConfigurationError
from engine.metrics import MULTIPROCESS_DIR
from engine.observability import configure_logging
from engine.settings import Settings

log = structlog.get_logger()

_STARTUP_S = 120.0  # a web process that has not said "ready" by then did not start


async def serve_processes(settings: Settings, *, stop: asyncio.Event, ready: asyncio.Event | None = None) -> None:
    """Run WEB_PROCESSES web processes on WEB_PORT until `stop` is set (`ready` is set once all serve); this
    process only supervises them.

    The kernel spreads connections among the processes' sockets (SO_REUSEPORT). One that dies is restarted; one
    that cannot start stops them all with an error. Their counters meet in a shared directory (prometheus_client's
    multiprocess mode), so /metrics shows the sum whichever process answers. Only the first runs the channels'
    own listeners (email's SMTP receiver), which need their ports to themselves.
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


def _ready(lifeline: Connection) -> None:
    lifecycle.serving()
    lifeline.send_bytes(b"ready")


def _web_process(settings: Settings, lifeline: Connection, listeners: bool) -> None:
    """A spawned web process: serves until its supervisor closes the pipe or goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group; the supervisor decides
    configure_logging(settings.log)

    async def run() -> None:
        stop = asyncio.Event()
        asyncio.get_running_loop().add_reader(lifeline.fileno(), stop.set)  # readable: the other end closed
        await serve(
            settings, stop=stop, reuse_port=True, listeners=listeners, started=functools.partial(_ready, lifeline)
        )

    lifecycle.run(run(), own_process=True)
