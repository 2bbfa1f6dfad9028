"""The gate every chat channel goes through: strangers, invite codes, rate limits, then the inbox."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import asyncpg
import pytest

from bot.channels.gate import Incoming, Verdict, receive
from bot.channels.pseudonyms import pseudonym
from engine.channel_settings import ChannelSettings
from engine.settings import Settings
from tests.fakes.openai_server import FakeOpenAI
from tests.system import Family, System, make_family, running_system
from tools.storage import identities
from tools.storage.identities import Address


@pytest.fixture
async def gate(settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection) -> AsyncIterator[System]:
    limited = settings.model_copy(update={"channel": ChannelSettings(messages_per_minute=3, join_attempts_per_hour=2)})
    async with running_system(limited, fake_llm, admin_conn, worker=False) as running:
        yield running


_counter = iter(range(10**6))


def message(sender: str, text: str = "hello", *, code: str | None = None, message_id: str | None = None) -> Incoming:
    number = next(_counter)
    return Incoming(
        channel="telegram",
        sender=sender,
        message_id=message_id or f"m{number}-{sender}",
        text=text,
        reply_to=f"chat-{sender}",
        trace_id=f"t{number}",
        join_code=code,
        join_hint="/start <code>",
        payload={"chat_type": "private"},
    )


async def invite(admin: asyncpg.Connection, family: Family, member: str, ttl: timedelta = timedelta(days=1)) -> str:
    return await identities.create_invite(admin, family.household_id, family.user_ids[member], ttl)


async def inbox_count(admin: asyncpg.Connection, sender_chat: str) -> int:
    return int(await admin.fetchval("SELECT count(*) FROM inbox WHERE payload->>'reply_to' = $1", sender_chat))


async def test_a_stranger_gets_one_short_notice_and_nothing_is_stored(gate: System) -> None:
    first = await receive(gate.deps, message("stranger-1", "what is the wifi password?"))
    assert first.verdict is Verdict.UNKNOWN and first.notice is not None and "/start <code>" in first.notice
    again = await receive(gate.deps, message("stranger-1", "hello??"))
    assert again.verdict is Verdict.UNKNOWN and again.notice is None  # one notice, then silence
    assert await inbox_count(gate.admin, "chat-stranger-1") == 0
    assert gate.llm.requests == []


async def test_an_invite_links_the_sender_whose_messages_then_reach_the_inbox(gate: System) -> None:
    family = await make_family(gate.admin, "Gate", {"Anna": "Europe/Berlin"})
    code = await invite(gate.admin, family, "Anna")

    linked = await receive(gate.deps, message("tg-anna", code=code.lower().replace("-", " ")))  # as typed on a phone
    assert linked.verdict is Verdict.LINKED and linked.principal == family.principal("Anna")
    assert linked.notice is not None and "Anna" in linked.notice
    async with gate.deps.db.household(family.household_id) as conn:
        assert await identities.delivery_address(conn, family.user_ids["Anna"]) == Address("telegram", "tg-anna")

    accepted = await receive(gate.deps, message("tg-anna", "I spent 12 euros on bread", message_id="u-1"))
    assert accepted.verdict is Verdict.ACCEPTED and accepted.notice is None and accepted.row is not None
    assert accepted.row.household_id == family.household_id and accepted.row.user_id == family.user_ids["Anna"]
    assert accepted.row.payload == {"chat_type": "private", "reply_to": "chat-tg-anna"}
    duplicate = await receive(gate.deps, message("tg-anna", "I spent 12 euros on bread", message_id="u-1"))
    assert duplicate.verdict is Verdict.DUPLICATE and duplicate.row is not None and duplicate.row.id == accepted.row.id

    # The code is spent: nobody else can use it, and Anna sending it again changes nothing.
    assert (await receive(gate.deps, message("tg-eve", code=code))).verdict is Verdict.JOIN_REFUSED
    assert (await receive(gate.deps, message("tg-anna", code=code))).verdict is Verdict.ALREADY_LINKED


async def test_expired_or_unknown_codes_are_refused_and_guessing_is_limited(gate: System) -> None:
    family = await make_family(gate.admin, "Gate", {"Ben": "Europe/Berlin"})
    expired = await invite(gate.admin, family, "Ben", ttl=timedelta(seconds=-1))
    refused = await receive(gate.deps, message("tg-guess", code=expired))
    assert refused.verdict is Verdict.JOIN_REFUSED and refused.notice is not None
    assert (await receive(gate.deps, message("tg-guess", code="AAAAA-AAAAA"))).verdict is Verdict.JOIN_REFUSED

    valid = await invite(gate.admin, family, "Ben")
    limited = await receive(gate.deps, message("tg-guess", code=valid))  # the third try within the hour
    assert limited.verdict is Verdict.RATE_LIMITED and limited.notice is not None
    assert await gate.admin.fetchval("SELECT count(*) FROM user_identities WHERE external_id = 'tg-guess'") == 0


async def test_a_member_writing_too_fast_is_told_once_and_the_extra_messages_are_not_taken(gate: System) -> None:
    family = await make_family(gate.admin, "Gate", {"Tom": "Europe/Berlin"})
    await receive(gate.deps, message("tg-tom", code=await invite(gate.admin, family, "Tom")))
    verdicts = [await receive(gate.deps, message("tg-tom", f"note {n}")) for n in range(5)]
    assert [v.verdict for v in verdicts] == [Verdict.ACCEPTED] * 3 + [Verdict.RATE_LIMITED] * 2
    assert verdicts[3].notice is not None and verdicts[4].notice is None
    assert await inbox_count(gate.admin, "chat-tg-tom") == 3


async def test_rate_limit_and_notice_keys_name_no_sender(gate: System) -> None:
    family = await make_family(gate.admin, "Gate", {"Ida": "Europe/Berlin"})
    await receive(gate.deps, message("tg-ida-4711", code=await invite(gate.admin, family, "Ida")))
    for n in range(5):  # past the limit: a counter and a "slow down" flag
        await receive(gate.deps, message("tg-ida-4711", f"note {n}"))
    await receive(gate.deps, message("stranger-8128", "hi"))  # the once-a-day notice flag
    for _ in range(3):  # join attempts, past their limit
        await receive(gate.deps, message("guesser-2024@mail.example", code="AAAAA-AAAAA"))

    keys = [key.decode() for key in await gate.redis.keys("faa:channel:*")]
    kinds = {key.split(":")[2] for key in keys}
    assert {"rate", "notice", "join"} <= kinds
    for sender in ("tg-ida-4711", "chat-tg-ida-4711", "stranger-8128", "guesser-2024@mail.example"):
        assert not [key for key in keys if sender in key or sender.split("@")[0] in key]
    for sender in ("tg-ida-4711", "stranger-8128", "guesser-2024@mail.example"):
        assert any(pseudonym(gate.deps.settings, "telegram", sender) in key for key in keys)
