"""A model's JSON answer is read like a webhook body."""

from __future__ import annotations

import json

import pytest

from engine.analysis import read_answer
from engine.capabilities.chat import ChatAnswer
from engine.errors import AnalysisError


def test_text_postgresql_cannot_hold_is_made_storable() -> None:
    raw = json.dumps({"reply": "REPLY"}).replace(
        "REPLY", r"hello \ud800 there\u0000"
    )  # JSON escapes, as a model may write

    answer = read_answer(ChatAnswer, raw)

    assert answer.reply == "hello \ufffd there"


@pytest.mark.parametrize(
    ("raw", "problem"),
    [("", "not valid JSON"), ("{", "not valid JSON"), ("[" * 100_000, "longer than"), ('{"x": 1}', "reply")],
)
def test_what_is_wrong_is_said(raw: str, problem: str) -> None:
    with pytest.raises(AnalysisError) as caught:
        read_answer(ChatAnswer, raw)
    assert problem in caught.value.reason
