"""Telegram voice notes end to end in the offline default's shape: webhook → inbox → worker → the note's OGG/Opus
bytes from the fake Bot API → the engine's speech client → FAA's speech server (`bot/ops/speech_server.py`, with a
transcriber that knows the committed espeak-ng samples in place of Whisper) → scripted model → a stored expense
and a reply."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest

from bot.ops.speech_server import BadRequest, make_server
from engine.capabilities.phrases import say
from engine.settings import Settings, SpeechSettings
from tests.bot.channels.telegram import updates
from tests.bot.channels.telegram.conftest import link, post
from tests.bot.channels.telegram.test_flow import delivered
from tests.bot.ops.test_local_servers import free_port
from tests.e2e.scripts import routed_model, routed_words
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.telegram_server import FakeTelegram
from tests.system import System, make_family, running_system

SAMPLES = Path(__file__).parents[3] / "fakes" / "voice"
SAID: dict[bytes, str] = {
    (SAMPLES / name).read_bytes(): sentence
    for name, sentence in json.loads((SAMPLES / "samples.json").read_text()).items()
}


@pytest.fixture
def speech_url() -> Iterator[tuple[str, list[str | None]]]:
    """FAA's speech server on a loopback port; it knows the samples' sentences and refuses other bytes as Whisper's
    decoder would refuse what is not audio."""
    languages: list[str | None] = []

    def transcribe(audio: bytes, language: str | None) -> str:
        languages.append(language)
        if not audio.startswith(b"OggS") or audio not in SAID:
            raise BadRequest("the audio could not be decoded (InvalidDataError)")
        return SAID[audio]

    server = make_server(transcribe, free_port(), model="whisper-base")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", languages
    server.shutdown()
    server.server_close()


@pytest.fixture
async def voice_system(
    tg_settings: Settings,
    speech_url: tuple[str, list[str | None]],
    fake_llm: FakeOpenAI,
    admin_conn: asyncpg.Connection,
) -> AsyncIterator[System]:
    speech = SpeechSettings(model="whisper-base", base_url=speech_url[0])
    async with running_system(tg_settings.model_copy(update={"speech": speech}), fake_llm, admin_conn) as running:
        yield running


async def test_a_voice_note_becomes_a_stored_expense_and_a_reply(
    voice_system: System, fake_telegram: FakeTelegram, speech_url: tuple[str, list[str | None]]
) -> None:
    family = await make_family(voice_system.admin, "Voice", {"Anna": "Europe/Berlin"})
    anna = await link(voice_system, family, "Anna")
    voice_system.llm.script(routed_model())
    fake_telegram.files[f"AwACAgQ-voice-{anna}"] = (SAMPLES / "en-02.ogg").read_bytes()

    assert (await post(voice_system, updates.voice(anna))).status == 200

    [reply] = await delivered(voice_system, anna)
    assert reply["status"] == "sent"
    [sent] = fake_telegram.sent("sendMessage")
    assert "50.00 EUR" in sent.fields["text"]
    stored = await voice_system.admin.fetch(
        "SELECT amount, currency, ai_understanding->>'category' AS category FROM memories WHERE household_id = $1",
        family.household_id,
    )
    assert [(str(r["amount"]), r["currency"], r["category"]) for r in stored] == [("50.00", "EUR", "groceries")]
    assert speech_url[1] == [None]  # the language is left to the server, which knows the family's languages


async def test_a_chinese_voice_note_reaches_the_model_and_a_broken_one_gets_a_note(
    voice_system: System, fake_telegram: FakeTelegram
) -> None:
    family = await make_family(voice_system.admin, "VoiceZh", {"Li": "Asia/Shanghai", "Ben": "Europe/Berlin"})
    li, ben = await link(voice_system, family, "Li"), await link(voice_system, family, "Ben")
    voice_system.llm.script(routed_model())
    fake_telegram.files[f"AwACAgQ-voice-{li}"] = (SAMPLES / "zh-01.ogg").read_bytes()
    fake_telegram.files[f"AwACAgQ-voice-{ben}"] = b"OggS but truncated"

    await post(voice_system, updates.voice(li))
    await post(voice_system, updates.voice(ben))

    await delivered(voice_system, li)
    await delivered(voice_system, ben)
    texts = {call.fields["chat_id"]: call.fields["text"] for call in fake_telegram.sent("sendMessage")}
    assert any(routed_words(r).endswith("\n把牛奶和鸡蛋加到购物清单上") for r in voice_system.llm.requests)
    assert "清单" in texts[str(li)]
    assert texts[str(ben)] == say("ask_what", "en")  # asked, not guessed at
    stored = "SELECT count(*) FROM memories WHERE household_id = $1"
    assert await voice_system.admin.fetchval(stored, family.household_id) == 0
