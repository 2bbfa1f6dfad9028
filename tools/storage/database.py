"""The connection pool and the one way into the data: a transaction with the household set inside it.

A failure that time can fix leaves a transaction as a transient `StorageError`; any other driver error (a
constraint, data the database refuses, a privilege) stays the driver's, for the code that ran the query.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeAlias
from urllib.parse import quote, urlsplit, urlunsplit

import asyncpg
from asyncpg.pool import PoolConnectionProxy
from pgvector.asyncpg import register_vector

from tools.errors import StorageError

# A connection of its own (the command line's, the tests') or one the pool lends: the proxy has the same methods.
Connection: TypeAlias = asyncpg.Connection | PoolConnectionProxy

# What time can fix: the connection failed or was lost (08, and the socket's own errors), the server has no
# connection, memory or disk to spare (53), a statement was cancelled or timed out, or the server is shutting down
# or starting (57), a serialization failure or deadlock (40), a lock or an idle transaction timed out, a timeout
# of the driver's own.
_TRANSIENT = (
    asyncpg.PostgresConnectionError,
    asyncpg.InsufficientResourcesError,
    asyncpg.OperatorInterventionError,
    asyncpg.TransactionRollbackError,
    asyncpg.LockNotAvailableError,
    asyncpg.IdleInTransactionSessionTimeoutError,
    OSError,
    TimeoutError,
)


def is_transient(exc: BaseException) -> bool:
    """Whether a driver error is one a later try can get past."""
    return isinstance(exc, _TRANSIENT)


def transient_error(exc: BaseException) -> StorageError:
    """A transient driver error as FAA's own. Its message names the failure, never the data (these errors quote
    no row)."""
    return StorageError(
        f"{type(exc).__name__}: {str(exc)[:200]}", transient=True, sqlstate=getattr(exc, "sqlstate", None)
    )


# What PostgreSQL refuses in a JSON text: \u0000, and a surrogate escape that is not half of a pair.
_UNSTORABLE_ESCAPE = re.compile(
    r"\\u0000|\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f][0-9a-f]{2})|(?<!\\ud[89ab][0-9a-f]{2})\\ud[c-f][0-9a-f]{2}", re.I
)


def storable_text(value: str) -> str:
    """`value` as PostgreSQL text can hold it: without NUL characters, and with U+FFFD for a lone surrogate (which
    UTF-8 cannot encode; JSON escapes let a model or a sender produce one)."""
    if "\x00" in value:
        value = value.replace("\x00", "")
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def storable(value: Any) -> Any:
    """`value` (JSON-like data) with every string, keys included, made `storable_text`."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable(key): storable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(item) for item in value]
    return value


def _json_text(value: Any) -> str:
    text = json.dumps(value)
    return json.dumps(storable(value)) if _UNSTORABLE_ESCAPE.search(text) else text


async def _init_connection(conn: asyncpg.Connection) -> None:
    # Text from members and models reaches PostgreSQL through these codecs: the one place where what it cannot
    # store (NUL, lone surrogates) is dropped, so no reply, trace or journal entry fails on it. (Arrays of text keep
    # asyncpg's own codec: their elements are made storable where they are built.)
    await conn.set_type_codec("text", encoder=storable_text, decoder=_same, schema="pg_catalog", format="text")
    await conn.set_type_codec("jsonb", encoder=_json_text, decoder=json.loads, schema="pg_catalog")
    await conn.set_type_codec("json", encoder=_json_text, decoder=json.loads, schema="pg_catalog")
    await register_vector(conn)
    # asyncpg has no built-in codec for these arrays: it looks them up on a connection's first statement that uses
    # them (a catalog query between two JIT switches, 10-16 ms on an idle machine). That statement was the intake's
    # group commit on every pooled connection, in the acknowledgements of all it carried; now it is here, once.
    await conn.fetch("SELECT $1::bigint[], $2::jsonb[]", None, None)


def _same(value: str) -> str:
    return value


async def _release(conn: asyncpg.Connection) -> None:
    """Skip asyncpg's reset query on release: FAA keeps no session state (settings are transaction-local, no
    LISTEN, no session advisory locks), and the round trip costs every pooled use. (asyncpg still rolls back a
    transaction left open before this runs.)"""


@dataclass(frozen=True)
class Database:
    pool: asyncpg.Pool

    @classmethod
    async def connect(cls, dsn: str, *, min_size: int = 2, max_size: int = 10) -> Database:
        pool = await asyncpg.create_pool(
            dsn, min_size=min_size, max_size=max_size, init=_init_connection, command_timeout=60, reset=_release
        )
        return cls(pool)

    async def close(self) -> None:
        await self.pool.close()

    async def ping(self) -> None:
        """One round trip on a pooled connection (the health check); raises what the connection raises."""
        async with self.pool.acquire() as conn:
            await conn.fetchval("SELECT 1")

    @asynccontextmanager
    async def household(
        self, household_id: int, user_id: int | None = None, *, durable: bool = True
    ) -> AsyncIterator[Connection]:
        """A transaction that sees one household's rows only (and, for private memories, one member's).

        Row-level security reads these settings; `is_local=true` ends them with the transaction, so a pooled
        connection never carries a household into its next use.

        `durable=False` is for a step of a job whose last transaction is durable (the engine's steps before it
        records the reply): the commit returns without waiting for its WAL to reach the disk. WAL is flushed in
        order, so the job's durable commit makes this one durable too; should the database crash before that, this
        transaction is lost as if it never ran, and the retried job does it again.
        """
        settings = f"set_config('app.household_id', '{int(household_id)}', true), "
        settings += f"set_config('app.user_id', '{'' if user_id is None else int(user_id)}', true)"
        if not durable:
            settings += ", set_config('synchronous_commit', 'off', true)"
        try:
            async with self.pool.acquire() as conn, _transaction(conn, f"BEGIN; SELECT {settings}"):
                yield conn
        except _TRANSIENT as exc:
            raise transient_error(exc) from exc

    @asynccontextmanager
    async def unscoped(self) -> AsyncIterator[Connection]:
        """A transaction with no household: it sees no household rows, only the narrow SECURITY DEFINER doors."""
        try:
            async with self.pool.acquire() as conn, _transaction(conn, "BEGIN"):
                yield conn
        except _TRANSIENT as exc:
            raise transient_error(exc) from exc


@asynccontextmanager
async def _transaction(conn: Connection, begin: str) -> AsyncIterator[None]:
    """BEGIN (with the transaction's settings, in the same round trip: `begin` is one simple query of trusted
    text), then COMMIT, or ROLLBACK on any error or cancellation. Code inside must not open `conn.transaction()`:
    asyncpg refuses it in a transaction it did not start."""
    try:
        await conn.execute(begin)
        try:
            yield
        except BaseException:
            # A failed rollback must not hide why we got here; the pool rolls back or drops the connection.
            if not _lost(conn):
                with contextlib.suppress(asyncpg.PostgresError, asyncpg.InterfaceError, OSError):
                    if conn.is_in_transaction():
                        await conn.execute("ROLLBACK")
            raise
        await conn.execute("COMMIT")
    except (asyncpg.InterfaceError, asyncpg.InternalClientError) as exc:
        # On a connection the server dropped between two statements, the next one fails in the client ("connection
        # is closed", or a protocol state the dropped connection left behind): as transient as the drop itself.
        if _lost(conn):
            raise transient_error(exc) from exc
        raise


def _lost(conn: Connection) -> bool:
    """Whether the connection is gone. The pool detaches a connection that died from its proxy, which then
    refuses even `is_closed()`."""
    try:
        return conn.is_closed()
    except asyncpg.InterfaceError:
        return True


async def fetch_one(conn: Connection, query: str, *args: object) -> asyncpg.Record:
    """The row of a statement that returns exactly one: an INSERT … RETURNING, an UPDATE of a row the transaction
    holds locked."""
    row = await conn.fetchrow(query, *args)
    if row is None:
        raise StorageError("a statement that returns one row returned none")
    return row


async def scope(conn: Connection, household_id: int) -> None:
    """Set the household for the rest of the transaction `conn` is in: for an owner's connection of its own (the
    command line), which row-level security binds as it binds the pool's."""
    await conn.execute("SELECT set_config('app.household_id', $1, true)", str(household_id))


async def act_for(conn: Connection, user_id: int | None) -> None:
    """From here on the transaction acts for this member (None: for nobody), whose private rows row-level security
    then shows and no other's."""
    await conn.execute("SELECT set_config('app.user_id', $1, true)", "" if user_id is None else str(user_id))


@asynccontextmanager
async def acting_for(conn: Connection, user_id: int) -> AsyncIterator[None]:
    """Act for another member for a few statements (to count what that member may see), then for whom the
    transaction acted for before."""
    before = await conn.fetchval("SELECT current_setting('app.user_id', true)")
    await act_for(conn, user_id)
    try:
        yield
    finally:
        await conn.execute("SELECT set_config('app.user_id', $1, true)", before or "")


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
