"""A note answers a question only when they share a word of substance."""

from __future__ import annotations

import pytest

from engine.capabilities._events import named_events
from engine.capabilities.topics import same_word, shares_topic


@pytest.mark.parametrize(
    ("question", "note", "shared"),
    [
        ("When does my passport expire?", "Ben's passport expires in March 2027", True),
        ("When does my passport expire?", "Lea's shoe size is 38", False),
        ("我的护照什么时候过期？", "家里WiFi密码是sunflower2026", False),
        ("小明星期几上钢琴课？几点？", "小明每周三下午4点上钢琴课", True),
        ("What size shoes does Lea wear?", "Lea's shoe size is 38", True),
        ("What is Lea's favourite food?", "Lea's shoe size is 38", False),  # a name alone is no topic
        ("Wann läuft mein Reisepass ab?", "Der Autoschlüssel liegt in der Schublade", False),
        # German spells every noun with a capital: they are the topic, not names
        ("Wie war nochmal der Code fürs Garagentor?", "Der Code fürs Garagentor ist 4711", True),
        ("Wann hat Ben Training?", "Ben hat Training am Mittwoch", True),
        ("Wann hat Ben Training?", "Ben geht am Mittwoch zum Zahnarzt", False),
    ],
)
def test_shares_topic(question: str, note: str, shared: bool) -> None:
    assert shares_topic(question, note, ["Anna", "Ben"]) is shared


def test_a_german_question_names_people_by_the_names_given() -> None:
    assert not shares_topic("Was isst Lea am liebsten?", "Leas Schuhgröße ist 38", ["Anna", "Ben", "Lea"])
    assert shares_topic("Welche Schuhgröße hat Lea?", "Leas Schuhgröße ist 38", ["Anna", "Ben", "Lea"])


def test_a_word_in_another_form_is_the_same_word() -> None:
    assert same_word("bens", "Ben") and same_word("dentist's", "dentist")
    assert same_word("zahnarzttermin", "Zahnarzt") and same_word("Elternabend", "elternabends")
    assert not same_word("bench", "ben") and not same_word("car", "card")  # a short word begins many


def test_an_event_named_in_another_form_is_the_event_named() -> None:
    rows = [{"event_id": 1, "title": "Zahnarzt Ben"}, {"event_id": 2, "title": "Elternabend"}]
    assert named_events("bens zahnarzttermin ist jetzt am montag um 9", rows) == [1]
    assert named_events("der elternabend ist jetzt erst um 20 uhr", rows) == [2]
    assert named_events("was steht an", rows) == []
