"""Fixtures for the Telegram channel: the fake Bot API server, settings that enable the channel, the system."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiohttp import ClientResponse

from bot.channels.telegram.webhook import SECRET_HEADER
from engine.channel_settings import TelegramSettings
from engine.settings import Settings
from tests.bot.channels.telegram import updates
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import TOKEN, FakeTelegram
from tests.system import Family, System, running_system
from tools.storage import identities, outbox
from tools.storage.outbox import OutboxRow

SECRET = "test-webhook-secret_0123456789"
PATH = "/telegram/webhook"


@pytest.fixture(scope="session")
async def fake_telegram_server() -> AsyncIterator[FakeTelegram]:
    server = FakeTelegram()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def fake_telegram(fake_telegram_server: FakeTelegram) -> FakeTelegram:
    fake_telegram_server.reset()
    return fake_telegram_server


def telegram_settings(fake: FakeTelegram, **extra: Any) -> TelegramSettings:
    return TelegramSettings(bot_token=TOKEN, webhook_secret=SECRET, api_base=fake.base_url, **extra)


@pytest.fixture
def tg_settings(settings: Settings, fake_telegram: FakeTelegram) -> Settings:
    return settings.model_copy(update={"telegram": telegram_settings(fake_telegram)})


@pytest.fixture
async def bot(fake_telegram: FakeTelegram) -> AsyncIterator[Bot]:
    real = Bot(TOKEN, session=AiohttpSession(api=TelegramAPIServer.from_base(fake_telegram.base_url)))
    yield real
    await real.session.close()


@pytest.fixture
async def gate(tg_settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection) -> AsyncIterator[System]:
    """The web app with the Telegram webhook, and no worker: what the webhook stores stays queued."""
    async with running_system(tg_settings, fake_llm, admin_conn, worker=False) as running:
        yield running


@pytest.fixture
async def tg_system(
    tg_settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> AsyncIterator[System]:
    async with running_system(tg_settings, fake_llm, admin_conn) as running:
        yield running


async def post(system: System, update: dict[str, Any] | bytes, secret: str | None = SECRET) -> ClientResponse:
    headers = {} if secret is None else {SECRET_HEADER: secret}
    if isinstance(update, bytes):
        body = io.BytesIO(update)  # aiohttp warns about large raw bytes bodies
        return await system.client.post(PATH, data=body, headers={**headers, "Content-Type": "application/json"})
    return await system.client.post(PATH, json=update, headers=headers)


async def link(system: System, family: Family, member: str) -> int:
    """A Telegram user linked to `member` (as `/start CODE` would), returning the Telegram user id."""
    telegram_id = updates.new_id()
    code = await identities.create_invite(system.admin, family.household_id, family.user_ids[member])
    async with system.deps.db.unscoped() as conn:
        assert await identities.redeem_invite(conn, code, "telegram", str(telegram_id)) is not None
    return telegram_id


async def inbox_rows(system: System, telegram_id: int) -> list[asyncpg.Record]:
    return await system.admin.fetch(
        """SELECT i.* FROM inbox i JOIN user_identities u ON u.user_id = i.user_id
           WHERE i.channel = 'telegram' AND u.channel = 'telegram' AND u.external_id = $1 ORDER BY i.id""",
        str(telegram_id),
    )


async def outbox_for(system: System, household_id: int, inbox_id: int) -> OutboxRow | None:
    async with system.deps.db.household(household_id) as conn:
        return await outbox.for_inbox(conn, inbox_id)
