"""The memory tools: store, search, update_memory_fields, forget and restore, over `tools.storage.memories`."""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Annotated, Any
from zoneinfo import ZoneInfo

import asyncpg
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from tools.audience import HiddenFromArg, VisibilityArg, audience, shown_audience
from tools.budgets import after_expense
from tools.context import ToolContext
from tools.errors import RowNotFound, ToolRetry
from tools.fields import (
    Amount,
    Content,
    Currency,
    Details,
    MemoryId,
    Moment,
    Name,
    Slug,
    Tags,
    blank_is_none,
)
from tools.filters import Filter, Kind, compile_filter, filter_help
from tools.infra.periods import localize
from tools.permissions import check_audience, check_change, may_change
from tools.storage import memories as stored
from tools.storage.visibility import Audience

_D_CONTENT = "the fact as one short self-contained sentence"
_D_CATEGORY = "lowercase slug, e.g. groceries, rent, dentist"
_D_AMOUNT = "exact amount; required for expense and income"
_D_CURRENCY = "ISO 4217 code, e.g. EUR; required with amount"
_D_OCCURRED = "when it happened or will happen; default now; a bare date = that day"
_D_DETAILS = "up to 20 extra facts, name -> short value"


class StoreArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: Content = Field(description=_D_CONTENT)
    kind: Kind
    category: Slug | None = Field(None, description=_D_CATEGORY)
    amount: Amount | None = Field(None, description=_D_AMOUNT)
    currency: Currency | None = Field(None, description=_D_CURRENCY)
    occurred_at: Moment | None = Field(None, description=_D_OCCURRED)
    person: Name | None = Field(None, description="who it is about, e.g. a family member")
    merchant: Name | None = None
    tags: Tags = []
    details: Details = Field({}, description=_D_DETAILS)
    visibility: VisibilityArg = "household"
    hidden_from: HiddenFromArg = None

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        """What models commonly write around the values: blank strings for absent ones, and an amount on a fact
        that is no money ("104cm" on a child's height) — dropped, since only expense and income carry money."""
        if not isinstance(data, dict):
            return data
        data = {key: None if isinstance(value, str) and not value.strip() else value for key, value in data.items()}
        if data.get("kind") not in ("expense", "income", None):
            data.pop("amount", None)
            data.pop("currency", None)
        return {key: value for key, value in data.items() if value is not None}  # absent: the field's default

    @model_validator(mode="after")
    def _money_rules(self) -> StoreArgs:
        _check_money(self.kind, self.amount, self.currency, ValueError)
        return self


class UpdateMemoryFieldsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_id: MemoryId
    content: Content | None = Field(None, description=_D_CONTENT)
    kind: Kind | None = None
    category: Slug | None = Field(None, description=_D_CATEGORY)
    amount: Amount | None = Field(None, description=_D_AMOUNT)
    currency: Currency | None = Field(None, description=_D_CURRENCY)
    occurred_at: Moment | None = Field(None, description=_D_OCCURRED)
    person: Name | None = None
    merchant: Name | None = None
    tags: Tags | None = None
    details: Details | None = Field(None, description=_D_DETAILS + "; replaces the old details")
    visibility: VisibilityArg | None = None
    hidden_from: HiddenFromArg = None

    @model_validator(mode="after")
    def _something_to_change(self) -> UpdateMemoryFieldsArgs:
        changes = self.model_fields_set - {"memory_id"}
        if not changes:
            raise ValueError("give at least one field to change besides memory_id")
        mandatory = {"content", "kind", "occurred_at", "visibility"}
        required = sorted(f for f in changes & mandatory if getattr(self, f) is None)
        if required:
            raise ValueError(f"{', '.join(required)} cannot be cleared")
        return self


class SearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: Annotated[
        Annotated[str, StringConstraints(strip_whitespace=True, max_length=500)] | None, BeforeValidator(blank_is_none)
    ] = Field(None, description="what to look for, in natural language (semantic search)")
    filter: Filter | None = Field(None, description=filter_help())
    limit: int = Field(10, ge=1, le=50)
    order: stored.Order = Field("relevance", description="relevance needs a query; without one it means newest")


class MemoryIdsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_ids: Annotated[list[MemoryId], Field(min_length=1, max_length=50)]


class Memory(BaseModel):
    memory_id: int
    content: str
    kind: str | None = None
    category: str | None = None
    amount: str | None = None
    currency: str | None = None
    occurred_at: str
    person: str | None = None
    merchant: str | None = None
    tags: list[str] = []
    details: dict[str, Any] = {}
    visibility: str
    hidden_from: str | None = Field(None, description="the member it is kept from (a surprise for them)")
    author: str | None = None
    edited_by: str | None = Field(None, description="the member who changed it last, when not its author")
    similarity: float | None = None


class UpdatedMemory(Memory):
    previous: dict[str, Any] = Field(description="the stored values before this change, for undo")


class SearchResult(BaseModel):
    count: int
    memories: list[Memory]
    filter_dropped: bool = Field(False, description="true: nothing matched the filter, these match the query only")


class ForgetResult(BaseModel):
    forgotten: list[int]
    not_found: list[int]
    not_allowed: list[int] = Field([], description="ids a child's account may not forget (another member's)")


class RestoreResult(BaseModel):
    restored: list[int]
    not_found: list[int]
    not_allowed: list[int] = Field([], description="ids a child's account may not restore (another member's)")


def _check_money(kind: str, amount: Decimal | None, currency: str | None, error: Any) -> None:
    if amount is not None and currency is None:
        raise error("currency is required when amount is set")
    if kind in ("expense", "income") and amount is None:
        raise error(f"amount (and currency) is required for kind {kind}")


def _understanding(args: StoreArgs | UpdateMemoryFieldsArgs, base: dict[str, Any]) -> dict[str, Any]:
    keys = ("kind", "category", "person", "merchant", "tags", "details")
    given = args.model_fields_set if isinstance(args, UpdateMemoryFieldsArgs) else set(keys)
    merged = dict(base)
    for key in keys:
        if key in given:
            merged[key] = getattr(args, key)
    return {key: value for key, value in merged.items() if value not in (None, [], {})}


def _memory(row: asyncpg.Record, tz: ZoneInfo, hidden_from: str | None = None) -> Memory:
    understanding: dict[str, Any] = row["ai_understanding"] or {}
    distance = row.get("distance")
    edited = row["updated_by"] is not None and row["updated_by"] != row["author_id"]
    return Memory(
        memory_id=row["id"],
        content=row["content"],
        kind=understanding.get("kind"),
        category=understanding.get("category"),
        amount=None if row["amount"] is None else str(row["amount"]),
        currency=row["currency"],
        occurred_at=_local_iso(row["occurred_at"], tz),
        person=understanding.get("person"),
        merchant=understanding.get("merchant"),
        tags=list(understanding.get("tags") or []),
        details=dict(understanding.get("details") or {}),
        visibility=row["visibility"],
        hidden_from=hidden_from,
        author=row["author"],
        edited_by=row["editor"] if edited else None,
        similarity=None if distance is None else round(1.0 - float(distance), 4),
    )


async def _shown(ctx: ToolContext, row: asyncpg.Record) -> Memory:
    hidden = (await shown_audience(ctx, row))["hidden_from"] if row["hidden_from"] is not None else None
    return _memory(row, ZoneInfo(ctx.timezone), hidden)


def _local_iso(instant: datetime, tz: ZoneInfo) -> str:
    """The instant on the member's clock; in UTC when that clock would run past the calendar (a row stored before
    dates were bounded, e.g. 9999-12-31T23:00Z, seen from UTC+1)."""
    try:
        return instant.astimezone(tz).isoformat()
    except OverflowError:
        return instant.isoformat()


def _when(ctx: ToolContext, moment: date | datetime | None) -> datetime:
    if moment is None:
        return ctx.now if ctx.now.tzinfo else ctx.now.replace(tzinfo=UTC)
    # A bare date is stored at local noon so the day stays the same for members a few timezones away.
    return localize(moment, ZoneInfo(ctx.timezone), at=time(12))


async def store(ctx: ToolContext, args: StoreArgs) -> Memory:
    """Remember one thing a family member told you (expense, income, health, plan, fact, note, shopping, contact).

    Store one memory per fact, with `content` a short self-contained sentence ("Paid 35.50 EUR for groceries
    at Rewe"). Amounts are exact decimals with a 3-letter currency; expense and income need both. `occurred_at`
    is when it happened (default now; without an offset it is in the member's timezone). Use
    `visibility: "private"` when the member wants it kept to themselves ("only for me", "nur für mich", "私密"),
    and `hidden_from` with a member's name when everyone but that member may see it ("a surprise for Sam").
    Returns the stored memory with its memory_id.
    """
    kept = await audience(ctx, "store", args.visibility, args.hidden_from)
    row = await stored.insert(
        ctx.conn,
        household_id=ctx.household_id,
        author_id=ctx.user_id,
        content=args.content,
        understanding=_understanding(args, {}),
        embedding=await ctx.embed_one(args.content, "passage"),
        amount=args.amount,
        currency=args.currency,
        occurred_at=_when(ctx, args.occurred_at),
        visibility=kept.visibility,
        source_inbox_id=ctx.inbox_id,
        hidden_from=kept.hidden_from,
    )
    if args.kind == "expense":
        await after_expense(
            ctx, category=args.category, currency=args.currency, amount=args.amount, occurred_at=row["occurred_at"]
        )
    return await _shown(ctx, row)


async def search(ctx: ToolContext, args: SearchArgs) -> SearchResult:
    """Find memories by meaning (`query`), by exact conditions (`filter`), or both.

    Use `query` for fuzzy recall ("when is Anna's dentist appointment?") and `filter` for exact criteria
    (kind, category, person, period, amount, author…). Each result has memory_id, content, its fields, the
    author and, with a query, a similarity from 0 to 1. When nothing matches both the query and the filter, the
    memories nearest to the query alone come back with `filter_dropped` true. Do not add up amounts from
    results: use `aggregate` for totals, counts and averages.
    """
    near = None if args.query is None else await ctx.embed_one(args.query, "query")
    condition = None if args.filter is None else functools.partial(compile_filter, args.filter, scope=ctx)
    rows = await stored.find(
        ctx.conn, ctx.household_id, condition=condition, order=args.order, limit=args.limit, near=near
    )
    dropped = not rows and near is not None and condition is not None
    if dropped:  # a filter the model guessed wrong (a category never used) must not hide what the question asks
        rows = await stored.find(
            ctx.conn, ctx.household_id, condition=None, order=args.order, limit=args.limit, near=near
        )
    return SearchResult(count=len(rows), memories=[await _shown(ctx, row) for row in rows], filter_dropped=dropped)


async def update_memory_fields(ctx: ToolContext, args: UpdateMemoryFieldsArgs) -> UpdatedMemory:
    """Correct or complete one stored memory: give its memory_id and only the fields to change.

    Fields you leave out keep their value; a field set to null is cleared. Changing `content` re-indexes the
    memory for semantic search; `visibility` and `hidden_from` change who sees it (only its author can). Find the
    memory_id with `search` first. Returns the memory as now stored.
    """
    tool = "update_memory_fields"
    row = await stored.lock(ctx.conn, ctx.household_id, args.memory_id)
    if row is None:
        raise RowNotFound(tool, f"there is no memory {args.memory_id}; find its memory_id with search")
    await check_change(ctx, tool, f"memory {args.memory_id}", row["author_id"])
    given = args.model_fields_set
    kept = Audience(row["visibility"], row["hidden_from"])
    if given & {"visibility", "hidden_from"}:
        kept = await audience(ctx, tool, args.visibility or row["visibility"], args.hidden_from)
        if kept != Audience(row["visibility"], row["hidden_from"]):
            check_audience(ctx, tool, f"memory {args.memory_id}", row["author_id"])
    understanding = _understanding(args, row["ai_understanding"] or {})
    amount = args.amount if "amount" in given else row["amount"]
    currency = args.currency if "currency" in given else row["currency"]
    try:
        _check_money(understanding.get("kind", ""), amount, currency, ValueError)
    except ValueError as exc:
        raise ToolRetry("update_memory_fields", str(exc)) from None
    content = args.content if args.content is not None else row["content"]
    embedding = await ctx.embed_one(content, "passage") if content != row["content"] else None
    updated = await stored.update(
        ctx.conn,
        ctx.household_id,
        args.memory_id,
        content=content,
        understanding=understanding,
        embedding=embedding,
        amount=amount,
        currency=currency,
        occurred_at=_when(ctx, args.occurred_at) if args.occurred_at is not None else row["occurred_at"],
        visibility=kept.visibility,
        hidden_from=kept.hidden_from,
        by=ctx.user_id,
    )
    if understanding.get("kind") == "expense":
        await after_expense(
            ctx,
            category=understanding.get("category"),
            currency=currency,
            amount=amount,
            occurred_at=updated["occurred_at"],
        )
    return UpdatedMemory(**(await _shown(ctx, updated)).model_dump(), previous=stored.values(row))


async def forget(ctx: ToolContext, args: MemoryIdsArgs) -> ForgetResult:
    """Forget memories the family wants gone (wrong, duplicate or withdrawn), by memory_id.

    They stop appearing in search and totals; `restore` brings them back if this was a mistake.
    Returns the ids forgotten, the ids that were not found and those the member may not forget.
    """
    found = await stored.by_ids(ctx.conn, ctx.household_id, args.memory_ids)
    allowed = [row["id"] for row in found if await may_change(ctx, row["author_id"])]
    done = sorted(await stored.forget(ctx.conn, ctx.household_id, allowed, by=ctx.user_id))
    return ForgetResult(
        forgotten=done,
        not_found=sorted(set(args.memory_ids) - {row["id"] for row in found}),
        not_allowed=sorted({row["id"] for row in found} - set(allowed)),
    )


async def forget_exactly(ctx: ToolContext, args: MemoryIdsArgs) -> ForgetResult:
    """`forget` for a caller that names memories it expects to be there and the member's to forget (the web app):
    an id it cannot forget refuses the whole call (the caller's transaction then forgets none). Not a tool."""
    result = await forget(ctx, args)
    if result.not_allowed:
        await check_change(ctx, "forget", f"memory {result.not_allowed[0]}", None)
    if result.not_found:
        raise RowNotFound("forget", f"there is no memory {result.not_found[0]}")
    return result


async def restore_exactly(ctx: ToolContext, args: MemoryIdsArgs) -> RestoreResult:
    """`restore` that refuses the whole call for an id it cannot restore (as `forget_exactly`). Not a tool."""
    result = await restore(ctx, args)
    if result.not_allowed:
        await check_change(ctx, "restore", f"memory {result.not_allowed[0]}", None)
    if result.not_found:
        raise RowNotFound("restore", f"memory {result.not_found[0]} is not among the forgotten ones")
    return result


async def restore(ctx: ToolContext, args: MemoryIdsArgs) -> RestoreResult:
    """Undo `forget`: bring forgotten memories back, by memory_id.

    Returns the ids restored, the ids that were not found among forgotten memories and those the member may not
    restore.
    """
    found = await stored.forgotten(ctx.conn, ctx.household_id, args.memory_ids)
    allowed = [row["id"] for row in found if await may_change(ctx, row["author_id"])]
    done = sorted(await stored.restore(ctx.conn, ctx.household_id, allowed, by=ctx.user_id))
    return RestoreResult(
        restored=done,
        not_found=sorted(set(args.memory_ids) - {row["id"] for row in found}),
        not_allowed=sorted({row["id"] for row in found} - set(allowed)),
    )


async def recall(ctx: ToolContext, memory_ids: list[int]) -> list[Memory]:
    """The live memories with these ids, in the order given, as `search` shows them. Not a tool: the engine uses it
    to offer the model the rows a message may point at."""
    found = {row["id"]: await _shown(ctx, row) for row in await stored.by_ids(ctx.conn, ctx.household_id, memory_ids)}
    return [found[memory_id] for memory_id in memory_ids if memory_id in found]
