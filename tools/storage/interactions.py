"""Interactions (each user-visible turn with its trace), experiment results and pending clarifications."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tools.storage.database import Connection


@dataclass(frozen=True)
class Turn:
    user_text: str
    reply_text: str
    created_at: datetime
    route: str | None = None  # the capability that last took the turn, as its trace tells


@dataclass(frozen=True)
class TurnRecord:
    household_id: int
    user_id: int
    inbox_id: int
    channel: str
    user_text: str
    reply_text: str
    outcome: str
    prompt_version: str | None
    trace: dict[str, Any]
    llm_calls: int
    tool_calls: int
    tokens_in: int
    tokens_out: int
    latency_ms: int
    rounds: int
    experiment: str | None


@dataclass(frozen=True)
class PendingClarification:
    inbox_id: int
    question: str
    options: list[str]
    state: dict[str, Any]


async def record_turn(conn: Connection, turn: TurnRecord) -> int:
    """Write the turn and, when it ran in an experiment, its result: one statement, one round trip."""
    experiment = turn.experiment if turn.prompt_version else None
    interaction_id = await conn.fetchval(
        """WITH t AS (
               INSERT INTO interactions (household_id, user_id, inbox_id, channel, user_text, reply_text, outcome,
                   prompt_version, trace, llm_calls, tool_calls, tokens_in, tokens_out, latency_ms)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id),
           r AS (
               INSERT INTO experiment_results (household_id, interaction_id, experiment, variant, latency_ms, rounds,
                   llm_calls, tool_calls, tokens)
               SELECT $1, t.id, $15, $8, $14, $16, $10, $11, $12 + $13 FROM t WHERE $15::text IS NOT NULL)
           SELECT id FROM t""",
        turn.household_id,
        turn.user_id,
        turn.inbox_id,
        turn.channel,
        turn.user_text,
        turn.reply_text,
        turn.outcome,
        turn.prompt_version,
        turn.trace,
        turn.llm_calls,
        turn.tool_calls,
        turn.tokens_in,
        turn.tokens_out,
        turn.latency_ms,
        experiment,
        turn.rounds,
    )
    return int(interaction_id)


async def tokens_since(conn: Connection, household_id: int, since: datetime) -> int:
    """LLM tokens the household's messages used since `since`."""
    used = await conn.fetchval(
        """SELECT coalesce(sum(tokens_in + tokens_out), 0) FROM interactions
           WHERE household_id = $1 AND created_at >= $2""",
        household_id,
        since,
    )
    return int(used)


async def recent_turns(
    conn: Connection, household_id: int, user_id: int, limit: int, *, shared: bool = False
) -> list[Turn]:
    """The member's last `limit` turns, oldest first; `shared`: only those said where others read along (a group
    chat), for a message said there — what the member said in their own chat is not the group's conversation."""
    rows = await conn.fetch(
        """SELECT t.user_text, t.reply_text, t.created_at,
                  (SELECT s.step ->> 'route' FROM jsonb_array_elements(t.trace -> 'steps') WITH ORDINALITY s(step, n)
                   WHERE s.step ->> 'event' = 'route' ORDER BY s.n DESC LIMIT 1) AS route
           FROM interactions t
           WHERE t.household_id = $1 AND t.user_id = $2
             AND (NOT $4 OR EXISTS (SELECT 1 FROM inbox i WHERE i.id = t.inbox_id AND i.payload @> '{"shared": true}'))
           ORDER BY t.created_at DESC LIMIT $3""",
        household_id,
        user_id,
        limit,
        shared,
    )
    return [Turn(**dict(r)) for r in reversed(rows)]


# A member's pending question is kept with the chat it was asked in: only a message in that chat answers it — a
# question asked in the member's own chat may be about something private, and the group's reply must not be shaped
# by it. Each chat keeps its own: a question asked in the group leaves the one waiting in the member's own chat.
async def pending_clarification(conn: Connection, user_id: int, chat: str) -> PendingClarification | None:
    """The question FAA asked the member in `chat` and waits on, if any."""
    row = await conn.fetchrow(
        """SELECT inbox_id, question, options, state FROM pending_clarifications
           WHERE user_id = $1 AND chat = $2 AND expires_at > now()""",
        user_id,
        chat,
    )
    return None if row is None else PendingClarification(**dict(row))


async def set_pending_clarification(
    conn: Connection, household_id: int, user_id: int, pending: PendingClarification, chat: str
) -> None:
    """Keep `pending` as the member's question waiting in `chat`."""
    await conn.execute(
        """INSERT INTO pending_clarifications (household_id, user_id, chat, inbox_id, question, options, state)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (user_id, chat) DO UPDATE SET inbox_id = excluded.inbox_id, question = excluded.question,
               options = excluded.options, state = excluded.state, created_at = now(),
               expires_at = now() + interval '1 day'""",
        household_id,
        user_id,
        chat,
        pending.inbox_id,
        pending.question,
        pending.options,
        pending.state,
    )


async def clear_pending_clarification(conn: Connection, user_id: int, chat: str) -> None:
    await conn.execute("DELETE FROM pending_clarifications WHERE user_id = $1 AND chat = $2", user_id, chat)
