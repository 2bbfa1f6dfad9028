"""Step 2 (experiment): prompt versions from a YAML file of blocks, and a deterministic A/B assignment."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError

from engine.errors import PromptError
from tools.registry import ToolRegistry

DEFAULT_PROMPTS = Path(__file__).with_name("prompts.yaml")


class _VersionSpec(BaseModel):
    mode: Literal["planner", "routed"] = "planner"
    blocks: list[str] = Field(min_length=1)
    max_rounds: int = Field(default=3, ge=1, le=3)
    context: Literal["full", "minimal"] = "full"


class _PromptFile(BaseModel):
    blocks: dict[str, str]
    versions: dict[str, _VersionSpec] = Field(min_length=1)


@dataclass(frozen=True)
class PromptVersion:
    """A prompt version: the full planner's system prompt and limits, or `routed` — each message goes to one
    capability with its own small schema (engine/capabilities), for small models, and each capability's model call
    its own system prompt: the version's blocks, then the capability's instructions (the router's: every
    capability's one-line description)."""

    name: str
    system: str
    max_rounds: int
    full_context: bool
    routed: bool = False
    route_systems: Mapping[str, str] = field(default_factory=dict)

    def route_system(self, route: str) -> str:
        """The system prompt of a routed call for the capability `route` (or "router")."""
        try:
            return self.route_systems[route]
        except KeyError:
            raise PromptError(f"prompt version {self.name!r} has no instructions for {route!r}") from None


@dataclass(frozen=True)
class PromptBook:
    versions: Mapping[str, PromptVersion]

    @classmethod
    def load(cls, registry: ToolRegistry, path: Path | None = None) -> PromptBook:
        path = path or DEFAULT_PROMPTS
        try:
            parsed = _PromptFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
        except (OSError, yaml.YAMLError, ValidationError) as exc:
            raise PromptError(f"cannot load prompts from {path}: {exc}") from exc
        fills = {
            "{{DYNAMIC_TOOLS}}": registry.describe(),
            "{{DYNAMIC_TOOL_SPECS}}": registry.spec_text(),
            "{{DYNAMIC_TOOL_SIGNATURES}}": tool_signatures(registry),
        }
        versions = {}
        for name, spec in parsed.versions.items():
            missing = [b for b in spec.blocks if b not in parsed.blocks]
            if missing:
                raise PromptError(f"prompt version {name!r} uses unknown blocks {missing}")
            text = "\n".join(parsed.blocks[b].strip() for b in spec.blocks)
            for marker, value in fills.items():
                text = text.replace(marker, value)
            routed = spec.mode == "routed"
            systems = (
                {name: f"{text}\n{body.strip()}" for name, body in capability_sections().items()} if routed else {}
            )
            versions[name] = PromptVersion(name, text, spec.max_rounds, spec.context == "full", routed, systems)
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


def tool_signatures(registry: ToolRegistry) -> str:
    """One short line per tool, `name(arg, optional?, choice: a|b)`: the arguments at a fraction of the JSON
    schemas' length, for prompt versions that must stay short (small local models read ~70 tokens/s)."""
    lines = []
    shown: set[tuple[str, str]] = set()  # an argument's choices are listed once, where it first appears
    for name in registry.names():
        parameters = registry.get(name).parameters()
        required = set(parameters.get("required", ()))
        args = []
        for arg, schema in parameters.get("properties", {}).items():
            text = arg if arg in required else f"{arg}?"
            choices = "|".join(str(value) for value in schema.get("enum", ()))
            if choices and (arg, choices) not in shown:
                shown.add((arg, choices))
                text += ": " + choices
            elif "$defs" in parameters and "FilterNode" in str(schema):
                text += ": filter"
            args.append(text)
        lines.append(f"{name}({', '.join(args)})")
    return "\n".join(lines)


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
