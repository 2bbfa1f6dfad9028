import pytest

from engine.grounding.spelling import commands_spelt


@pytest.mark.parametrize(
    ("text", "spelt"),
    [
        ("pls cancle the grandma reminder", "pls cancel the grandma reminder"),  # two letters swapped
        ("pls delte the shed code note", "pls delete the shed code note"),  # a letter missing
        ("can u remvoe the garage code note", "can u remove the garage code note"),
        ("Remnid me at 7", "remind me at 7"),
        ("die erinerung bitte löschen", "die erinnerung bitte löschen"),
        ("erinere mich donnerstag um 15 uhr", "erinnere mich donnerstag um 15 uhr"),
        ("setz spüli auf die einkaufslitse", "setz spüli auf die einkaufsliste"),
    ],
)
def test_words_of_asking_typed_in_a_hurry_are_read_right(text: str, spelt: str) -> None:
    assert commands_spelt(text) == spelt


@pytest.mark.parametrize(
    "text",
    [
        "the remote is under the sofa",  # a changed letter is another word
        "i forgot the cancer appointment letter",
        "charge the kids tablets",
        "ben is at the forge with grandad",  # "forget" less a letter, and a word
        "erinner mich an den müll",  # German forms of the verb are no typos
        "lösch mal das mit dem fahrradschloss",
        "an den müll erinnern",
    ],
)
def test_real_words_are_left_alone(text: str) -> None:
    assert commands_spelt(text) == text
