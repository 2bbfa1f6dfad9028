"""The embedder as settings build it: whether it asks the endpoint for vectors of the schema's size."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from engine.composition import embedder_from_settings
from engine.settings import EmbeddingSettings, LLMSettings, Settings
from tests.fakes.openai_server import FakeOpenAI
from tools.errors import EmbeddingError

DIM = 48


@pytest.fixture
async def hosted() -> AsyncIterator[FakeOpenAI]:
    """Stands for OpenAI's API: its vectors are 1536 long unless `dimensions` asks for fewer."""
    fake = FakeOpenAI(embedding_dim=1536)
    await fake.start()
    yield fake
    await fake.stop()


def settings(base_url: str, **embedding: object) -> Settings:
    return Settings(
        llm=LLMSettings(base_url=base_url, api_key="k", max_retries=0),
        embedding=EmbeddingSettings(dim=DIM, **embedding),
    )


@pytest.mark.parametrize(
    ("embedding", "asks"),
    [
        ({}, True),  # the default model, text-embedding-3-small
        ({"model": "text-embedding-3-large"}, True),
        ({"model": "text-embedding-3-small", "request_dimensions": False}, False),
        ({"model": "multilingual-e5-small"}, False),
        ({"model": "nomic-embed-text", "request_dimensions": True}, True),
    ],
)
async def test_dimensions_are_asked_for_where_the_model_can_shorten_its_vectors(
    hosted: FakeOpenAI, embedding: dict[str, object], asks: bool
) -> None:
    embedder = embedder_from_settings(settings(hosted.base_url, **embedding))
    try:
        if asks:
            [vector] = await embedder.embed(["milk"], "passage")
            assert len(vector) == DIM
        else:
            with pytest.raises(EmbeddingError, match="EMBEDDING_REQUEST_DIMENSIONS=true"):
                await embedder.embed(["milk"], "passage")
    finally:
        await embedder.close()
    assert hosted.embedding_bodies[-1].get("dimensions") == (DIM if asks else None)
