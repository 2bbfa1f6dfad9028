"""`faa telegram set-webhook` registers URL, secret and update types with the (fake) Bot API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from bot.ops.cli import main
from tests.bot.channels.telegram.conftest import SECRET
from tests.fakes.telegram_server import TOKEN, FakeTelegram


@pytest.fixture
def telegram_env(fake_telegram: FakeTelegram, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)  # no `.env` of the checkout in the way
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("TELEGRAM_API_BASE", fake_telegram.base_url)
    saved = structlog.get_config()  # the command points structlog at this test's captured stderr
    yield
    structlog.configure(**saved)


async def test_set_webhook_sends_url_secret_and_update_types(
    telegram_env: None, fake_telegram: FakeTelegram, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "https://faa.example.org/telegram/webhook"
    # The command runs its own event loop, as from a shell; the fake server answers from this one.
    assert await asyncio.to_thread(main, ["telegram", "set-webhook", "--url", url]) == 0
    [call] = fake_telegram.sent("setWebhook")
    assert call.fields["url"] == url and call.fields["secret_token"] == SECRET
    assert json.loads(call.fields["allowed_updates"]) == ["message", "callback_query"]
    assert "Telegram webhook set" in capsys.readouterr().out


async def test_set_webhook_without_a_url_or_refused_says_why(
    telegram_env: None, fake_telegram: FakeTelegram, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await asyncio.to_thread(main, ["telegram", "set-webhook"]) == 2
    assert "TELEGRAM_WEBHOOK_URL" in capsys.readouterr().err
    fake_telegram.fail("setWebhook", 400, "Bad Request: bad webhook: HTTPS url must be provided for webhook")
    assert await asyncio.to_thread(main, ["telegram", "set-webhook", "--url", "https://x.example/h"]) == 2
    assert "bad webhook" in capsys.readouterr().err
    assert {c.method for c in fake_telegram.calls} == {"setWebhook"}  # no other call, no database needed
