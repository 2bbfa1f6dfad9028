"""Who sees what a member stores is decided from their words, in English, German and Chinese (engine/privacy.py)."""

from __future__ import annotations

import pytest

from engine.analysis import PlannedCall
from engine.executor import StepResult
from engine.privacy import CREATES, apply, requested, told
from tools.registry import default_registry
from tools.storage.households import Member
from tools.storage.visibility import EVERYONE, Audience

ALEX, SAM, MIA, MING = 1, 2, 3, 4
MEMBERS = (
    Member(ALEX, "Alex", "Europe/Berlin", "en", "adult"),
    Member(SAM, "Sam", "Europe/Berlin", "en", "adult"),
    Member(MIA, "Mia", "Europe/Berlin", "de", "child"),
    Member(MING, "小明", "Asia/Shanghai", "zh", "adult"),
)
PRIVATE = Audience("private")


@pytest.mark.parametrize(
    "text",
    [
        "Private, only for me: I am planning a surprise birthday party for Sam on December 12",
        "Remember that my locker code is 4312, keep it private",
        "just for me: my PIN is 1234",
        "just between us: I am looking for a new job",
        "bleibt unter uns: ich suche einen neuen Job",
        "Note the therapist's number, don't tell anyone",
        "Keep this secret: the safe code is 2211",
        "Nur für mich: der Tresorcode ist 1234",
        "Das ist geheim: Mias Geschenk liegt im Keller",
        "privat: Arzttermin am Montag",
        "Sag es niemandem: ich suche eine neue Stelle",
        "私密：我的银行密码是123",
        "只有我知道的事：备用钥匙在花盆下",
        "别告诉任何人，我在准备跳槽",
    ],
)
def test_words_asking_for_privacy_make_it_private(text: str) -> None:
    assert requested(text, MEMBERS, ALEX) == PRIVATE


@pytest.mark.parametrize(
    ("text", "hidden"),
    [
        ("surprise party for Sam on Friday at 7", SAM),
        ("I bought a watch as a gift, don't tell Sam", SAM),
        ("Überraschung für Mia: Zirkus am Samstag", MIA),
        ("Sag Mia nichts, das Fahrrad ist im Keller", MIA),
        ("给Sam的惊喜：周五晚上的派对", SAM),
        ("别告诉Sam，我给他买了手表", SAM),
        ("别告诉小明，礼物藏在柜子里", MING),
    ],
)
def test_a_surprise_or_a_secret_from_a_member_hides_it_from_them(text: str, hidden: int) -> None:
    assert requested(text, MEMBERS, ALEX) == Audience("household", hidden)


@pytest.mark.parametrize(
    "text",
    [
        "private school fees 300 euros",
        "Privatschule: 300 Euro",
        "Samstag um 10 Fußball",  # "Sam" inside another word
        "Geheimnis des Kuchens: mehr Butter",
        "dinner with Sam on Friday",
        "周五和Sam吃饭",
        "surprise party for Grandma",  # no member of that name
    ],
)
def test_other_messages_are_the_households(text: str) -> None:
    assert requested(text, MEMBERS, ALEX) == EVERYONE


def test_a_member_cannot_hide_a_row_from_themselves() -> None:
    assert requested("surprise for Sam", MEMBERS, SAM) == EVERYONE


def test_apply_overrides_the_model_on_every_call_that_creates_a_row() -> None:
    plan = [
        PlannedCall(id="s1", tool="store", args={"content": "x", "kind": "note", "visibility": "household"}),
        PlannedCall(id="s2", tool="add_event", args={"title": "Party", "start": "2026-12-12", "hidden_from": "Mia"}),
        PlannedCall(id="s3", tool="search", args={"query": "x"}),
    ]

    hidden = apply(plan, Audience("household", SAM), MEMBERS)
    private = apply(plan, PRIVATE, MEMBERS)
    everyone = apply(plan, EVERYONE, MEMBERS)

    assert [s.args.get("hidden_from") for s in hidden] == ["Sam", "Sam", None]
    assert [s.args.get("visibility") for s in private] == ["private", "private", None]
    assert "hidden_from" not in private[1].args
    assert everyone[1].args == {"title": "Party", "start": "2026-12-12", "visibility": "household"}  # not the model's
    assert hidden[2] == plan[2]


def test_a_row_kept_from_a_member_is_never_made_that_members() -> None:
    """ "Überraschungsparty für Sam": a model that says the event is Sam's would make a row the tools refuse (an event
    of Sam's kept from Sam); it is the household's event, and a reminder about it the author's."""
    plan = [
        PlannedCall(id="s1", tool="add_event", args={"title": "Party", "start": "2026-12-12", "whose": "sam"}),
        PlannedCall(id="s2", tool="schedule_reminder", args={"text": "Cake", "when": "2026-12-11", "recipient": "Sam"}),
        PlannedCall(id="s3", tool="add_event", args={"title": "Mia's party", "start": "2026-12-13", "whose": "Mia"}),
    ]

    hidden = apply(plan, Audience("household", SAM), MEMBERS)

    assert [s.args.get("whose") or s.args.get("recipient") for s in hidden] == ["household", "self", "Mia"]
    assert apply(plan, EVERYONE, MEMBERS)[0].args["whose"] == "sam"  # nothing kept from anyone: the model's word


def test_a_change_keeps_the_rows_audience_unless_the_words_ask_for_one() -> None:
    update = PlannedCall(
        id="s1", tool="update_memory_fields", args={"memory_id": 7, "content": "x", "visibility": "household"}
    )

    [kept] = apply([update], EVERYONE, MEMBERS)
    [private] = apply([update], PRIVATE, MEMBERS)

    assert kept.args == {"memory_id": 7, "content": "x"}  # the model's "household" would publish a private note
    assert private.args["visibility"] == "private"


def test_every_tool_that_creates_a_row_takes_an_audience() -> None:
    registry = default_registry()
    for name in CREATES:
        assert {"visibility", "hidden_from"} <= set(registry.get(name).args_model.model_fields), name


@pytest.mark.parametrize(
    ("text", "audience", "expected"),
    [
        ("only for me: the PIN is 1234", PRIVATE, "Kept private — only you see this."),
        ("nur für mich: die PIN ist 1234", PRIVATE, "Privat gehalten — nur du siehst das."),
        ("私密：密码是1234", PRIVATE, "已设为私密——只有您能看到。"),
        ("surprise party for Sam", Audience("household", SAM), "Sam won't see this."),
        ("Überraschung für Sam am Freitag", Audience("household", SAM), "Sam sieht das nicht."),
        ("给Sam的惊喜", Audience("household", SAM), "Sam看不到这条内容。"),
    ],
)
def test_the_reply_says_who_sees_it_in_the_members_language(text: str, audience: Audience, expected: str) -> None:
    stored = [StepResult("s1", "store", True, result={"memory_id": 1}, writes=True)]
    assert told(audience, MEMBERS, text, stored) == expected


def test_the_reply_says_nothing_when_nothing_was_created() -> None:
    failed = [StepResult("s1", "store", False, error="invalid", fixable=True, writes=True)]
    searched = [StepResult("s1", "search", True, result={"hits": []})]
    assert told(PRIVATE, MEMBERS, "only for me", failed) is None
    assert told(PRIVATE, MEMBERS, "only for me", searched) is None
    assert told(EVERYONE, MEMBERS, "note this", [StepResult("s1", "store", True, writes=True)]) is None
