"""What a household has on for a stretch of time: due reminders and planned things, for the morning agenda (the
calendar's events, repeating ones included, come from `tools.events.upcoming`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from tools.storage.database import Connection

MAX_ITEMS = 30


@dataclass(frozen=True)
class AgendaItem:
    at: datetime
    text: str
    people: tuple[str, ...] = ()


async def reminders_between(conn: Connection, household_id: int, start: datetime, end: datetime) -> list[AgendaItem]:
    """Active reminders whose next firing falls in [start, end), with their recipients' names."""
    rows = await conn.fetch(
        """SELECT r.next_fire_at, r.text,
                  ARRAY(SELECT u.name FROM users u WHERE u.id = ANY (r.recipient_ids) ORDER BY u.name) AS people
           FROM reminders r
           WHERE r.household_id = $1 AND r.status = 'active' AND r.next_fire_at >= $2 AND r.next_fire_at < $3
           ORDER BY r.next_fire_at, r.id LIMIT $4""",
        household_id,
        start,
        end,
        MAX_ITEMS,
    )
    return [AgendaItem(row["next_fire_at"], row["text"], tuple(row["people"])) for row in rows]


async def plans_between(conn: Connection, household_id: int, start: datetime, end: datetime) -> list[AgendaItem]:
    """Household-visible memories of kind `plan` that happen in [start, end) (private ones stay private), except
    those whose message also put an event in the calendar (the agenda lists that event)."""
    rows = await conn.fetch(
        """SELECT m.occurred_at, m.content, m.ai_understanding ->> 'person' AS person
           FROM memories m
           WHERE m.household_id = $1 AND m.deleted_at IS NULL AND m.visibility = 'household'
             AND m.kind = 'plan' AND m.occurred_at >= $2 AND m.occurred_at < $3
             AND NOT EXISTS (SELECT 1 FROM events e WHERE e.household_id = m.household_id
                                                        AND e.source_inbox_id = m.source_inbox_id)
           ORDER BY m.occurred_at, m.id LIMIT $4""",
        household_id,
        start,
        end,
        MAX_ITEMS,
    )
    return [AgendaItem(row["occurred_at"], row["content"], (row["person"],) if row["person"] else ()) for row in rows]
