"""Photos, receipts, voice notes and files in the web chat: chosen or recorded in Chromium, sent with the message as
multipart/form-data, read by the preprocessing every channel shares (OCR for a photo, FAA's speech server for a
voice note, text files as text), shown in the history; a file the chat does not keep comes back with the reason and
nothing is stored; another member cannot open them."""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import asyncpg
import pytest
from aiohttp import FormData
from playwright.async_api import BrowserContext, FilePayload, Page, expect

from bot.ops.speech_server import BadRequest, make_server
from engine.settings import Settings, SpeechSettings
from tests.bot.ops.test_local_servers import free_port
from tests.bot.web.pages.conftest import base_url, signed_in
from tests.bot.web.pages.test_calendar import session
from tests.e2e.scripts import routed_model
from tests.fakes.images import picture
from tests.fakes.openai_server import FakeOpenAI
from tests.system import Family, System, make_family, running_system

RECEIPT = picture(["BAKERY", "TOTAL EUR 4.80"], format="JPEG")
SAID = "We paid 50 euros for groceries today"
WEBM = b"\x1a\x45\xdf\xa3"  # the EBML magic every WebM file starts with


model = routed_model()
SAVED_RECEIPT = re.compile(r"^Saved: .*4\.80 EUR")


async def expenses(system: System, family: Family) -> list[tuple[str, str]]:
    rows = await system.admin.fetch(
        "SELECT amount, currency FROM memories WHERE household_id = $1 AND deleted_at IS NULL", family.household_id
    )
    return [(str(row["amount"]), row["currency"]) for row in rows]


async def chat(system: System, new_context: Callable[[], Awaitable[BrowserContext]], family: Family) -> Page:
    page = await signed_in(system, new_context, family, "Anna")
    await page.goto(base_url(system) + "/")
    return page


async def test_a_photographed_receipt_is_read_and_saved_and_the_history_shows_the_photo(
    system: System, new_context: Callable[[], Awaitable[BrowserContext]]
) -> None:
    family = await make_family(system.admin, "Receipts", {"Anna": "Europe/Berlin"})
    system.llm.script(model)
    page = await chat(system, new_context, family)

    receipt: FilePayload = {"name": "receipt.jpg", "mimeType": "image/jpeg", "buffer": RECEIPT}
    await page.set_input_files("#attach", files=[receipt])
    await expect(page.locator("#chosen .name")).to_have_text(["receipt.jpg"])
    await page.click("#send")  # the photo alone is a message: no text needed

    answer = page.locator(".msg.faa").last
    # Photo reading starts its own process and loads its models on first use: as long as the page would wait.
    await expect(answer.locator(".text")).to_have_text(SAVED_RECEIPT, timeout=120_000)
    await expect(page.locator("#chosen")).to_be_hidden()
    assert await expenses(system, family) == [("4.80", "EUR")]
    read = [r.all_text for r in system.llm.requests if "TOTAL EUR 4.80" in r.all_text]
    assert read and "[image 'receipt.jpg', text extracted]\nBAKERY\nTOTAL EUR 4.80" in read[0]  # through OCR

    await page.reload()
    photo = page.locator(".msg.me img.photo").last
    await expect(photo).to_be_visible()
    assert await photo.evaluate("image => image.naturalWidth") == 1000  # the stored JPEG, served to its sender
    assert await photo.get_attribute("alt") == "receipt.jpg"
    await expect(page.locator(".msg.faa .text").last).to_have_text(SAVED_RECEIPT)


HEARING = threading.Event()  # set by a test once it has seen the page say it is listening


@pytest.fixture
def speech_url() -> Iterator[tuple[str, list[bytes]]]:
    """FAA's speech server on a loopback port, hearing the sentence in any WebM recording (Chromium's fake
    microphone plays a beep) and refusing other bytes as Whisper's decoder would; it answers once the test lets it."""
    heard: list[bytes] = []
    HEARING.clear()

    def transcribe(audio: bytes, language: str | None) -> str:
        heard.append(audio)
        HEARING.wait(30)
        if not audio.startswith(WEBM):
            raise BadRequest("the audio could not be decoded (InvalidDataError)")
        return SAID

    server = make_server(transcribe, free_port(), model="whisper-base")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", heard
    HEARING.set()  # a test that failed before letting it answer does not hold the server
    server.shutdown()
    server.server_close()


@pytest.fixture
async def voice_system(
    settings: Settings,
    speech_url: tuple[str, list[bytes]],
    fake_llm: FakeOpenAI,
    admin_conn: asyncpg.Connection,
) -> AsyncIterator[System]:
    speech = SpeechSettings(model="whisper-base", base_url=speech_url[0])
    async with running_system(settings.model_copy(update={"speech": speech}), fake_llm, admin_conn) as running:
        yield running


async def test_a_voice_note_recorded_in_the_page_is_heard_and_saved(
    voice_system: System,
    speech_url: tuple[str, list[bytes]],
    new_context: Callable[[], Awaitable[BrowserContext]],
) -> None:
    family = await make_family(voice_system.admin, "Voices", {"Anna": "Europe/Berlin"})
    voice_system.llm.script(model)
    page = await chat(voice_system, new_context, family)

    record = page.locator("#record")
    await record.click()
    await expect(record).to_have_attribute("aria-pressed", "true")
    await expect(record).to_have_accessible_name("Stop recording")
    await page.wait_for_timeout(1500)  # a second and a half of the fake microphone's beep
    await record.click()
    await expect(record).to_have_attribute("aria-pressed", "false")
    await expect(page.locator("#chosen .name")).to_have_text([_starts_with("voice-note-")])
    await page.fill("#message", "for the shop")
    await page.click("#send")

    answer = page.locator(".msg.faa").last
    await expect(answer.locator(".text")).to_have_text("Listening to your voice note…")  # while it is transcribed
    HEARING.set()
    await expect(answer.locator(".text")).to_have_text(re.compile(r"^Saved: .*50\.00 EUR"), timeout=60_000)
    assert await expenses(voice_system, family) == [("50.00", "EUR")]
    [audio] = speech_url[1]
    assert audio.startswith(WEBM) and len(audio) > 1000  # the browser's own recording reached speech-to-text
    await page.reload()
    await expect(page.locator(".msg.me audio.voice")).to_have_count(1)
    await expect(page.locator(".msg.me .text").last).to_have_text("for the shop")


def _starts_with(prefix: str) -> re.Pattern[str]:
    return re.compile("^" + re.escape(prefix))


def _form(text: str, client_id: str, *files: tuple[str, str, bytes]) -> FormData:
    form = FormData(default_to_multipart=True)  # as the browser sends it, files or not
    form.add_field("text", text)
    form.add_field("client_message_id", client_id)
    for name, mime, data in files:
        form.add_field("file", data, filename=name, content_type=mime)
    return form


async def _media_count(system: System, family: Family) -> int:
    return int(await system.admin.fetchval("SELECT count(*) FROM media WHERE household_id = $1", family.household_id))


async def test_refused_files_store_nothing_a_resend_stores_once_and_only_the_sender_opens_a_file(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    small = settings.model_copy(update={"channel": settings.channel.model_copy(update={"attachment_max_bytes": 4096})})
    async with running_system(small, fake_llm, admin_conn) as system:
        family = await make_family(system.admin, "Files", {"Anna": "Europe/Berlin", "Tom": "Europe/Berlin"})
        system.llm.script(model)
        anna, tom = await session(system, family, "Anna"), await session(system, family, "Tom")
        post = system.client.post

        # fmt: off
        refused = {
            "kind": (_form("look", "f-1", ("tools.zip", "application/zip", b"PK\x03\x04")), 415, "tools.zip was not"),
            "size": (_form("", "f-2", ("big.png", "image/png", bytes(5000))), 413, "it is larger than 4 KB"),
            "empty": (_form("", "f-3"), 400, "Write a message or add a photo"),
            "no file": (_form("hi", "f-4", ("blank.jpg", "image/jpeg", b"")), 400, "blank.jpg was not sent"),
        }
        # fmt: on
        for case, (form, status, says) in refused.items():
            response = await post("/app/chat/stream", data=form, headers=anna)
            assert response.status == status, case
            assert says in (await response.json())["error"]["message"], case
        assert await _media_count(system, family) == 0
        taken = await system.admin.fetchval("SELECT count(*) FROM inbox WHERE household_id = $1", family.household_id)
        assert taken == 0

        note = ("wifi.txt", "text/plain", b"Wifi: blue-42")
        for _ in range(2):  # the browser sent it again (a lost connection): one message, its file stored once
            sent = await post("/app/chat/stream", data=_form("", "f-5", note), headers=anna)
            assert sent.status == 200 and "stream_end" in await sent.text()
        [media_id] = await system.admin.fetch("SELECT id FROM media WHERE household_id = $1", family.household_id)
        replies = await system.admin.fetchval(
            "SELECT count(*) FROM outbox WHERE household_id = $1", family.household_id
        )
        assert replies == 1  # answered once
        opened = await system.client.get(f"/app/media/{media_id['id']}", headers=anna)
        assert opened.status == 200 and await opened.read() == b"Wifi: blue-42"
        assert opened.headers["Content-Disposition"] == "attachment"  # a file is downloaded, never shown as a page
        assert (await system.client.get(f"/app/media/{media_id['id']}", headers=tom)).status == 404

        history = await (await system.client.get("/", headers=anna)).text()
        assert f'<a class="file" href="/app/media/{media_id["id"]}" download="wifi.txt">wifi.txt</a>' in history
