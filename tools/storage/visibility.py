"""Who may see a row of the tables members share: memories, events, reminders, lists and list items.

A row is its household's (`visibility = 'household'`), possibly kept from one member (`hidden_from`: a surprise for
them), or its author's alone (`'private'`). Row-level security enforces it for the app role (0015_privacy.sql);
`visible_to` writes the same rule into a statement for the connections it does not bind (the owner's, which the
command line uses), and `set_audience` changes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tools.storage.database import Connection

Visibility = Literal["household", "private"]
Table = Literal["memories", "events", "reminders", "lists", "list_items"]

# Each table's author column: the member a private row belongs to.
AUTHOR: dict[str, str] = {
    "memories": "author_id",
    "events": "created_by",
    "reminders": "created_by",
    "lists": "created_by",
    "list_items": "created_by",
}


@dataclass(frozen=True)
class Audience:
    """Who may see a row: the household (`hidden_from` None), the household but one member, or the author alone."""

    visibility: Visibility = "household"
    hidden_from: int | None = None

    @property
    def private(self) -> bool:
        return self.visibility == "private"


EVERYONE = Audience()


def visible_to(alias: str, table: Table, viewer: str) -> str:
    """The row-level rule as a condition on `alias` for the member in the SQL expression `viewer` (a parameter
    such as "$3"); a NULL viewer sees only the rows every member may see."""
    author = AUTHOR[table]
    return (
        f"({alias}.{author} = {viewer} OR ({alias}.visibility = 'household' "
        f"AND ({alias}.hidden_from IS NULL OR {alias}.hidden_from <> {viewer})))"
    )


async def set_audience(
    conn: Connection, table: Table, household_id: int, row_id: int, audience: Audience, *, by: int | None
) -> bool:
    """Change who may see one row; whether the row was there to change."""
    status = await conn.execute(
        f"""UPDATE {table} SET visibility = $3, hidden_from = $4, updated_by = $5, updated_at = now()
            WHERE household_id = $1 AND id = $2""",
        household_id,
        row_id,
        audience.visibility,
        audience.hidden_from,
        by,
    )
    return status != "UPDATE 0"
