"""The connection pool and the one way into the data: a transaction with the household set inside it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import quote, urlsplit, urlunsplit

import asyncpg
from pgvector.asyncpg import register_vector

Connection = asyncpg.Connection


async def _init_connection(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    await conn.set_type_codec("json", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    await register_vector(conn)


async def _no_reset(conn: asyncpg.Connection) -> None:
    """Skip asyncpg's reset query on release: FAA keeps no session state (settings are transaction-local, no
    LISTEN, no session advisory locks), and the round trip costs every pooled use."""


@dataclass(frozen=True)
class Database:
    pool: asyncpg.Pool

    @classmethod
    async def connect(cls, dsn: str, *, min_size: int = 2, max_size: int = 10) -> Database:
        pool = await asyncpg.create_pool(
            dsn, min_size=min_size, max_size=max_size, init=_init_connection, command_timeout=60, reset=_no_reset
        )
        return cls(pool)

    async def close(self) -> None:
        await self.pool.close()

    @asynccontextmanager
    async def household(self, household_id: int, user_id: int | None = None) -> AsyncIterator[Connection]:
        """A transaction that sees one household's rows only (and, for private memories, one member's).

        Row-level security reads these settings; `is_local=true` ends them with the transaction, so a pooled
        connection never carries a household into its next use.
        """
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "SELECT set_config('app.household_id', $1, true), set_config('app.user_id', $2, true)",
                str(int(household_id)),
                "" if user_id is None else str(int(user_id)),
            )
            yield conn

    @asynccontextmanager
    async def unscoped(self) -> AsyncIterator[Connection]:
        """A transaction with no household: it sees no household rows, only the narrow SECURITY DEFINER doors."""
        async with self.pool.acquire() as conn, conn.transaction():
            yield conn


def dsn_with_user(dsn: str, user: str, password: str | None = None) -> str:
    """The same server and database as `dsn`, logged in as another role."""
    parts = urlsplit(dsn)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = quote(user, safe="")
    if password:
        netloc += ":" + quote(password, safe="")
    netloc += "@" + host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
