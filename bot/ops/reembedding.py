"""`faa reembed`: every memory's vector again, from the configured embedding model, in batches that each commit
with the run's progress, so a run that stops halfway resumes where it stopped.

It runs on the owner's connection (`DATABASE_ADMIN_URL`) across all households at once, not per household through
row-level security: changing the column's size and rebuilding its index need the owner anyway, and under RLS a
private memory is visible to its author alone (to no one once its author is gone), so a pass household by household
would leave some memories with the old model's vectors, or none.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import asyncpg
from pgvector.asyncpg import register_vector

from bot.ops.errors import ReembedError
from bot.ops.local_models import print_progress
from bot.ops.local_servers import local_endpoints
from bot.ops.runtime import Runtime, migrate_runtime
from engine.composition import embedder_from_settings
from tools.infra.embeddings import Embedder
from tools.storage import reembedding
from tools.storage.reembedding import HNSW_MAX_DIM, Progress

DEFAULT_BATCH = 100
_LOCK_KEY = 0x0FAA_0002  # one run at a time per database (the migration runner's is 0x0FAA_0001)


async def reembed(runtime: Runtime, args: argparse.Namespace) -> int:
    """Re-embed every memory with EMBEDDING_MODEL at EMBEDDING_DIM (changing the stored size if it differs)."""
    async with local_endpoints(runtime.settings, with_chat=False) as settings:
        runtime = replace(runtime, settings=settings)
        conn = await asyncpg.connect(runtime.admin_dsn)
        try:
            await _claim(conn)
            if await reembedding.stored_dim(conn) is None:
                await migrate_runtime(runtime)
                print("nothing to re-embed: the schema was just created")
                return 0
            embedder = embedder_from_settings(settings)
            try:
                done = await _run(runtime, conn, embedder, args.batch_size)
            finally:
                await embedder.close()
        finally:
            await conn.close()
    emb = settings.embedding
    print(f"re-embedded {done} memories with {emb.model} ({emb.dim} dimensions)")
    return 0


async def _claim(conn: asyncpg.Connection) -> None:
    if not await reembedding.sees_every_row(conn):
        raise ReembedError(
            "faa reembed reads every household's memories, private ones included: the role of DATABASE_ADMIN_URL "
            "must bypass row-level security (a superuser, or ALTER ROLE … BYPASSRLS)"
        )
    if not await conn.fetchval("SELECT pg_try_advisory_lock($1)", _LOCK_KEY):  # held until the connection closes
        raise ReembedError("another faa reembed is running on this database")


async def _run(runtime: Runtime, conn: asyncpg.Connection, embedder: Embedder, batch_size: int) -> int:
    emb = runtime.settings.embedding
    state = await _resume_or_start(conn, embedder, emb.model, emb.dim)
    await migrate_runtime(runtime)  # pending migrations: the stored size matches the setting now
    await register_vector(conn)
    total = await reembedding.remaining(conn, state.after_id)
    print_progress(f"re-embedding {total} memories with {emb.model} ({emb.dim} dimensions)")
    done = 0
    while batch := await reembedding.next_batch(conn, state.after_id, batch_size):
        vectors = await embedder.embed([content for _, content in batch], "passage")
        state = replace(state, after_id=batch[-1][0])
        ids = [id_ for id_, _ in batch]
        await reembedding.store_batch(conn, state, list(zip(ids, vectors, strict=True)))
        done += len(batch)
        print_progress(f"  {done}/{total}")
    await reembedding.finish(conn)
    return done


async def _resume_or_start(conn: asyncpg.Connection, embedder: Embedder, model: str, dim: int) -> Progress:
    """The stopped run's progress if it was for this model and size; else a new run, changing the stored size first
    if it differs, once the embedder has shown that it makes vectors of the new size."""
    state = await reembedding.progress(conn)
    stored = await reembedding.stored_dim(conn)
    if state is not None and (state.model, state.dim) == (model, dim) and stored == dim:
        print_progress(f"resuming after memory {state.after_id}")
        return state
    if stored != dim:
        if dim > HNSW_MAX_DIM:
            raise ReembedError(f"EMBEDDING_DIM={dim}: pgvector's HNSW index takes at most {HNSW_MAX_DIM} dimensions")
        await embedder.embed(["faa reembed"], "passage")  # an EmbeddingError here leaves the old vectors in place
        print_progress(f"changing the stored vectors from {stored} to {dim} dimensions (search by meaning waits)")
    return await reembedding.start(conn, model, dim)
