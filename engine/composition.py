"""Build and close a process's dependencies from settings."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import openai

from engine.deps import Deps, ReplySender
from engine.errors import FAAError
from engine.llm import OpenAILLM
from engine.prompts import PromptBook
from engine.settings import Settings
from tools.database import Database
from tools.embeddings import EmbeddingCache, OpenAIEmbedder
from tools.registry import default_registry


class ConfigurationError(FAAError):
    """A setting is missing or inconsistent; the message says which variable to set."""


def embedder_from_settings(settings: Settings) -> OpenAIEmbedder:
    emb, llm = settings.embedding, settings.llm
    key = emb.api_key or llm.api_key
    client = openai.AsyncOpenAI(
        base_url=emb.base_url or llm.base_url,
        api_key=key.get_secret_value() if key else "not-needed",
        timeout=llm.timeout_s,
        max_retries=llm.max_retries,
    )
    cache = EmbeddingCache(max_entries=emb.cache_size, ttl_s=emb.cache_ttl_s)
    e5 = "e5" in emb.model.lower()
    return OpenAIEmbedder(
        client, emb.model, emb.dim, cache, prefixes=e5 and not emb.input_type, input_type=emb.input_type
    )


async def open_deps(settings: Settings, *, redis: Any = None, senders: Mapping[str, ReplySender] | None = None) -> Deps:
    if settings.database.url is None:
        raise ConfigurationError("DATABASE_URL is not set (or run `faa up`, which starts embedded PostgreSQL)")
    if not settings.llm.configured:
        raise ConfigurationError(
            "no LLM endpoint is configured: set LLM_BASE_URL (any OpenAI-compatible endpoint, e.g. "
            "http://127.0.0.1:11434/v1 for Ollama) and/or LLM_API_KEY (for https://api.openai.com/v1), plus LLM_MODEL; "
            "or run `faa up`, which starts a local model"
        )
    registry = default_registry()
    prompts = PromptBook.load(registry, settings.engine.prompts_file)
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
        redis=redis,
        senders=dict(senders or {}),
    )


async def close_deps(deps: Deps) -> None:
    await deps.db.close()
    for client in (deps.llm, deps.embedder):
        close = getattr(client, "close", None)
        if close is not None:
            await close()
