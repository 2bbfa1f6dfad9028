"""The terminal chat: typed lines go through inbox → queue → worker → engine → outbox and come back as "FAA: …"."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from decimal import Decimal

import asyncpg
import pytest
import structlog
from redis.asyncio import Redis

from bot.channels.live import LiveReplySender, announce_change
from bot.channels.terminal.chat import chat
from bot.ops.runtime import Runtime
from tests.conftest import PostgresInfo
from tests.e2e.scripts import routed_model
from tests.fakes.openai_server import FakeOpenAI
from tests.system import Family, make_family, make_settings
from tools.errors import HouseholdError
from tools.storage.outbox import OutboxRow
from worker.main import background_worker


class Keyboard:
    """Types the given lines one per prompt, then Ctrl-D (None); remembers the prompts it was shown."""

    def __init__(self, *lines: str) -> None:
        self._lines = list(lines)
        self.prompts: list[str] = []

    async def __call__(self, prompt: str) -> str | None:
        self.prompts.append(prompt)
        return self._lines.pop(0) if self._lines else None


# Small talk the model answers; an expense is recorded from its one call.
terminal_model = routed_model(chat={"reply": "Hello Anna, how can I help?"})


@pytest.fixture
async def runtime(own_database: PostgresInfo, fake_llm: FakeOpenAI, redis_url: str, redis: object) -> Runtime:
    fake_llm.reset()
    fake_llm.script(terminal_model)
    return Runtime(make_settings(own_database, fake_llm.base_url, redis_url, max_seconds=10))


@pytest.fixture
async def admin(own_database: PostgresInfo) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(own_database.admin_dsn)
    yield conn
    await conn.close()


@pytest.fixture
async def miller(admin: asyncpg.Connection) -> Family:
    return await make_family(admin, "Miller", {"Anna": "Europe/Berlin"})


@pytest.mark.parametrize("household", [None, "Miller"], ids=["only-household", "named-household"])
async def test_a_record_and_a_chat_reply_are_printed_and_kept(
    runtime: Runtime,
    miller: Family,
    admin: asyncpg.Connection,
    household: str | None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    keyboard = Keyboard("I spent 35.50 euros on groceries at Lidl", "how are you, FAA?")

    with structlog.testing.capture_logs() as logs:  # structlog prints to stdout by default: keep it for FAA
        async with asyncio.timeout(30), background_worker(runtime.settings):
            await chat(runtime.settings, runtime.admin_dsn, "Anna", household, read_line=keyboard)

    out, err = capsys.readouterr()
    assert out.splitlines() == ["FAA: Saved: groceries (Lidl), 35.50 EUR.", "FAA: Hello Anna, how can I help?"]
    assert "Chatting as Anna" in err
    assert keyboard.prompts == ["Anna> "] * 3
    assert [e["channel"] for e in logs if e["event"] == "message.received"] == ["terminal", "terminal"]
    memories = await admin.fetch("SELECT household_id, author_id, amount, currency FROM memories")
    anna = {"household_id": miller.household_id, "author_id": miller.user_ids["Anna"]}
    assert [dict(r) for r in memories] == [{**anna, "amount": Decimal("35.50"), "currency": "EUR"}]
    inbox = await admin.fetch("SELECT id, channel, user_id, text, status FROM inbox ORDER BY id")
    assert [(r["channel"], r["user_id"], r["text"], r["status"]) for r in inbox] == [
        ("terminal", miller.user_ids["Anna"], "I spent 35.50 euros on groceries at Lidl", "done"),
        ("terminal", miller.user_ids["Anna"], "how are you, FAA?", "done"),
    ]
    interactions = await admin.fetch("SELECT inbox_id, channel, reply_text FROM interactions ORDER BY inbox_id")
    assert [(r["inbox_id"], r["channel"], r["reply_text"]) for r in interactions] == [
        (inbox[0]["id"], "terminal", "Saved: groceries (Lidl), 35.50 EUR."),
        (inbox[1]["id"], "terminal", "Hello Anna, how can I help?"),
    ]


async def test_a_question_back_is_printed_with_numbered_options(
    runtime: Runtime, miller: Family, admin: asyncpg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    # Where Anna lives says no currency: an amount without one is asked about, with the usual ones to pick.
    await admin.execute("UPDATE users SET timezone = 'UTC' WHERE id = $1", miller.user_ids["Anna"])

    with structlog.testing.capture_logs():
        async with asyncio.timeout(30), background_worker(runtime.settings):
            await chat(runtime.settings, runtime.admin_dsn, "Anna", "Miller", read_line=Keyboard("I paid 20 for bread"))

    assert capsys.readouterr().out == "FAA: Which currency was 20 in?\n  [1] EUR\n  [2] USD\n  [3] GBP\n  [4] CNY\n"


@pytest.mark.parametrize("command", ["/quit", "/exit"])
async def test_quit_ends_the_chat_and_blank_lines_are_skipped(
    runtime: Runtime,
    miller: Family,
    admin: asyncpg.Connection,
    fake_llm: FakeOpenAI,
    command: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    keyboard = Keyboard("", "   ", f" {command} ", "I spent 1 euro on sweets")

    await asyncio.wait_for(chat(runtime.settings, runtime.admin_dsn, "Anna", "Miller", read_line=keyboard), 10)

    assert keyboard.prompts == ["Anna> "] * 3  # the line after /quit is never read
    assert capsys.readouterr().out == ""
    assert await admin.fetchval("SELECT count(*) FROM inbox") == 0
    assert fake_llm.requests == []


async def test_ctrl_d_at_the_first_prompt_sends_nothing(
    runtime: Runtime, miller: Family, admin: asyncpg.Connection
) -> None:
    keyboard = Keyboard()

    await asyncio.wait_for(
        chat(runtime.settings, runtime.admin_dsn, "anna", "miller", read_line=keyboard), 10
    )  # names match case-blind

    assert keyboard.prompts == ["Anna> "]
    assert await admin.fetchval("SELECT count(*) FROM inbox") == 0


@pytest.mark.parametrize(
    ("member", "household", "message"),
    [
        ("Anna", "Atlantis", "no household named 'Atlantis'"),
        ("Zoe", "Miller", "no member named 'Zoe'"),
        ("Anna", None, "name the household with --household"),
    ],
    ids=["unknown-household", "unknown-member", "several-households"],
)
async def test_who_is_chatting_must_be_unambiguous(
    runtime: Runtime, miller: Family, admin: asyncpg.Connection, member: str, household: str | None, message: str
) -> None:
    await make_family(admin, "Smith", {"Sam": "America/New_York"})
    keyboard = Keyboard("never sent")

    with pytest.raises(HouseholdError, match=message):
        await chat(runtime.settings, runtime.admin_dsn, member, household, read_line=keyboard)

    assert keyboard.prompts == []


async def test_without_any_household_the_chat_says_which_to_name(runtime: Runtime) -> None:
    with pytest.raises(HouseholdError, match="not exactly one"):
        await chat(runtime.settings, runtime.admin_dsn, "Anna", None, read_line=Keyboard())


async def test_a_reminder_that_arrives_while_chatting_is_printed(
    runtime: Runtime, miller: Family, capsys: pytest.CaptureFixture[str]
) -> None:
    redis = Redis.from_url(runtime.settings.redis.url)
    anna = miller.user_ids["Anna"]
    channel = f"faa:{redis.connection_pool.connection_kwargs['db']}:notify:{anna}"
    reminder = OutboxRow(
        id=1,
        household_id=miller.household_id,
        user_id=anna,
        inbox_id=None,
        channel="web",
        recipient=str(anna),
        text="⏰ Reminder: Call the dentist",
        payload={"kind": "reminder", "reminder_id": 7, "options": ["Snooze 15 min", "Done"]},
        status="pending",
        attempts=0,
        last_error=None,
        created_at=datetime.now(UTC),
        sent_at=None,
    )
    printed: list[str] = []

    async def keyboard(prompt: str) -> str | None:
        """While Anna sits at the prompt, her reminders change and one is delivered; she leaves once it is on
        screen."""
        while not (await redis.pubsub_numsub(channel))[0][1]:
            await asyncio.sleep(0.02)
        await announce_change(redis, [anna], "reminders")  # news for open pages only: nothing is printed
        await LiveReplySender(redis).send(reminder)
        while "Call the dentist" not in "".join(printed):
            printed.append(capsys.readouterr().out)
            await asyncio.sleep(0.02)
        return None

    try:
        with structlog.testing.capture_logs():
            async with asyncio.timeout(30):
                await chat(runtime.settings, runtime.admin_dsn, "Anna", "Miller", read_line=keyboard)
    finally:
        await redis.aclose()

    assert "".join(printed) == "\nFAA: ⏰ Reminder: Call the dentist\n  [1] Snooze 15 min\n  [2] Done\n"
