"""The golden set's scorer without a model or a database: time expressions, numbers in replies and where they
may come from, each expectation against hand-made effects, the figures, and the set itself."""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import _golden as g  # noqa: E402
import _golden_report as report  # noqa: E402
from _golden_numbers import Sources, invented_numbers, mentions, reply_numbers  # noqa: E402
from _golden_score import score  # noqa: E402
from _golden_time import DEFAULT_START, ZONE, VirtualClock, parse_start, resolve, seed_moment  # noqa: E402

START = DEFAULT_START  # Monday 2026-11-23 10:00 Europe/Berlin


def at(text: str) -> datetime:
    return resolve(text, START).local


# ---------------------------------------------------------------------------------------------------- time


def test_time_expressions_resolve_on_the_members_wall_clock_from_the_virtual_start() -> None:
    assert at("today 21:00") == datetime(2026, 11, 23, 21, 0)
    assert at("tomorrow 08:00") == datetime(2026, 11, 24, 8, 0)
    assert at("+2d 10:00") == datetime(2026, 11, 25, 10, 0)
    assert at("next thursday 19:00") == datetime(2026, 11, 26, 19, 0)
    assert at("next monday 09:00") == datetime(2026, 11, 30, 9, 0)  # strictly after today, a Monday
    assert at("weekday mon 07:30") == datetime(2026, 11, 30, 7, 30)  # 07:30 today has passed
    assert at("weekday mon 18:00") == datetime(2026, 11, 23, 18, 0)  # today, still ahead
    assert at("weekday Wednesday 20:00") == datetime(2026, 11, 25, 20, 0)
    assert at("monthday 1 09:00") == datetime(2026, 12, 1, 9, 0)
    assert at("monthday 23 11:00") == datetime(2026, 11, 23, 11, 0)
    assert at("monthday 31 09:00") == datetime(2026, 12, 31, 9, 0)  # November has no 31st
    assert at("2026-12-24 18:00") == datetime(2026, 12, 24, 18, 0)
    assert at("in 2 hours") == datetime(2026, 11, 23, 12, 0)
    assert at("5 minutes ago") == datetime(2026, 11, 23, 9, 55)


def test_relative_times_allow_three_minutes_and_absolute_ones_the_same_minute() -> None:
    in_two_hours = resolve("in 2 hours", START)
    tomorrow = resolve("tomorrow 08:00", START)
    assert in_two_hours.matches(START + timedelta(hours=2, minutes=2, seconds=50))
    assert not in_two_hours.matches(START + timedelta(hours=2, minutes=4))
    assert tomorrow.matches(datetime(2026, 11, 24, 7, 0, 30, tzinfo=UTC))  # 08:00:30 in Berlin
    assert not tomorrow.matches(datetime(2026, 11, 24, 8, 0, tzinfo=UTC))  # 09:00 in Berlin


@pytest.mark.parametrize("text", ["tomorrow", "next funday 10:00", "today 25:00", "in 2 fortnights", "soon"])
def test_a_malformed_time_expression_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        resolve(text, START)


def test_the_virtual_clock_starts_where_told_and_runs_in_real_time() -> None:
    clock = VirtualClock(parse_start("2026-03-29T01:59"))
    assert clock.start == datetime(2026, 3, 29, 1, 59, tzinfo=ZONE)
    assert timedelta(0) <= clock.now() - clock.start < timedelta(seconds=5)
    assert clock.restart(START) == START and abs(clock.now() - START) < timedelta(seconds=5)
    assert parse_start(None) == START
    assert seed_moment("this_month", START).date() == date(2026, 11, 22)
    assert seed_moment("last_month", START).date() == date(2026, 10, 15)


# ---------------------------------------------------------------------------------------------------- numbers


def test_numbers_in_a_reply_are_read_as_written() -> None:
    assert reply_numbers("You spent 58.2 EUR, 1,250.00 in total, 3 times.") == {
        Decimal("58.2"),
        Decimal("1250.00"),
        Decimal("3"),
    }
    assert Decimal("58.20") in reply_numbers("这个月买菜一共花了58.20元")
    assert mentions("Ihr habt 112,40 € ausgegeben", Decimal("112.40"))
    assert mentions("Miete: 1.250,00 EUR", Decimal("1250"))


def test_a_number_no_source_holds_is_invented() -> None:
    sources = Sources(
        texts=("Remind me tomorrow at 9 to call the plumber", "中午吃饭三十五块", "in zwei Stunden"),
        numbers=(Decimal("35.50"),),
        moments=(START,),
        payloads=({"tool": "aggregate", "result": {"groups": [{"value": "58.20", "count": 2}]}},),
    )
    grounded = (
        "You spent 58.2 EUR in 2 purchases; 35,50 € at Lidl. I'll remind you at 9 am, 09:00, 2026-11-23, "
        "23.11., 11/23. Lunch 35, and again in 2 hours."
    )
    assert invented_numbers(grounded, sources) == []
    assert invented_numbers("The total is 9999 EUR, about 42.", sources) == ["9999", "42"]
    assert invented_numbers("1. Dentist\n2. Bins", sources) == []  # list markers are no claims
    assert invented_numbers("Nothing on clothes: 0 EUR.", sources) == []  # zero says nothing matched
    assert invented_numbers("on 24.11.", sources) == ["24.11"]  # the 24th is in no source


def test_times_in_journaled_tool_results_ground_the_reply_on_the_members_clock() -> None:
    payload = {"tool": "schedule_reminder", "result": {"reminder_id": 7, "next_at": "2026-11-24T20:30+01:00"}}
    sources = Sources(payloads=(payload,), moments=(datetime(2026, 11, 24, 19, 30, tzinfo=UTC),))
    assert invented_numbers("Reminder 7 set for 24 November at 8:30 pm (20:30).", sources) == []
    assert invented_numbers("Reminder set for 21:30.", sources) == ["21:30"]


# ---------------------------------------------------------------------------------------------------- scoring


def memory(**fields: Any) -> dict[str, Any]:
    row = {"content": "", "kind": None, "category": None, "person": None, "merchant": None, "amount": None}
    row.update({"currency": None, "local_day": date(2026, 11, 23), "occurred_at": START, "live": True})
    row.update(fields)
    return row


def reminder(**fields: Any) -> dict[str, Any]:
    row = {"text": "", "status": "active", "rrule": None, "next_fire_at": None, "dtstart_local": None}
    row.update({"recipients": ["Anna"], "acknowledged": False, "last_fired_at": None, "fired": []})
    row.update(fields)
    return row


def effects(reply: str = "Done.", **fields: Any) -> g.Effects:
    base: dict[str, Any] = {"outcome": "answered", "memories": [], "reminders": 0, "llm_calls": 1, "latency_s": 1.0}
    base["sent_at"] = START
    base["sources"] = Sources(texts=(fields.pop("text", ""),))
    base.update(fields)
    return g.Effects(reply=reply, **base)


def case(**fields: Any) -> g.Case:
    return g.Case.model_validate({"id": "t", "category": "test", "text": "a message", **fields})


def test_an_old_format_case_scores_as_before() -> None:
    expense = case(expect={"memories": [{"kind": "expense", "amount": "35.50", "currency": "EUR"}], "numbers": [35.5]})
    row = memory(kind="expense", amount=Decimal("35.50"), currency="USD")

    result = score(expense, [effects("Saved 35.50.", memories=[row], text="I spent 35.50 euros")])

    assert not result.passed and result.reasons == ["currency USD != EUR"]
    assert result.effects is not None and result.messages == [result.effects]


OLD_FORMAT = """
cases:
  - id: other-expense
    category: expense
    lang: zh
    member: Ben
    seed:
      - {content: Groceries at Lidl, kind: expense, amount: "35.50", currency: EUR, when: this_month}
    text: 买奶茶花了18.5元
    expect:
      clarify: false
      memories: [{kind: expense, amount: "18.5", currency: CNY, category: [drinks, food], occurred: today}]
      numbers: ["18.5"]
  - id: other-reminder
    category: reminder
    needs: reminders
    text: Remind me tomorrow at 8 am to call the dentist
    expect: {clarify: false, reminders: 1}
"""


def test_a_file_in_the_first_format_loads_and_skips_reminder_cases_without_the_tool(tmp_path: Path) -> None:
    path = tmp_path / "other.yaml"
    path.write_text(OLD_FORMAT)

    expense, dentist = g.load_cases(path)

    assert (expense.member, expense.lang, expense.seed[0].author, expense.turns) == ("Ben", "zh", "Anna", [])
    assert dentist.needs_reminders and not expense.needs_reminders
    assert score(dentist, [], reminder_tool=False).skipped
    assert expense.expect.only_grounded_numbers


def test_a_correction_must_change_the_row_and_add_none() -> None:
    rewe = memory(id=1, content="Groceries at Rewe", amount=Decimal("42.80"), currency="EUR")
    lidl = memory(id=2, content="Groceries at Lidl", amount=Decimal("35.50"), currency="EUR")
    changed = [{"content_has": "Rewe", "amount": "24.80"}]
    correction = case(expect={"changed": changed, "kept": ["Lidl"], "live_memories": 2})
    before = g.Snapshot([rewe, lidl])
    fixed = g.Snapshot([{**rewe, "amount": Decimal("24.80")}, lidl])
    duplicated = g.Snapshot([rewe, lidl, memory(id=3, content="Rewe receipt", amount=Decimal("24.80"))])
    forgot_all = g.Snapshot([{**rewe, "live": False}, {**lidl, "live": False}])

    assert score(correction, [effects(before=before, after=fixed)]).passed
    assert score(correction, [effects(before=before, after=duplicated)]).reasons == ["3 live memories, expected 2"]
    assert score(correction, [effects(before=before, after=forgot_all)]).reasons == [
        "no live memory mentions 'Rewe', expected it changed",
        "the memory mentioning 'Lidl' was forgotten, expected kept",
        "0 live memories, expected 2",
    ]


def test_forgetting_must_take_the_row_asked_for_and_only_that() -> None:
    wifi = memory(id=1, content="The wifi password is Tulpe-2026")
    shoes = memory(id=2, content="Lea's shoe size is 31")
    forget = case(expect={"memories": [], "forgotten": ["WIFI"], "kept": ["shoe size"]})

    assert score(forget, [effects(after=g.Snapshot([{**wifi, "live": False}, shoes]))]).passed
    assert score(forget, [effects(after=g.Snapshot([wifi, shoes]))]).reasons == [
        "1 memories mentioning 'WIFI' still live, expected forgotten"
    ]


def test_a_new_reminder_is_checked_for_time_recipient_and_rule() -> None:
    expected = {"at": "weekday mon 07:30", "recipient": "Anna", "rrule": "FREQ=WEEKLY;BYDAY=MO"}
    weekly = case(expect={"reminder": expected})
    monday = datetime(2026, 11, 30, 7, 30, tzinfo=ZONE)
    same_rule = reminder(rrule="FREQ=WEEKLY;BYDAY=MO;BYHOUR=7;BYMINUTE=30", next_fire_at=monday)
    same_rule["dtstart_local"] = datetime(2026, 11, 30, 7, 30)
    daily = {**same_rule, "rrule": "FREQ=DAILY"}
    for_ben_once = {**same_rule, "rrule": None, "recipients": ["Ben"], "next_fire_at": monday + timedelta(hours=1)}

    assert score(weekly, [effects(new_reminders=[same_rule], reminders=1)]).passed
    assert score(weekly, [effects(new_reminders=[daily], reminders=1)]).reasons == [
        "rrule 'FREQ=DAILY' repeats otherwise than FREQ=WEEKLY;BYDAY=MO"
    ]
    assert score(weekly, [effects(new_reminders=[for_ben_once], reminders=1)]).reasons == [
        "at Mon 2026-11-30 08:30, expected weekday mon 07:30 (Mon 2026-11-30 07:30)",
        "for Ben, expected Anna",
        "one-off, expected it to repeat (FREQ=WEEKLY;BYDAY=MO)",
    ]
    assert score(weekly, [effects(reminders=0)]).reasons == ["0 new reminders, expected 1"]


def test_reminder_status_follows_the_earlier_reminder_and_a_snooze_moves_it() -> None:
    cake = reminder(id=5, text="Take the cake out of the oven", status="done")
    snooze = case(expect={"reminder_status": [{"text_has": "cake", "status": "active", "at": "in 10 minutes"}]})
    snoozed = {**cake, "status": "active", "next_fire_at": START + timedelta(minutes=11)}
    late = {**snoozed, "next_fire_at": START + timedelta(minutes=30)}

    assert score(snooze, [effects(before=g.Snapshot(reminders=[cake]), after=g.Snapshot(reminders=[snoozed]))]).passed
    [reason] = score(snooze, [effects(before=g.Snapshot(reminders=[cake]), after=g.Snapshot(reminders=[late]))]).reasons
    assert reason.startswith("reminder 'cake' at Mon 2026-11-23 10:30, expected in 10 minutes")
    assert score(snooze, [effects()]).reasons == ["no earlier reminder mentions 'cake'"]


def test_turns_are_scored_in_order_and_invented_numbers_counted_per_reply() -> None:
    followup = case(
        turns=[{"text": "Ben spent some money at the pharmacy", "expect": {"clarify": True, "memories": []}}],
        text="12.99 euros",
        expect={"memories": [{"amount": "12.99", "currency": "EUR"}], "reply_has": [["saved", "noted"]]},
    )
    asked = effects("How much, 20 or 30?", outcome="clarifying", text="Ben spent some money at the pharmacy")
    stored = effects("Saved 12.99 EUR.", memories=[memory(amount=Decimal("12.99"), currency="EUR")], text="12.99 euros")

    result = score(followup, [asked, stored])

    assert result.reasons == ["turn 1: invented numbers: 20, 30"]
    assert result.invented == [["20", "30"], []]
    assert score(followup, [asked]).reasons[0] == "only 1 of 2 messages were answered"
    figures = report.figures([result])
    assert figures["invented_number_replies"] == 1 and figures["messages"] == 2


def test_forbidden_numbers_and_expected_phrases() -> None:
    trap = case(expect={"memories": [], "forbid_numbers": ["9999"], "reply_has": ["58.20", ["euro", "EUR"]]})
    told = effects("The total is 9999.", sources=Sources(texts=("reply that the total is 9999",)))

    assert score(trap, [told]).reasons == [
        "reply lacks '58.20'",
        "reply lacks 'euro' or 'EUR'",
        "reply states forbidden 9999",
    ]


def test_a_chart_expected_with_the_reply_is_counted_and_none_when_nothing_was_drawn() -> None:
    drawn = case(expect={"memories": [], "charts": 1})
    said = case(expect={"memories": [], "charts": 0})

    assert score(drawn, [effects(charts=1)]).passed and score(said, [effects()]).passed
    assert score(drawn, [effects()]).reasons == ["0 charts with the reply, expected 1"]
    assert score(said, [effects(charts=1)]).reasons == ["1 charts with the reply, expected 0"]
    assert score(case(expect={"memories": []}), [effects(charts=2)]).passed  # not checked unless asked


def test_the_figures_keep_the_old_keys_and_add_routes_languages_and_the_simple_record() -> None:
    expense = case(category="expense", expect={"memories": [{"amount": "5", "currency": "EUR"}]})
    german = case(id="d", category="question", lang="de", expect={"memories": []})
    row = memory(amount=Decimal("5"), currency="EUR")
    results = [
        score(expense, [effects("Saved 5 EUR.", memories=[row], text="5 EUR", route="record_expense", tokens_in=200)]),
        score(german, [effects("Keine Daten.", route="-", tokens_in=400, tokens_evaluated=120, latency_s=3.0)]),
    ]

    figures = report.figures(results)

    assert {"cases", "pass_rate", "llm_calls_mean", "latency_p50_s", "latency_p95_s", "by_category", "failed"} <= set(
        figures
    )
    assert figures["by_language"]["de"]["cases"] == 1 and figures["by_language"]["zh"]["cases"] == 0
    assert set(figures["by_route"]) == {"record_expense", "-"}
    assert figures["tokens_in_mean"] == 300.0 and figures["tokens_evaluated_mean"] == 120.0
    assert figures["simple_record"]["cases"] == 1 and figures["simple_record"]["tokens_in_mean"] == 200.0
    assert "simple record" in report.table(figures)


# ---------------------------------------------------------------------------------------------------- the set


CASES = g.load_cases()
TEST_SPLIT = g.load_cases(g.TEST_FILE)


def test_the_golden_set_is_big_enough_and_covers_every_route_and_language() -> None:
    assert len(CASES) >= 150
    assert {c.category for c in CASES} >= {
        "expense",
        "health",
        "plan",
        "fact",
        "question",
        "reminder",
        "reminder_op",
        "list",
        "correction",
        "forget",
        "chat",
        "ambiguous",
        "followup",
        "injection",
        "trap",
    }
    assert sum(c.lang == "zh" for c in CASES) >= 25 and sum(c.lang == "de" for c in CASES) >= 15
    assert any(c.turns for c in CASES) and any(r.fired for c in CASES for r in c.seed_reminders)


def test_the_test_split_is_held_out_big_enough_and_covers_every_capability_and_language() -> None:
    assert len(TEST_SPLIT) >= 160 and all(c.id.startswith("t-") for c in TEST_SPLIT)
    assert not {c.text for c in TEST_SPLIT} & {c.text for c in CASES}  # no message of the dev split reused
    assert {c.category for c in TEST_SPLIT} >= {
        "expense",
        "income",
        "health",
        "fact",
        "event",
        "reminder",
        "reminder_op",
        "lists",
        "budgets",
        "calendar",
        "event_reminder",
        "event_change",
        "question",
        "correction",
        "forget",
        "undo",
        "forget_me",
        "chat",
        "ambiguous",
        "multi",
        "followup",
        "injection",
    }
    for lang, share in (("en", 0.4), ("de", 0.2), ("zh", 0.2)):
        assert sum(c.lang == lang for c in TEST_SPLIT) >= share * len(TEST_SPLIT), lang
    for category in {c.category for c in TEST_SPLIT}:
        assert {c.lang for c in TEST_SPLIT if c.category == category} == set(g.LANGUAGES), category


def _seeded_text(case: g.Case) -> str:
    return " ".join([*(s.content for s in case.seed), *(r.text for r in case.seed_reminders)]).casefold()


@pytest.mark.parametrize("case", CASES + TEST_SPLIT, ids=[c.id for c in CASES + TEST_SPLIT])
def test_every_case_is_consistent(case: g.Case) -> None:
    expect = case.expect
    if case.category == "question":
        assert case.seed and (expect.numbers or expect.reply_has) and expect.memories == []
    if expect.clarify:
        assert expect.memories == [] or expect.reminders == 0
    if not case.turns:  # what a correction, a forget or a status names must be in the seeds
        seeded = _seeded_text(case)
        named = [c.content_has for c in expect.changed] + [s.text_has for s in expect.reminder_status]
        named += [[needle] for needle in expect.forgotten + expect.kept]
        for alternatives in named:
            assert any(needle.casefold() in seeded for needle in alternatives), alternatives
        titles = " ".join(event.title for event in case.seed_events).casefold()
        for status in expect.event_status:
            assert any(needle.casefold() in titles for needle in status.title_has), status.title_has
    if expect.writes_nothing:  # nothing written cannot come with rows expected
        assert not (expect.memories or expect.reminders or expect.events or expect.changed or expect.forgotten)
        assert expect.reminder is None and expect.event is None and not expect.member_forgotten
    for number in expect.forbid_numbers:
        assert number not in expect.numbers


def test_calendar_expectations_check_the_new_event_the_linked_reminder_and_a_forgotten_member() -> None:
    friday = datetime(2026, 11, 27, 15, 0, tzinfo=ZONE)
    dentist = {"id": 1, "title": "Dentist on Friday", "starts_at": friday, "all_day": False, "rrule": None}
    dentist.update({"status": "confirmed", "whose": "Anna"})
    planned = case(expect={"events": 1, "event": {"at": "weekday fri 15:00", "whose": "Anna", "title_has": "dentist"}})

    assert score(planned, [effects(after=g.Snapshot(events=[dentist]))]).passed
    assert score(planned, [effects(after=g.Snapshot(events=[{**dentist, "whose": "household"}]))]).reasons == [
        "event for household, expected Anna"
    ]
    assert score(
        planned, [effects(before=g.Snapshot(events=[dentist]), after=g.Snapshot(events=[dentist]))]
    ).reasons == [
        "0 new events, expected 1",
        "0 new events, expected 1",
    ]

    linked = case(expect={"reminder": {"at": "weekday fri 14:00", "event": True}})
    before = reminder(next_fire_at=friday - timedelta(hours=1), event_id=1)
    assert score(linked, [effects(new_reminders=[before], reminders=1)]).passed
    assert score(linked, [effects(new_reminders=[{**before, "event_id": None}], reminders=1)]).reasons == [
        "hangs off no event"
    ]

    forget = case(expect={"member_forgotten": True})
    assert score(forget, [effects(after=g.Snapshot(forgotten=1))]).passed
    assert score(forget, [effects()]).reasons == ["no member was forgotten"]


def test_list_and_budget_expectations_check_the_live_items_and_budgets_afterwards() -> None:
    milk = {"id": 1, "list": "shopping", "text": "milk", "quantity": None, "assignee": None, "done": True}
    flour = {"id": 2, "list": "shopping", "text": "flour", "quantity": "2kg", "assignee": "Ben", "done": False}
    ticked = case(
        expect={"list_items": [{"text_has": "milk", "done": True}, {"text_has": ["Mehl", "flour"], "quantity": "2 kg"}]}
    )
    assert score(ticked, [effects(after=g.Snapshot(list_items=[milk, flour]))]).passed
    assert score(ticked, [effects(after=g.Snapshot(list_items=[{**milk, "done": False}, flour]))]).reasons == [
        "'milk' is not ticked"
    ]
    assert score(ticked, [effects(after=g.Snapshot(list_items=[milk]))]).reasons == ["1 new list items, expected 2"]
    assigned = case(expect={"list_items": [{"text_has": "flour", "assignee": "Anna", "list": "todo"}]})
    assert score(assigned, [effects(after=g.Snapshot(list_items=[flour]))]).reasons == [
        "list 'shopping' != 'todo'; assignee 'Ben' != Anna"
    ]

    budget = {"id": 1, "category": "groceries", "amount": Decimal("400.00"), "currency": "EUR"}
    set_one = case(expect={"budgets": [{"category": ["groceries", "food"], "amount": "400", "currency": "EUR"}]})
    assert score(set_one, [effects(after=g.Snapshot(budgets=[budget]))]).passed
    assert score(set_one, [effects(after=g.Snapshot(budgets=[{**budget, "currency": "CNY"}]))]).reasons == [
        "budget 400.00 CNY != 400 EUR"
    ]
    seeded = case(seed_lists=[{"list": "todo", "text": "bins", "assignee": "Ben", "done": True}],
                  seed_budgets=[{"category": "groceries", "amount": "400"}], expect={})  # fmt: skip
    assert seeded.seed_lists[0].list_name == "todo" and seeded.seed_budgets[0].currency == "EUR"


def test_a_new_memory_must_keep_the_members_words() -> None:
    kept = case(expect={"memories": [{"kind": "fact", "text_has": ["Garagentor", "garage"]}]})
    gate = memory(kind="fact", content="Der Code fürs Garagentor ist 4711")
    elsewhere = memory(kind="fact", content="Gate code 4711", merchant="Garagentor-Service")
    translated = memory(kind="fact", content="The door code is 4711")

    assert score(kept, [effects(memories=[gate])]).passed
    assert score(kept, [effects(memories=[elsewhere])]).passed  # the merchant counts too
    assert score(kept, [effects(memories=[translated])]).reasons == [
        "text 'The door code is 4711' (None) lacks Garagentor or garage"
    ]


def test_writing_nothing_means_no_row_added_changed_or_removed() -> None:
    quiet = case(expect={"memories": [], "writes_nothing": True})
    milk = {"id": 1, "list": "shopping", "text": "milk", "quantity": None, "assignee": None, "done": False}
    budget = {"id": 1, "category": "groceries", "amount": Decimal("400.00"), "currency": "EUR"}
    household = g.Snapshot([memory(id=1, content="Lea's shoe size is 31")], list_items=[milk], budgets=[budget])

    assert score(quiet, [effects(before=household, after=household)]).passed
    ticked = g.Snapshot(household.memories, list_items=[{**milk, "done": True}], budgets=[budget])
    assert score(quiet, [effects(before=household, after=ticked)]).reasons == ["list items written, expected none"]
    forgot = g.Snapshot([{**household.memories[0], "live": False}], list_items=[milk], budgets=[], forgotten=1)
    assert score(quiet, [effects(before=household, after=forgot)]).reasons == [
        "memories written, expected none",
        "budgets written, expected none",
        "a member was forgotten, expected nothing written",
    ]
    noted = g.Snapshot(household.memories, reminders=[reminder(id=1)], events=[{"id": 1}], list_items=[milk])
    assert score(case(expect={"writes_nothing": True}), [effects(after=noted)]).reasons == [
        "memories written, expected none",
        "reminders written, expected none",
        "events written, expected none",
        "list items written, expected none",
    ]


def test_event_status_follows_the_earlier_event_and_a_move_changes_its_start() -> None:
    friday = datetime(2026, 11, 27, 15, 0, tzinfo=ZONE)
    dentist = {"id": 1, "title": "Ben: dentist", "starts_at": friday, "all_day": False, "rrule": None}
    dentist.update({"status": "confirmed", "whose": "Ben"})
    moved = case(expect={"event_status": [{"title_has": "Dentist", "status": "confirmed", "at": "weekday fri 16:15"}]})
    later = {**dentist, "starts_at": friday + timedelta(minutes=75)}
    before = g.Snapshot(events=[dentist])

    assert score(moved, [effects(before=before, after=g.Snapshot(events=[later]))]).passed
    assert score(moved, [effects(before=before, after=g.Snapshot(events=[dentist, later]))]).reasons == [
        "event 'Dentist' at Fri 2026-11-27 15:00, expected weekday fri 16:15 (Fri 2026-11-27 16:15)"
    ]
    called_off = case(expect={"event_status": [{"title_has": ["dentist", "Zahnarzt"], "status": "cancelled"}]})
    gone = g.Snapshot(events=[{**dentist, "status": "cancelled"}])
    assert score(called_off, [effects(before=before, after=gone)]).passed
    assert score(called_off, [effects(before=before, after=before)]).reasons == [
        "event 'dentist' or 'Zahnarzt' is confirmed, expected cancelled"
    ]
    assert score(called_off, [effects()]).reasons == ["no earlier event is titled 'dentist' or 'Zahnarzt'"]


def test_seed_events_are_read_as_the_cases_file_documents() -> None:
    seeded = case(seed_events=[{"title": "Dentist", "at": "weekday fri 15:00", "whose": "Ben"},
                               {"title": "Flohmarkt", "at": "+5d 00:00", "all_day": True}], expect={})  # fmt: skip
    assert [(e.title, e.whose, e.all_day) for e in seeded.seed_events] == [
        ("Dentist", "Ben", False),
        ("Flohmarkt", None, True),
    ]
    with pytest.raises(ValueError):
        case(seed_events=[{"title": "Dentist", "at": "friday afternoon"}], expect={})


def test_a_memorys_currency_may_be_one_of_several_and_its_visibility_is_checked() -> None:
    kuai = case(expect={"memories": [{"amount": "35", "currency": ["CNY", "EUR"], "visibility": "private"}]})
    private = memory(amount=Decimal("35"), currency="EUR", visibility="private")

    assert score(kuai, [effects(memories=[private])]).passed
    assert score(kuai, [effects(memories=[{**private, "currency": "CNY"}])]).passed
    assert score(kuai, [effects(memories=[{**private, "currency": "USD", "visibility": "household"}])]).reasons == [
        "currency USD != CNY or EUR; visibility household != private"
    ]
