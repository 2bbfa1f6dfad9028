"""Who may change what: the one place every write path asks — the model's tools, the web app's forms and JSON
endpoints, Telegram's buttons and the command line all act through the tools, and the tools ask here.

- A child reads the household's entries and changes or forgets only what they made themselves. They may answer
  what is addressed to them: snooze or complete a reminder they receive, tick an item on a list they see.
- An adult (or the owner) changes any household entry they can see.
- Only its author decides who sees an entry (private, or kept from one member).
- Budgets are set and removed by adults.
- The owner manages the members: renames them, changes their roles, removes them. The command line acts with the
  owner's rights (it is the operator's).

What a member may see is not decided here: PostgreSQL's row-level security shows each member only what they may
see, so a row another member keeps private is not found at all.
"""

from __future__ import annotations

from tools.context import ToolContext
from tools.errors import NotPermitted

ADULT_ROLES = frozenset({"owner", "adult"})
OPERATOR = "owner"  # the role the command line acts with


async def check_change(
    ctx: ToolContext, tool: str, what: str, author_id: int | None, *, addressed: bool = False
) -> None:
    """Refuse unless the asking member may change or forget `what` (e.g. "memory 12"), whose author is
    `author_id`; `addressed`: the change only answers the row (a reminder the member receives, a list item ticked),
    which a child may do too."""
    if author_id == ctx.user_id or addressed or await ctx.role() in ADULT_ROLES:
        return
    raise NotPermitted(
        tool,
        f"a child's account changes and forgets only what it made itself; {what} was made by another member, "
        "so tell the member to ask an adult",
        rule="child",
        for_member="A child's account can change only what it made itself. Please ask an adult.",
    )


async def may_change(ctx: ToolContext, author_id: int | None) -> bool:
    """`check_change` as a yes or no (for tools that act on several rows and report the refused ones)."""
    return author_id == ctx.user_id or await ctx.role() in ADULT_ROLES


def check_audience(ctx: ToolContext, tool: str, what: str, author_id: int | None) -> None:
    """Refuse unless the asking member made `what`: only the author decides who sees an entry."""
    if author_id != ctx.user_id:
        raise NotPermitted(
            tool,
            f"only the member who made {what} decides who sees it",
            rule="author",
            for_member="Only the member who made it can decide who sees it.",
        )


async def check_adult(ctx: ToolContext, tool: str, what: str) -> None:
    """Refuse a child: `what` (e.g. "budgets") is for the household's adults."""
    if await ctx.role() not in ADULT_ROLES:
        raise NotPermitted(
            tool,
            f"{what} are for the household's adults; a child's account cannot change them",
            rule="adult",
            for_member=f"Only adults can change {what}.",
        )


def check_owner(role: str, tool: str) -> None:
    """Refuse anyone but the owner (or the command line, which acts as the owner) managing members."""
    if role != "owner":
        raise NotPermitted(
            tool,
            "only the household's owner renames or removes members and changes roles",
            rule="owner",
            for_member="Only the household's owner can manage members.",
        )
