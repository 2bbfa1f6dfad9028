"""The `undo` tool: take back what the member's latest change did — whatever it stored, changed, forgot, restored,
scheduled, cancelled, snoozed or completed, the calendar events it added, moved or cancelled, the list items it
added, ticked or cleared, the budget it set or removed — from the journal of that message.
(`forget_me` is not undoable: what it removed is gone.)

Undo never takes back over another member's work: a row someone else changed since (its `updated_by`) stays as it
is, and the result says so. Taking a change back also puts back who had changed the row last before it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, time
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tools.context import ToolContext
from tools.storage import budgets as stored_budgets
from tools.storage import events as stored_events
from tools.storage import journal
from tools.storage import lists as stored_lists
from tools.storage import memories as stored_memories
from tools.storage import reminders as stored_reminders


class UndoArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class UndoResult(BaseModel):
    undid_message: int | None = Field(
        default=None, description="the message whose changes were undone; null: nothing to undo"
    )
    undone: list[str] = Field(default_factory=list, description="what was taken back, one line per change")
    kept: list[str] = Field(
        default_factory=list, description="what stayed because another member changed it since, one line each"
    )


class _Undoing:
    """One undo's account: what was taken back, and what stayed because another member changed it since."""

    def __init__(self, ctx: ToolContext) -> None:
        self.ctx = ctx
        self.undone: list[str] = []
        self.kept: list[str] = []

    async def mine(self, updated_by: int | None, what: str) -> bool:
        """Whether nobody but the member changed the row since (else it is kept, and said so)."""
        if updated_by is None or updated_by == self.ctx.user_id:
            return True
        members = await self.ctx.household_members()
        name = next((m.name for m in members if m.id == updated_by), "another member")
        self.kept.append(f"kept {what}: {name} changed it since")
        return False

    def did(self, line: str) -> None:
        if line:
            self.undone.append(line)


async def undo(ctx: ToolContext, args: UndoArgs) -> UndoResult:
    """Undo the member's most recent change: everything their latest message that changed something did (stored,
    corrected, forgot or restored memories; scheduled, cancelled, snoozed or completed reminders; events, list
    items, budgets, quiet hours).

    Use it when the member says "undo", "take that back" or "that was wrong, undo it". Called again, it undoes the
    change before that. What another member changed since stays as it is (listed in `kept`). Returns what was
    undone, or nothing when there is nothing left to undo.
    """
    entries = await journal.last_undoable(ctx.conn, ctx.household_id, ctx.user_id, ctx.inbox_id or 2**62)
    if not entries:
        return UndoResult()
    undoing = _Undoing(ctx)
    for entry in entries:  # newest first, so a later change is taken back before an earlier one
        revert = _REVERTS.get(str(entry.payload.get("tool")))
        if revert is not None:
            await revert(undoing, entry.payload.get("result") or {})
    return UndoResult(undid_message=entries[0].payload["inbox_id"], undone=undoing.undone, kept=undoing.kept)


def _editor(before: dict[str, Any], ctx: ToolContext) -> int | None:
    """Who had changed the row last before the change undone (entries from before this was recorded: the member)."""
    return before["updated_by"] if "updated_by" in before else ctx.user_id


async def _unstore(u: _Undoing, result: dict[str, Any]) -> None:
    ctx, memory_id = u.ctx, int(result["memory_id"])
    row = await stored_memories.lock(ctx.conn, ctx.household_id, memory_id)
    content = result.get("content", "")
    if row is None or not await u.mine(row["updated_by"], repr(content)):
        return
    await stored_memories.forget(ctx.conn, ctx.household_id, [memory_id], by=ctx.user_id)
    u.did(f"forgot the new memory {content!r}")


async def _unforget(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    rows = await stored_memories.forgotten(ctx.conn, ctx.household_id, [int(i) for i in result.get("forgotten", [])])
    ids = [row["id"] for row in rows if await u.mine(row["updated_by"], repr(row["content"]))]
    done = await stored_memories.restore(ctx.conn, ctx.household_id, ids, by=ctx.user_id)
    if done:
        u.did(f"brought back {len(done)} forgotten memories")


async def _unrestore(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    rows = await stored_memories.by_ids(ctx.conn, ctx.household_id, [int(i) for i in result.get("restored", [])])
    ids = [row["id"] for row in rows if await u.mine(row["updated_by"], repr(row["content"]))]
    done = await stored_memories.forget(ctx.conn, ctx.household_id, ids, by=ctx.user_id)
    if done:
        u.did(f"forgot {len(done)} restored memories again")


async def _unupdate(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    before = result.get("previous") or {}
    memory_id = int(result["memory_id"])
    row = await stored_memories.lock(ctx.conn, ctx.household_id, memory_id)
    if row is None or not before or not await u.mine(row["updated_by"], repr(row["content"])):
        return
    content = str(before["content"])
    await stored_memories.update(
        ctx.conn,
        ctx.household_id,
        memory_id,
        content=content,
        understanding=dict(before["ai_understanding"]),
        embedding=await ctx.embed_one(content, "passage") if content != row["content"] else None,
        amount=None if before["amount"] is None else Decimal(before["amount"]),
        currency=before["currency"],
        occurred_at=datetime.fromisoformat(before["occurred_at"]),
        visibility=str(before["visibility"]),
        hidden_from=before.get("hidden_from"),
        by=_editor(before, ctx),
    )
    u.did(f"put {content!r} back as it was")


async def _unschedule(u: _Undoing, result: dict[str, Any]) -> None:
    ctx, reminder_id = u.ctx, int(result["reminder_id"])
    row = await stored_reminders.lock(ctx.conn, ctx.household_id, reminder_id)
    text = result.get("text", "")
    if row is None or not await u.mine(row["updated_by"], f"the reminder {text!r}"):
        return
    await stored_reminders.update(
        ctx.conn,
        ctx.household_id,
        reminder_id,
        status="cancelled",
        next_fire_at=None,
        occurrence_at=row["occurrence_at"],
        changed_by_inbox_id=ctx.inbox_id,
        by=ctx.user_id,
    )
    u.did(f"cancelled the new reminder {text!r}")


async def _unchange_reminder(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    before = result.get("previous") or {}
    reminder_id = int(result["reminder_id"])
    row = await stored_reminders.lock(ctx.conn, ctx.household_id, reminder_id)
    text = result.get("text", "")
    if not before or row is None or not await u.mine(row["updated_by"], f"the reminder {text!r}"):
        return
    await stored_reminders.update(
        ctx.conn,
        ctx.household_id,
        reminder_id,
        status=str(before["status"]),
        next_fire_at=_instant(before.get("next_fire_at")),
        occurrence_at=_instant(before.get("occurrence_at")),
        changed_by_inbox_id=ctx.inbox_id,
        by=_editor(before, ctx),
        dtstart_local=datetime.fromisoformat(str(before["dtstart_local"])) if before.get("dtstart_local") else None,
    )
    u.did(f"put the reminder {text!r} back as it was")


async def _unquiet(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    before = result.get("previous") or {}
    start, end = (None if before.get(k) is None else time.fromisoformat(str(before[k])) for k in ("start", "end"))
    await stored_reminders.set_quiet_hours(ctx.conn, ctx.household_id, ctx.user_id, start, end)
    u.did("put the quiet hours back as they were")


async def _unadd_event(u: _Undoing, result: dict[str, Any]) -> None:
    ctx, event_id = u.ctx, int(result["event_id"])
    row = await stored_events.get(ctx.conn, ctx.household_id, event_id, lock=True)
    title = result.get("title", "")
    if row is None or row["status"] == "cancelled" or not await u.mine(row["updated_by"], f"the event {title!r}"):
        return
    await stored_events.cancel(ctx.conn, ctx.household_id, event_id, by=ctx.user_id)
    u.did(f"took the new event {title!r} out of the calendar")


async def _unchange_event(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    before = result.get("previous") or {}
    event_id = int(result["event_id"])
    row = await stored_events.get(ctx.conn, ctx.household_id, event_id, lock=True)
    title = result.get("title", "")
    if not before or row is None or not await u.mine(row["updated_by"], f"the event {title!r}"):
        return
    if "status" in before:
        await stored_events.restore(ctx.conn, ctx.household_id, event_id, by=ctx.user_id)
    if before.get("starts_at"):
        starts_at = _instant(before["starts_at"])
        assert starts_at is not None
        ends_at = _instant(before.get("ends_at"))
        await stored_events.move(ctx.conn, ctx.household_id, event_id, starts_at, ends_at, by=ctx.user_id)
    await stored_events.set_editor(ctx.conn, ctx.household_id, event_id, _editor(before, ctx))
    u.did(f"put the event {title!r} back as it was")


async def _unadd_items(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    editors = await stored_lists.editors(
        ctx.conn, ctx.household_id, [int(i["item_id"]) for i in result.get("items", [])]
    )
    texts = {int(i["item_id"]): i.get("text", "") for i in result.get("items", [])}
    ids = [item_id for item_id, by in editors.items() if await u.mine(by, repr(texts.get(item_id, "")))]
    done = await stored_lists.set_cleared(ctx.conn, ctx.household_id, ids, cleared=True, by=ctx.user_id)
    if done:
        u.did(f"took {done} new items off the {result.get('list_name', '')} list")


async def _unupdate_item(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    before = result.get("previous") or {}
    item_id = int(result["item_id"])
    editors = await stored_lists.editors(ctx.conn, ctx.household_id, [item_id])
    if not before or item_id not in editors or not await u.mine(editors[item_id], repr(result.get("text", ""))):
        return
    await stored_lists.restore_item(
        ctx.conn,
        ctx.household_id,
        item_id,
        done_at=_instant(before.get("done_at")),
        assignee_id=None if before.get("assignee_id") is None else int(before["assignee_id"]),
        quantity=before.get("quantity"),
        updated_by=_editor(before, ctx),
    )
    u.did(f"put {result.get('text', '')!r} back as it was")


async def _unclear_items(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    editors = await stored_lists.editors(ctx.conn, ctx.household_id, [int(i) for i in result.get("cleared", [])])
    ids = [item_id for item_id, by in editors.items() if await u.mine(by, f"item {item_id}")]
    done = await stored_lists.set_cleared(ctx.conn, ctx.household_id, ids, cleared=False, by=ctx.user_id)
    if done:
        u.did(f"put {done} cleared items back on the {result.get('list_name', '')} list")


async def _unset_budget(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    category, currency = str(result["category"]), str(result["currency"])
    row = await stored_budgets.get(ctx.conn, ctx.household_id, int(result["budget_id"]), lock=True)
    if row is None or not await u.mine(row["updated_by"], f"the {category} budget"):
        return
    if result.get("previous_amount") is None:
        await stored_budgets.remove(ctx.conn, ctx.household_id, int(result["budget_id"]))
        u.did(f"removed the new {category} budget")
        return
    amount = Decimal(str(result["previous_amount"]))
    await _budget_back(u, category, currency, amount, result.get("previous_updated_by"))
    u.did(f"put the {category} budget back to {amount} {currency}")


async def _unremove_budget(u: _Undoing, result: dict[str, Any]) -> None:
    ctx = u.ctx
    category, currency, amount = str(result["category"]), str(result["currency"]), Decimal(str(result["amount"]))
    since = await stored_budgets.of_category(ctx.conn, ctx.household_id, category, currency, lock=True)
    if since is not None and not await u.mine(since["updated_by"], f"the new {category} budget"):
        return  # another member set one since: theirs stands
    await _budget_back(u, category, currency, amount, result.get("previous_updated_by"))
    u.did(f"put back the {category} budget of {amount} {currency}")


async def _budget_back(u: _Undoing, category: str, currency: str, amount: Decimal, updated_by: Any) -> None:
    """The budget of `category` as it was, with the member who had changed it last."""
    await stored_budgets.upsert(
        u.ctx.conn,
        u.ctx.household_id,
        category=category,
        currency=currency,
        amount=amount,
        by=u.ctx.user_id,
        updated_by=updated_by,
    )


def _instant(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


_REVERTS: dict[str, Callable[[_Undoing, dict[str, Any]], Awaitable[None]]] = {
    "store": _unstore,
    "forget": _unforget,
    "restore": _unrestore,
    "update_memory_fields": _unupdate,
    "schedule_reminder": _unschedule,
    "cancel_reminder": _unchange_reminder,
    "snooze_reminder": _unchange_reminder,
    "move_reminder": _unchange_reminder,
    "complete_reminder": _unchange_reminder,
    "set_quiet_hours": _unquiet,
    "add_event": _unadd_event,
    "move_event": _unchange_event,
    "cancel_event": _unchange_event,
    "remind_before_event": _unschedule,
    "add_list_items": _unadd_items,
    "update_list_item": _unupdate_item,
    "clear_done_items": _unclear_items,
    "remove_list_item": _unclear_items,
    "set_budget": _unset_budget,
    "remove_budget": _unremove_budget,
}
