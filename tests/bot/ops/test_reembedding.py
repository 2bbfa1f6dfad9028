"""`faa reembed` against the scripted embeddings server: every household's memories get the configured model's
vectors, a run that stops halfway is finished by the next without redoing what was committed, and a new vector
size changes the column and rebuilds its index."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest
from pgvector.asyncpg import register_vector

from tests.bot.ops.conftest import Faa
from tests.conftest import APP_ROLE, EMBEDDING_DIM, PostgresInfo
from tests.fakes.openai_server import FakeOpenAI, fake_embedding
from tools.storage import households

CONTENTS = [f"memory {n}: {word}" for n, word in enumerate("milk rent dentist bike piano garden tax".split(), 1)]


@pytest.fixture
async def embeddings(monkeypatch: pytest.MonkeyPatch, environment: PostgresInfo) -> AsyncIterator[FakeOpenAI]:
    """The scripted server as the configured embedding endpoint (no retries: a failure fails the request)."""
    fake = FakeOpenAI(embedding_dim=EMBEDDING_DIM)
    await fake.start()
    monkeypatch.setenv("EMBEDDING_BASE_URL", fake.base_url)
    monkeypatch.setenv("EMBEDDING_API_KEY", "test-key")
    monkeypatch.setenv("EMBEDDING_MODEL", "scripted-embed")
    monkeypatch.setenv("LLM_MAX_RETRIES", "0")
    yield fake
    await fake.stop()


@pytest.fixture
async def stored(faa: Faa, admin: asyncpg.Connection) -> list[int]:
    """Seven memories in two households, one of them private and without an author (visible to no member)."""
    assert await faa("migrate") == 0
    await register_vector(admin)
    first = await households.create_household(admin, "Miller", "Europe/Berlin")
    second = await households.create_household(admin, "Lin", "Asia/Shanghai")
    old = [1.0] + [0.0] * (EMBEDDING_DIM - 1)  # the old model's vector
    ids = []
    for n, content in enumerate(CONTENTS):
        ids.append(
            await admin.fetchval(
                "INSERT INTO memories (household_id, content, embedding, visibility) VALUES ($1, $2, $3, $4) "
                "RETURNING id",
                first if n % 2 else second,
                content,
                old,
                "private" if n == 3 else "household",
            )
        )
    return ids


async def vectors(admin: asyncpg.Connection) -> dict[str, list[float] | None]:
    rows = await admin.fetch("SELECT content, embedding FROM memories ORDER BY id")
    return {r["content"]: None if r["embedding"] is None else r["embedding"].to_list() for r in rows}


def assert_embedded(found: dict[str, list[float] | None], dim: int) -> None:
    assert set(found) == set(CONTENTS)
    for content, vector in found.items():
        assert vector == pytest.approx(fake_embedding(content, dim), abs=1e-6), content


async def schema(admin: asyncpg.Connection) -> tuple[str, str, bool]:
    column = await admin.fetchval(
        "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
        "WHERE attrelid = 'memories'::regclass AND attname = 'embedding'"
    )
    dim = await admin.fetchval("SELECT value FROM faa_meta WHERE key = 'embedding_dim'")
    indexed = await admin.fetchval("SELECT to_regclass('memories_embedding') IS NOT NULL")
    return column, dim, indexed


async def test_every_household_s_memories_get_the_model_s_vectors_in_batches(
    faa: Faa,
    admin: asyncpg.Connection,
    embeddings: FakeOpenAI,
    stored: list[int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    capsys.readouterr()

    assert await faa("reembed", "--batch-size", "3") == 0

    out, err = capsys.readouterr()
    assert out == f"re-embedded 7 memories with scripted-embed ({EMBEDDING_DIM} dimensions)\n"
    assert "re-embedding 7 memories" in err and "3/7" in err and "7/7" in err  # progress on stderr
    assert [len(texts) for texts in embeddings.embedding_requests] == [3, 3, 1]
    assert_embedded(await vectors(admin), EMBEDDING_DIM)
    assert await schema(admin) == (f"vector({EMBEDDING_DIM})", str(EMBEDDING_DIM), True)
    assert await admin.fetchval("SELECT count(*) FROM faa_meta WHERE key = 'reembed'") == 0  # finished


async def test_a_run_that_stops_halfway_is_finished_by_the_next(
    faa: Faa,
    admin: asyncpg.Connection,
    embeddings: FakeOpenAI,
    stored: list[int],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    embeddings.embedding_failures_after = 2  # the endpoint goes away after two batches
    assert await faa("reembed", "--batch-size", "2") == 2
    assert "faa: embedding request to scripted-embed failed" in capsys.readouterr().err
    halfway = await vectors(admin)
    redone = [halfway[content] == pytest.approx(fake_embedding(content, EMBEDDING_DIM)) for content in CONTENTS]
    assert redone == [True] * 4 + [False] * 3  # two batches committed, each with the progress after it

    embeddings.embedding_failures_after = None
    embeddings.reset()
    assert await faa("reembed", "--batch-size", "2") == 0

    assert embeddings.embedding_requests == [CONTENTS[4:6], CONTENTS[6:]]  # only what was left
    assert "resuming after memory" in capsys.readouterr().err
    assert_embedded(await vectors(admin), EMBEDDING_DIM)


async def test_a_new_vector_size_changes_the_column_and_rebuilds_its_index(
    faa: Faa,
    admin: asyncpg.Connection,
    embeddings: FakeOpenAI,
    stored: list[int],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    new_dim = 96
    monkeypatch.setenv("EMBEDDING_DIM", str(new_dim))
    assert await faa("migrate") == 2
    assert "re-embed with `faa reembed`" in capsys.readouterr().err

    # A model that cannot make vectors of that size: refused before anything changes.
    assert await faa("reembed") == 2
    assert "EMBEDDING_REQUEST_DIMENSIONS=true" in capsys.readouterr().err
    assert await schema(admin) == (f"vector({EMBEDDING_DIM})", str(EMBEDDING_DIM), True)

    # OpenAI's kind of model shortens its vectors on request (`dimensions`); this one stops after the first batch.
    monkeypatch.setenv("EMBEDDING_MODEL", "text-embedding-3-small")
    embeddings.reset()
    embeddings.embedding_failures_after = 2  # the probe of the new size, then one batch
    assert await faa("reembed", "--batch-size", "4") == 2
    assert await schema(admin) == (f"vector({new_dim})", str(new_dim), False)  # the size changed, no index yet
    halfway = await vectors(admin)
    assert [v is not None for v in halfway.values()] == [True] * 4 + [False] * 3
    assert await faa("migrate") == 0  # the schema is at the configured size again

    embeddings.embedding_failures_after = None
    embeddings.reset()
    capsys.readouterr()
    assert await faa("reembed", "--batch-size", "4") == 0

    assert embeddings.embedding_requests == [CONTENTS[4:]]
    assert {body["dimensions"] for body in embeddings.embedding_bodies} == {new_dim}
    assert_embedded(await vectors(admin), new_dim)
    assert await schema(admin) == (f"vector({new_dim})", str(new_dim), True)
    async with admin.transaction():  # the rebuilt HNSW index serves search by meaning
        await admin.execute("SET LOCAL enable_seqscan = off")
        plan = await admin.fetch(
            "EXPLAIN SELECT id FROM memories ORDER BY embedding <=> $1 LIMIT 3", fake_embedding("piano", new_dim)
        )
    assert "memories_embedding" in "\n".join(row[0] for row in plan)


async def test_a_role_bound_by_row_level_security_is_refused(
    faa: Faa,
    environment: PostgresInfo,
    embeddings: FakeOpenAI,
    stored: list[int],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_ADMIN_URL", environment.app_dsn)  # the app role: it sees no household's rows
    capsys.readouterr()

    assert await faa("reembed") == 2

    assert "must bypass row-level security" in capsys.readouterr().err
    assert embeddings.embedding_requests == []
    assert APP_ROLE in environment.app_dsn
