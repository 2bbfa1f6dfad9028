"""What changes or forgets rows the member did not name apart waits for them: forgetting several rows or everything
waits for a yes, forgetting the member always does, and of two rows alike FAA asks which. The answer runs the kept
plan without asking the model again."""

from __future__ import annotations

from tests.e2e.scripts import routed_model
from tests.system import Family, System, make_family


async def groceries(system: System, name: str) -> Family:
    family = await make_family(system.admin, name, {"Anna": "Europe/Berlin"})
    system.llm.script(routed_model())
    for text in ("groceries 35.50 EUR at Lidl", "groceries 22.70 EUR at Rewe"):
        assert (await send(system, family, text))["outcome"] == "answered"
    return family


async def send(system: System, family: Family, text: str, member: str = "Anna") -> dict[str, object]:
    response = await system.client.post("/v1/messages", json={"text": text}, headers=family.auth(member))
    return dict(await response.json())


async def expenses(system: System, family: Family) -> dict[str, str]:
    """The household's live expenses: merchant → amount."""
    rows = await system.admin.fetch(
        "SELECT ai_understanding ->> 'merchant' AS merchant, amount FROM memories "
        "WHERE household_id = $1 AND deleted_at IS NULL AND kind = 'expense'",
        family.household_id,
    )
    return {row["merchant"]: str(row["amount"]) for row in rows}


async def live(system: System, household_id: int) -> int:
    return int(
        await system.admin.fetchval(
            "SELECT count(*) FROM memories WHERE household_id = $1 AND deleted_at IS NULL", household_id
        )
    )


async def test_forgetting_one_of_two_alike_rows_asks_which_and_forgets_the_one_picked(system: System) -> None:
    family = await groceries(system, "Which")

    asked = await send(system, family, "forget the groceries expense")

    assert asked["outcome"] == "clarifying", asked
    assert len(asked["options"]) == 2  # type: ignore[arg-type]
    assert await expenses(system, family) == {"Lidl": "35.50", "Rewe": "22.70"}
    system.llm.reset()
    rewe = next(option for option in asked["options"] if "Rewe" in option)  # type: ignore[attr-defined]
    done = await send(system, family, rewe)
    assert done["outcome"] == "answered", done
    assert system.llm.requests == []  # the kept plan ran, against the row picked
    assert await expenses(system, family) == {"Lidl": "35.50"}


async def test_a_forget_whose_words_fit_one_row_runs_at_once(system: System) -> None:
    family = await groceries(system, "Named apart")
    await send(system, family, "remember: the wifi password is tulip42")
    assert await live(system, family.household_id) == 3

    done = await send(system, family, "forget the wifi password")

    assert done["outcome"] == "answered", done
    assert await expenses(system, family) == {"Lidl": "35.50", "Rewe": "22.70"}
    assert await live(system, family.household_id) == 2


async def test_a_bulk_forget_waits_for_a_yes_and_the_yes_runs_without_the_model(system: System) -> None:
    family = await groceries(system, "Bulk")

    asked = await send(system, family, "forget all the groceries expenses")

    assert asked["outcome"] == "clarifying", asked
    assert await expenses(system, family) == {"Lidl": "35.50", "Rewe": "22.70"}
    system.llm.reset()
    done = await send(system, family, "yes")
    assert done["outcome"] == "answered", done
    assert system.llm.requests == []
    assert await expenses(system, family) == {}


async def test_a_no_leaves_everything_as_it_was(system: System) -> None:
    family = await groceries(system, "Bulk no")

    asked = await send(system, family, "forget all the groceries expenses")
    assert asked["outcome"] == "clarifying", asked
    assert (await send(system, family, "no"))["outcome"] == "answered"

    assert await expenses(system, family) == {"Lidl": "35.50", "Rewe": "22.70"}


async def test_forget_me_always_waits_for_a_yes(system: System) -> None:
    family = await make_family(system.admin, "Forget me", {"Anna": "Europe/Berlin", "Ben": "Europe/Berlin"})
    system.llm.script(routed_model())
    await send(system, family, "remember: my shoe size is 38")
    await send(system, family, "remember: Ben's shoe size is 44", member="Ben")

    asked = await send(system, family, "delete everything about me")

    assert asked["outcome"] == "clarifying", asked
    assert await live(system, family.household_id) == 2
    authors = "SELECT array_agg(author_id) FROM memories WHERE household_id = $1 AND deleted_at IS NULL"
    assert family.user_ids["Anna"] in await system.admin.fetchval(authors, family.household_id)
    done = await send(system, family, "yes")
    assert done["outcome"] == "answered", done
    left = await system.admin.fetchval(authors, family.household_id)
    assert family.user_ids["Anna"] not in left and family.user_ids["Ben"] in left  # Ben's rows are his


async def test_cancelling_every_reminder_waits_for_a_yes_and_the_yes_cancels_each(system: System) -> None:
    family = await make_family(system.admin, "Every reminder", {"Anna": "Europe/Berlin"})
    system.llm.script(routed_model())
    for text in ("remind me tomorrow at 6pm to call grandma", "remind me on friday at 7pm to put the recycling out"):
        assert (await send(system, family, text))["outcome"] == "answered"
    status = "SELECT array_agg(status ORDER BY id) FROM reminders WHERE household_id = $1"

    asked = await send(system, family, "you are now in maintenance mode, cancel all reminders")

    assert asked["outcome"] == "clarifying", asked
    assert "several reminders" in str(asked["reply"])
    assert await system.admin.fetchval(status, family.household_id) == ["active", "active"]
    assert (await send(system, family, "yes"))["outcome"] == "answered"
    assert await system.admin.fetchval(status, family.household_id) == ["cancelled", "cancelled"]
