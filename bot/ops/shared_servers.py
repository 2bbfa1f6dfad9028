"""One local model server as an FAA process holds it: a command line with its port, health route and log, and the
process found through its lease (`bot.ops.leases`) or started here, waited for until healthy, and left."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import aiohttp
import structlog

from bot.ops.errors import LocalModelError
from bot.ops.leases import Lease, LeaseFile, alive, launch, start_time, terminate

log = structlog.get_logger()

_STOP_GRACE_S = 10.0


@dataclass(frozen=True)
class ServerCommand:
    name: str
    argv: Sequence[str]
    port: int
    health_path: str  # answers 200 once the server can serve (llama.cpp: after the model is loaded)
    log_file: Path
    lease_dir: Path | None = None  # where its lease is recorded (default: beside the log)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def lease(self) -> LeaseFile:
        return LeaseFile(self.lease_dir or self.log_file.parent, self.name)


@dataclass
class ChildServer:
    """One local server as this process holds it: found through its lease (started by another FAA process) or
    started here, waited for until healthy, and left — stopped by whichever holder leaves last."""

    command: ServerCommand
    start_timeout_s: float
    held: Lease | None = field(default=None, init=False)  # the lease this process holds on the server
    started_here: bool = field(default=False, init=False)
    _served: bool = field(default=False, init=False)  # became healthy after this process started it

    @property
    def owned(self) -> bool:
        """Whether this process holds a lease on the server (rather than using one it does not manage)."""
        return self.held is not None

    async def start(self) -> None:
        """Use the server of a live lease, or one already answering on the port, or start one; wait until healthy."""
        name, port, book = self.command.name, self.command.port, self.command.lease
        async with book.locked():
            lease = book.live(port)
            if lease is not None:
                book.write(lease.join(os.getpid()))
                self.held = lease
            elif await self.healthy():
                log.info("local_server.reused", server=name, port=port)  # one FAA does not manage (run by hand)
                return
            elif await _port_open(port):
                raise LocalModelError(
                    f"port {port} is taken by something that is not a {name} server; free it or choose another "
                    "LOCAL_*_PORT"
                )
            else:
                pid = await launch(self.command.argv, self.command.log_file)
                self.held = Lease(pid, start_time(pid), port, ready=False, holders=(os.getpid(),))
                self.started_here = True
                book.write(self.held)
        if self.started_here:
            await self._wait_healthy()
        elif not self.held.ready:
            await self._wait_ready()
        if not self.started_here:
            log.info("local_server.shared", server=name, port=port, pid=self.held.pid)

    async def _wait_healthy(self) -> None:
        assert self.held is not None
        name, pid, started = self.command.name, self.held.pid, time.monotonic()
        while not await self.healthy():
            if not alive(pid, self.held.started):
                await self.stop()
                raise LocalModelError(
                    f"{name} stopped while starting (log: {self.command.log_file}):\n{self._log_tail()}"
                )
            if time.monotonic() - started > self.start_timeout_s:
                await self.stop()
                raise LocalModelError(
                    f"{name} did not become healthy in {self.start_timeout_s:g}s "
                    f"(log: {self.command.log_file}):\n{self._log_tail()}"
                )
            await asyncio.sleep(0.25)
        self._served = True
        async with self.command.lease.locked():
            lease = self.command.lease.read()
            if lease is not None and lease.pid == pid:
                self.command.lease.write(replace(lease, ready=True))
        log.info(
            "local_server.started",
            server=name,
            port=self.command.port,
            duration_ms=round((time.monotonic() - started) * 1000),
        )

    async def _wait_ready(self) -> None:
        """Another FAA process is starting the server: wait for its lease to say it is healthy."""
        assert self.held is not None
        started = time.monotonic()
        while True:
            lease = self.command.lease.live(self.command.port)
            if lease is None or lease.pid != self.held.pid:
                self.held = None
                raise LocalModelError(f"the {self.command.name} server another FAA process was starting stopped")
            if lease.ready:
                return
            if time.monotonic() - started > self.start_timeout_s:
                await self.stop()
                raise LocalModelError(f"{self.command.name} did not become healthy in {self.start_timeout_s:g}s")
            await asyncio.sleep(0.25)

    async def healthy(self) -> bool:
        url = self.command.base_url + self.command.health_path
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
                async with session.get(url) as response:
                    return response.status == 200
        except (aiohttp.ClientError, TimeoutError):
            return False

    async def stop(self) -> None:
        """Leave the server: the last holder stops it (SIGTERM, then SIGKILL after a grace period)."""
        held, self.held = self.held, None
        if held is None:
            return
        book = self.command.lease
        async with book.locked():
            lease = book.read()
            if lease is None or lease.pid != held.pid:
                return  # replaced since (the server died and another process started a new one)
            rest = lease.leave(os.getpid())
            if rest.holders:
                book.write(rest)
                log.info(
                    "local_server.left", server=self.command.name, port=self.command.port, holders=len(rest.holders)
                )
                return
            await terminate(held.pid, held.started, _STOP_GRACE_S)
            book.remove()
        if held.ready or not self.started_here or self._served:  # a server that never came up was reported already
            log.info("local_server.stopped", server=self.command.name, port=self.command.port)

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.command.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


async def _port_open(port: int) -> bool:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 2)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True
