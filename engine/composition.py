"""Build and close a process's dependencies from settings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import openai
from pydantic import SecretStr

from engine import capabilities, metrics
from engine.deps import AttachmentFetcher, Deps, ReplySender
from engine.errors import ConfigurationError
from engine.llm import OpenAILLM, openai_client
from engine.ocr import RapidOCRReader
from engine.prompts import PromptBook
from engine.settings import Settings
from engine.speech import OpenAITranscriber
from tools.infra.clock import Clock, SystemClock
from tools.infra.embeddings import EmbeddingCache, OpenAIEmbedder
from tools.registry import default_registry
from tools.storage.database import Database
from tools.storage.inbox import InboxWriter


def _client(settings: Settings, base_url: str | None, key: SecretStr | None, timeout_s: float) -> openai.AsyncOpenAI:
    """A client for one OpenAI-compatible service; its endpoint and key default to the LLM's."""
    return openai_client(
        base_url or settings.llm.base_url,
        key or settings.llm.api_key,
        timeout_s=timeout_s,
        max_retries=settings.llm.max_retries,
    )


def embedder_from_settings(settings: Settings) -> OpenAIEmbedder:
    emb = settings.embedding
    client = _client(settings, emb.base_url, emb.api_key, settings.llm.timeout_s)
    cache = EmbeddingCache(max_entries=emb.cache_size, ttl_s=emb.cache_ttl_s, on_lookup=metrics.embedding_lookup)
    e5 = "e5" in emb.model.lower()
    return OpenAIEmbedder(
        client,
        emb.model,
        emb.dim,
        cache,
        prefixes=e5 and not emb.input_type,
        input_type=emb.input_type,
        send_dimensions=emb.sends_dimensions,
    )


def transcriber_from_settings(settings: Settings) -> OpenAITranscriber | None:
    """`None` when no speech model is configured: voice is then not enabled."""
    speech = settings.speech
    if speech.model is None:
        return None
    return OpenAITranscriber(_client(settings, speech.base_url, speech.api_key, speech.timeout_s), speech.model)


async def open_deps(
    settings: Settings,
    *,
    redis: Any = None,
    senders: Mapping[str, ReplySender] | None = None,
    fetchers: Mapping[str, AttachmentFetcher] | None = None,
    clock: Clock | None = None,
) -> Deps:
    if settings.database.url is None:
        raise ConfigurationError("DATABASE_URL is not set (or run `faa up`, which starts embedded PostgreSQL)")
    if not settings.llm.configured:
        raise ConfigurationError(
            "no LLM endpoint is configured: set LLM_BASE_URL (any OpenAI-compatible endpoint, e.g. "
            "http://127.0.0.1:11434/v1 for Ollama) and/or LLM_API_KEY (for https://api.openai.com/v1), plus LLM_MODEL; "
            "or run `faa up`, which starts a local model"
        )
    registry = default_registry()
    capabilities.check(registry)
    prompts = PromptBook.load(settings.engine.prompts_file)
    db = await Database.connect(
        settings.database.url, min_size=settings.database.pool_min, max_size=settings.database.pool_max
    )
    return Deps(
        settings=settings,
        db=db,
        llm=OpenAILLM.from_settings(settings.llm),
        embedder=embedder_from_settings(settings),
        registry=registry,
        prompts=prompts,
        inbox=InboxWriter(db),
        redis=redis,
        senders=dict(senders or {}),
        fetchers=dict(fetchers or {}),
        speech=transcriber_from_settings(settings),
        ocr=RapidOCRReader(settings.ocr),
        clock=clock or SystemClock(),
    )


async def close_deps(deps: Deps) -> None:
    await deps.db.close()
    for client in (deps.llm, deps.embedder, deps.speech, deps.ocr):
        close = getattr(client, "close", None)
        if close is not None:
            await close()
