"""The `undo` tool: take back what the member's latest change did — whatever it stored, changed, forgot, restored,
scheduled, cancelled, snoozed or completed, the calendar events it added, moved or cancelled, the list items it
added, ticked or cleared, the budget it set — from the journal of that message. (`forget_me` is not undoable: what
it removed is gone.)"""

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


async def undo(ctx: ToolContext, args: UndoArgs) -> UndoResult:
    """Undo the member's most recent change: everything their latest message that changed something did (stored,
    corrected, forgot or restored memories; scheduled, cancelled, snoozed or completed reminders; quiet hours).

    Use it when the member says "undo", "take that back" or "that was wrong, undo it". Called again, it undoes the
    change before that. Returns what was undone, or nothing when there is nothing left to undo.
    """
    entries = await journal.last_undoable(ctx.conn, ctx.household_id, ctx.user_id, ctx.inbox_id or 2**62)
    if not entries:
        return UndoResult()
    undone = []
    for entry in entries:  # newest first, so a later change is taken back before an earlier one
        revert = _REVERTS.get(str(entry.payload.get("tool")))
        if revert is not None:
            undone.append(await revert(ctx, entry.payload.get("result") or {}))
    return UndoResult(undid_message=entries[0].payload["inbox_id"], undone=[line for line in undone if line])


async def _unstore(ctx: ToolContext, result: dict[str, Any]) -> str:
    await stored_memories.forget(ctx.conn, ctx.household_id, [int(result["memory_id"])])
    return f"forgot the new memory {result.get('content', '')!r}"


async def _unforget(ctx: ToolContext, result: dict[str, Any]) -> str:
    ids = [int(i) for i in result.get("forgotten", [])]
    done = await stored_memories.restore(ctx.conn, ctx.household_id, ids)
    return f"brought back {len(done)} forgotten memories" if done else ""


async def _unrestore(ctx: ToolContext, result: dict[str, Any]) -> str:
    ids = [int(i) for i in result.get("restored", [])]
    done = await stored_memories.forget(ctx.conn, ctx.household_id, ids)
    return f"forgot {len(done)} restored memories again" if done else ""


async def _unupdate(ctx: ToolContext, result: dict[str, Any]) -> str:
    before = result.get("previous") or {}
    memory_id = int(result["memory_id"])
    row = await stored_memories.lock(ctx.conn, ctx.household_id, memory_id)
    if row is None or not before:
        return ""
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
    )
    return f"put {content!r} back as it was"


async def _unschedule(ctx: ToolContext, result: dict[str, Any]) -> str:
    reminder_id = int(result["reminder_id"])
    row = await stored_reminders.lock(ctx.conn, ctx.household_id, reminder_id)
    if row is None:
        return ""
    await stored_reminders.update(
        ctx.conn,
        ctx.household_id,
        reminder_id,
        status="cancelled",
        next_fire_at=None,
        occurrence_at=row["occurrence_at"],
        changed_by_inbox_id=ctx.inbox_id,
    )
    return f"cancelled the new reminder {result.get('text', '')!r}"


async def _unchange_reminder(ctx: ToolContext, result: dict[str, Any]) -> str:
    before = result.get("previous") or {}
    reminder_id = int(result["reminder_id"])
    if not before or await stored_reminders.lock(ctx.conn, ctx.household_id, reminder_id) is None:
        return ""
    await stored_reminders.update(
        ctx.conn,
        ctx.household_id,
        reminder_id,
        status=str(before["status"]),
        next_fire_at=_instant(before.get("next_fire_at")),
        occurrence_at=_instant(before.get("occurrence_at")),
        changed_by_inbox_id=ctx.inbox_id,
    )
    return f"put the reminder {result.get('text', '')!r} back as it was"


async def _unquiet(ctx: ToolContext, result: dict[str, Any]) -> str:
    before = result.get("previous") or {}
    start, end = (None if before.get(k) is None else time.fromisoformat(str(before[k])) for k in ("start", "end"))
    await stored_reminders.set_quiet_hours(ctx.conn, ctx.household_id, ctx.user_id, start, end)
    return "put the quiet hours back as they were"


async def _unadd_event(ctx: ToolContext, result: dict[str, Any]) -> str:
    event_id = int(result["event_id"])
    row = await stored_events.get(ctx.conn, ctx.household_id, event_id, lock=True)
    if row is None or row["status"] == "cancelled":
        return ""
    await stored_events.cancel(ctx.conn, ctx.household_id, event_id)
    return f"took the new event {result.get('title', '')!r} out of the calendar"


async def _unchange_event(ctx: ToolContext, result: dict[str, Any]) -> str:
    before = result.get("previous") or {}
    event_id = int(result["event_id"])
    if not before or await stored_events.get(ctx.conn, ctx.household_id, event_id, lock=True) is None:
        return ""
    if "status" in before:
        await stored_events.restore(ctx.conn, ctx.household_id, event_id)
    if before.get("starts_at"):
        starts_at = _instant(before["starts_at"])
        assert starts_at is not None
        await stored_events.move(ctx.conn, ctx.household_id, event_id, starts_at, _instant(before.get("ends_at")))
    return f"put the event {result.get('title', '')!r} back as it was"


async def _unadd_items(ctx: ToolContext, result: dict[str, Any]) -> str:
    ids = [int(item["item_id"]) for item in result.get("items", [])]
    done = await stored_lists.set_cleared(ctx.conn, ctx.household_id, ids, cleared=True)
    return f"took {done} new items off the {result.get('list_name', '')} list" if done else ""


async def _unupdate_item(ctx: ToolContext, result: dict[str, Any]) -> str:
    before = result.get("previous") or {}
    if not before:
        return ""
    await stored_lists.restore_item(
        ctx.conn,
        ctx.household_id,
        int(result["item_id"]),
        done_at=_instant(before.get("done_at")),
        assignee_id=None if before.get("assignee_id") is None else int(before["assignee_id"]),
        quantity=before.get("quantity"),
    )
    return f"put {result.get('text', '')!r} back as it was"


async def _unclear_items(ctx: ToolContext, result: dict[str, Any]) -> str:
    ids = [int(i) for i in result.get("cleared", [])]
    done = await stored_lists.set_cleared(ctx.conn, ctx.household_id, ids, cleared=False)
    return f"put {done} cleared items back on the {result.get('list_name', '')} list" if done else ""


async def _unset_budget(ctx: ToolContext, result: dict[str, Any]) -> str:
    category, currency = str(result["category"]), str(result["currency"])
    if result.get("previous_amount") is None:
        await stored_budgets.remove(ctx.conn, ctx.household_id, int(result["budget_id"]))
        return f"removed the new {category} budget"
    amount = Decimal(str(result["previous_amount"]))
    await stored_budgets.upsert(
        ctx.conn, ctx.household_id, category=category, currency=currency, amount=amount, by=ctx.user_id
    )
    return f"put the {category} budget back to {amount} {currency}"


def _instant(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


_REVERTS: dict[str, Callable[[ToolContext, dict[str, Any]], Awaitable[str]]] = {
    "store": _unstore,
    "forget": _unforget,
    "restore": _unrestore,
    "update_memory_fields": _unupdate,
    "schedule_reminder": _unschedule,
    "cancel_reminder": _unchange_reminder,
    "snooze_reminder": _unchange_reminder,
    "complete_reminder": _unchange_reminder,
    "set_quiet_hours": _unquiet,
    "add_event": _unadd_event,
    "move_event": _unchange_event,
    "cancel_event": _unchange_event,
    "remind_before_event": _unschedule,
    "add_list_items": _unadd_items,
    "update_list_item": _unupdate_item,
    "clear_done_items": _unclear_items,
    "set_budget": _unset_budget,
}
