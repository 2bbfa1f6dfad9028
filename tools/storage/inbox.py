"""The inbox: every accepted message, stored before the sender hears 2xx, unique per channel + external id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from tools.errors import StorageError
from tools.infra.batching import GroupCommit
from tools.storage.database import Connection, Database
from tools.storage.outbox import OutboxRow

_COLUMNS = (
    "id, household_id, user_id, channel, external_id, text, payload, status, attempts, error, trace_id, received_at"
)


@dataclass(frozen=True)
class InboxRow:
    id: int
    household_id: int
    user_id: int
    channel: str
    external_id: str
    text: str
    payload: dict[str, Any]
    status: str
    attempts: int
    error: str | None
    trace_id: str
    received_at: datetime


@dataclass(frozen=True)
class NewMessage:
    household_id: int
    user_id: int
    channel: str
    external_id: str
    text: str
    trace_id: str
    payload: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # PostgreSQL text cannot hold NUL; one in a message must not fail the messages written with it.
        object.__setattr__(self, "text", self.text.replace("\x00", ""))

    @property
    def key(self) -> tuple[str, str]:
        return self.channel, self.external_id


Written = dict[tuple[str, str], tuple[int, datetime]]  # (channel, external_id) -> (id, received_at)


async def write_many(conn: Connection, messages: Sequence[NewMessage]) -> Written:
    """Insert messages of any households in one statement (its own transaction: committed on return); the keys
    that existed already are not in the result."""
    rows = await conn.fetch(
        "SELECT channel, external_id, id, received_at FROM faa_accept_inbox($1, $2, $3, $4, $5, $6, $7)",
        [m.household_id for m in messages],
        [m.user_id for m in messages],
        [m.channel for m in messages],
        [m.external_id for m in messages],
        [m.text for m in messages],
        [m.payload for m in messages],
        [m.trace_id for m in messages],
    )
    return {(r["channel"], r["external_id"]): (r["id"], r["received_at"]) for r in rows}


class InboxWriter:
    """Group commit for the inbox (`GroupCommit`): 200 webhooks at once cost a handful of commits, not 200, and a
    message PostgreSQL refuses (a payload it cannot store) fails alone."""

    def __init__(self, db: Database, *, max_batch: int = 500) -> None:
        self._db = db
        self._commits = GroupCommit(self._write, max_batch=max_batch, split_on_error=True)

    async def accept(self, message: NewMessage) -> tuple[InboxRow, bool]:
        """Store a message once (committed when this returns); a redelivery returns the stored row and `False`."""
        written = await self._commits.submit(message)
        if written is None:
            return await self._stored(message), False
        inbox_id, received_at = written
        row = InboxRow(
            inbox_id, message.household_id, message.user_id, message.channel, message.external_id,
            message.text, message.payload, "queued", 0, None, message.trace_id, received_at,
        )  # fmt: skip
        return row, True

    async def _write(self, batch: list[NewMessage]) -> list[tuple[int, datetime] | None]:
        async with self._db.pool.acquire() as conn:
            written = await write_many(conn, batch)
        # A key sent twice in one batch is written once: the first message gets the row, the others find it.
        return [written.pop(message.key, None) for message in batch]

    async def _stored(self, message: NewMessage) -> InboxRow:
        async with self._db.household(message.household_id, message.user_id) as conn:
            existing = await conn.fetchrow(
                f"SELECT {_COLUMNS} FROM inbox WHERE channel = $1 AND external_id = $2", *message.key
            )
        if existing is None:
            # The id is taken by a row this household cannot see: refuse rather than reveal or merge.
            raise StorageError(f"message id {message.external_id!r} on {message.channel} is already used")
        return InboxRow(**dict(existing))


async def get(conn: Connection, inbox_id: int) -> InboxRow | None:
    row = await conn.fetchrow(f"SELECT {_COLUMNS} FROM inbox WHERE id = $1", inbox_id)
    return None if row is None else InboxRow(**dict(row))


async def previous_id(conn: Connection, household_id: int, user_id: int, inbox_id: int) -> int | None:
    """The member's message before `inbox_id`, if any."""
    found: int | None = await conn.fetchval(
        "SELECT max(id) FROM inbox WHERE household_id = $1 AND user_id = $2 AND id < $3",
        household_id,
        user_id,
        inbox_id,
    )
    return found


_WITH_REPLY = ", ".join(
    [f"i.{name.strip()}" for name in _COLUMNS.split(",")] + [f"o.{f.name} AS reply_{f.name}" for f in fields(OutboxRow)]
)


async def with_reply(conn: Connection, inbox_id: int) -> tuple[InboxRow, OutboxRow | None] | None:
    """The message and its reply, if it has one, as of one moment.

    One statement, so one snapshot: in READ COMMITTED each statement sees what was committed before it began, and
    two reads could straddle the commit that finishes the message (status and reply commit together), showing its
    reply beside status 'processing'."""
    row = await conn.fetchrow(
        f"SELECT {_WITH_REPLY} FROM inbox i LEFT JOIN outbox o ON o.inbox_id = i.id WHERE i.id = $1", inbox_id
    )
    if row is None:
        return None
    values = dict(row)
    reply = {f.name: values.pop(f"reply_{f.name}") for f in fields(OutboxRow)}
    return InboxRow(**values), None if reply["id"] is None else OutboxRow(**reply)


async def claim(conn: Connection, inbox_id: int) -> InboxRow | None:
    """Mark a queued (or interrupted) message as processing; `None` when it is already finished."""
    row = await conn.fetchrow(
        f"""UPDATE inbox SET status = 'processing', attempts = attempts + 1, updated_at = now()
            WHERE id = $1 AND status IN ('queued', 'processing')
            RETURNING {_COLUMNS}""",
        inbox_id,
    )
    return None if row is None else InboxRow(**dict(row))


# Every part of an admission is an index probe (migration 0021): the member's older waiting message (`inbox_waiting`)
# and the running messages (`inbox_running`, at most the household's slots), so a household's turn costs the same
# with 5,000 of its messages waiting as with none.
_ADMIT = """UPDATE inbox i SET status = 'processing', updated_at = now()
    WHERE i.id = $1 AND i.status = 'queued'
      AND NOT EXISTS (SELECT 1 FROM inbox o
                      WHERE o.household_id = i.household_id AND o.user_id = i.user_id AND o.status = 'queued'
                        AND o.id < i.id)
      AND (SELECT count(*) FROM inbox o
           WHERE o.household_id = i.household_id AND o.user_id = i.user_id AND o.status = 'processing') < $2
      AND (SELECT count(*) FROM inbox o WHERE o.household_id = i.household_id AND o.status = 'processing') < $3
    RETURNING i.id"""

# Each member's oldest waiting message is one probe per member (the household's members, a handful), not a walk
# over the household's waiting messages; none is looked up when the household has no free slot.
_TURNS = """WITH running AS (
        SELECT user_id, count(*) AS n FROM inbox
        WHERE household_id = $1 AND status = 'processing' GROUP BY user_id),
    free AS (
        SELECT greatest($3 - coalesce(sum(n), 0), 0) AS slots FROM running),
    chosen AS (
        SELECT head.id FROM users u
        CROSS JOIN LATERAL (
            SELECT w.id FROM inbox w
            WHERE w.household_id = $1 AND w.user_id = u.id AND w.status = 'queued'
            ORDER BY w.id LIMIT 1) head
        LEFT JOIN running r ON r.user_id = u.id
        WHERE u.household_id = $1 AND coalesce(r.n, 0) < $2 AND (SELECT slots FROM free) > 0
        ORDER BY head.id
        LIMIT (SELECT slots FROM free))
    UPDATE inbox i SET status = 'processing', updated_at = now()
    FROM chosen WHERE i.id = chosen.id AND i.status = 'queued'
    RETURNING i.id"""

# Taken (per household, for the transaction) by every admission, so two jobs of one household never both take
# its last free slot; other households' admissions do not wait.
_ADMISSION_LOCK = 0x46414131  # "FAA1"


async def admit(conn: Connection, inbox_id: int, household_id: int, *, per_member: int, per_household: int) -> bool:
    """Let a queued message start (status 'processing') when its member has fewer than `per_member` messages in
    flight, its household fewer than `per_household`, and no older message of the member is waiting; `False` when
    it must wait for its turn. A message that is no longer queued (running, retried, finished) is `True`: its run
    was admitted before, or finds it finished."""
    await _lock_household(conn, household_id)
    status = await conn.fetchval("SELECT status FROM inbox WHERE id = $1", inbox_id)
    if status != "queued":
        return True
    admitted = await conn.fetchval(_ADMIT, inbox_id, per_member, per_household)
    return admitted is not None


async def next_turns(conn: Connection, household_id: int, *, per_member: int, per_household: int) -> list[int]:
    """Admit the household's waiting messages that fit its free slots, oldest first (each member's oldest waiting
    message is its next); their ids. Called when one of its messages is accepted and when one finished (the intake
    and the worker enqueue the jobs of those admitted: only an admitted message has a job), and by the sweep.

    A household with every slot taken admits nothing, and is told so without its admission lock, so a flood's
    messages are accepted side by side rather than one after another. No turn is lost that way: each message
    counted as running here finishes later and then gives the turns, seeing every message committed before."""
    running = await conn.fetchval(
        "SELECT count(*) FROM inbox WHERE household_id = $1 AND status = 'processing'", household_id
    )
    if running >= per_household:
        return []
    await _lock_household(conn, household_id)
    rows = await conn.fetch(_TURNS, household_id, per_member, per_household)
    return sorted(int(r["id"]) for r in rows)


async def _lock_household(conn: Connection, household_id: int) -> None:
    await conn.execute("SELECT pg_advisory_xact_lock($1, $2)", _ADMISSION_LOCK, household_id % 2_147_483_647)


async def finish(conn: Connection, inbox_id: int, *, status: str, error: str | None = None) -> bool:
    """Close the message; `False` if another run closed it first (the caller must roll back its reply)."""
    result = await conn.execute(
        """UPDATE inbox SET status = $2, error = $3, updated_at = now(), completed_at = now()
           WHERE id = $1 AND status IN ('queued', 'processing')""",
        inbox_id,
        status,
        error,
    )
    return result.endswith(" 1")


async def touch(conn: Connection, inbox_id: int) -> None:
    """Note that the sweeper re-enqueued the message, so it is not re-enqueued again at once (a new lease)."""
    await conn.execute("UPDATE inbox SET updated_at = now() WHERE id = $1", inbox_id)


async def renew(conn: Connection, inbox_id: int) -> None:
    """Renew the lease of a message being processed (its job is alive)."""
    await conn.execute("UPDATE inbox SET updated_at = now() WHERE id = $1 AND status = 'processing'", inbox_id)


async def waiting_households(conn: Connection, older_than_s: float, after: int = 0, limit: int = 100) -> list[int]:
    """The households with a message waiting for its turn for `older_than_s` or more, by id after `after` (across
    households)."""
    rows = await conn.fetch(
        "SELECT household_id FROM faa_waiting_households($1, make_interval(secs => $2), $3)", after, older_than_s, limit
    )
    return [int(r["household_id"]) for r in rows]


async def expired_leases(conn: Connection, older_than_s: float, limit: int = 100) -> list[tuple[int, int]]:
    """(inbox id, household id) of admitted messages untouched for `older_than_s`, across households: their job
    died with its worker or was lost with Redis, or still waits in arq's queue."""
    rows = await conn.fetch(
        "SELECT id, household_id FROM faa_expired_leases(make_interval(secs => $1), $2)", older_than_s, limit
    )
    return [(int(r["id"]), int(r["household_id"])) for r in rows]
