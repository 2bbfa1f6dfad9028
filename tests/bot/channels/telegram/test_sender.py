"""The sender, through aiogram's real session, against the fake Bot API: splitting, escaping, buttons, charts,
flood control and refusals; the typing action; streaming drafts; attachment downloads."""

from __future__ import annotations

import html
from typing import Any

import pytest
from aiogram import Bot

from bot.channels.errors import TelegramFetchError
from bot.channels.telegram.drafts import DraftSink
from bot.channels.telegram.fetcher import TelegramFetcher
from bot.channels.telegram.formatting import MESSAGE_LIMIT, ButtonAnswer, split_text, to_html
from bot.channels.telegram.sender import TelegramSender
from engine.domain import Attachment
from engine.errors import DeliveryError
from engine.llm_types import StreamEvent
from tests.bot.channels.telegram.conftest import telegram_settings
from tests.fakes.outbox_rows import outbox_row
from tests.fakes.telegram_server import FakeTelegram
from tools.storage.outbox import OutboxRow

CHAT = 55501
PNG = b"\x89PNG\r\n\x1a\n" + b"chart-bytes" * 50


def row(text: str, recipient: str = str(CHAT), row_id: int = 1, **payload: Any) -> OutboxRow:
    return outbox_row("telegram", recipient, text, row_id=row_id, household_id=9, payload=payload)


@pytest.fixture
def media() -> dict[tuple[int, int], tuple[str, bytes]]:
    return {(9, 41): ("image/png", PNG)}


@pytest.fixture
def sender(bot: Bot, fake_telegram: FakeTelegram, media: dict[tuple[int, int], tuple[str, bytes]]) -> TelegramSender:
    async def load_media(household_id: int, media_id: int) -> tuple[str, bytes]:
        return media[(household_id, media_id)]

    settings = telegram_settings(fake_telegram, stream_drafts=True, draft_interval_s=3600)
    return TelegramSender(bot, load_media, settings)


def test_split_prefers_paragraphs_then_lines_then_words() -> None:
    paragraphs = ["A" * 3000, "B" * 3000, "C" * 100]
    assert split_text("\n\n".join(paragraphs)) == ["A" * 3000, "B" * 3000 + "\n\n" + "C" * 100]
    lines = split_text("\n".join(["line " * 30] * 100))
    assert all(len(p) <= MESSAGE_LIMIT for p in lines) and all(not p.endswith(" ") for p in lines)
    assert split_text("x" * 5000) == ["x" * MESSAGE_LIMIT, "x" * 904]
    assert split_text("   ") == []


def test_model_text_cannot_break_the_html() -> None:
    assert to_html("1 < 2 & <b>not bold</b>") == "1 &lt; 2 &amp; &lt;b&gt;not bold&lt;/b&gt;"
    assert to_html("**Total:** `42 EUR`") == "<b>Total:</b> <code>42 EUR</code>"
    assert to_html("```\nif a<b: **x**\n```") == "<pre>if a&lt;b: **x**\n</pre>"
    assert to_html("**unclosed and `half") == "**unclosed and `half"
    assert to_html("`**not bold in code**`") == "<code>**not bold in code**</code>"


async def test_a_long_reply_is_split_and_escaped(sender: TelegramSender, fake_telegram: FakeTelegram) -> None:
    text = "\n\n".join([f"Part {n}: " + "<tag> & more " * 250 for n in range(3)])
    await sender.send(row(text))
    sent = fake_telegram.sent("sendMessage")
    assert len(sent) == 3
    for call, piece in zip(sent, split_text(text), strict=True):
        assert call.fields["chat_id"] == str(CHAT) and call.fields["parse_mode"] == "HTML"
        assert html.unescape(call.fields["text"]) == piece and len(piece) <= MESSAGE_LIMIT
        assert "<tag>" not in call.fields["text"]


async def test_options_become_buttons_that_map_back(sender: TelegramSender, fake_telegram: FakeTelegram) -> None:
    await sender.send(row("What was the 20 for?", options=["groceries (EUR)", "fuel (EUR)"], outcome="clarifying"))
    await sender.send(row("Take your pills", kind="reminder", reminder_id=77, options=["Snooze 15 min", "Done"]))
    clarify, reminder = fake_telegram.sent("sendMessage")
    buttons = [b for r in clarify.json("reply_markup")["inline_keyboard"] for b in r]
    assert [(b["text"], ButtonAnswer.decode(b["callback_data"])) for b in buttons] == [
        ("groceries (EUR)", ButtonAnswer(0)),
        ("fuel (EUR)", ButtonAnswer(1)),
    ]
    buttons = [b for r in reminder.json("reply_markup")["inline_keyboard"] for b in r]
    assert [ButtonAnswer.decode(b["callback_data"]) for b in buttons] == [ButtonAnswer(0, 77), ButtonAnswer(1, 77)]
    assert ButtonAnswer(1, 77).payload() == {"answers": {"kind": "reminder", "reminder_id": 77}}


async def test_in_groups_the_reply_quotes_the_member(sender: TelegramSender, fake_telegram: FakeTelegram) -> None:
    await sender.send(row("Saved.", recipient="-1001234567890:4242"))
    [call] = fake_telegram.sent("sendMessage")
    assert call.fields["chat_id"] == "-1001234567890"
    assert call.json("reply_parameters")["message_id"] == 4242


async def test_charts_go_out_as_photos(sender: TelegramSender, fake_telegram: FakeTelegram) -> None:
    await sender.send(row("Groceries by month:", media_ids=[41]))
    assert [c.method for c in fake_telegram.calls] == ["sendMessage", "sendPhoto"]
    assert fake_telegram.sent("sendPhoto")[0].files["photo"] == PNG


async def test_flood_control_refusals_and_outages_become_delivery_errors(
    sender: TelegramSender, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail("sendMessage", 429, "Too Many Requests: retry after 17", retry_after=17)
    with pytest.raises(DeliveryError) as flood:
        await sender.send(row("hi"))
    assert flood.value.retry_after_s == 17 and flood.value.transient

    fake_telegram.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
    with pytest.raises(DeliveryError) as blocked:
        await sender.send(row("hi"))
    assert not blocked.value.transient and "blocked" in blocked.value.reason

    fake_telegram.fail("sendMessage", 502, "Bad Gateway")
    with pytest.raises(DeliveryError) as outage:
        await sender.send(row("hi"))
    assert outage.value.transient and outage.value.retry_after_s is None

    with pytest.raises(DeliveryError) as nonsense:
        await sender.send(row("hi", recipient="someone@example.org"))
    assert not nonsense.value.transient


async def test_a_retry_does_not_repeat_what_was_already_delivered(
    sender: TelegramSender, fake_telegram: FakeTelegram
) -> None:
    text = "A" * 4000 + "\n\n" + "B" * 4000 + "\n\n" + "C" * 200
    fake_telegram.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1, after=1)
    with pytest.raises(DeliveryError):
        await sender.send(row(text, row_id=3, media_ids=[41]))
    await sender.send(row(text, row_id=3, media_ids=[41]))
    texts = [c.fields["text"][0] for c in fake_telegram.sent("sendMessage")]
    assert texts == ["A", "B", "B", "C"]  # A once; B refused once, then delivered
    assert len(fake_telegram.sent("sendPhoto")) == 1


async def test_html_refused_by_telegram_falls_back_to_plain_text(
    sender: TelegramSender, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail("sendMessage", 400, "Bad Request: can't parse entities: unsupported start tag")
    await sender.send(row("**odd** text"))
    first, second = fake_telegram.sent("sendMessage")
    assert first.fields["parse_mode"] == "HTML" and "parse_mode" not in second.fields
    assert second.fields["text"] == "**odd** text"


async def test_typing_is_shown_and_its_failure_is_harmless(sender: TelegramSender, fake_telegram: FakeTelegram) -> None:
    await sender.typing(str(CHAT))
    fake_telegram.fail("sendChatAction", 403, "Forbidden: bot was kicked from the group chat")
    await sender.typing("-100777:12")
    calls = fake_telegram.sent("sendChatAction")
    assert [(c.fields["chat_id"], c.fields["action"]) for c in calls] == [(str(CHAT), "typing"), ("-100777", "typing")]


async def test_drafts_stream_in_private_chats_only_and_are_throttled(
    sender: TelegramSender, bot: Bot, fake_telegram: FakeTelegram
) -> None:
    assert sender.stream_sink("-1001234567890:4242", 5) is None
    sink = sender.stream_sink(str(CHAT), 5)
    assert isinstance(sink, DraftSink)
    await sink(StreamEvent("stream_start", {"message_id": 5}))
    for word in ("You ", "spent ", "42 EUR."):
        await sink(StreamEvent("content_delta", {"text": word}))
    await sink(StreamEvent("stream_end", {}))
    drafts = fake_telegram.sent("sendMessageDraft")
    # "Thinking…" at the start, then the first words; the rest fall inside the interval.
    assert [d.fields.get("text") for d in drafts] == [None, "You "]
    assert {d.fields["draft_id"] for d in drafts} == {"6"} and drafts[0].fields["chat_id"] == str(CHAT)

    eager = DraftSink(bot, CHAT, 5, interval_s=1e-9)
    await eager(StreamEvent("content_delta", {"text": "a"}))
    fake_telegram.fail("sendMessageDraft", 400, "Bad Request: method is unavailable")
    await eager(StreamEvent("content_delta", {"text": "b"}))
    await eager(StreamEvent("content_delta", {"text": "c"}))  # stopped after the failure: the reply still comes
    assert [d.fields["text"] for d in fake_telegram.sent("sendMessageDraft")[2:]] == ["a", "ab"]


async def test_attachments_are_downloaded_by_file_id(bot: Bot, fake_telegram: FakeTelegram) -> None:
    fake_telegram.files["AgACAgQ-large-1"] = b"\xff\xd8\xff receipt jpeg"
    fetcher = TelegramFetcher(bot)
    data = await fetcher.fetch(Attachment(kind="image", mime="image/jpeg", ref="AgACAgQ-large-1"))
    assert data == b"\xff\xd8\xff receipt jpeg"
    assert [c.method for c in fake_telegram.calls] == ["getFile"]
    with pytest.raises(TelegramFetchError) as gone:
        await fetcher.fetch(Attachment(kind="image", ref="AgAC-unknown"))
    assert not gone.value.transient
    fake_telegram.fail("getFile", 502, "Bad Gateway")
    with pytest.raises(TelegramFetchError) as outage:
        await fetcher.fetch(Attachment(kind="image", ref="AgACAgQ-large-1"))
    assert outage.value.transient
