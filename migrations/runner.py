"""Apply the ordered SQL files of this folder, once each, safely when several processes start at once.

Runs with the owner's DSN. After the files, it (re)creates the unprivileged application role and its grants:
the app role can log in, owns no table, is no superuser and cannot bypass row-level security.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import asyncpg

MIGRATIONS_DIR = Path(__file__).parent
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_ROLE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# Any constant works; it only has to be the same for every process that migrates this database.
_LOCK_KEY = 0x0FAA_0001
_READ_ONLY_TABLES = ("faa_meta", "experiments", "schema_migrations")


class MigrationError(Exception):
    """A migration cannot be applied as asked (changed file, wrong embedding size, bad role name)."""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    template: str
    embedding_dim: int

    @property
    def sql(self) -> str:
        return self.template.replace("{{EMBEDDING_DIM}}", str(self.embedding_dim))

    @property
    def checksum(self) -> str:
        # Over the file as written: the embedding size is checked on its own, with a clearer message.
        return hashlib.sha256(self.template.encode()).hexdigest()


def load_migrations(embedding_dim: int, directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found = []
    for path in sorted(directory.glob("*.sql")):
        match = _FILE.match(path.name)
        if match is None:
            raise MigrationError(f"migration file name must look like 0001_name.sql: {path.name}")
        found.append(Migration(int(match.group(1)), match.group(2), path.read_text(), int(embedding_dim)))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise MigrationError(f"two migrations share a version number: {versions}")
    return found


async def migrate(admin_dsn: str, *, embedding_dim: int, app_role: str, app_password: str | None = None) -> list[str]:
    """Apply pending migrations and grants; return the names applied now."""
    if not _ROLE.match(app_role):
        raise MigrationError(f"invalid role name {app_role!r}")
    conn = await asyncpg.connect(admin_dsn)
    try:
        await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
        try:
            await _check_embedding_dim(conn, embedding_dim)
            applied = await apply(conn, load_migrations(embedding_dim))
            await _ensure_app_role(conn, app_role, app_password)
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)
    finally:
        await conn.close()
    return applied


async def apply(conn: asyncpg.Connection, migrations: list[Migration]) -> list[str]:
    """Apply those of `migrations` not applied yet, each in its own transaction; return their names. The caller holds
    the lock (`migrate`); a test may stop at a version to upgrade data written before it."""
    await conn.execute(
        """CREATE TABLE IF NOT EXISTS schema_migrations (
               version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
               applied_at timestamptz NOT NULL DEFAULT now())"""
    )
    done = {r["version"]: r for r in await conn.fetch("SELECT version, name, checksum FROM schema_migrations")}
    applied = []
    for migration in migrations:
        previous = done.get(migration.version)
        if previous is not None:
            if previous["checksum"] != migration.checksum:
                raise MigrationError(
                    f"migration {migration.version:04d}_{migration.name} changed after it was applied; "
                    "add a new migration instead"
                )
            continue
        async with conn.transaction():
            await conn.execute(migration.sql)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                migration.version,
                migration.name,
                migration.checksum,
            )
        applied.append(f"{migration.version:04d}_{migration.name}")
    return applied


async def _check_embedding_dim(conn: asyncpg.Connection, embedding_dim: int) -> None:
    if not await conn.fetchval("SELECT to_regclass('faa_meta') IS NOT NULL"):
        return
    stored = await conn.fetchval("SELECT value FROM faa_meta WHERE key = 'embedding_dim'")
    if stored is not None and int(stored) != embedding_dim:
        raise MigrationError(
            f"the schema stores {stored}-dimensional embeddings but EMBEDDING_DIM={embedding_dim}; "
            "keep the old setting or re-embed with `faa reembed`"
        )


async def _ensure_app_role(conn: asyncpg.Connection, role: str, password: str | None) -> None:
    async with conn.transaction():
        exists = await conn.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", role)
        verb = "ALTER" if exists else "CREATE"
        await conn.execute(f'{verb} ROLE "{role}" LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE NOREPLICATION')
        if password is not None:
            statement = await conn.fetchval(
                "SELECT format('ALTER ROLE %I PASSWORD %L', $1::text, $2::text)", role, password
            )
            await conn.execute(statement)
        owned = await conn.fetch(
            "SELECT c.relname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner "
            "WHERE r.rolname = $1 AND c.relnamespace = 'public'::regnamespace",
            role,
        )
        if owned:
            raise MigrationError(f"the app role {role} owns tables {[r['relname'] for r in owned]}; it must own none")
        await conn.execute(f'GRANT USAGE ON SCHEMA public TO "{role}"')
        await conn.execute(f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "{role}"')
        for table in _READ_ONLY_TABLES:
            await conn.execute(f'REVOKE INSERT, UPDATE, DELETE ON TABLE {table} FROM "{role}"')
        await conn.execute(f'GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO "{role}"')
        for function in await conn.fetch(
            "SELECT p.oid::regprocedure::text AS signature FROM pg_proc p "
            "WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'faa\\_%'"
        ):
            await conn.execute(f'GRANT EXECUTE ON FUNCTION {function["signature"]} TO "{role}"')
