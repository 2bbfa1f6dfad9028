"""Step 2 (experiment): prompt versions from a YAML file of blocks, and a deterministic A/B assignment."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import BaseModel, Field, ValidationError

from engine.errors import PromptError

DEFAULT_PROMPTS = Path(__file__).with_name("prompts.yaml")


class _VersionSpec(BaseModel):
    blocks: list[str] = Field(min_length=1)


class _PromptFile(BaseModel):
    blocks: dict[str, str]
    versions: dict[str, _VersionSpec] = Field(min_length=1)


@dataclass(frozen=True)
class PromptVersion:
    """A prompt version: each message goes to one capability with its own small schema (engine/capabilities), and
    each capability's model call has its own system prompt — the version's blocks, then the capability's
    instructions (the router's: every capability's one-line description)."""

    name: str
    route_systems: Mapping[str, str] = field(default_factory=dict)

    def route_system(self, route: str) -> str:
        """The system prompt of the call for the capability `route` (or "router")."""
        try:
            return self.route_systems[route]
        except KeyError:
            raise PromptError(f"prompt version {self.name!r} has no instructions for {route!r}") from None


@dataclass(frozen=True)
class PromptBook:
    versions: Mapping[str, PromptVersion]

    @classmethod
    def load(cls, path: Path | None = None) -> PromptBook:
        path = path or DEFAULT_PROMPTS
        try:
            parsed = _PromptFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        except (OSError, yaml.YAMLError, ValidationError) as exc:
            raise PromptError(f"cannot load prompts from {path}: {exc}") from exc
        sections = capability_sections()
        versions = {}
        for name, spec in parsed.versions.items():
            missing = [b for b in spec.blocks if b not in parsed.blocks]
            if missing:
                raise PromptError(f"prompt version {name!r} uses unknown blocks {missing}")
            text = "\n".join(parsed.blocks[b].strip() for b in spec.blocks)
            systems = {route: f"{text}\n{body.strip()}" for route, body in sections.items()}
            versions[name] = PromptVersion(name, systems)
        return cls(versions)

    def get(self, name: str) -> PromptVersion:
        try:
            return self.versions[name]
        except KeyError:
            raise PromptError(f"unknown prompt version {name!r}; known: {sorted(self.versions)}") from None


def capability_sections() -> dict[str, str]:
    """Each capability's instructions by name, and the router's."""
    from engine.capabilities import CAPABILITIES  # the capabilities import the engine; load them only when needed
    from engine.capabilities.routing import router_instructions

    sections = {name: capability.instructions for name, capability in CAPABILITIES.items() if capability.instructions}
    return {**sections, "router": router_instructions()}


def assign_variant(experiment: str, user_id: int, weights: Mapping[str, int]) -> str:
    """The same member always gets the same variant of an experiment; shares follow the weights."""
    active = sorted((name, weight) for name, weight in weights.items() if weight > 0)
    if not active:
        raise PromptError(f"experiment {experiment!r} has no variant with a positive weight")
    digest = hashlib.sha256(f"{experiment}:{user_id}".encode()).digest()
    point = int.from_bytes(digest[:8], "big") % sum(w for _, w in active)
    for name, weight in active:
        if point < weight:
            return name
        point -= weight
    raise AssertionError("unreachable: point is below the total weight")
