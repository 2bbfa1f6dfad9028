"""The capabilities' registry: each is complete in every language, calls only tools the registry has, and the
cues of one never claim another's examples."""

from __future__ import annotations

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
