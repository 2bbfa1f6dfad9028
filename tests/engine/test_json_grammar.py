"""engine.json_grammar: every answer schema becomes a grammar that accepts its JSON on one line and nothing else.

The grammar is read with `tests.fakes.gbnf`, so what llama.cpp will accept is checked against real answers.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from typing import Any

import pytest
from pydantic import BaseModel

import engine.capabilities
from engine.capabilities.capability import constrained_schema
from engine.capabilities.expense import MoneyAnswer, OneAmount
from engine.capabilities.routing import RouteChoice
from engine.json_grammar import json_grammar
from tests.fakes.gbnf import grammar_pattern


def accepts(schema: dict[str, Any], answer: str) -> bool:
    return grammar_pattern(json_grammar(schema)).fullmatch(answer) is not None


def answer_models() -> list[type[BaseModel]]:
    """Every answer model the capabilities define."""
    found = []
    for module_info in pkgutil.iter_modules(engine.capabilities.__path__):
        module = importlib.import_module(f"engine.capabilities.{module_info.name}")
        found += [
            value
            for value in vars(module).values()
            if inspect.isclass(value) and issubclass(value, BaseModel) and value.__module__ == module.__name__
        ]
    return found


@pytest.mark.parametrize("model", answer_models(), ids=lambda model: model.__name__)
def test_every_answer_schema_becomes_a_grammar(model: type[BaseModel]) -> None:
    grammar = json_grammar(constrained_schema(model, {}))
    assert grammar.startswith("root ::= ")
    grammar_pattern(grammar)  # every rule it names is defined, and it reads as a grammar


def test_one_line_answers_are_accepted_indented_ones_are_not() -> None:
    schema = constrained_schema(OneAmount, {})
    answer = {"kind": "expense", "category": "groceries", "merchant": "Aldi"}
    assert accepts(schema, json.dumps(answer, separators=(",", ":")))
    assert accepts(schema, json.dumps(answer))  # one space after a colon or comma, as models often write
    assert accepts(schema, json.dumps({**answer, "merchant": None}))
    assert not accepts(schema, json.dumps(answer, indent=2))
    assert not accepts(schema, json.dumps(answer).replace('{"', '{ "'))


def test_the_schema_s_limits_hold() -> None:
    schema = constrained_schema(OneAmount, {})
    assert not accepts(schema, json.dumps({"kind": "gift", "category": "toys", "merchant": None}))
    assert not accepts(schema, json.dumps({"kind": "expense", "category": "", "merchant": None}))
    assert not accepts(schema, json.dumps({"kind": "expense", "category": "x" * 31, "merchant": None}))
    assert not accepts(schema, json.dumps({"category": "toys", "kind": "expense", "merchant": None}))  # in order
    assert not accepts(schema, json.dumps({"kind": "expense", "category": "toys"}))  # every field, always


def test_strings_take_any_language_and_json_escapes() -> None:
    schema = constrained_schema(OneAmount, {})
    for category in ("Lebensmittel", "食品杂货", 'the "big" shop', "a\\b"):
        answer = {"kind": "income", "category": category, "merchant": None}
        assert accepts(schema, json.dumps(answer, ensure_ascii=False)), category
        assert accepts(schema, json.dumps(answer)), category  # \\uXXXX escapes
    assert not accepts(schema, '{"kind":"income","category":"two\nlines","merchant":null}')


def test_arrays_keep_their_item_limits() -> None:
    schema = constrained_schema(MoneyAnswer, {})
    item = {"kind": "expense", "category": "groceries", "merchant": None, "what": "bread"}
    assert accepts(schema, json.dumps({"items": [item, {**item, "what": "a magazine"}]}))
    assert not accepts(schema, json.dumps({"items": []}))
    assert not accepts(schema, json.dumps({"items": [item] * 11}))


def test_offered_choices_are_the_only_values() -> None:
    schema = constrained_schema(RouteChoice, {"route": ["expense", "shared_list"]})
    assert accepts(schema, '{"route":"shared_list"}')
    assert not accepts(schema, '{"route":"note"}')
    ids = {"type": "object", "properties": {"id": {"enum": [3, 17, None]}}, "required": ["id"]}
    assert accepts(ids, '{"id":17}') and accepts(ids, '{"id":null}') and not accepts(ids, '{"id":4}')


def test_dates_numbers_and_booleans() -> None:
    schema = {
        "type": "object",
        "properties": {
            "on": {"type": "string", "format": "date"},
            "count": {"type": "integer"},
            "share": {"type": "number"},
            "done": {"type": "boolean"},
        },
        "required": ["on", "count", "share", "done"],
    }
    assert accepts(schema, '{"on":"2026-11-28","count":-3,"share":0.25,"done":true}')
    assert not accepts(schema, '{"on":"2026-13-01","count":3,"share":1,"done":false}')
    assert not accepts(schema, '{"on":"2026-11-28","count":3.5,"share":1,"done":false}')
    assert not accepts(schema, '{"on":"2026-11-28","count":007,"share":1,"done":false}')


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "pattern": "^[a-z]+$"},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": []},
        {"type": "object"},
        {"type": "string", "format": "email"},
        {"$ref": "#/$defs/Missing"},
    ],
)
def test_what_it_cannot_express_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="grammar"):
        json_grammar(schema)
