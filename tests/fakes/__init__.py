"""Fake peers that speak the real wire protocols, so tests exercise the real client libraries."""

from tests.fakes.openai_server import ChatRequest, FakeOpenAI, Handler, Scripted, fake_embedding

__all__ = ["ChatRequest", "FakeOpenAI", "Handler", "Scripted", "fake_embedding"]
