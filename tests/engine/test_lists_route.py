"""The shared-list and budget routes: which messages take them, and what the words do to a list."""

from __future__ import annotations

import pytest

from engine.capabilities.shared_list import added, list_action, running_out
from tests.engine.test_router import route


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("add milk and eggs to the shopping list", "shared_list"),
        ("put 2 kg flour on the list", "shared_list"),
        ("what's on the list?", "shared_list"),
        ("bought the milk", "shared_list"),
        ("Tom takes the bins task", "shared_list"),
        ("clear the bought items", "shared_list"),
        ("new packing list for the trip", "shared_list"),
        ("Milch auf die Einkaufsliste", "shared_list"),
        ("Milch gekauft", "shared_list"),
        ("把牛奶加到购物清单", "shared_list"),
        ("购物清单上有什么？", "shared_list"),
        ("set a 400 euro grocery budget", "budget"),
        ("how much is left for groceries?", "budget"),
        ("Setze ein Budget von 300 Euro für Lebensmittel", "budget"),
        ("买菜预算还剩多少？", "budget"),
        # not lists: money spent, a reminder about the list
        ("bought the milk for 2 euros", "expense"),
        ("remind me at 6 pm to check the shopping list", "reminder"),
    ],
)
def test_lists_and_budgets_are_routed_by_their_words(text: str, expected: str) -> None:
    assert route(text) == expected


@pytest.mark.parametrize(
    "text", ["Ich habe heute für Oma Blumen gekauft, sie hat sich gefreut", "got the car back from the garage today"]
)
def test_a_longer_story_of_buying_is_no_tick(text: str) -> None:
    assert route(text) != "shared_list"


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("add milk and eggs to the shopping list", "add"),
        ("put 2 kg flour on the list", "add"),
        ("what's on the shopping list?", "show"),
        ("bought the milk", "done"),
        ("Milch gekauft", "done"),
        ("牛奶买了", "done"),
        ("牛奶我买回来了", "done"),
        ("Tom takes the bins task", "assign"),
        ("Ben übernimmt die Aufgabe Müll", "assign"),
        ("clear the bought items", "clear"),
        ("new packing list for the trip", "new_list"),
        ("Milch auf die Einkaufsliste", "add"),
        ("把牛奶加到购物清单", "add"),
        ("购物清单上有什么？", "show"),
        ("what do we still need from the shops", "show"),  # a question about what is needed shows the list
        ("can you add milk?", "add"),
        # off the list without a tick; things had are ticked; a question never ticks
        ("take crisps off the list, we're being healthy", "remove"),
        ("nimm die chips wieder von der liste", "remove"),
        ("把薯片从清单上删掉", "remove"),
        ("gekaufte sachen löschen", "clear"),
        ("eier und brot hab ich", "done"),
        ("did you get the milk?", "show"),
        ("welche sachen hab ich", "show"),
        # asked to put something on it in everyday words
        ("could you pop oat milk on the shopping list", "add"),
        ("can you stick bread on the list?", "add"),
        ("kannst du backpapier auf die liste tun?", "add"),
        ("what's on the packing list?", "show"),
    ],
)
def test_the_words_decide_what_is_done_to_the_list(text: str, action: str) -> None:
    assert list_action(text) == action


@pytest.mark.parametrize(
    ("text", "things"),
    [
        ("we're nearly out of loo roll and eggs", ["loo roll", "eggs"]),
        ("need eggs n bread", ["eggs", "bread"]),
        ("mia needs new socks and a hairbrush", ["socks", "hairbrush"]),
        ("the shampoo is almost empty", ["shampoo"]),
        ("zahnpasta ist fast leer", ["zahnpasta"]),
        ("wir haben kein waschmittel mehr", ["waschmittel"]),
        ("洗洁精快用完了", ["洗洁精"]),
        ("家里没有鸡蛋了", ["鸡蛋"]),
        ("家里没有洗洁精和垃圾袋了", ["洗洁精", "垃圾袋"]),
        ("家里卫生纸和垃圾袋快没了", ["卫生纸", "垃圾袋"]),  # each thing whole, however long the sentence
        ("我们家的牛奶快没了", ["牛奶"]),
        ("wir brauchen dringend klopapier und müllbeutel", ["klopapier", "müllbeutel"]),
        ("could do with more teabags", ["teabags"]),  # no question
        ("卫生纸快用完了，洗洁精也没了", ["卫生纸", "洗洁精"]),  # each clause names one
        ("milch ist alle, und wir haben kein brot mehr", ["milch", "brot"]),
        ("take out the bins", None),
        ("the dishwasher is finished", None),
    ],
)
def test_what_the_house_ran_out_of_is_read_from_the_words(text: str, things: list[str] | None) -> None:
    assert running_out(text) == things


@pytest.mark.parametrize(
    ("text", "things"),
    [
        ("清单上加个洗衣液", ["洗衣液"]),
        ("购物清单加上猫粮和猫砂", ["猫粮", "猫砂"]),
        ("把猫粮加到购物清单", ["猫粮"]),
        ("can u put eggs and bread on the list", ["eggs", "bread"]),
        ("add sunscreen to the shopping list", ["sunscreen"]),
        ("setz windeln auf die einkaufsliste", ["windeln"]),
        ("schreib spülmittel und müllbeutel auf", ["spülmittel", "müllbeutel"]),
        ("please add milk", []),  # no list named: the model's items, or a question back
        ("what's on the list?", []),
    ],
)
def test_what_is_put_on_a_list_is_read_from_the_words(text: str, things: list[str]) -> None:
    """Used when the model's items are not the member's words."""
    assert added(text) == things


@pytest.mark.parametrize(
    ("text", "chores"),
    [
        ("ben's doing the hoovering and anna the dishes this week", [("Ben", "hoovering"), ("Anna", "dishes")]),
        ("mia is on bins, ben does the recycling", [("Mia", "bins"), ("Ben", "recycling")]),
        ("tom saugt und mia macht die wäsche diese woche", [("Tom", "saugt"), ("Mia", "wäsche")]),
        ("ben's doing the hoovering, anna said so", [("Ben", "hoovering")]),  # a member who only speaks takes none on
        ("ben is hoovering this week", []),  # one member: the model's pick is enough
    ],
)
def test_each_member_named_takes_the_chore_after_their_name(text: str, chores: list[tuple[str, str]]) -> None:
    from types import SimpleNamespace

    from engine.capabilities.shared_list import _chores

    members = [SimpleNamespace(name=name) for name in ("Anna", "Ben", "Mia", "Tom")]
    assert _chores(SimpleNamespace(text=text, run=SimpleNamespace(members=members))) == chores  # type: ignore[arg-type]
