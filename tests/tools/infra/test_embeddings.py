"""The embedding cache (pure, with a fake clock) and the OpenAI embedder over HTTP against the fake server."""

from __future__ import annotations

import array
import base64
from collections.abc import AsyncIterator

import openai
import pytest

from engine.llm import openai_client
from tests.fakes.openai_server import FakeOpenAI, fake_embedding
from tools.errors import EmbeddingError
from tools.infra.embeddings import EmbeddingCache, OpenAIEmbedder

DIM = 64


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_cache_hits_and_misses() -> None:
    cache = EmbeddingCache(clock=Clock())
    assert cache.hit_rate == 0.0
    assert cache.get(("m", "query", "a")) is None
    cache.put(("m", "query", "a"), [1.0])
    assert cache.get(("m", "query", "a")) == [1.0]
    assert cache.get(("m", "passage", "a")) is None
    assert (cache.hits, cache.misses) == (1, 2)
    assert cache.hit_rate == pytest.approx(1 / 3)


def test_cache_evicts_the_least_recently_used() -> None:
    cache = EmbeddingCache(max_entries=2, clock=Clock())
    cache.put("a", [1.0])
    cache.put("b", [2.0])
    assert cache.get("a") == [1.0]  # "b" is now the oldest use
    cache.put("c", [3.0])
    assert len(cache) == 2
    assert cache.get("b") is None
    assert cache.get("a") == [1.0] and cache.get("c") == [3.0]


def test_cache_entries_expire() -> None:
    clock = Clock()
    cache = EmbeddingCache(ttl_s=60, clock=clock)
    cache.put("a", [1.0])
    clock.now += 59.9
    assert cache.get("a") == [1.0]  # a hit does not extend the entry's life
    clock.now += 0.2
    assert cache.get("a") is None
    assert len(cache) == 0
    cache.put("a", [2.0])
    assert cache.get("a") == [2.0]


def test_cache_needs_room() -> None:
    with pytest.raises(ValueError):
        EmbeddingCache(max_entries=0)


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    fake = FakeOpenAI(embedding_dim=DIM)
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def client(fake_openai: FakeOpenAI) -> AsyncIterator[openai.AsyncOpenAI]:
    """The client as FAA builds it (on aiohttp)."""
    async with openai_client(fake_openai.base_url, None, timeout_s=5.0, max_retries=0) as client:
        yield client


async def test_misses_go_out_in_one_request_and_hits_in_none(
    fake_openai: FakeOpenAI, client: openai.AsyncOpenAI
) -> None:
    cache = EmbeddingCache()
    embedder = OpenAIEmbedder(client, "e5-small", DIM, cache)
    texts = ["groceries at Rewe", "dentist on Friday", "groceries at Rewe", "bike lock"]

    vectors = await embedder.embed(texts, "passage")
    assert fake_openai.embedding_requests == [["groceries at Rewe", "dentist on Friday", "bike lock"]]
    assert vectors[0] == pytest.approx(fake_embedding("groceries at Rewe", DIM))
    assert vectors[0] == vectors[2] and len(vectors) == 4 and all(len(v) == DIM for v in vectors)

    again = await embedder.embed(["bike lock", "groceries at Rewe"], "passage")
    assert len(fake_openai.embedding_requests) == 1
    assert again == [vectors[3], vectors[0]]
    assert cache.hits == 2

    await embedder.embed(["bike lock", "swimming"], "query")  # another kind is another key
    assert fake_openai.embedding_requests[-1] == ["bike lock", "swimming"]
    other_model = OpenAIEmbedder(client, "other-model", DIM, cache)
    await other_model.embed(["bike lock"], "query")
    assert fake_openai.embedding_requests[-1] == ["bike lock"]
    assert await embedder.embed([], "query") == []
    assert len(fake_openai.embedding_requests) == 3  # the empty call sent nothing


async def test_close_closes_the_client(fake_openai: FakeOpenAI) -> None:
    client = openai.AsyncOpenAI(api_key="k", base_url=fake_openai.base_url, max_retries=0)
    embedder = OpenAIEmbedder(client, "m", DIM, EmbeddingCache())
    await embedder.embed(["hello"], "query")
    await embedder.close()
    assert client.is_closed()


async def test_prefixes_for_e5_models(fake_openai: FakeOpenAI, client: openai.AsyncOpenAI) -> None:
    embedder = OpenAIEmbedder(client, "intfloat/multilingual-e5-small", DIM, EmbeddingCache(), prefixes=True)
    await embedder.embed(["Wann ist der Zahnarzttermin?"], "query")
    await embedder.embed(["Zahnarzttermin am Freitag"], "passage")
    assert fake_openai.embedding_requests == [
        ["query: Wann ist der Zahnarzttermin?"],
        ["passage: Zahnarzttermin am Freitag"],
    ]


async def test_wrong_dimension_is_an_embedding_error_naming_the_settings(
    fake_openai: FakeOpenAI, client: openai.AsyncOpenAI
) -> None:
    cache = EmbeddingCache()
    embedder = OpenAIEmbedder(client, "big-model", 128, cache)
    with pytest.raises(EmbeddingError, match=r"\[64\]-dimensional vectors but the schema stores 128") as caught:
        await embedder.embed(["hello"], "query")
    assert "EMBEDDING_REQUEST_DIMENSIONS=true" in str(caught.value) and "faa reembed" in str(caught.value)
    assert len(cache) == 0  # nothing wrong is cached
    assert not caught.value.transient  # a configuration to fix, not a moment to wait

    fake_openai.embedding_answer = {"data": [{"index": 0, "embedding": fake_embedding("hello", DIM)}]}
    asking = OpenAIEmbedder(client, "big-model", 128, cache, send_dimensions=True)  # a server that ignores it
    with pytest.raises(EmbeddingError, match="although EMBEDDING_REQUEST_DIMENSIONS asked for 128"):
        await asking.embed(["hello"], "query")


async def test_dimensions_ask_the_endpoint_for_vectors_of_the_schema_size(
    fake_openai: FakeOpenAI, client: openai.AsyncOpenAI
) -> None:
    embedder = OpenAIEmbedder(client, "text-embedding-3-small", 32, EmbeddingCache(), send_dimensions=True)

    [vector] = await embedder.embed(["hello"], "query")

    assert fake_openai.embedding_bodies[-1]["dimensions"] == 32
    assert vector == pytest.approx(fake_embedding("hello", 32))


async def test_api_failures_are_embedding_errors_transient_when_time_can_fix_them(fake_openai: FakeOpenAI) -> None:
    wrong_path = fake_openai.base_url.removesuffix("/v1") + "/nowhere"
    async with openai_client(wrong_path, None, timeout_s=5.0, max_retries=0) as client:
        with pytest.raises(EmbeddingError, match="failed") as not_found:
            await OpenAIEmbedder(client, "m", DIM, EmbeddingCache()).embed(["hello"], "query")
    assert not not_found.value.transient  # a 404 stays one
    await fake_openai.stop()
    async with openai_client(fake_openai.base_url, None, timeout_s=5.0, max_retries=0) as client:
        with pytest.raises(EmbeddingError, match="failed") as refused:
            await OpenAIEmbedder(client, "m", DIM, EmbeddingCache()).embed(["hello"], "query")
    assert refused.value.transient  # the server may be back soon


async def test_input_type_tells_the_server_the_kind_instead_of_a_prefix(
    fake_openai: FakeOpenAI, client: openai.AsyncOpenAI
) -> None:
    embedder = OpenAIEmbedder(client, "multilingual-e5-small", DIM, EmbeddingCache(), input_type=True)

    await embedder.embed(["milk"], "passage")

    assert fake_openai.embedding_requests == [["milk"]]
    assert fake_openai.embedding_bodies[-1]["input_type"] == "passage"


def test_prefixes_and_input_type_exclude_each_other(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(ValueError, match="twice"):
        OpenAIEmbedder(client, "e5", DIM, EmbeddingCache(), prefixes=True, input_type=True)


async def test_vectors_come_back_in_index_order(fake_openai: FakeOpenAI, client: openai.AsyncOpenAI) -> None:
    a, b = fake_embedding("a", DIM), fake_embedding("b", DIM)
    fake_openai.embedding_answer = {"data": [{"index": 1, "embedding": b}, {"index": 0, "embedding": a}]}

    vectors = await OpenAIEmbedder(client, "m", DIM, EmbeddingCache()).embed(["a", "b"], "passage")

    assert vectors == [pytest.approx(a), pytest.approx(b)]
    assert fake_openai.embedding_bodies[0]["encoding_format"] == "float"


async def test_dimensions_are_asked_for_only_when_the_endpoint_can_shorten_vectors(
    fake_openai: FakeOpenAI, client: openai.AsyncOpenAI
) -> None:
    await OpenAIEmbedder(client, "text-embedding-3-small", DIM, EmbeddingCache(), send_dimensions=True).embed(
        ["a"], "query"
    )
    await OpenAIEmbedder(client, "e5-small", DIM, EmbeddingCache()).embed(["a"], "query")

    assert [body.get("dimensions") for body in fake_openai.embedding_bodies] == [DIM, None]
    assert ["input_type" in body for body in fake_openai.embedding_bodies] == [False, False]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("upstream is restarting", "without a list of embeddings"),
        ({"data": "none"}, "without a list of embeddings"),
        ({"data": [{"index": 0, "embedding": {"x": 1}}]}, "not a list of numbers"),
        ({"data": [{"index": 0, "embedding": ["one", "two"]}]}, "not a list of numbers"),
        ({"data": [{"index": 0}]}, "not a list of numbers"),
        (
            {"data": [{"index": 0, "embedding": base64.b64encode(array.array("f", [0.5] * DIM).tobytes()).decode()}]},
            "not a list of numbers",
        ),  # base64 where floats were asked for
        ({"data": []}, "returned 0 embeddings for 1 texts"),
    ],
)
async def test_an_answer_without_vectors_is_an_embedding_error(
    fake_openai: FakeOpenAI, client: openai.AsyncOpenAI, answer: object, problem: str
) -> None:
    fake_openai.embedding_answer = answer
    cache = EmbeddingCache()
    with pytest.raises(EmbeddingError, match=problem) as caught:
        await OpenAIEmbedder(client, "m", DIM, cache).embed(["hello"], "query")
    assert len(cache) == 0
    assert caught.value.transient  # what a restarting server or a proxy in its way would answer
