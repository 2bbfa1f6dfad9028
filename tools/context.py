"""What every tool call receives: the transaction it runs in and who is asking. Never part of a tool's schema."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from tools.infra.embeddings import Embedder, EmbeddingKind
from tools.storage import households
from tools.storage.database import Connection
from tools.storage.households import Member


@dataclass
class ToolContext:
    """One tool call's world: a transaction already scoped to the household (RLS), and the asking member.

    `shared` says the member wrote where others read along (a group chat): the transaction sees nobody's private
    rows, and the tools write none. `embed_cache` lives for one message, so the same text is embedded once per
    message whatever the tools ask.
    """

    conn: Connection
    household_id: int
    user_id: int
    timezone: str
    now: datetime
    embedder: Embedder
    inbox_id: int | None = None
    members: tuple[Member, ...] = ()
    embed_cache: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    shared: bool = False

    async def embed_one(self, text: str, kind: EmbeddingKind) -> list[float]:
        key = (kind, text)
        if key not in self.embed_cache:
            [self.embed_cache[key]] = await self.embedder.embed([text], kind)
        return self.embed_cache[key]

    async def role(self) -> str:
        """The asking member's role: from `members` when the caller loaded them, else from the database. A member
        the household does not have counts as a child (the narrowest role)."""
        for member in self.members:
            if member.id == self.user_id:
                return member.role
        return await households.member_role(self.conn, self.household_id, self.user_id) or "child"

    async def household_members(self) -> tuple[Member, ...]:
        """The household's current members (`members`, loaded once when the caller did not)."""
        if not self.members:
            self.members = await households.members(self.conn, self.household_id)
        return self.members
