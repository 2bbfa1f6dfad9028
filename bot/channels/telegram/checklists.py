"""A shared list on Telegram: one tick button per item under the message that shows the list; a press ticks (or
reopens) that item and edits the message to show the list as it now is.

The button says what it does ("t:<item>:1" ticks, "t:<item>:0" reopens), so a redelivered press changes nothing
twice. Each press changes the one item's row, so members ticking at once never undo each other. A press goes
through the `update_list_item` tool, whose role checks every path shares; under a group's message it acts for
nobody, so the list shown there again holds nobody's private items.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import structlog
from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message

from bot.channels.telegram import CHANNEL
from bot.channels.telegram.formatting import to_html
from bot.channels.telegram.updates import PRIVATE
from engine.checklists import checklist, render
from engine.deps import Deps
from tools.context import ToolContext
from tools.errors import NotPermitted, RowNotFound
from tools.lists import UpdateListItemArgs, update_list_item
from tools.storage import households, identities
from tools.storage import lists as stored

log = structlog.get_logger()

_GONE = {
    "en": "That item is no longer on the list.",
    "de": "Dieser Eintrag ist nicht mehr auf der Liste.",
    "zh": "这一项已不在清单上。",
}
_NOT_ALLOWED = {
    "en": "You cannot change that item.",
    "de": "Diesen Eintrag kannst du nicht ändern.",
    "zh": "你不能更改这一项。",
}
_NOT_A_MEMBER = "Only members of the household can tick items."


def tick_buttons(payload: Mapping[str, Any]) -> list[list[InlineKeyboardButton]]:
    """A row per item of the reply's checklist: ☐ to tick an open item, ☑ to reopen a ticked one."""
    shown = payload.get("checklist")
    if not isinstance(shown, Mapping):
        return []
    rows = []
    for item_id, label, done in shown.get("items", ()):
        data = f"t:{int(item_id)}:{0 if done else 1}"
        rows.append([InlineKeyboardButton(text=f"{'☑' if done else '☐'} {str(label)[:60]}", callback_data=data)])
    return rows


def read_tick(data: str) -> tuple[int, bool] | None:
    """(item id, ticked) from a tick button's data; None for any other button."""
    parts = data.split(":")
    if len(parts) != 3 or parts[0] != "t" or parts[2] not in ("0", "1") or not parts[1].isdigit():
        return None
    item_id = int(parts[1])
    return (item_id, parts[2] == "1") if 0 < item_id < 2**63 else None


async def on_tick(query: CallbackQuery, bot: Bot, deps: Deps, tick: tuple[int, bool]) -> None:
    """Tick or reopen the item for the member who pressed, then show the list as it now is."""
    message = query.message
    async with deps.db.unscoped() as conn:
        who = await identities.resolve_identity(conn, CHANNEL, str(query.from_user.id))
    if who is None or not isinstance(message, Message):
        await _answer(query, _NOT_A_MEMBER)
        return
    item_id, done = tick
    shared = message.chat.type != PRIVATE
    async with deps.db.household(who.household_id, None if shared else who.user_id) as conn:
        members = await households.members(conn, who.household_id)
        me = next((m for m in members if m.id == who.user_id), None)
        language = me.locale[:2] if me is not None else "en"
        ctx = ToolContext(
            conn=conn,
            household_id=who.household_id,
            user_id=who.user_id,
            timezone=me.timezone if me is not None else "UTC",
            now=deps.clock.now(),
            embedder=deps.embedder,
            members=members,
            shared=shared,
        )
        try:
            item = await update_list_item(ctx, UpdateListItemArgs.model_validate({"item_id": item_id, "done": done}))
        except RowNotFound:
            await _answer(query, _GONE.get(language, _GONE["en"]))
            return
        except NotPermitted:
            await _answer(query, _NOT_ALLOWED.get(language, _NOT_ALLOWED["en"]))
            return
        [found] = await stored.by_ids(conn, who.household_id, [item_id])
        listed = await stored.items(conn, who.household_id, int(found["list_id"]), include_done=True)
    items = [
        {"item_id": r["id"], "text": r["text"], "quantity": r["quantity"], "assignee": r["assignee"],
         "done": r["done_at"] is not None}
        for r in listed
    ]  # fmt: skip
    view = {"list_name": item.list_name, "items": items}
    await _answer(query, f"{'☑' if done else '☐'} {item.text}"[:200])
    keyboard = InlineKeyboardMarkup(inline_keyboard=tick_buttons({"checklist": checklist(view)}))
    try:
        await bot.edit_message_text(
            text=to_html(render(item.list_name, items, language)),
            chat_id=message.chat.id,
            message_id=message.message_id,
            parse_mode="HTML",
            reply_markup=keyboard,
        )
    except TelegramAPIError as exc:  # "message is not modified" after a redelivered press: the list is right
        log.info("telegram.checklist.not_edited", error=type(exc).__name__)


async def _answer(query: CallbackQuery, text: str) -> None:
    try:
        await query.answer(text=text)
    except TelegramAPIError as exc:
        log.info("telegram.callback.not_answered", error=type(exc).__name__)
