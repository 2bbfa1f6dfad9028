"""A JSON schema as a llama.cpp grammar (GBNF) that keeps the answer on one line.

llama.cpp turns a JSON schema into a grammar itself, but its grammar lets the model put line breaks and up to twenty
spaces of indentation between every two JSON tokens, and a small model takes that offer: an answer printed with
indentation costs about half again as many tokens as the same answer on one line, and on a CPU every token is
decoding time. This grammar allows one optional space after a colon or comma and nothing else between tokens, so the
model writes the same JSON in fewer tokens. It covers what the capabilities' answer schemas use (objects whose
properties are all required, strings with length limits and the `date` format, integers, numbers, booleans, null,
enums, `anyOf` and type lists, arrays with item limits, `$ref` into `$defs`); anything else raises `ValueError`, so a
new schema feature is noticed in the tests instead of being ignored by the model server.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["json_grammar"]

_PRIMITIVES = {
    "char": r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "integer": '"-"? ("0" | [1-9] [0-9]{0,15})',
    "number": '"-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?',
    "boolean": '"true" | "false"',
    "null": '"null"',
    "string": '"\\"" char* "\\""',
    "date": '"\\"" [0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [1-2] [0-9] | "3" [0-1]) "\\""',
    "sep": '"," " "?',
    "colon": '":" " "?',
}
# What a JSON schema may say beside its structure without changing which JSON is valid for this engine.
_NOTES = {"description", "title", "default", "examples", "additionalProperties", "$defs"}


def json_grammar(schema: dict[str, Any]) -> str:
    """The GBNF grammar of the JSON values `schema` accepts, each written on one line."""
    return _Grammar(schema).text()


class _Grammar:
    def __init__(self, schema: dict[str, Any]) -> None:
        self._defs: dict[str, Any] = schema.get("$defs", {})
        self._rules: dict[str, str] = {}
        self._used: set[str] = set()
        answer = self._value(schema, "answer")
        self._rules = {"root": answer, **self._rules}

    def text(self) -> str:
        rules = dict(self._rules)
        rules.update((name, body) for name, body in _PRIMITIVES.items() if name in self._used)
        return "".join(f"{name} ::= {body}\n" for name, body in rules.items())

    def _primitive(self, name: str) -> str:
        self._used.add(name)
        if name == "string":
            self._used.add("char")
        return name

    def _rule(self, name: str, body: str) -> str:
        """A named rule for `body` (objects and definitions get names so the grammar stays readable)."""
        base = re.sub(r"[^a-zA-Z0-9-]+", "-", name).strip("-") or "value"
        candidate, n = base, 1
        while self._rules.get(candidate, "") not in ("", body):  # "": reserved by `_ref` for this definition
            n += 1
            candidate = f"{base}-{n}"
        self._rules[candidate] = body
        return candidate

    def _value(self, schema: dict[str, Any], name: str) -> str:
        unknown = set(schema) - _NOTES - {
            "type", "enum", "const", "anyOf", "oneOf", "$ref", "properties", "required", "items",
            "minItems", "maxItems", "minLength", "maxLength", "format",
        }  # fmt: skip
        if unknown:
            raise ValueError(f"{name}: the grammar does not support {sorted(unknown)}")
        if "$ref" in schema:
            return self._ref(schema["$ref"])
        if "const" in schema:
            return _literal(schema["const"])
        if "enum" in schema:
            return "(" + " | ".join(_literal(value) for value in schema["enum"]) + ")"
        options = schema.get("anyOf") or schema.get("oneOf")
        if options is not None:
            return "(" + " | ".join(self._value(option, name) for option in options) + ")"
        kind = schema.get("type")
        if isinstance(kind, list):
            return "(" + " | ".join(self._value({**schema, "type": one}, name) for one in kind) + ")"
        if kind == "object":
            return self._object(schema, name)
        if kind == "array":
            return self._array(schema, name)
        if kind == "string":
            return self._string(schema, name)
        if kind in ("integer", "number", "boolean", "null"):
            return self._primitive(kind)
        raise ValueError(f"{name}: the grammar does not support type {kind!r}")

    def _ref(self, ref: str) -> str:
        prefix = "#/$defs/"
        if not ref.startswith(prefix) or ref[len(prefix) :] not in self._defs:
            raise ValueError(f"the grammar cannot resolve {ref!r}")
        name = ref[len(prefix) :]
        rule = re.sub(r"[^a-zA-Z0-9-]+", "-", name)
        if rule not in self._rules:
            self._rules[rule] = ""  # reserved first: a definition may refer to itself
            expression = self._value(self._defs[name], rule)
            if expression != rule:
                self._rules[rule] = expression
        return rule

    def _object(self, schema: dict[str, Any], name: str) -> str:
        properties: dict[str, Any] = schema.get("properties", {})
        optional = set(properties) - set(schema.get("required", ()))
        if not properties or optional:
            raise ValueError(f"{name}: the grammar needs an object whose properties are all required")
        colon = self._primitive("colon")
        parts = [f"{_literal(key)} {colon} {self._value(value, f'{name}-{key}')}" for key, value in properties.items()]
        sep = self._primitive("sep") if len(parts) > 1 else ""
        return self._rule(name, '"{" ' + f" {sep} ".join(parts) + ' "}"')

    def _array(self, schema: dict[str, Any], name: str) -> str:
        least, most = schema.get("minItems", 0), schema.get("maxItems")
        if most == 0:
            return '"[" "]"'
        item = self._value(schema.get("items", {}), f"{name}-item")
        if not re.fullmatch(r"[a-zA-Z0-9-]+", item):
            item = self._rule(f"{name}-item", item)
        sep = self._primitive("sep")
        more = _repeat(f"({sep} {item})", max(least - 1, 0), None if most is None else most - 1)
        items = f"{item} {more}"
        return f'"[" {items} "]"' if least > 0 else f'"[" ({items})? "]"'

    def _string(self, schema: dict[str, Any], name: str) -> str:
        fmt = schema.get("format")
        if fmt == "date":
            return self._primitive("date")
        if fmt is not None:
            raise ValueError(f"{name}: the grammar does not support the string format {fmt!r}")
        least, most = schema.get("minLength", 0), schema.get("maxLength")
        if least == 0 and most is None:
            return self._primitive("string")
        self._primitive("char")
        return f'"\\"" {_repeat("char", least, most)} "\\""'


def _repeat(item: str, least: int, most: int | None) -> str:
    if most is None:
        return f"{item}{{{least},}}"
    return f"{item}{{{least},{most}}}"


def _literal(value: Any) -> str:
    """`value` as JSON, quoted as a GBNF string literal."""
    text = json.dumps(value, ensure_ascii=False)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
