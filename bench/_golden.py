"""The golden set (bench/golden/cases.yaml): its cases, running one through the system, and scoring its effects.

A case runs in a fresh household: its seed memories are stored with the `store` tool (real embeddings), the
message goes the system path (inbox → arq job → engine → tools → outbox → reply), and the score looks only at
what changed in the database and at the numbers in the reply — never at an LLM's opinion of the answer.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo

import asyncpg
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # `tests` is not an installed package

from bot import intake  # noqa: E402
from bot.live import ReplyWaiter  # noqa: E402
from engine.deps import Deps  # noqa: E402
from tests import system  # noqa: E402
from tools.context import ToolContext  # noqa: E402
from tools.memories import StoreArgs, store  # noqa: E402
from tools.storage.households import Principal  # noqa: E402

CASES_FILE = Path(__file__).resolve().parent / "golden" / "cases.yaml"
TIMEZONE = "Europe/Berlin"
MEMBERS = ("Anna", "Ben")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")

# ---------------------------------------------------------------------------------------------------- cases


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class ExpectedMemory(_Strict):
    kind: list[str] | None = None
    category: list[str] | None = None
    person: list[str] | None = None
    amount: Decimal | None = None
    currency: str | None = None
    occurred: Literal["today", "yesterday"] | None = None

    _as_lists = field_validator("kind", "category", "person", mode="before")(_listed)


class Expectation(_Strict):
    clarify: bool = False
    memories: list[ExpectedMemory] | None = None  # None: not checked
    numbers: list[Decimal] = []
    reminders: int | None = None


class Seed(_Strict):
    content: str
    kind: str
    category: str | None = None
    amount: Decimal | None = None
    currency: str | None = None
    person: str | None = None
    merchant: str | None = None
    when: str = "today"


class Case(_Strict):
    id: str
    category: str
    lang: Literal["en", "zh"] = "en"
    member: Literal["Anna", "Ben"] = "Anna"
    needs: Literal["reminders"] | None = None
    seed: list[Seed] = []
    text: str = Field(min_length=1)
    expect: Expectation


def load_cases(path: Path = CASES_FILE) -> list[Case]:
    cases = [Case.model_validate(item) for item in yaml.safe_load(path.read_text())["cases"]]
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate case ids in {path}")
    return cases


def seed_moment(when: str, now: datetime) -> datetime:
    """A moment for a seed in the household's calendar: `today` (a minute ago), `yesterday`, `this_month`
    (yesterday, or earlier today on the 1st), `last_month` (the 15th) or `days_ago_N`."""
    local = now.astimezone(ZoneInfo(TIMEZONE))
    if when == "today":
        return local - timedelta(minutes=1)
    if when == "yesterday":
        return local - timedelta(days=1)
    if when == "this_month":
        return local - timedelta(days=1) if local.day > 1 else local.replace(hour=0, minute=30)
    if when == "last_month":
        return (local.replace(day=1) - timedelta(days=1)).replace(day=15, hour=12)
    if match := re.fullmatch(r"days_ago_(\d+)", when):
        return local - timedelta(days=int(match.group(1)))
    raise ValueError(f"unknown seed time {when!r}")


# ---------------------------------------------------------------------------------------------------- running


@dataclass
class Effects:
    """What one message did: its reply and outcome, the memories and reminders it created, its cost."""

    reply: str
    outcome: str
    memories: list[dict[str, Any]]
    reminders: int | None  # None: there is no schedule_reminder tool
    llm_calls: int
    latency_s: float
    error: str | None = None


@dataclass
class CaseResult:
    case: Case
    effects: Effects | None
    passed: bool
    skipped: bool = False
    reasons: list[str] = field(default_factory=list)


REMINDER_TOOL = "schedule_reminder"


async def seed_household(deps: Deps, family: system.Family, case: Case, now: datetime) -> None:
    principal = family.principal("Anna")
    async with deps.db.household(principal.household_id, principal.user_id) as conn:
        ctx = ToolContext(conn, principal.household_id, principal.user_id, TIMEZONE, now, deps.embedder)
        for seed in case.seed:
            args = seed.model_dump(exclude={"when"}, exclude_none=True)
            await store(ctx, StoreArgs(**args, occurred_at=seed_moment(seed.when, now)))


async def run_case(
    deps: Deps, admin: asyncpg.Connection, waiter: ReplyWaiter, case: Case, *, timeout_s: float
) -> Effects:
    """A fresh household, its seeds, then the case's message through inbox → worker → engine; its effects."""
    name = f"golden-{case.id}-{uuid.uuid4().hex[:6]}"
    family = await system.make_family(admin, name, dict.fromkeys(MEMBERS, TIMEZONE))
    now = datetime.now(ZoneInfo(TIMEZONE))
    await seed_household(deps, family, case, now)
    principal: Principal = family.principal(case.member)
    started = time.monotonic()
    row, _ = await intake.accept(
        deps,
        principal,
        channel="terminal",
        external_id=f"golden-{case.id}-{uuid.uuid4().hex}",
        text=case.text,
        trace_id=uuid.uuid4().hex,
        enqueue=False,
    )
    future = waiter.expect(row.id)  # before the job exists, so the reply cannot slip past
    await intake.enqueue_inbound(deps, row)
    error = None
    try:
        reply = await asyncio.wait_for(future, timeout_s)
    except TimeoutError:
        waiter.forget(row.id, future)
        reply, error = {"reply": ""}, f"no reply in {timeout_s:g}s"
    latency = time.monotonic() - started
    reminders = REMINDER_TOOL in deps.registry.names()
    text = str(reply.get("reply") or "")
    return await collect_effects(admin, row.id, text, latency, error, reminders=reminders)


async def collect_effects(
    admin: asyncpg.Connection, inbox_id: int, reply: str, latency_s: float, error: str | None, *, reminders: bool
) -> Effects:
    """The message's turn, and the memories and reminders rows it created (`reminders`: the tool exists)."""
    turn = await admin.fetchrow("SELECT outcome, llm_calls FROM interactions WHERE inbox_id = $1", inbox_id)
    rows = await admin.fetch(
        """SELECT ai_understanding ->> 'kind' AS kind, ai_understanding ->> 'category' AS category,
                  ai_understanding ->> 'person' AS person, amount, currency,
                  (occurred_at AT TIME ZONE $2)::date AS local_day
           FROM memories WHERE source_inbox_id = $1 AND deleted_at IS NULL ORDER BY id""",
        inbox_id,
        TIMEZONE,
    )
    created = None
    if reminders:
        created = await admin.fetchval("SELECT count(*) FROM reminders WHERE source_inbox_id = $1", inbox_id)
    return Effects(
        reply=reply,
        outcome=turn["outcome"] if turn else "none",
        memories=[dict(r) for r in rows],
        reminders=created,
        llm_calls=turn["llm_calls"] if turn else 0,
        latency_s=latency_s,
        error=error,
    )


# ---------------------------------------------------------------------------------------------------- scoring


def reply_numbers(text: str) -> set[Decimal]:
    """Every number written in the reply: thousands separators dropped, 58.2 equal to 58.20."""
    found = set()
    for raw in _NUMBER.findall(text):
        try:
            found.add(Decimal(raw.replace(",", "")))
        except InvalidOperation:
            continue
    return found


def _memory_problems(expected: ExpectedMemory, row: dict[str, Any], today: date) -> list[str]:
    problems = []
    for key in ("kind", "category", "person"):
        allowed = getattr(expected, key)
        if allowed is not None and str(row.get(key) or "").lower() not in {value.lower() for value in allowed}:
            problems.append(f"{key} {row.get(key)!r} not in {allowed}")
    if expected.amount is not None and row.get("amount") != expected.amount:
        problems.append(f"amount {row.get('amount')} != {expected.amount}")
    if expected.currency is not None and row.get("currency") != expected.currency:
        problems.append(f"currency {row.get('currency')} != {expected.currency}")
    if expected.occurred is not None:
        day = today if expected.occurred == "today" else today - timedelta(days=1)
        if row.get("local_day") != day:
            problems.append(f"occurred {row.get('local_day')} != {expected.occurred} ({day})")
    return problems


def _match_memories(expected: list[ExpectedMemory], rows: list[dict[str, Any]], today: date) -> list[str]:
    """Each expected memory must match a distinct row, and there must be no row left over."""
    if len(rows) != len(expected):
        return [f"{len(rows)} new memories, expected {len(expected)}"]
    unused = list(rows)
    reasons = []
    for wanted in expected:
        fits = [row for row in unused if not _memory_problems(wanted, row, today)]
        if fits:
            unused.remove(fits[0])
        else:
            closest = min(unused, key=lambda row: len(_memory_problems(wanted, row, today)))
            reasons.append("; ".join(_memory_problems(wanted, closest, today)))
    return reasons


def score(case: Case, effects: Effects, *, today: date) -> CaseResult:
    """Pass when every expectation of the case holds for the effects; the reasons say what did not."""
    expect = case.expect
    if case.needs == "reminders" and effects.reminders is None:
        return CaseResult(case, effects, passed=False, skipped=True, reasons=[f"no {REMINDER_TOOL} tool"])
    reasons = [effects.error] if effects.error else []
    clarified = effects.outcome == "clarifying"
    if clarified != expect.clarify:
        reasons.append(f"outcome {effects.outcome}, expected {'a' if expect.clarify else 'no'} clarifying question")
    if expect.memories is not None:
        reasons += _match_memories(expect.memories, effects.memories, today)
    missing = [str(n) for n in expect.numbers if n not in reply_numbers(effects.reply)]
    if missing:
        reasons.append(f"reply lacks {', '.join(missing)}")
    if expect.reminders is not None and effects.reminders is not None and effects.reminders != expect.reminders:
        reasons.append(f"{effects.reminders} reminders, expected {expect.reminders}")
    return CaseResult(case, effects, passed=not reasons, reasons=reasons)
