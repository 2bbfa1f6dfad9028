"""Local model servers shared by the FAA processes of one machine through a recorded lease.

A server's lease is a JSON file in LOCAL_DATA_DIR/leases/: the server's pid (with its start time, so a reused pid
is not mistaken for it), its port, whether it has become healthy, and the pids of the FAA processes using it
(`faa up`, `faa chat`, `faa worker`). A process that finds a live lease uses that server as it is — however busy it
is answering someone else, which is why no health check decides it — and adds itself to the holders; the last
holder to leave stops the server. A lease whose server is gone is stale and replaced. Every change happens under
an exclusive lock on a file beside the lease.

Servers are started detached (a launcher process starts them in a session of their own and exits), so that one
outlives the process that started it while others still hold it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

_LOCK_POLL_S = 0.05
_LAUNCH = (
    "import subprocess, sys\n"
    "log = open(sys.argv[1], 'ab')\n"
    "server = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=log, stderr=log, "
    "start_new_session=True)\n"
    "print(server.pid, flush=True)\n"
)


@dataclass(frozen=True)
class Lease:
    pid: int
    started: int | None  # the server's start time in clock ticks (/proc/<pid>/stat); None where there is no /proc
    port: int
    ready: bool
    holders: tuple[int, ...]

    def join(self, holder: int) -> Lease:
        return replace(self, holders=(*self.holders, holder))

    def leave(self, holder: int) -> Lease:
        """Without one entry of `holder`, and without holders that died without leaving."""
        rest = list(self.holders)
        if holder in rest:
            rest.remove(holder)
        return replace(self, holders=tuple(pid for pid in rest if alive(pid)))


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()  # the fields after the command name, from the state on


def start_time(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[19])  # field 22 of proc(5): starttime


def alive(pid: int, started: int | None = None) -> bool:
    """Whether `pid` runs (not a zombie) and, when `started` is known, is still the process that started then."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = _stat(pid)
    if fields is None:
        return True
    return (fields[0] != "Z" or _threads_left(pid)) and (started is None or int(fields[19]) == started)


def _threads_left(pid: int) -> bool:
    """Whether a process whose main thread has exited still has threads running (and so its open sockets): a killed
    server's main thread may show as a zombie while its other threads are still being torn down."""
    try:
        return sum(1 for _ in Path(f"/proc/{pid}/task").iterdir()) > 1
    except OSError:
        return False


class LeaseFile:
    """One server's lease and its lock."""

    def __init__(self, directory: Path, name: str) -> None:
        slug = "".join(ch if ch.isalnum() else "-" for ch in name)
        self.path = directory / f"{slug}.json"
        self._lock = directory / f"{slug}.lock"

    @contextlib.asynccontextmanager
    async def locked(self) -> AsyncIterator[None]:
        """Exclusive among processes (and among tasks of this one: the lock is taken without blocking, retried)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock.open("a") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    await asyncio.sleep(_LOCK_POLL_S)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def read(self) -> Lease | None:
        try:
            data = json.loads(self.path.read_text())
            return Lease(
                int(data["pid"]),
                None if data.get("started") is None else int(data["started"]),
                int(data["port"]),
                bool(data["ready"]),
                tuple(int(pid) for pid in data["holders"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def live(self, port: int) -> Lease | None:
        """The lease, when it is for this port and its server still runs."""
        lease = self.read()
        if lease is None or lease.port != port or not alive(lease.pid, lease.started):
            return None
        return lease

    def write(self, lease: Lease) -> None:
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(asdict(lease)))
        temporary.replace(self.path)

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


async def launch(argv: Sequence[str], log_file: Path) -> int:
    """Start `argv` detached (its own session, not our child), its output appended to `log_file`; its pid."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    launcher = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _LAUNCH, str(log_file), *argv,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, _ = await launcher.communicate()
    if launcher.returncode != 0:
        raise OSError(f"could not start {argv[0]} (launcher exit code {launcher.returncode})")
    return int(out.decode().strip())


async def terminate(pid: int, started: int | None, grace_s: float) -> None:
    """SIGTERM, then SIGKILL after `grace_s`; returns once the process is gone."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        if not alive(pid, started):
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait_s
        while alive(pid, started) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
