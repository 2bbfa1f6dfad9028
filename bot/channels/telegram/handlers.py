"""The routers: a member's message and a pressed button each become one `Incoming` for `bot.channels.gate.receive`.

Handlers run inside the webhook request (never in the background), so the inbox row is committed before
Telegram hears 200. Notices for strangers and new members go out through the Bot API at once: they have no
household and so no outbox.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import structlog
from aiogram import Bot, F, Router
from aiogram.exceptions import TelegramAPIError
from aiogram.types import CallbackQuery, Message, ReplyParameters, Update

from bot.channels import attachments
from bot.channels.gate import Incoming, Received, Verdict, receive
from bot.channels.telegram import CHANNEL
from bot.channels.telegram.checklists import on_tick, read_tick
from bot.channels.telegram.formatting import ButtonAnswer, Recipient
from bot.channels.telegram.updates import GROUPS, PRIVATE, read_message, recipient
from engine.deps import Deps

log = structlog.get_logger()

JOIN_HINT = "/start <code>"
_EXPIRED = "This button has expired — please write your answer instead."


async def on_message(
    message: Message, event_update: Update, bot: Bot, deps: Deps, trace_id: str, username: str
) -> Verdict | None:
    """A message in a private chat, or one addressed to the bot in a group."""
    sender = message.from_user
    if sender is None or sender.is_bot:
        return None
    read = read_message(message, bot.id, username, deps.settings.channel)
    if read is None:
        return None
    to = recipient(message)
    if not read.text and not read.attachments and read.join_code is None:  # only files that are not kept
        await _say(bot, to, attachments.notice(list(read.dropped)), "dropped")
        return None
    # A group is a shared conversation: its replies never draw on anyone's private memories.
    payload: dict[str, Any] = {
        "chat_type": message.chat.type,
        "chat": message.chat.id,  # a group's replies each quote their message: the chat is not where they go
        "message_id": message.message_id,
        "shared": message.chat.type != PRIVATE,
    }
    if read.attachments:
        payload["attachments"] = read.payload_attachments()
    if message.chat.type == PRIVATE and deps.settings.telegram.stream_drafts:
        payload["stream"] = True
    if to.reply_to_message_id is not None:
        payload["reply_to_message_id"] = to.reply_to_message_id
    incoming = Incoming(
        channel=CHANNEL,
        sender=str(sender.id),
        message_id=f"{bot.id}:{event_update.update_id}",  # a redelivered update carries the same update_id
        text=read.text,
        reply_to=to.encode(),
        trace_id=trace_id,
        join_code=read.join_code,
        join_hint=JOIN_HINT,
        payload=payload,
    )
    received = await receive(deps, incoming)
    if read.dropped and received.verdict is Verdict.ACCEPTED:  # once, not again for a redelivered update
        received = dataclasses.replace(received, notice=attachments.notice(list(read.dropped)))
    await _notify(bot, to, received)
    return received.verdict


async def on_button(query: CallbackQuery, bot: Bot, deps: Deps, trace_id: str) -> Verdict | None:
    """A pressed inline button: the option's label becomes the member's next message; a list's tick button ticks
    its item at once."""
    tick = read_tick(query.data or "")
    if tick is not None:
        await on_tick(query, bot, deps, tick)
        return None
    answer = ButtonAnswer.decode(query.data or "")
    label = _label(query)
    message = query.message
    if answer is None or label is None or not isinstance(message, Message):
        await _answer(query, _EXPIRED)
        return None
    to = recipient(message)
    incoming = Incoming(
        channel=CHANNEL,
        sender=str(query.from_user.id),
        message_id=f"{bot.id}:callback:{query.id}",  # one message per press, however often it is redelivered
        text=label,
        reply_to=to.encode(),
        trace_id=trace_id,
        join_hint=JOIN_HINT,
        payload={
            "chat_type": message.chat.type,
            "chat": message.chat.id,
            "message_id": message.message_id,
            "shared": message.chat.type != PRIVATE,  # a button pressed in a group answers there, for all to read
            **answer.payload(),
        },
    )
    received = await receive(deps, incoming)
    await _answer(query, None)
    if received.verdict is Verdict.ACCEPTED:
        try:  # a choice is made once: the buttons go
            await bot.edit_message_reply_markup(chat_id=message.chat.id, message_id=message.message_id)
        except TelegramAPIError as exc:
            log.info("telegram.keyboard.not_removed", error=type(exc).__name__)
    await _notify(bot, to, received)
    return received.verdict


def _label(query: CallbackQuery) -> str | None:
    """The pressed button's own text, read off the message it sits on."""
    message = query.message
    if not isinstance(message, Message) or message.reply_markup is None:
        return None
    for row in message.reply_markup.inline_keyboard:
        for button in row:
            if button.callback_data == query.data:
                return button.text
    return None


async def _answer(query: CallbackQuery, text: str | None) -> None:
    try:
        await query.answer(text=text)
    except TelegramAPIError as exc:  # a redelivered update's query is too old to answer: nothing is lost
        log.info("telegram.callback.not_answered", error=type(exc).__name__)


async def _notify(bot: Bot, to: Recipient, received: Received) -> None:
    if received.notice is not None:
        await _say(bot, to, received.notice, received.verdict.value)


async def _say(bot: Bot, to: Recipient, text: str, why: str) -> None:
    quote = (
        None
        if to.reply_to_message_id is None
        else ReplyParameters(message_id=to.reply_to_message_id, allow_sending_without_reply=True)
    )
    try:
        await bot.send_message(to.chat_id, text, reply_parameters=quote)
    except TelegramAPIError as exc:
        # The verdict is already recorded; a lost notice only means the sender may write again.
        log.warning("telegram.notice.failed", verdict=why, error=type(exc).__name__)


def routers() -> list[Router]:
    """Messages and button presses, in private chats and the household's groups; nothing else is handled."""
    messages = Router(name="telegram.messages")
    messages.message.register(on_message, F.chat.type.in_({PRIVATE, *GROUPS}))
    buttons = Router(name="telegram.buttons")
    buttons.callback_query.register(on_button)
    return [messages, buttons]
