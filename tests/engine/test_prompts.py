from collections import Counter
from pathlib import Path

import pytest

from engine.errors import PromptError
from engine.prompts import PromptBook, assign_variant, tool_signatures
from tools.registry import default_registry


def test_versions_are_built_from_blocks_with_the_registry_filled_in() -> None:
    book = PromptBook.load(default_registry())
    default, fast = book.get("default"), book.get("fast")
    assert (default.max_rounds, default.full_context) == (3, True)
    assert (fast.max_rounds, fast.full_context) == (1, False)
    for version in (default, fast):
        assert "{{" not in version.system
        for name in default_registry().names():
            assert name in version.system
    assert len(fast.system) < len(default.system)
    assert len(fast.system) < 3300  # about 830 tokens: seconds of prompt reading for a small local model
    assert "aggregate(op: sum|count|avg|min|max" in fast.system  # arguments as signatures, not JSON schemas


def test_tool_signatures_mark_optional_arguments_and_choices() -> None:
    lines = tool_signatures(default_registry()).splitlines()
    assert len(lines) == len(default_registry().names())
    store = next(line for line in lines if line.startswith("store("))
    assert store.startswith("store(content, kind: expense|income|")
    assert "amount?, currency?" in store
    assert "filter?: filter" in next(line for line in lines if line.startswith("search("))


def test_a_broken_prompts_file_is_refused_with_its_path(tmp_path: Path) -> None:
    broken = tmp_path / "prompts.yaml"
    broken.write_text("blocks: {a: hi}\nversions: {v1: {blocks: [a, missing]}}\n")
    with pytest.raises(PromptError, match="unknown blocks"):
        PromptBook.load(default_registry(), broken)
    broken.write_text("versions: [")
    with pytest.raises(PromptError, match=str(broken)):
        PromptBook.load(default_registry(), broken)
    with pytest.raises(PromptError, match="unknown prompt version"):
        PromptBook.load(default_registry()).get("nope")


def test_assignment_is_deterministic_and_follows_the_weights() -> None:
    weights = {"default": 75, "fast": 25}
    assert all(assign_variant("exp", uid, weights) == assign_variant("exp", uid, weights) for uid in range(200))
    shares = Counter(assign_variant("exp", uid, weights) for uid in range(4000))
    assert 0.70 < shares["default"] / 4000 < 0.80
    assert {assign_variant("exp", uid, {"default": 0, "fast": 1}) for uid in range(50)} == {"fast"}
    with pytest.raises(PromptError):
        assign_variant("exp", 1, {"default": 0})
