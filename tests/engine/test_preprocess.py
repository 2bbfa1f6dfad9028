"""Step 1: photos read by OCR (English and Chinese), voice through speech-to-text on the wire, files
fetched through the channel's port — each extraction journaled, a broken attachment never failing the message."""

from __future__ import annotations

import dataclasses
import io
from collections.abc import AsyncIterator

import asyncpg
import pytest
from PIL import Image

from bot.channels import intake
from engine.composition import close_deps, open_deps
from engine.deps import Deps
from engine.domain import Attachment
from engine.errors import AttachmentError, LLMError
from engine.ocr import RapidOCRReader, join_lines
from engine.pipeline import Engine
from engine.settings import OCRSettings, Settings, SpeechSettings
from tests.e2e.scripts import routed_model, routed_words
from tests.fakes.images import CHINESE_FONT, drawing, picture
from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Scripted
from tests.system import Family, make_family
from tools.storage import media
from tools.storage.inbox import InboxRow


@pytest.fixture(scope="module")
async def reader() -> AsyncIterator[RapidOCRReader]:
    """One reader for the module: its models load once, with the first photo."""
    opened = RapidOCRReader(OCRSettings())
    yield opened
    await opened.close()


async def test_a_receipt_photo_is_read_in_english(reader: RapidOCRReader) -> None:
    text = await reader.read_text(picture(["REWE Markt Berlin", "TOTAL EUR 23.45"]))
    assert text == "REWE Markt Berlin\nTOTAL EUR 23.45"


async def test_a_chinese_receipt_is_read_without_spaces_between_characters(reader: RapidOCRReader) -> None:
    text = await reader.read_text(picture(["超市收据", "合计 35.50 元"], CHINESE_FONT))
    assert "超市收据" in text and "35.50" in text


async def test_an_item_and_its_price_stay_on_one_line_in_a_tilted_photo(reader: RapidOCRReader) -> None:
    receipt = ["Milk 1L" + " " * 40 + "1.19", "Bread" + " " * 44 + "2.49", "TOTAL" + " " * 43 + "3.68"]
    text = await reader.read_text(picture(receipt, format="JPEG", angle=2))
    assert text.splitlines() == ["Milk 1L 1.19", "Bread 2.49", "TOTAL 3.68"]


async def test_photos_turned_by_exif_and_transparent_pictures_are_read_upright_on_white(
    reader: RapidOCRReader,
) -> None:
    turned = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: the camera was held sideways, display turned 90° clockwise
    drawing(["PHARMACY", "TOTAL EUR 8.90"]).rotate(90, expand=True).save(turned, format="JPEG", exif=exif)
    transparent = io.BytesIO()
    ink = drawing(["PHARMACY", "TOTAL EUR 8.90"]).point(lambda value: 255 - value)  # the text opaque, the rest clear
    Image.merge("LA", (Image.new("L", ink.size, 0), ink)).save(transparent, format="PNG")

    for image in (turned.getvalue(), transparent.getvalue()):
        assert await reader.read_text(image) == "PHARMACY\nTOTAL EUR 8.90"
    assert await reader.read_text(picture([])) == ""


async def test_bad_images_are_attachment_errors_not_crashes(reader: RapidOCRReader) -> None:
    with pytest.raises(AttachmentError, match="could not read"):
        await reader.read_text(b"this is not an image at all")
    with pytest.raises(AttachmentError, match="could not read"):
        await reader.read_text(picture(["cut off in transit"])[:400])
    with pytest.raises(AttachmentError, match="larger than"):
        await RapidOCRReader(OCRSettings(max_bytes=1024)).read_text(b"x" * 2048)
    with pytest.raises(AttachmentError, match="more than 100000 pixels"):
        await RapidOCRReader(OCRSettings(max_pixels=100_000)).read_text(picture(["TOTAL EUR 8.90"] * 2))


def test_pieces_of_one_tilted_line_are_joined_left_to_right_and_han_characters_without_spaces() -> None:
    def box(left: float, top: float, width: float, slope: float = 0.03) -> list[list[float]]:
        rise = slope * width
        return [[left, top], [left + width, top + rise], [left + width, top + rise + 40], [left, top + 40]]

    pieces = {"35.50": box(600, 118, 120), "合计": box(40, 100, 80), "元": box(740, 122, 40), "TOTAL": box(40, 170, 90)}
    assert join_lines(list(pieces.values()), list(pieces)) == "合计 35.50 元\nTOTAL"


class ChannelFiles:
    """The channel's port for downloads, as a Telegram or Threema fetcher implements it."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self.fetched: list[str] = []

    async def fetch(self, attachment: Attachment) -> bytes:
        assert attachment.ref is not None
        self.fetched.append(attachment.ref)
        if attachment.ref == "flaky":
            raise AttachmentError("the channel's server did not answer", transient=True)
        if attachment.ref not in self.files:
            raise AttachmentError("the file has expired on the channel's server")
        return self.files[attachment.ref]


@pytest.fixture
async def deps(settings: Settings) -> AsyncIterator[Deps]:
    opened = await open_deps(
        settings.model_copy(update={"speech": SpeechSettings(model="scripted-whisper")}),
        fetchers={"telegram": ChannelFiles({"photo-1": picture(["PHARMACY", "TOTAL EUR 8.90"])})},
    )
    yield opened
    await close_deps(opened)


async def accept(deps: Deps, family: Family, external_id: str, text: str, *attachments: Attachment) -> InboxRow:
    """Anna's message from a chat channel, in the inbox and not queued: the test runs the engine itself."""
    row, _ = await intake.accept(
        deps,
        family.principal("Anna"),
        channel="telegram",
        external_id=external_id,
        text=text,
        trace_id=f"t-{external_id}",
        payload={"attachments": [dataclasses.asdict(a) for a in attachments], "reply_to": "chat-1"},
        enqueue=False,
    )
    return row


async def process(deps: Deps, family: Family, external_id: str, text: str, *attachments: Attachment) -> str:
    row = await accept(deps, family, external_id, text, *attachments)
    finished = await Engine(deps).process(row.id, family.household_id)
    assert finished is not None
    return finished.reply.text


def echo_model(seen: list[str]):  # type: ignore[no-untyped-def]
    """The routed scripted model, keeping the words each capability's call read."""
    answer = routed_model()

    def model(request: ChatRequest) -> Scripted:
        if request.schema_name != "route":
            seen.append(routed_words(request))
        return answer(request)

    return model


async def test_photo_voice_and_stored_file_reach_the_model_as_text(
    deps: Deps, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Prep", {"Anna": "Europe/Berlin"})
    async with deps.db.household(family.household_id) as conn:
        note = await media.save(conn, family.household_id, kind="file", mime="text/plain", data=b"Wifi: blue-42")
    fake_llm.transcripts[b"OggS voice"] = "the milk was for Tom"
    files = deps.fetchers["telegram"]
    assert isinstance(files, ChannelFiles)
    files.files["voice-1"] = b"OggS voice"
    seen: list[str] = []
    fake_llm.script(echo_model(seen))

    reply = await process(
        deps,
        family,
        "prep-1",
        "see attached",
        Attachment(kind="image", mime="image/jpeg", ref="photo-1"),
        Attachment(kind="voice", mime="audio/ogg", ref="voice-1"),
        Attachment(kind="file", mime="text/plain", media_id=note, name="wifi.txt"),
        Attachment(kind="image", mime="image/jpeg", ref="photo-gone"),
    )

    assert reply
    [text] = seen
    assert text.startswith("see attached")
    assert "[image, text extracted]\nPHARMACY" in text and "8.90" in text
    assert "the milk was for Tom" in text
    assert "[file 'wifi.txt', text extracted]\nWifi: blue-42" in text
    assert "[image: could not be read — the file has expired on the channel's server]" in text
    assert fake_llm.transcription_requests == [("scripted-whisper", b"OggS voice")]


async def test_voice_is_transcribed_once_even_when_the_job_runs_again(
    deps: Deps, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Prep", {"Anna": "Europe/Berlin"})
    fake_llm.transcripts[b"OggS again"] = "we paid 12 euros for the pharmacy"
    fake_llm.script(lambda request: Scripted(content="model down", status=500))
    row = await accept(deps, family, "prep-2", "", Attachment(kind="voice", mime="audio/ogg", ref="v"))
    files = deps.fetchers["telegram"]
    assert isinstance(files, ChannelFiles)
    files.files["v"] = b"OggS again"
    with pytest.raises(LLMError):  # the model is down: the job will be retried
        await Engine(deps).process(row.id, family.household_id)
    seen: list[str] = []
    fake_llm.script(echo_model(seen))

    finished = await Engine(deps).process(row.id, family.household_id)

    assert finished is not None and "we paid 12 euros" in seen[0]
    assert len(fake_llm.transcription_requests) == 1  # the retry read the journal


async def test_voice_without_speech_to_text_gets_a_polite_note_and_no_model_call(
    settings: Settings, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    deps = await open_deps(settings)  # SPEECH_MODEL unset
    try:
        family = await make_family(admin_conn, "Prep", {"Anna": "Europe/Berlin"})
        fake_llm.script(lambda request: Scripted(content="must not be called", status=500))
        reply = await process(deps, family, "prep-3", "", Attachment(kind="voice", mime="audio/ogg", ref="v"))
        assert "voice messages" in reply
        assert fake_llm.requests == [] and fake_llm.transcription_requests == []
    finally:
        await close_deps(deps)


async def test_a_download_that_may_work_later_retries_the_job_then_goes_on_without_it(
    deps: Deps, fake_llm: FakeOpenAI, admin_conn: asyncpg.Connection
) -> None:
    family = await make_family(admin_conn, "Prep", {"Anna": "Europe/Berlin"})
    seen: list[str] = []
    fake_llm.script(echo_model(seen))
    row = await accept(deps, family, "prep-4", "receipt", Attachment(kind="image", mime="image/jpeg", ref="flaky"))
    with pytest.raises(AttachmentError, match="did not answer"):
        await Engine(deps).process(row.id, family.household_id)
    assert fake_llm.requests == []

    finished = await Engine(deps).process(row.id, family.household_id, final_attempt=True)

    assert finished is not None and finished.reply.outcome == "answered"
    assert "[image: could not be read — the channel's server did not answer]" in seen[0]


def _png(color: int, size: tuple[int, int] = (64, 64)) -> bytes:
    out = io.BytesIO()
    Image.new("L", size, color=color).save(out, format="PNG")
    return out.getvalue()


async def test_a_photo_past_its_time_ends_with_its_process_and_the_next_one_is_read() -> None:
    from tests.engine.ocr_fakes import stalling_engine

    reader = RapidOCRReader(OCRSettings(timeout_s=3, cpu_s=600), load=stalling_engine)
    try:
        assert await reader.read_text(_png(255)) == "read"  # the process is up, its engine loaded
        with pytest.raises(AttachmentError, match="longer than 3 s"):
            await reader.read_text(_png(0))  # spins: killed at its timeout
        assert await reader.read_text(_png(255)) == "read"
    finally:
        await reader.close()


async def test_a_photo_past_its_cpu_limit_ends_with_its_process_and_the_next_one_is_read() -> None:
    from tests.engine.ocr_fakes import stalling_engine

    reader = RapidOCRReader(OCRSettings(timeout_s=600, cpu_s=1), load=stalling_engine)
    try:
        with pytest.raises(AttachmentError, match="CPU"):
            await reader.read_text(_png(0))  # spins: the kernel ends it after a second of CPU
        assert await reader.read_text(_png(255)) == "read"
    finally:
        await reader.close()


def test_a_huge_photo_is_scaled_to_what_ocr_needs_before_reading() -> None:
    from engine.ocr import decode

    for image in (_png(255, (6000, 300)), picture(["TOTAL EUR 8.90"], format="JPEG")):
        pixels = decode(image, 50_000_000, 500)
        assert max(pixels.shape[:2]) == 500 and pixels.shape[2] == 3
