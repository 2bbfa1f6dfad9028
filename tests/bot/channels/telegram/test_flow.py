"""Telegram end to end: webhook → inbox → worker → scripted model → outbox → the fake Bot API."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import asyncpg
import pytest
from aiogram import Bot

from bot.channels.telegram.fetcher import TelegramFetcher
from bot.channels.telegram.sender import TelegramSender
from engine.domain import Attachment, InboundMessage
from engine.settings import Settings
from tests.bot.channels.telegram import updates
from tests.bot.channels.telegram.conftest import inbox_rows, link, post, telegram_settings
from tests.e2e.scripts import routed_model, routed_words
from tests.fakes.images import picture
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.fakes.telegram_server import BOT_USERNAME, FakeTelegram
from tests.system import System, eventually, make_family, running_system
from tools.storage import inbox
from worker.main import _shutdown, _startup


def model(request: ChatRequest) -> Scripted:
    """Small talk answered with what the model read; any other call as the routed scripted model answers it."""
    if request.schema_name == "route_chat":
        return Scripted.json({"reply": f"You said: {routed_words(request)}"})
    return routed_model()(request)


async def delivered(
    system: System, telegram_id: int, count: int = 1, *, timeout_s: float = 20.0
) -> list[asyncpg.Record]:
    """The outbox rows answering this Telegram user's messages, once `count` of them are settled."""

    async def settled() -> list[asyncpg.Record] | None:
        rows = await system.admin.fetch(
            """SELECT o.*, o.next_attempt_at - now() AS wait FROM outbox o JOIN inbox i ON i.id = o.inbox_id
               JOIN user_identities u ON u.user_id = i.user_id AND u.channel = 'telegram'
               WHERE o.channel = 'telegram' AND u.external_id = $1 ORDER BY o.id""",
            str(telegram_id),
        )
        done = [r for r in rows if r["status"] in ("sent", "failed") or r["status"] == "pending" and r["attempts"] > 0]
        return rows if len(done) >= count else None

    return await eventually(settled, timeout_s)


async def test_a_private_message_is_answered_in_the_chat(tg_system: System, fake_telegram: FakeTelegram) -> None:
    family = await make_family(tg_system.admin, "Flow", {"Anna": "Europe/Berlin"})
    anna = await link(tg_system, family, "Anna")
    tg_system.llm.script(model)

    response = await post(tg_system, updates.message(anna, "how are you there?"))
    assert response.status == 200
    [reply] = await delivered(tg_system, anna)
    assert reply["status"] == "sent" and reply["recipient"] == str(anna)
    assert [c.method for c in fake_telegram.calls if c.method != "getMe"][:1] == ["sendChatAction"]
    [sent] = fake_telegram.sent("sendMessage")
    assert sent.fields["chat_id"] == str(anna) and sent.fields["text"] == "You said: how are you there?"
    assert len(tg_system.llm.requests) == 1


async def test_in_the_group_the_answer_quotes_the_member(tg_system: System, fake_telegram: FakeTelegram) -> None:
    family = await make_family(tg_system.admin, "GroupFlow", {"Anna": "Europe/Berlin"})
    anna = await link(tg_system, family, "Anna")
    tg_system.llm.script(model)
    await post(tg_system, updates.message(anna, "nobody asked the bot", chat=updates.GROUP_CHAT))
    mention = updates.message(anna, f"@{BOT_USERNAME} how are you?", chat=updates.GROUP_CHAT)
    await post(tg_system, mention)
    [reply] = await delivered(tg_system, anna)
    assert reply["status"] == "sent"
    [sent] = fake_telegram.sent("sendMessage")
    assert sent.fields["chat_id"] == str(updates.GROUP_CHAT["id"]) and sent.fields["text"] == "You said: how are you?"
    assert sent.json("reply_parameters")["message_id"] == mention["message"]["message_id"]
    assert len(await inbox_rows(tg_system, anna)) == 1


async def test_a_long_reply_arrives_in_pieces(tg_system: System, fake_telegram: FakeTelegram) -> None:
    family = await make_family(tg_system.admin, "Long", {"Anna": "Europe/Berlin"})
    anna = await link(tg_system, family, "Anna")
    tg_system.llm.script(model)
    list_id = await tg_system.admin.fetchval(
        "INSERT INTO lists (household_id, name, kind) VALUES ($1, 'shopping', 'shopping') RETURNING id",
        family.household_id,
    )
    things = [f"thing {letter}{other} " + "and more words " * 8 for letter in "ABCDEFGH" for other in "abcdefgh"]
    await tg_system.admin.executemany(
        "INSERT INTO list_items (household_id, list_id, text) VALUES ($1, $2, $3)",
        [(family.household_id, list_id, thing.strip()) for thing in things],
    )
    await post(tg_system, updates.message(anna, "show the shopping list"))
    [reply] = await delivered(tg_system, anna)
    pieces = [c.fields["text"] for c in fake_telegram.sent("sendMessage")]
    assert len(reply["text"]) > 2 * 4096 and len(pieces) >= 3 and all(len(p) <= 4096 for p in pieces)
    assert "".join(pieces).replace("\n", "") == reply["text"].replace("\n", "")  # in order, nothing lost


async def test_choices_come_as_buttons_and_a_press_answers_the_question(
    tg_system: System, fake_telegram: FakeTelegram
) -> None:
    family = await make_family(tg_system.admin, "Choices", {"Anna": "UTC"})  # no home currency: one is asked
    anna = await link(tg_system, family, "Anna")
    tg_system.llm.script(model)
    await post(tg_system, updates.message(anna, "I paid 20 for <bread> & more"))
    await delivered(tg_system, anna)
    [question] = fake_telegram.sent("sendMessage")
    keyboard = question.json("reply_markup")["inline_keyboard"]
    options = [(b["text"], b["callback_data"]) for row in keyboard for b in row]
    assert [label for label, _ in options] == ["EUR", "USD", "GBP", "CNY"]

    press = updates.button_press(anna, options, options[0][1])
    assert (await post(tg_system, press)).status == 200
    rows = await delivered(tg_system, anna, count=2)
    assert rows[1]["status"] == "sent"
    answer = fake_telegram.sent("sendMessage")[-1]
    assert answer.fields["parse_mode"] == "HTML"
    pressed = await inbox_rows(tg_system, anna)
    assert [row["text"] for row in pressed][-1] == "EUR"
    assert fake_telegram.sent("answerCallbackQuery")[0].fields["callback_query_id"] == press["callback_query"]["id"]


async def test_flood_control_defers_the_retry_and_a_block_fails_for_good(
    tg_system: System, fake_telegram: FakeTelegram
) -> None:
    family = await make_family(tg_system.admin, "Flood", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    anna = await link(tg_system, family, "Anna")
    ben = await link(tg_system, family, "Ben")
    tg_system.llm.script(model)

    fake_telegram.fail("sendMessage", 429, "Too Many Requests: retry after 40", retry_after=40)
    await post(tg_system, updates.message(anna, "hello"))
    [flooded] = await delivered(tg_system, anna)
    assert flooded["status"] == "pending" and flooded["attempts"] == 1
    assert timedelta(seconds=30) < flooded["wait"] <= timedelta(seconds=40)  # Telegram's retry_after, not backoff
    assert "retry after 40" in flooded["last_error"]

    fake_telegram.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
    await post(tg_system, updates.message(ben, "hello"))
    [blocked] = await delivered(tg_system, ben)
    assert blocked["status"] == "failed" and blocked["attempts"] == 1 and "blocked" in blocked["last_error"]


async def test_a_photo_reference_reaches_the_engine_and_its_bytes_can_be_fetched(
    tg_system: System, fake_telegram: FakeTelegram, bot: Bot
) -> None:
    family = await make_family(tg_system.admin, "Photo", {"Anna": "Europe/Berlin"})
    anna = await link(tg_system, family, "Anna")
    tg_system.llm.script(model)
    photo = picture(["BAKERY", "TOTAL EUR 4.80"], format="JPEG")
    fake_telegram.files[f"AgACAgQ-large-{anna}"] = photo
    await post(tg_system, updates.photo(anna, caption="receipt"))
    await delivered(tg_system, anna, timeout_s=90)  # photo reading's process starts, loads its models
    [row] = await inbox_rows(tg_system, anna)
    async with tg_system.deps.db.household(family.household_id) as conn:
        stored = await inbox.get(conn, row["id"])
    assert stored is not None
    [attachment] = InboundMessage.from_payload(
        inbox_id=stored.id,
        household_id=stored.household_id,
        user_id=stored.user_id,
        channel=stored.channel,
        external_id=stored.external_id,
        text=stored.text,
        trace_id=stored.trace_id,
        received_at=stored.received_at,
        payload=stored.payload,
    ).attachments
    assert attachment == Attachment(kind="image", mime="image/jpeg", ref=f"AgACAgQ-large-{anna}")
    assert "[image, text extracted]\nBAKERY\nTOTAL EUR 4.80" in tg_system.llm.requests[0].all_text  # read by OCR
    assert await TelegramFetcher(bot).fetch(attachment) == photo


async def test_the_worker_wires_sender_and_fetcher_only_when_telegram_is_enabled(
    tg_settings: Settings, settings: Settings, redis: Any
) -> None:
    for configured, expected in ((tg_settings, True), (settings, False)):
        ctx: dict[str, Any] = {"settings": configured, "redis": redis}
        await _startup(ctx)
        try:
            deps = ctx["deps"]
            assert isinstance(deps.senders.get("telegram"), TelegramSender) is expected
            assert isinstance(deps.fetchers.get("telegram"), TelegramFetcher) is expected
        finally:
            await _shutdown(ctx)


@pytest.fixture
async def drafting(settings: Settings, fake_llm: FakeOpenAI, fake_telegram: FakeTelegram, admin_conn: Any) -> Any:
    enabled = settings.model_copy(update={"telegram": telegram_settings(fake_telegram, stream_drafts=True)})
    async with running_system(enabled, fake_llm, admin_conn) as running:
        yield running
    await admin_conn.execute(
        "UPDATE outbox SET status = 'failed' WHERE status IN ('pending', 'sending') AND channel = 'telegram'"
    )


async def test_a_streaming_draft_precedes_the_reply_in_private_chats(
    drafting: System, fake_telegram: FakeTelegram
) -> None:
    family = await make_family(drafting.admin, "Drafts", {"Anna": "Europe/Berlin"})
    anna = await link(drafting, family, "Anna")
    drafting.llm.script(model)
    await post(drafting, updates.message(anna, "how are you, drafts?"))
    [reply] = await delivered(drafting, anna)
    methods = [c.method for c in fake_telegram.calls if c.method in ("sendMessageDraft", "sendMessage")]
    assert methods[0] == "sendMessageDraft" and methods[-1] == "sendMessage"
    drafts = fake_telegram.sent("sendMessageDraft")
    assert reply["text"] == "You said: how are you, drafts?"
    written = [draft.fields["text"] for draft in drafts if "text" in draft.fields]
    assert written and all(reply["text"].startswith(text) for text in written)  # the reply as it was written
    assert all(d.fields["chat_id"] == str(anna) for d in drafts)
