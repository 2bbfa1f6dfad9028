"""Re-embedding every memory (`faa reembed`): the schema's vector size, the run's progress, and the batches.

On the owner's connection, which must see every household's rows, private ones included: row-level security
would hide a private memory from everyone but its author, and from everyone once its author is gone. Progress is
a `faa_meta` row (the model, the size and the last memory id done), written in the transaction that stores each
batch, so a run that stops halfway resumes after the last committed batch.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from tools.storage.database import Connection

_PROGRESS_KEY = "reembed"
_INDEX = "memories_embedding"
HNSW_MAX_DIM = 2000  # pgvector's HNSW index takes vectors of at most this many dimensions


@dataclass(frozen=True)
class Progress:
    model: str
    dim: int
    after_id: int  # every memory up to this id has the model's vector


async def stored_dim(conn: Connection) -> int | None:
    """The vector size the schema stores; `None` before the first migration."""
    if not await conn.fetchval("SELECT to_regclass('faa_meta') IS NOT NULL"):
        return None
    value = await conn.fetchval("SELECT value FROM faa_meta WHERE key = 'embedding_dim'")
    return None if value is None else int(value)


async def sees_every_row(conn: Connection) -> bool:
    """Whether this connection's role bypasses row-level security (a superuser or BYPASSRLS)."""
    return bool(await conn.fetchval("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"))


async def progress(conn: Connection) -> Progress | None:
    """The unfinished run's progress, if one stopped before it finished."""
    value = await conn.fetchval("SELECT value FROM faa_meta WHERE key = $1", _PROGRESS_KEY)
    return None if value is None else Progress(**json.loads(value))


async def start(conn: Connection, model: str, dim: int) -> Progress:
    """Begin a run from the first memory. When `dim` is not the schema's size, the column changes type (every
    vector is dropped: the old model's cannot be read at the new size) and loses its index until `finish`."""
    async with conn.transaction():
        if dim != await stored_dim(conn):
            # A type modifier cannot be a bound parameter; `dim` is an int, so the text is only digits.
            await conn.execute(f"DROP INDEX IF EXISTS {_INDEX}")
            await conn.execute(f"ALTER TABLE memories ALTER COLUMN embedding TYPE vector({int(dim)}) USING NULL")
            await conn.execute("UPDATE faa_meta SET value = $1 WHERE key = 'embedding_dim'", str(dim))
        begun = Progress(model, dim, 0)
        await _save(conn, begun)
    return begun


async def remaining(conn: Connection, after_id: int) -> int:
    return int(await conn.fetchval("SELECT count(*) FROM memories WHERE id > $1", after_id))


async def next_batch(conn: Connection, after_id: int, limit: int) -> list[tuple[int, str]]:
    """(id, content) of the next memories in id order, deleted ones too (a forget can be undone)."""
    rows = await conn.fetch("SELECT id, content FROM memories WHERE id > $1 ORDER BY id LIMIT $2", after_id, limit)
    return [(int(r["id"]), str(r["content"])) for r in rows]


async def store_batch(conn: Connection, done: Progress, vectors: Sequence[tuple[int, list[float]]]) -> None:
    """The batch's vectors and the progress after it, committed together. Needs pgvector's codec on `conn`."""
    async with conn.transaction():
        await conn.executemany("UPDATE memories SET embedding = $2 WHERE id = $1", vectors)
        await _save(conn, done)


async def finish(conn: Connection) -> None:
    """Index the vectors again (after a size change: built once over all of them, faster than row by row) and
    forget the progress."""
    async with conn.transaction():
        await conn.execute(f"CREATE INDEX IF NOT EXISTS {_INDEX} ON memories USING hnsw (embedding vector_cosine_ops)")
        await conn.execute("DELETE FROM faa_meta WHERE key = $1", _PROGRESS_KEY)


async def _save(conn: Connection, state: Progress) -> None:
    await conn.execute(
        "INSERT INTO faa_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        _PROGRESS_KEY,
        json.dumps({"model": state.model, "dim": state.dim, "after_id": state.after_id}),
    )
