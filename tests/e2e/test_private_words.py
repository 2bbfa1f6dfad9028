"""Who sees a stored row follows the member's words, not the model: "only for me" keeps it private, "a surprise for
Sam" keeps it from Sam, and the reply says so. Hints written for the model never reach the member."""

from __future__ import annotations

from tests.e2e.test_calendar import routed  # noqa: F401 (fixture)
from tests.e2e.test_routed import answers, send
from tests.system import System, make_family


async def test_on_the_routed_engine_private_words_keep_notes_and_events_from_the_others(routed: System) -> None:  # noqa: F811
    family = await make_family(
        routed.admin, "Routed private", {"Alex": "Europe/Berlin", "Sam": "Europe/Berlin", "Mia": "Europe/Berlin"}
    )
    # A careless model answers every note as the household's: the words alone decide.
    routed.llm.script(answers(fact={"kind": "plan", "person": "Sam", "category": "birthday"}))
    party = await send(
        routed,
        family,
        "Private, only for me: I am planning a surprise birthday party for Sam on December 12 at 7pm",
        member="Alex",
    )
    routed.llm.script(answers(fact={"kind": "fact", "person": None, "category": "school"}))
    locker = await send(routed, family, "Remember that my locker code is 4312, keep it private", member="Mia")
    routed.llm.script(answers(fact={"kind": "plan", "person": "Sam", "category": "birthday"}))
    surprise = await send(routed, family, "Überraschungsparty für Sam am 12.12. um 19 Uhr", member="Alex")

    assert party["reply"].endswith("Kept private — only you see this."), party
    assert locker["reply"].endswith("Kept private — only you see this."), locker
    assert surprise["reply"].endswith("Sam sieht das nicht."), surprise
    rows = await routed.admin.fetch(
        """SELECT 'memory' AS kind, content AS what, author_id AS author, visibility, hidden_from FROM memories
            WHERE household_id = $1
           UNION ALL
           SELECT 'event', title, created_by, visibility, hidden_from FROM events WHERE household_id = $1
           ORDER BY what""",
        family.household_id,
    )
    alex, sam, mia = (family.user_ids[name] for name in ("Alex", "Sam", "Mia"))
    seen = {(r["kind"], r["author"], r["visibility"], r["hidden_from"]) for r in rows}
    assert ("memory", alex, "private", None) in seen and ("event", alex, "private", None) in seen
    assert ("memory", mia, "private", None) in seen
    assert ("event", alex, "household", sam) in seen
    assert all(r["visibility"] == "private" or r["hidden_from"] == sam for r in rows), rows


async def test_on_the_routed_engine_a_child_cannot_correct_an_adults_expense_and_reads_why(routed: System) -> None:  # noqa: F811
    """Mia's correction of Sam's expense is refused by the tools; the reply tells her in words meant for her, never
    with the hint the tool wrote for the model."""
    family = await make_family(routed.admin, "Routed child", {"Sam": "Europe/Berlin", "Mia": "Europe/Berlin"})
    await routed.admin.execute("UPDATE users SET role = 'child' WHERE id = $1", family.user_ids["Mia"])
    routed.llm.script(answers(expense={"kind": "expense", "category": "groceries", "merchant": "Rewe"}))
    await send(routed, family, "groceries 26.00 EUR at Rewe", member="Sam")

    refused = await send(routed, family, "the Rewe groceries were 26.50, not 26.00", member="Mia")

    amount = await routed.admin.fetchval("SELECT amount FROM memories WHERE household_id = $1", family.household_id)
    assert str(amount) == "26.00"
    assert "Please ask an adult." in refused["reply"], refused
    assert "memory" not in refused["reply"] and "tell the member" not in refused["reply"], refused


async def test_chinese_private_words_keep_a_note_private(routed: System) -> None:  # noqa: F811
    family = await make_family(routed.admin, "Routed 私密", {"Mia": "Europe/Berlin", "Sam": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "fact", "person": None, "category": "home"}))

    body = await send(routed, family, "私密：我的储物柜密码是4312", member="Mia")

    visibility = await routed.admin.fetchval(
        "SELECT visibility FROM memories WHERE household_id = $1", family.household_id
    )
    assert visibility == "private"
    assert body["reply"].endswith("已设为私密——只有您能看到。"), body


async def test_a_correction_keeps_who_sees_the_row(routed: System) -> None:  # noqa: F811
    """Alex corrects her private locker code: the code changes, and the row stays hers alone — her words did not
    ask for more."""
    family = await make_family(routed.admin, "KeepAudience", {"Alex": "Europe/Berlin", "Sam": "Europe/Berlin"})
    routed.llm.script(answers(fact={"kind": "fact", "person": None, "category": "home"}))
    await send(routed, family, "My locker code is 4312, keep it private", member="Alex")
    memory_id = await routed.admin.fetchval("SELECT id FROM memories WHERE household_id = $1", family.household_id)
    routed.llm.script(
        answers(update={"memory_id": memory_id, "amount": None, "category": None, "time": None,
                        "content": "My locker code is 4313"})
    )  # fmt: skip

    await send(routed, family, "actually my locker code is 4313", member="Alex")

    row = await routed.admin.fetchrow("SELECT content, visibility FROM memories WHERE id = $1", memory_id)
    assert row["visibility"] == "private" and "4313" in row["content"], dict(row)
