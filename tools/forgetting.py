"""The forget_me tool: a member's "forget everything about me". The engine asks for their yes every time before it
runs (`engine.consent.ALWAYS_ASK`), whoever planned it; it acts on the asking member only."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tools.context import ToolContext
from tools.storage.forgetting import forget_member


class ForgetMeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ForgotMe(BaseModel):
    private_memories: int
    anonymised_memories: int
    reminders: int
    events: int
    channels_unlinked: int
    lists: int = 0
    list_items: int = 0


async def forget_me(ctx: ToolContext, args: ForgetMeArgs) -> ForgotMe:
    """Forget everything about the member who asks ("forget everything about me"): their private memories,
    reminders, calendar events, lists and list items (and those they kept from another member), chat links and
    sign-ins are removed; what they stored for the household stays under "former member", and what other members
    wrote stays as it is. Cannot be undone; only for that explicit request."""
    done = await forget_member(ctx.conn, ctx.household_id, ctx.user_id, ctx.inbox_id)
    return ForgotMe(
        private_memories=done.private_memories,
        anonymised_memories=done.anonymised_memories,
        reminders=done.reminders,
        events=done.events,
        channels_unlinked=done.identities,
        lists=done.lists,
        list_items=done.list_items,
    )
