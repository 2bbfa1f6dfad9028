"""The capabilities' registry: each is complete in every language, calls only tools the registry has, and the
cues of one never claim another's examples."""

from __future__ import annotations

import asyncio
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from engine import capabilities
from engine.capabilities import CAPABILITIES, routing
from engine.capabilities.capability import LANGUAGES
from engine.grounding import ground
from engine.prompts import PromptBook, capability_sections
from tools.registry import default_registry

NOW = datetime(2026, 11, 23, 10, 0, tzinfo=ZoneInfo("Europe/Berlin"))
EXAMPLES = [
    (capability.name, example)
    for capability in CAPABILITIES.values()
    for language in LANGUAGES
    for example in capability.examples[language]
]


def test_every_capability_is_complete_and_its_tools_exist() -> None:
    capabilities.check(default_registry())
    for capability in CAPABILITIES.values():
        assert capability.description
        assert all(len(capability.examples[language]) >= 1 for language in LANGUAGES), capability.name


def test_a_capability_with_unknown_tools_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(CAPABILITIES["expense"], "tools", ("store", "no_such_tool"))
    with pytest.raises(ValueError, match="no_such_tool"):
        capabilities.check(default_registry())


def test_every_model_call_has_its_instructions_and_the_router_lists_every_capability() -> None:
    sections = capability_sections()
    routed = PromptBook.load().get("default")
    for name in sections:
        assert routed.route_system(name).endswith(sections[name].strip())
    for name in CAPABILITIES:
        assert f"\n{name}: " in sections["router"]


@pytest.mark.parametrize(("name", "example"), EXAMPLES)
def test_no_capabilitys_cues_claim_another_capabilitys_example(name: str, example: str) -> None:
    grounding = ground(example, NOW, "Europe/Berlin", ["Anna", "Ben", "Tom", "Mia", "Lea"])
    kept = [capability.name for capability in routing.claimed(routing.reading(example, grounding))]
    assert kept in ([], [name]), f"{example!r} ({name}) is claimed by {kept}"


async def test_the_examples_are_embedded_once_however_many_messages_wait_for_them() -> None:
    """A worker's start embeds them while the first messages may already need them: those wait for that embedding
    instead of each embedding every example again."""
    calls: list[int] = []

    class SlowEmbedder:
        dim = 4

        async def embed(self, texts: list[str], kind: str) -> list[list[float]]:
            calls.append(len(texts))
            await asyncio.sleep(0.05)
            return [[1.0, float(len(text) % 7), 0.0, 1.0] for text in texts]

    embedder = SlowEmbedder()
    index = routing.ExampleIndex()

    await asyncio.gather(index.warm(embedder), index.warm(embedder), index.nearest(embedder, "milk 2.50"))  # type: ignore[arg-type]

    assert calls == [len(EXAMPLES), 1]  # the examples once, then the message
    assert index.vectors is not None and len(index.vectors) == len(EXAMPLES)
