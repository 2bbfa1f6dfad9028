"""Where the database is: a configured DATABASE_URL, or embedded PostgreSQL started on demand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog

from engine.settings import Settings
from migrations.runner import migrate
from tools.infra import local_postgres
from tools.storage.database import dsn_with_user

log = structlog.get_logger()


@dataclass(frozen=True)
class Runtime:
    settings: Settings  # with database.url and database.admin_url filled in
    embedded: Any = None  # the embedded server handle, kept alive while the process runs

    @property
    def admin_dsn(self) -> str:
        url = self.settings.database.admin_url or self.settings.database.url
        assert url is not None
        return url


def resolve(settings: Settings) -> Runtime:
    """Fill in the database URLs, starting embedded PostgreSQL when DATABASE_URL is unset."""
    db = settings.database
    if db.url is not None:
        return Runtime(settings)
    server = local_postgres.start(db.data_dir)
    admin = server.get_uri()
    password = db.app_password.get_secret_value() if db.app_password else None
    app = dsn_with_user(admin, db.app_role, password)
    log.info("database.embedded.started", data_dir=str(db.data_dir))
    filled = settings.model_copy(update={"database": db.model_copy(update={"url": app, "admin_url": admin})})
    return Runtime(filled, server)


async def migrate_runtime(runtime: Runtime) -> list[str]:
    db = runtime.settings.database
    return await migrate(
        runtime.admin_dsn,
        embedding_dim=runtime.settings.embedding.dim,
        app_role=db.app_role,
        app_password=db.app_password.get_secret_value() if db.app_password else None,
    )
