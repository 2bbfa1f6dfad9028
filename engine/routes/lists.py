"""Routes for shared lists ("add milk and eggs to the shopping list", "bought the milk", "Tom takes the bins task",
"what's on the list?") and budgets ("set a 400 euro grocery budget", "how much is left for groceries?").

The words decide what is done to a list where they can (the action is then the only choice the model has); the
model names the list, the items with their quantities and the member who takes one on. Budgets take their amount
from the grounding; the model names the category.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from engine.analysis import PlannedCall
from engine.checklists import render
from engine.executor import StepResult
from engine.grounding.money import home_currency
from engine.routes.cues import QUESTION
from engine.routes.route import Ask, Picked, Reroute, Said, Situation
from tools.lists import canonical_name

Action = Literal["add", "show", "done", "assign", "clear", "new_list"]
_I = re.IGNORECASE
# What the member does to a list, by its words; the first family that matches decides.
_ACTIONS: list[tuple[Action, re.Pattern[str]]] = [
    ("new_list", re.compile(r"\bnew\b.{0,30}\blist\b|\bneue\b.{0,30}liste|新建|新的.{0,10}清单|创建.{0,10}清单", _I)),
    (
        "clear",
        re.compile(r"\bclear\b|\bremove (?:the |all )?(?:bought|done|ticked)|\blösch|\bentfern|清除|清空|删掉", _I),
    ),
    ("assign", re.compile(r"\btakes?\b|\bwill do\b|\bassign|\bübernimmt\b|\bmacht\b|负责|来做|去做", _I)),
    (
        "done",
        re.compile(
            r"\bbought\b|\bgot the\b|\btick|\bcheck(?:ed)? off\b|\b(?:is |are )?done\b"
            r"|\bgekauft\b|\bbesorgt\b|\berledigt\b|\babhaken\b|买了|买好了|完成了|搞定了|做完了",
            _I,
        ),
    ),
    ("add", re.compile(r"\badd\b|\bput\b|\bneed\b|\bauf die\b|\bhinzu|\bbrauchen\b|加|添加|放到|放进|记上", _I)),
    ("show", re.compile(r"\bshow\b|\bwhat'?s on\b|\bzeig|\bwas steht\b|看看|有什么|有哪些", _I)),
]
_PHRASES: dict[str, dict[str, str]] = {
    "added": {
        "en": "Added to the {list} list: {items}.",
        "de": "Auf der Liste {list}: {items}.",
        "zh": "已加到{list}清单：{items}。",
    },
    "ticked": {"en": "Ticked off: {items}.", "de": "Abgehakt: {items}.", "zh": "已勾掉：{items}。"},
    "assigned": {"en": "{who} takes: {items}.", "de": "{who} übernimmt: {items}.", "zh": "{who}负责：{items}。"},
    "unassigned": {
        "en": "Nobody is on it now: {items}.",
        "de": "Niemand zuständig: {items}.",
        "zh": "已取消分配：{items}。",
    },
    "cleared": {
        "en": "Cleared the ticked items from the {list} list.",
        "de": "Abgehakte Einträge von der Liste {list} entfernt.",
        "zh": "已从{list}清单清除勾掉的项目。",
    },
    "nothing_cleared": {
        "en": "Nothing on the {list} list is ticked off.",
        "de": "Auf der Liste {list} ist nichts abgehakt.",
        "zh": "{list}清单上没有勾掉的项目。",
    },
    "new_list": {"en": "New list: {list}.", "de": "Neue Liste: {list}.", "zh": "新清单：{list}。"},
    "no_lists": {
        "en": "There are no lists yet. Say e.g. “add milk to the shopping list”.",
        "de": "Es gibt noch keine Listen. Sag z. B. „Milch auf die Einkaufsliste“.",
        "zh": "还没有清单。可以说“把牛奶加到购物清单”。",
    },
    "ask_items": {
        "en": "What should I put on the list?",
        "de": "Was soll auf die Liste?",
        "zh": "要把什么加到清单上？",
    },
    "ask_who": {"en": "Who takes it on?", "de": "Wer übernimmt das?", "zh": "谁来负责？"},
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


def list_action(text: str) -> Action:
    """What the member's words do to a list; a question shows it, anything else adds to it."""
    for action, pattern in _ACTIONS:
        if pattern.search(text):
            return action
    return "show" if QUESTION.search(text) else "add"


Words = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=60)]


class ListEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Words = Field(description="the item in the member's words, without the quantity")
    quantity: Annotated[str, StringConstraints(strip_whitespace=True, max_length=20)] | None = None


class ListAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Annotated[Action, Picked]
    list_name: Words | None = Field(None, description="shopping, todo, packing, or the name of another list")
    items: list[ListEntry] = Field(default_factory=list, max_length=20)
    assignee: Annotated[str | None, Picked] = None


class SharedListRoute:
    name = "shared_list"

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        action = list_action(situation.text)
        run = situation.run
        registry = run.deps.registry
        args = registry.validate("show_list", {"include_done": True})
        async with run.transaction() as conn:
            shown = await registry.run(run.tool_context(conn), "show_list", args)
        situation.rows = [item for view in shown.get("lists", []) for item in view.get("items", [])]
        if action == "done" and not any(_named(item, situation.text) for item in situation.rows):
            return Reroute("fact")  # "bought the concert tickets" with no tickets on any list is news, not a tick
        if action == "assign" and not situation.rows:
            return Said(_say("no_lists", situation.language))
        if action in ("show", "clear") and not shown.get("lists"):
            return Said(_say("no_lists", situation.language))
        situation.choices["action"] = [action]
        situation.choices["assignee"] = [member.name for member in run.members]
        situation.choices["lists"] = [view["list_name"] for view in shown.get("lists", [])]
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return ListAnswer

    def prompt(self, situation: Situation) -> str:
        lists: dict[str, list[str]] = {name: [] for name in situation.choices.get("lists", [])}
        for item in situation.rows:
            if not item.get("done"):
                lists.setdefault(str(item["list_name"]), []).append(str(item["text"]))
        shown = " | ".join(f"{name} ({', '.join(items[:15]) or '-'})" for name, items in lists.items()) or "-"
        members = ", ".join(situation.choices.get("assignee", []))
        return f"Lists: {shown}\nMembers: {members}\nMessage: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        assert isinstance(answer, ListAnswer)
        action = situation.choices["action"][0]
        language = situation.language
        items = [{"text": i.text, **({"quantity": i.quantity} if i.quantity else {})} for i in answer.items]
        name = self._list(situation, answer)
        if action == "show":
            return [PlannedCall(id="s1", tool="show_list", args={"list_name": name})]
        if action == "clear":
            return [PlannedCall(id="s1", tool="clear_done_items", args={"list_name": name or "shopping"})]
        if action == "new_list":
            args = {"list_name": answer.list_name or "packing", "items": items}
            return [PlannedCall(id="s1", tool="add_list_items", args=args)]
        if not items:
            return Ask(_say("ask_items", language))
        if action == "add":
            for item in items:
                if answer.assignee:
                    item["assignee"] = answer.assignee
            return [PlannedCall(id="s1", tool="add_list_items", args={"list_name": name or "shopping", "items": items})]
        if action == "assign" and not answer.assignee:
            return Ask(_say("ask_who", language))
        change: dict[str, Any] = {"done": True} if action == "done" else {"assignee": answer.assignee}
        return [
            PlannedCall(id=f"s{n}", tool="update_list_item", args={"item": item["text"], **change})
            for n, item in enumerate(items, 1)
        ]

    def _list(self, situation: Situation, answer: ListAnswer) -> str | None:
        """The list the answer names, when it names one the household has or a common one; else None (all)."""
        if answer.list_name is None:
            return None
        name = canonical_name(answer.list_name)[0]
        known = {known.lower() for known in situation.choices.get("lists", [])}
        common = {"shopping", "todo", "packing"}
        return name if name.lower() in known or name in common else None

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        language = situation.language
        done = [r for r in results if r.ok and r.result]
        if not done:
            return ""
        parts: list[str] = []
        for result in done:
            data = result.result or {}
            if result.tool == "show_list":
                parts += [render(v["list_name"], v.get("items", []), language) for v in data.get("lists", [])]
            elif result.tool == "add_list_items" and not data.get("items"):
                parts.append(_say("new_list", language, list=data["list_name"]))
            elif result.tool == "add_list_items":
                labels = ", ".join(_label(item) for item in data.get("items", []))
                parts.append(_say("added", language, list=data["list_name"], items=labels))
            elif result.tool == "clear_done_items":
                key = "cleared" if data.get("cleared") else "nothing_cleared"
                parts.append(_say(key, language, list=data["list_name"]))
        changed = [r.result or {} for r in done if r.tool == "update_list_item"]
        if changed:
            labels = ", ".join(str(item["text"]) for item in changed)
            if situation.choices["action"][0] == "done":
                parts.append(_say("ticked", language, items=labels))
            elif changed[0].get("assignee"):
                parts.append(_say("assigned", language, who=changed[0]["assignee"], items=labels))
            else:
                parts.append(_say("unassigned", language, items=labels))
        return "\n".join(parts)


def _named(item: dict[str, Any], text: str) -> bool:
    """Whether the message names the item: the item's words in it, or a word of it (three letters or more, or
    any Chinese character pair) in the item."""
    said, listed = text.casefold(), str(item.get("text", "")).casefold()
    if listed in said:
        return True
    words = re.findall(r"[^\W\d_]{3,}", said) + re.findall(r"(?=([\u4e00-\u9fff]{2}))", said)
    return any(word in listed for word in words if word not in _FILLER)


_FILLER = frozenset({"the", "bought", "got", "done", "gekauft", "besorgt", "erledigt", "买了", "买好"})


def _label(item: dict[str, Any]) -> str:
    return f"{item['quantity']} {item['text']}" if item.get("quantity") else str(item["text"])


Category = Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=30)]


class BudgetAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    category: Annotated[Category | None, Picked] = None


class BudgetRoute:
    name = "budget"

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        run = situation.run
        registry = run.deps.registry
        async with run.transaction() as conn:
            status = await registry.run(run.tool_context(conn), "budget_status", registry.validate("budget_status", {}))
        situation.rows = list(status.get("budgets", []))
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
        return "\n".join(_say("budget_line", language, **line) for line in data.get("budgets", []))


def _sets(situation: Situation) -> bool:
    """'Set a 400 euro grocery budget' sets one; a question, or a message without an amount, asks how it stands."""
    return bool(situation.grounding.money) and not QUESTION.search(situation.text)
