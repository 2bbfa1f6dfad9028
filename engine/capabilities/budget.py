"""Budgets: "set a 400 euro grocery budget", "lets keep groceries under 400 a month", "how much is left for eating
out?", "remove the groceries budget". The amount comes from the grounding; the model names the category (none when
one budget or the words settle it)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

from engine.analysis import PlannedCall
from engine.capabilities.capability import Ask, Capability, Picked, Reading, Said, Situation
from engine.capabilities.forget import FORGET
from engine.capabilities.reminder import DONT_FORGET
from engine.capabilities.words import QUESTION, REQUEST, cues
from engine.executor import StepResult
from engine.grounding.categories import EXPENSE_CATEGORIES, categories_named
from engine.grounding.money import home_currency

_I = re.IGNORECASE
_PHRASES: dict[str, dict[str, str]] = {
    "budget_set": {
        "en": "Budget set: {category} {amount} {currency} a month.",
        "de": "Budget gesetzt: {category} {amount} {currency} im Monat.",
        "zh": "已设置预算：{category}每月 {amount} {currency}。",
    },
    "budget_line": {
        "en": "{category}: {spent} of {amount} {currency} spent this month, {left} left ({percent} %).",
        "de": "{category}: {spent} von {amount} {currency} diesen Monat ausgegeben, {left} übrig ({percent} %).",
        "zh": "{category}：本月已花 {spent}，预算 {amount} {currency}，还剩 {left}（{percent}%）。",
    },
    "budget_removed": {
        "en": "Budget removed: {category} ({amount} {currency} a month).",
        "de": "Budget entfernt: {category} ({amount} {currency} im Monat).",
        "zh": "已删除预算：{category}（每月 {amount} {currency}）。",
    },
    "ask_which_budget": {
        "en": "Which budget should I remove: {budgets}?",
        "de": "Welches Budget soll ich entfernen: {budgets}?",
        "zh": "要删除哪个预算：{budgets}？",
    },
    "no_such_budget": {
        "en": "There is no {category} budget; the budgets are: {budgets}. I haven't changed anything.",
        "de": "Es gibt kein Budget für {category}; die Budgets sind: {budgets}. Ich habe nichts geändert.",
        "zh": "没有{category}预算；现有预算：{budgets}。我没有做任何更改。",
    },
    "no_budgets": {
        "en": "There are no budgets yet. Say e.g. “set a 400 euro grocery budget”.",
        "de": "Es gibt noch keine Budgets. Sag z. B. „Setze ein Budget von 400 Euro für Lebensmittel“.",
        "zh": "还没有预算。可以说“把买菜预算设为2000元”。",
    },
    "ask_budget_amount": {
        "en": "How much should the monthly budget be (and in which currency)?",
        "de": "Wie hoch soll das Monatsbudget sein (und in welcher Währung)?",
        "zh": "每月预算设多少？",
    },
}


def _say(key: str, language: str, **values: object) -> str:
    texts = _PHRASES[key]
    return texts.get(language, texts["en"]).format(**values)


BUDGET = cues(
    r"\bwie ?viel\b.{0,30}\bübrig\b|\bhow much\b.{0,30}\bleft\b",
    r"budget",  # "freizeitbudget" too
    r"\blimit\b|\bwhat'?s left (?:of|in)\b|\bwhats left (?:of|in)\b|\bim rahmen\b|\bobergrenze\b|上限|超支",
    r"\b(?:keep|stay|limit)\b.{0,30}\b(?:under|below|to)\b.{0,15}\b(?:a|per|each|every) month\b",
    r"\bno more than\b.{0,20}\b(?:a|per) month\b",
    r"\b(?:höchstens|maximal|nicht mehr als)\b.{0,30}\b(?:im|pro) monat\b",
    r"每月.{0,8}不超过|每个月.{0,8}最多",
    r"预算",
    r"\bhow much (?:is|do we have|have we got) left\b",
    r"\bwie ?viel (?:ist|haben wir) (?:noch )?übrig\b",
    r"还剩多少",
)

# A budget said without the word: an amount, a ceiling and "a month" ("kids activities max 120€ a month",
# "每个月零食别超过100块"); "Netflix 13.99 monthly" has no ceiling and is a payment.
CEILING = cues(
    r"\b(?:max(?:imum)?|at most|no more than|not more than|under|below|cap(?:ped)?|limit(?:ed)?|tops)\b",
    r"\b(?:höchstens|maximal|nicht mehr als|unter|obergrenze|limit)\b",
    r"别超过|不超过|不要超过|不能超过|最多|控制在|以内|封顶|上限",
)
PER_MONTH = cues(r"\b(?:a|per|each|every|/) ?month\b|/mo\b", r"\b(?:im|pro|je) monat\b|\bmonatlich", r"每个?月|一个月")


Category = Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=30)]


class BudgetAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: Annotated[Category | None, Picked] = None


INSTRUCTIONS = f"""\
You keep a family's monthly budgets. Give `category`: the spending the budget is for, as expenses are filed:
one of {", ".join(EXPENSE_CATEGORIES)}. When budgets are listed, pick one of them, or null for all.
"""
INSTRUCTIONS += """\
Examples:
Amount: 400 EUR | Message: set a 400 euro grocery budget → {"category":"groceries"}
Amount: 2000 CNY | Message: 把买菜预算设为2000元 → {"category":"groceries"}
Budgets: fuel, groceries | Question: Wie viel ist beim Tanken noch übrig? → {"category":"fuel"}
"""


class Budget(Capability):
    name = "budget"
    instructions = INSTRUCTIONS
    description = "sets a monthly budget or asks how much of one is left"
    examples = {
        "en": (
            "set a 400 euro grocery budget",
            "lets keep groceries under 400 a month",
            "how much is left for eating out?",
            "cap takeaway at 150 a month",
            "we want to cap kids clothes at 80 a month",
            "budget for petrol 200 monthly pls",
            "how much room do we still have in the fun money budget",
            "are we still under the restaurant limit this month",
            "no more than 60 a month on coffee ☕ thats the budget",
            "raise the grocery budget to 450",
            "whats left of the 300 for household stuff",
            "monthly limit for hobbies 100",
        ),
        "de": (
            "Setze ein Budget von 300 Euro für Restaurants",
            "wie viel ist beim Tanken noch übrig?",
            "lass uns fürs essen gehen höchstens 200 im monat ausgeben",
            "budget für klamotten 100 euro monatlich",
            "wieviel ham wir beim lieferando budget noch",
            "für süßkram gibts ab jetzt ein budget von 50 im monat",
            "sind wir bei den lebensmitteln noch im rahmen",
            "was is vom freizeitbudget noch da",
            "pro monat max 80 für hobbys bitte",
            "drogerie budget 60 im monat bitte",
        ),
        "zh": (
            "把买菜预算设为2000元",
            "这个月餐饮预算还剩多少？",
            "外卖每月最多500",
            "给孩子买衣服的预算每月300",
            "加油的预算还有多少",
            "娱乐预算还有多少",
            "零花钱预算还剩多少",
            "以后每月在外面吃饭不超过1000",
            "日用品预算定个400",
            "咖啡每月预算200",
            "水果预算还剩多少钱",
        ),
    }
    refines = ("sum", "expense", "lookup", "fact", "shared_list", "forget")
    tools = ("budget_status", "set_budget", "remove_budget")
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        text = reading.text
        ceiling = bool(reading.grounding.money and CEILING.search(text) and PER_MONTH.search(text))
        return ceiling or BUDGET.search(text) is not None

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        run = situation.run
        registry = run.deps.registry
        async with run.transaction() as conn:
            status = await registry.run(run.tool_context(conn), "budget_status", registry.validate("budget_status", {}))
        situation.rows = list(status.get("budgets", []))
        if _removes(situation):  # never a forget of the notes it names
            return _to_remove(situation)
        if _sets(situation):
            money = situation.grounding.money[0]
            currency = money.currency
            if currency is None:
                me = next((m for m in run.members if m.id == run.message.user_id), None)
                locale = me.locale if me is not None else "en"
                currency = home_currency(locale, run.timezone, run.deps.clock.now().date())
            if currency is None:
                return Ask(_say("ask_budget_amount", situation.language))
            situation.choices["currency"] = [currency]
            if situation.grounding.category is not None:  # "max 300 für lebensmittel im monat": groceries
                situation.decided = BudgetAnswer(category=situation.grounding.category)
            situation.choices["category"] = list(EXPENSE_CATEGORIES)
            return None
        if not situation.rows:
            return Said(_say("no_budgets", situation.language))
        categories = sorted({str(row["category"]) for row in situation.rows})
        named = [c for c in categories if re.search(rf"\b{re.escape(c.rstrip('s'))}", situation.text, _I)]
        if len(categories) == 1 or len(named) == 1:
            situation.decided = BudgetAnswer(category=named[0] if named else None)
        situation.choices["category"] = categories
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None if situation.decided is not None else BudgetAnswer

    def prompt(self, situation: Situation) -> str:
        if _sets(situation):
            money = situation.grounding.money[0]
            return f"Amount: {money.amount} {situation.choices['currency'][0]}\nMessage: {situation.text}"
        return f"Budgets: {', '.join(situation.choices['category'])}\nQuestion: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        answer = situation.decided or answer
        assert isinstance(answer, BudgetAnswer)
        if _removes(situation):
            if answer.category is None:  # the words and the model name none of several
                return _which(situation, situation.choices["category"])
            rows = [row for row in situation.rows if row["category"] == answer.category]  # one per currency
            return [
                PlannedCall(id=f"s{n}", tool="remove_budget", args={"budget_id": int(row["budget_id"])})
                for n, row in enumerate(rows, start=1)
            ]
        if _sets(situation):
            money = situation.grounding.money[0]
            args = {"category": answer.category or "other", "amount": str(money.amount)}
            return [
                PlannedCall(id="s1", tool="set_budget", args={**args, "currency": situation.choices["currency"][0]})
            ]
        return [PlannedCall(id="s1", tool="budget_status", args={"category": answer.category})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        data, language = results[0].result, situation.language
        if results[0].tool == "set_budget":
            return _say("budget_set", language, **{k: data[k] for k in ("category", "amount", "currency")})
        if results[0].tool == "remove_budget":
            removed = [r.result for r in results if r.ok and r.result]
            return "\n".join(
                _say("budget_removed", language, **{k: row[k] for k in ("category", "amount", "currency")})
                for row in removed
            )
        return "\n".join(_say("budget_line", language, **line) for line in data.get("budgets", []))


# Asked, as a question, to set one: "can we cap eating out at 150 a month", "sollen wir essen gehen auf 200 im monat
# begrenzen?" — not "are we under 150 this month?".
_ASKED_TO_SET = cues(
    r"^\W*(?:can|could|shall|should) we (?:please |pls )?(?:cap|set|limit|keep|put|make|stick)\b",
    r"^\W*(?:können|sollen|sollten|wollen) wir\b.{0,50}\b(?:begrenzen|setzen|festlegen|deckeln)\b",
    r"^\W*(?:我们)?(?:能不能|要不要|可不可以)(?:把)?.{0,12}(?:定|设|控制)",
)


def _sets(situation: Situation) -> bool:
    """'Set a 400 euro grocery budget' sets one, and so does asking for it ("can we cap …", "could you set …"); any
    other question, or a message without an amount, asks how it stands."""
    text = situation.text
    asked = QUESTION.search(text) and not (REQUEST.search(text) or _ASKED_TO_SET.search(text))
    return bool(situation.grounding.money) and not asked


# Asked to remove one: "remove the groceries budget", "lösch das Budget für Kleidung", "不要餐饮预算了", "we don't need
# the eating out budget anymore". Said of a budget or a limit, so "stop overspending" or "kein Geld mehr" is none.
_REMOVE = cues(
    r"\b(?:remove|delete|drop|scrap|ditch|cancel|axe|get rid of)\b|\b(?:don'?t|dont|do not|no longer) need\b",
    r"\blösch|\bentfern|\bstreich|\babschaff|\baufheben\b|\bauflösen\b|\b(?:kann|muss) weg\b"
    r"|\bbrauch\w*\b.{0,40}\bnicht mehr\b|\bnicht mehr (?:nötig|gebraucht)\b",
    r"删|去掉|取消|不要.{0,12}了|不需要|不用.{0,12}了",
)
_OF_A_BUDGET = cues(r"\bbudgets?\b|\blimits?\b|\bcap\b", r"budget|\blimit|\bobergrenze\b", r"预算|上限")


def _removes(situation: Situation) -> bool:
    """Whether the member asks to remove a budget: removal words about a budget, and no amount (with one, "drop
    the grocery budget to 300" sets it)."""
    text = situation.text
    asked = FORGET.search(text) or _REMOVE.search(text)
    return bool(asked and _OF_A_BUDGET.search(text)) and not DONT_FORGET.search(text) and not situation.grounding.money


def _to_remove(situation: Situation) -> Said | Ask | None:
    """The budget to remove when the words settle it (the one the household has, or the one they name, in any
    language), a question back when they name several, None for the model to pick one it names in other words."""
    if not situation.rows:
        return Said(_say("no_budgets", situation.language))
    categories = sorted({str(row["category"]) for row in situation.rows})
    said = categories_named(situation.text)
    named = [c for c in categories if c in said or re.search(rf"\b{re.escape(c.rstrip('s'))}", situation.text, _I)]
    situation.choices["category"] = categories
    if not named and said:  # "remove the fuel budget" where only groceries has one
        other = sorted(said)[0]
        return Said(_say("no_such_budget", situation.language, category=other, budgets=", ".join(categories)))
    if len(named) > 1:
        return _which(situation, named)
    if named or len(categories) == 1:
        situation.decided = BudgetAnswer(category=(named or categories)[0])
    return None


def _which(situation: Situation, categories: list[str]) -> Ask:
    return Ask(_say("ask_which_budget", situation.language, budgets=", ".join(categories)), tuple(categories))
