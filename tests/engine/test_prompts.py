from collections import Counter
from pathlib import Path

import pytest

from engine.errors import PromptError
from engine.prompts import PromptBook, assign_variant, capability_sections


def test_each_call_of_a_version_opens_with_its_blocks_then_the_capabilitys_instructions(tmp_path: Path) -> None:
    variants = tmp_path / "prompts.yaml"
    variants.write_text(
        "blocks: {role: You read messages., terse: Be brief.}\n"
        "versions: {default: {blocks: [role]}, terse: {blocks: [role, terse]}}\n"
    )
    book = PromptBook.load(variants)
    sections = capability_sections()
    for name, opening in (("default", "You read messages.\n"), ("terse", "You read messages.\nBe brief.\n")):
        version = book.get(name)
        assert set(version.route_systems) == set(sections) and "router" in sections
        for route, body in sections.items():
            assert version.route_system(route) == opening + body.strip()
    with pytest.raises(PromptError, match="no instructions"):
        book.get("default").route_system("nope")


def test_the_shipped_prompts_have_one_default_version() -> None:
    assert list(PromptBook.load().versions) == ["default"]


def test_a_broken_prompts_file_is_refused_with_its_path(tmp_path: Path) -> None:
    broken = tmp_path / "prompts.yaml"
    broken.write_text("blocks: {a: hi}\nversions: {v1: {blocks: [a, missing]}}\n")
    with pytest.raises(PromptError, match="unknown blocks"):
        PromptBook.load(broken)
    broken.write_text("versions: [")
    with pytest.raises(PromptError, match=str(broken)):
        PromptBook.load(broken)
    with pytest.raises(PromptError, match="unknown prompt version"):
        PromptBook.load().get("nope")


def test_assignment_is_deterministic_and_follows_the_weights() -> None:
    weights = {"default": 75, "terse": 25}
    assert all(assign_variant("exp", uid, weights) == assign_variant("exp", uid, weights) for uid in range(200))
    shares = Counter(assign_variant("exp", uid, weights) for uid in range(4000))
    assert 0.70 < shares["default"] / 4000 < 0.80
    assert {assign_variant("exp", uid, {"default": 0, "terse": 1}) for uid in range(50)} == {"terse"}
    with pytest.raises(PromptError):
        assign_variant("exp", 1, {"default": 0})
