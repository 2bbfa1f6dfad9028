"""A scripted model for the end-to-end tests: what a competent model answers each call of the routed engine."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.fakes.openai_server import ChatRequest, Scripted

# The engine's calls: the router's choice (schema "route") and each capability's small constrained schema (schema
# "route_<name>"), answered as a competent model would from the member's words and the offered choices.

_WORDS = re.compile(r"[^\W_]+")
_ALL = re.compile(r"\b(?:all|every\w*|alle|alles)\b|全部|所有", re.IGNORECASE)
_ROWS = re.compile(r"\[(\d+)\] ([^|\n]*)")


def routed_words(request: ChatRequest) -> str:
    """The member's words in a routed call: what follows the prompt's last "Message: " or "Question: "."""
    return re.split(r"(?:Message|Question): ", routed_prompt(request))[-1].strip()


def routed_prompt(request: ChatRequest) -> str:
    return str(next(m for m in request.messages if m["role"] == "user")["content"])


def routed_model(**answers: Any) -> Callable[[ChatRequest], Scripted]:
    """A scripted model for the routed engine. The router picks the first offered capability named in `answers`,
    else what the words suggest; a capability's call gets its schema filled from the words and the choices it
    offers, with `answers[name]` (a dict, or a function of the request returning one) laid over it. A value of
    `answers[name]` that is a `Scripted` is sent as it is (a hostile or broken answer)."""

    def model(request: ChatRequest) -> Scripted:
        schema = answer_schema(request)
        name = request.schema_name or ("route" if schema is not None and set(schema["properties"]) == {"route"} else "")
        if name == "route":
            return Scripted.json({"route": choose_route(request, answers)})
        if schema is None:
            return Scripted(content=f"routed_model: no answer for a call without a schema ({name})", status=500)
        route = name.removeprefix("route_")  # "" in JSON mode, where the call carries no name: no override
        given = answers.get(route, {})
        given = given(request) if callable(given) else given
        if isinstance(given, Scripted):
            return given
        filled = fill_schema(schema, routed_words(request), routed_prompt(request))
        return Scripted.json({**filled, **given})

    return model


def answer_schema(request: ChatRequest) -> dict[str, Any] | None:
    """The JSON schema the call's answer must fit: a named JSON schema, or in JSON mode (llama.cpp's json_object)
    the schema given beside it."""
    response_format = request.body.get("response_format") or {}
    return request.schema or response_format.get("schema")


def offered_routes(request: ChatRequest) -> list[str]:
    schema = answer_schema(request)
    assert schema is not None
    return list(schema["properties"]["route"]["enum"])


def choose_route(request: ChatRequest, preferred: Any = ()) -> str:
    """The router's choice: a capability the test named, else the one the words suggest, among those offered."""
    offered = offered_routes(request)
    text = routed_words(request).lower()
    guesses = [name for name in preferred if name in offered]
    if re.fullmatch(r"\[[^\]]*could not be (?:read|heard)[^\]]*\]", text):  # nothing the member said came through
        return "unclear"
    if re.search(r"\b(?:remind|erinner)|提醒", text):
        guesses.append("reminder")
    if "?" in text or re.match(r"(?:how|what|when|where|who|which|wie|was|wann|wo|wer)\b", text):
        guesses += ["sum"] if re.search(r"how (?:much|many)|wie viel|多少", text) else []
        guesses += ["lookup", "calendar", "sum"]
    if re.search(r"\d", text):
        guesses.append("expense")
    guesses += ["fact", "chat"]
    named = [name for name in offered if name != "unclear"]
    return next((name for name in guesses if name in offered), named[0] if named else "unclear")


def fill_schema(schema: dict[str, Any], text: str, prompt: str) -> dict[str, Any]:
    """An answer that fits `schema` (a capability's constrained JSON schema), taken from the member's words."""
    defs = schema.get("$defs", {})
    return {name: _fill(name, prop, defs, text, prompt) for name, prop in schema["properties"].items()}


def _fill(name: str, prop: dict[str, Any], defs: dict[str, Any], text: str, prompt: str) -> Any:
    if "$ref" in prop:
        prop = defs[prop["$ref"].rsplit("/", 1)[-1]]
    if "enum" in prop:
        return _pick(name, [value for value in prop["enum"] if value is not None], text, prompt, None in prop["enum"])
    if prop.get("type") == "object":
        return {key: _fill(key, sub, defs, text, prompt) for key, sub in prop["properties"].items()}
    if prop.get("type") == "array":
        return _fill_array(name, prop, defs, text, prompt)
    options = prop.get("anyOf", [prop])
    types = {option.get("type") for option in options}
    if "null" in types and name not in _WORDS_FIELDS:
        return None
    if "integer" in types or "number" in types:
        return _best_row(text, prompt) or 0
    if "boolean" in types:
        return False
    if any(option.get("format") == "date" for option in options):
        return "2026-01-01"
    written = _WORDS_FIELDS.get(name, lambda words: words)(text)
    if written is None:
        return None
    return written[: min(option.get("maxLength", 60) for option in options if option.get("type") == "string")]


_WORDS_FIELDS: dict[str, Callable[[str], str | None]] = {
    "merchant": lambda words: at.group(1) if (at := re.search(r"\bat (\w+)", words)) else None,
    "reply": lambda words: "Happy to help.",
    "what": lambda words: " ".join(_WORDS.findall(words)[:4]) or "it",
    "text": lambda words: words or "it",
    "category": lambda words: "other",
}


def _fill_array(name: str, prop: dict[str, Any], defs: dict[str, Any], text: str, prompt: str) -> list[Any]:
    items = prop.get("items", {})
    if prop.get("maxItems") == 0:
        return []
    if "enum" in items:
        offered = [value for value in items["enum"] if value is not None]
        said = [value for value in offered if _said(value, text)]
        if not said and _ALL.search(text):  # "forget all the groceries expenses": every row offered
            said = offered
        if not said and isinstance(next(iter(offered), None), int):
            best = _best_row(text, prompt, offered)
            said = [best] if best is not None else []
        if not said and prop.get("minItems", 0) > 0:
            said = offered[:1]
        return said[: prop.get("maxItems", len(said))]
    if "$ref" in items or items.get("type") == "object":
        count = max(1, len(re.findall(r";", prompt.split("|", 1)[0])) + 1) if name == "items" else 1
        return [_fill(name, items, defs, text, prompt) for _ in range(min(count, prop.get("maxItems", count)))]
    return []


def _pick(name: str, offered: list[Any], text: str, prompt: str, nullable: bool) -> Any:
    """The offered value the words name, else the likeliest one."""
    if offered and isinstance(offered[0], int):
        return _best_row(text, prompt, offered) or offered[0]
    lower = text.lower()
    if name == "kind" and "income" in offered and re.search(r"\b(?:got|received|earned|salary|income)\b", lower):
        return "income"
    if name == "op":
        if re.search(r"how many|wie viele|几", lower):
            return "count"
        if re.search(r"average|durchschnitt|平均", lower):
            return "avg"
        return "sum" if "sum" in offered else offered[0]
    if name == "period":
        stated = re.search(r"Period: (\w+)", prompt)
        return stated.group(1) if stated and stated.group(1) in offered else None
    said = [value for value in offered if _said(value, text)]
    if said:
        return said[0]
    if nullable:
        return None
    for likely in ("household", "none", "other", "add", "note"):
        if likely in offered:
            return likely
    return offered[0] if offered else None


def _said(value: Any, text: str) -> bool:
    if not isinstance(value, str) or not value:
        return False
    return re.search(rf"\b{re.escape(value.replace('_', ' '))}", text, re.IGNORECASE) is not None


def _best_row(text: str, prompt: str, offered: list[Any] | None = None) -> int | None:
    """The listed row ("[12] …" in the prompt) that shares the most words with the message."""
    words = {word.lower() for word in _WORDS.findall(text) if len(word) > 2}
    rows = [(int(row_id), body) for row_id, body in _ROWS.findall(prompt)]
    rows = [(row_id, body) for row_id, body in rows if offered is None or row_id in offered]
    if not rows:
        return None
    shared = [len(words & {word.lower() for word in _WORDS.findall(body)}) for _, body in rows]
    return rows[shared.index(max(shared))][0]
