"""Helpers for the tool tests: a deterministic embedder, families created with the owner connection, and tool
calls that go through the registry inside a household-scoped transaction, as the engine makes them."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import asyncpg

from tests.conftest import EMBEDDING_DIM
from tools.context import ToolContext
from tools.infra.embeddings import EmbeddingKind
from tools.registry import ToolRegistry, default_registry
from tools.storage.database import Database
from tools.storage.households import Member

REGISTRY: ToolRegistry = default_registry()
_names = itertools.count(1)


def bag_of_words(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """Each lower-cased word hashes to one signed coordinate; texts sharing words land near each other."""
    vector = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dim] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else [1.0 / math.sqrt(dim)] * dim


@dataclass
class HashEmbedder:
    dim: int = EMBEDDING_DIM
    calls: list[tuple[tuple[str, ...], str]] = field(default_factory=list)

    async def embed(self, texts: list[str], kind: EmbeddingKind) -> list[list[float]]:
        self.calls.append((tuple(texts), kind))
        return [bag_of_words(text, self.dim) for text in texts]


@dataclass(frozen=True)
class Family:
    household_id: int
    members: dict[str, int]
    timezone: str

    def id(self, name: str) -> int:
        return self.members[name]


async def make_family(admin_conn: asyncpg.Connection, *names: str, timezone: str = "Europe/Berlin") -> Family:
    """A fresh household with these members (created as the owner; the app role never creates households)."""
    household_id = await admin_conn.fetchval(
        "INSERT INTO households (name, timezone) VALUES ($1, $2) RETURNING id", f"family-{next(_names)}", timezone
    )
    members = {}
    for name in names:
        members[name] = await admin_conn.fetchval(
            "INSERT INTO users (household_id, name, timezone) VALUES ($1, $2, $3) RETURNING id",
            household_id,
            name,
            timezone,
        )
    return Family(household_id, members, timezone)


@asynccontextmanager
async def tool_context(
    db: Database,
    family: Family,
    member: str,
    *,
    now: datetime | None = None,
    timezone: str | None = None,
    embedder: HashEmbedder | None = None,
    inbox_id: int | None = None,
    household_id: int | None = None,
    roles: dict[str, str] | None = None,
    shared: bool = False,
) -> AsyncIterator[ToolContext]:
    """A ToolContext in one committed transaction scoped to the family (`household_id` overrides what the
    context claims, for tests of a lying context; the connection stays scoped to `family`). `shared`: the member
    writes in a group chat, where the transaction acts for nobody."""
    tz = timezone or family.timezone
    async with db.household(family.household_id, None if shared else family.id(member)) as conn:
        yield ToolContext(
            conn=conn,
            household_id=household_id or family.household_id,
            user_id=family.id(member),
            timezone=tz,
            now=now or datetime.now(UTC),
            embedder=embedder or HashEmbedder(),
            inbox_id=inbox_id,
            members=tuple(
                Member(uid, name, tz, "en", (roles or {}).get(name, "adult")) for name, uid in family.members.items()
            ),
            shared=shared,
        )


async def call(
    db: Database, family: Family, member: str, name: str, args: dict[str, Any] | str, **context: Any
) -> dict[str, Any]:
    """Validate and run one tool through the registry, as the engine does, in its own transaction."""
    async with tool_context(db, family, member, **context) as ctx:
        return await REGISTRY.run(ctx, name, REGISTRY.validate(name, args))


async def add_memory(
    admin_conn: asyncpg.Connection,
    family: Family,
    author: str,
    content: str,
    *,
    amount: str | None = None,
    currency: str | None = None,
    occurred_at: datetime | None = None,
    visibility: str = "household",
    **understanding: Any,
) -> int:
    """A memory row written directly by the owner (for data the test needs at exact instants)."""
    return int(
        await admin_conn.fetchval(
            """INSERT INTO memories (household_id, author_id, content, ai_understanding, embedding, amount, currency,
                                     occurred_at, visibility)
               VALUES ($1, $2, $3, $4::jsonb, $5::text::vector, $6::numeric, $7, coalesce($8, now()), $9)
               RETURNING id""",
            family.household_id,
            family.id(author),
            content,
            json.dumps(understanding),
            str(bag_of_words(content)),
            amount,
            currency,
            occurred_at,
            visibility,
        )
    )
