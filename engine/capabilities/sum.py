"""Totals, counts, averages and the largest or smallest of recorded money, computed by SQL (`aggregate`); the model
chooses among the household's categories and the operation the words leave open. A period the words name is taken
with its exact first and last day."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.analysis import PlannedCall
from engine.capabilities._memories import quote
from engine.capabilities.capability import Ask, Capability, Picked, Reading, Situation
from engine.capabilities.phrases import say
from engine.capabilities.words import GONE_ON, UNPAID, cues
from engine.executor import StepResult
from engine.grounding.categories import Kind, categories_named, category_of, label
from engine.grounding.language import CJK
from tools.infra.periods import PERIODS
from tools.storage import memories as stored

_I = re.IGNORECASE
SUM = cues(
    r"\bhow much\b",
    r"\bhow many times\b",
    r"\bhow often\b",
    r"\btotal\b",
    r"\bin sum\b",
    r"\baverage\b",
    r"\bspen[dt]\b",
    r"\bcost\b",
    r"\bpaid\b",
    r"\bpay\b",
    r"\bexpenses?\b",
    r"\bspending\b",
    r"\bbiggest\b",
    r"\blargest\b",
    r"\bmost expensive\b",
    r"\bavg\b",
    r"\bmean\b",
    r"\bcame in\b",
    r"最大",
    r"最贵",
    r"最高",
    r"\bteuerste",
    r"\bgrößte",
    r"\bhöchste",
    r"\bmost\b",
    r"\bearn(?:ed)?\b",
    r"\bincome\b",
    r"一共",
    r"总共",
    r"花了多少",
    r"多少钱",
    r"平均",
    r"几次",
    r"花费",
    r"支出",
    r"花在",
    r"最多",
    r"收入",
    r"花了",
    r"\bwie ?viel\b",
    r"\binsgesamt\b",
    r"\bausgegeben\b",
    r"\bdurchschnitt",
    r"\bgekostet\b",
    r"\bam meisten\b",
    GONE_ON,
    r"(?:交|付|花)了?多少",  # "这个月电费交了多少来着"
    r"(?:费|开销|花销|支出)(?:一共|总共|加起来)?(?:是|有)?多少",  # "这个月油费多少"
)


def asks_about_a_note(text: str) -> bool:
    """'How many ibuprofen may Tom take?' asks about a stored fact, not about spending; so does a question about money
    told as a price, a debt or a balance ("how much did tom owe us again", "wie viel ist noch im urlaubstopf übrig")."""
    if UNPAID.search(text):  # what is left of a budget is the budget's to say: it refines this capability
        return True
    how_many = re.search(
        r"\bhow (?:many|much)\b(?! (?:times|money|did|do|have|has|was|were|is|are|we|i|on)\b)", text, _I
    )
    return bool(how_many) and not re.search(
        r"\bspen[dt]|\bcost|\bpa(?:id|y)|\bbuy|\bbought|\bearn|\bexpens|\bpurchas|\b(?:went|go(?:ne|es)?) on\b",
        text,
        _I,
    )


# Money spent on someone of the family named by who they are ("on our daughter", "für die Kinder", "在女儿身上"):
# the word, to find the rows about them.
_RELATIVE = re.compile(
    r"\b(?:on|for) (?:our |my |the )?(?P<en>daughters?|sons?|kids|children|baby|grandma|granny|grandpa|mum|mom|dad)\b"
    r"|\bfür (?:unsere?n? |meine?n? |die |den |das )?(?P<de>tochter|töchter|sohn|söhne|kinder|kind|baby|oma|opa)\b"
    r"|(?:在|给|为)(?P<zh>女儿|闺女|儿子|孩子们?|宝宝|奶奶|爷爷|外婆|外公|姥姥|姥爷)",
    re.I,
)


INCOME = re.compile(
    r"\bearn|\bincome|\bsalary|\breceived|\bcame in\b|\bgot paid\b|收入|工资|奖金|进账|\beinnahm|\bgehalt|\bverdient"
    r"|\bbekommen\b",
    re.I,
)


# What the question asks for, where its words say it plainly; otherwise the model reads it.
_MOST_ON = re.compile(
    r"\bspen[dt]? (?:the )?most\b|\bmost (?:money )?(?:on|for)\b|\bwhere did (?:the|our) money go\b|\bbreakdown\b"
    r"|花(?:得|的)?最多|最多的是|哪.{0,4}最多|\bam meisten\b|\bwofür\b",
    re.I,
)


_OPS_BY_CUE = (
    (
        "max",
        re.compile(
            r"\bbiggest\b|\blargest\b|\bmost expensive\b|\bpriciest\b|\bhighest\b|最大|最贵|最高|"
            r"\bteuerste|\bgrößte|\bhöchste",
            re.I,
        ),
    ),
    (
        "min",
        re.compile(r"\bsmallest\b|\bcheapest\b|\blowest\b|最小|最便宜|最低|\bbilligste|\bkleinste|\bniedrigste", re.I),
    ),
    ("avg", re.compile(r"\baverage\b|\bavg\b|\bmean\b|平均|\bdurchschnitt", re.I)),
    (
        "count",
        re.compile(
            r"\bhow many\b|\bhow often\b|\bnumber of\b|几次|多少次|几笔|多少笔|\bwie oft\b|\bwie viele\b|\banzahl", re.I
        ),
    ),
)


_SPAN = {
    "en": {
        "today": "today",
        "yesterday": "yesterday",
        "this_week": "this week",
        "last_week": "last week",
        "this_month": "this month",
        "last_month": "last month",
        "this_year": "this year",
        "last_year": "last year",
        "last_7_days": "in the last 7 days",
        "last_30_days": "in the last 30 days",
    },
    "de": {
        "today": "heute",
        "yesterday": "gestern",
        "this_week": "diese Woche",
        "last_week": "letzte Woche",
        "this_month": "diesen Monat",
        "last_month": "letzten Monat",
        "this_year": "dieses Jahr",
        "last_year": "letztes Jahr",
        "last_7_days": "in den letzten 7 Tagen",
        "last_30_days": "in den letzten 30 Tagen",
    },
    "zh": {
        "today": "今天",
        "yesterday": "昨天",
        "this_week": "本周",
        "last_week": "上周",
        "this_month": "这个月",
        "last_month": "上个月",
        "this_year": "今年",
        "last_year": "去年",
        "last_7_days": "最近7天",
        "last_30_days": "最近30天",
    },
}


_OPS = {
    "sum": {"en": "Total", "de": "Summe", "zh": "合计"},
    "avg": {"en": "Average", "de": "Durchschnitt", "zh": "平均"},
    "max": {"en": "Largest", "de": "Höchster Betrag", "zh": "最高"},
    "min": {"en": "Smallest", "de": "Kleinster Betrag", "zh": "最低"},
    "count": {"en": "Entries", "de": "Einträge", "zh": "笔数"},
}


_ENTRIES = {"en": "{n} entries", "de": "{n} Einträge", "zh": "{n}笔"}


class SumAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    op: Annotated[Literal["sum", "count", "avg", "max", "min"], Picked]
    categories: Annotated[list[str], Picked] = Field(default_factory=list, max_length=6)
    whose: Annotated[str, Picked] = "household"
    group_by: Annotated[Literal["none", "category", "month", "merchant", "author"], Picked] = "none"
    period: Annotated[str | None, Picked] = None


INSTRUCTIONS = """\
You turn a family member's question about their money into a database query. Fill:
- op: "sum" for how much, "count" for how many times, "avg" for an average, "max" for the biggest, "min" for the
  smallest. For "what did we spend the most on" use "sum" with group_by "category".
- categories: the household's categories the question is about (from the list given), [] for all spending.
- whose: "household" for the family's own money, a member's name when the question is about that member's
  spending only, "other" when it asks about people outside the household (another family, neighbours, friends).
- group_by: "none", or "category" / "month" / "merchant" / "author" when the question asks for a breakdown.
- period: the time span asked about; "all" when the question names none.
Examples:
Categories: groceries, fuel | Question: How much did we spend on groceries this month?
{"op":"sum","categories":["groceries"],"whose":"household","group_by":"none","period":"this_month"}
Categories: groceries, transport | Question: 这个月买了几次菜？
{"op":"count","categories":["groceries"],"whose":"household","group_by":"none","period":"this_month"}
Categories: rent, restaurants | Question: Was haben wir letzten Monat am meisten ausgegeben?
{"op":"sum","categories":[],"whose":"household","group_by":"category","period":"last_month"}
Categories: groceries | Question: How much do the Müllers spend on food?
{"op":"sum","categories":["groceries"],"whose":"other","group_by":"none","period":"all"}
"""


class Sum(Capability):
    name = "sum"
    instructions = INSTRUCTIONS
    description = "asks how much / how many / an average or the biggest of recorded money"
    examples = {
        "en": (
            "how much did we spend on food?",
            "groceries this month - whats the damage",
            "which purchase this month cost the most?",
            "how much have we spent on takeaway since the start of the month",
            "what did petrol cost us over the summer",
            "total on kids stuff this year?",
            "how much did the car eat up last month",
            "whats our average weekly shop",
            "how often did we get pizza in october 🍕",
            "what did we make in total last month",
            "how much went on coffee since january",
        ),
        "de": (
            "Wie viel haben wir letzten Monat für Essen ausgegeben?",
            "was haben wir diesen Monat verdient?",
            "wieviel ging diesen monat für lieferando drauf",
            "was war die teuerste ausgabe letzte woche",
            "was kostet uns das auto im schnitt pro monat",
            "wie oft waren wir im oktober essen",
            "was ham wir seit januar für die kinder ausgegeben",
            "wie viel geben wir im durchschnitt pro einkauf aus",
            "summe tanken dieses jahr?",
            "was kam letzten monat insgesamt rein",
            "wie viel haben wir im urlaub verballert",
        ),
        "zh": (
            "这个月买菜一共花了多少钱？",
            "上个月交通花了多少",
            "今年给孩子花了多少钱",
            "这个月外卖点了几次",
            "上周最大的一笔开销是啥",
            "平均每次去超市花多少",
            "从一月到现在加油总共多少",
            "上个月总收入多少",
            "国庆出去玩一共花了多少",
            "这个月哪笔最贵",
            "每月水电费平均多少",
        ),
    }
    refines = ("lookup", "expense", "fact")
    asks = True
    tools = ("aggregate", "search")

    def claims(self, reading: Reading) -> bool:
        return reading.question and SUM.search(reading.text) is not None and not asks_about_a_note(reading.text)

    def hint(self, reading: Reading) -> float:
        return 0.2 if SUM.search(reading.text) else 0.0

    async def prepare(self, situation: Situation) -> Ask | None:
        run = situation.run
        kind = "income" if INCOME.search(situation.text) else "expense"
        async with run.transaction() as conn:
            categories = await stored.categories(conn, run.message.household_id, kind=kind)
            merchants = await stored.names(conn, run.message.household_id, "merchant")
            people = await stored.names(conn, run.message.household_id, "person")
        situation.choices["categories"] = categories
        if _MOST_ON.search(situation.text):
            situation.choices["op"], situation.choices["group_by"] = ["sum"], ["category"]
        elif op := next((op for op, cue in _OPS_BY_CUE if cue.search(situation.text)), None):
            situation.choices["op"] = [op]
        else:  # an average, a count or the cheapest is asked for in words of its own: "how bad is it" is the sum
            situation.choices["op"] = ["sum", "max"]
        situation.choices["whose"] = ["household", *(m.name for m in run.members), "other"]
        # A period only where the words name one: "when did we last get the oil changed" is not "last month".
        named_period = situation.grounding.period or situation.grounding.span
        situation.choices["period"] = ["all", *PERIODS] if named_period else ["all"]
        lowered = situation.text.lower()
        situation.choices["merchant"] = [m for m in merchants if m and m.lower() in lowered][:1]
        # Money spent on someone ("what have we spent on mia this month", "was hat bens geburtstag gekostet"): the
        # rows about that person, whoever paid.
        situation.choices["person"] = [p for p in people if p and _says_name(p, lowered)][:1]
        relative = _RELATIVE.search(situation.text)
        if relative and not situation.choices["person"]:  # the rows that say the word, and the people they are about
            word = next(group for group in relative.groups() if group)
            async with run.transaction() as conn:
                mentioned = await stored.people_mentioned(conn, run.message.household_id, word)
            situation.choices["relative"] = [word, *mentioned]
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return SumAnswer

    def prompt(self, situation: Situation) -> str:
        categories = ", ".join(situation.choices["categories"]) or "(none yet)"
        members = ", ".join(m.name for m in situation.run.members)
        period = f" | Period: {situation.grounding.period}" if situation.grounding.period else ""
        return f"Categories: {categories} | Members: {members}{period} | Question: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        assert isinstance(answer, SumAnswer)
        if answer.whose == "other":
            return []
        if answer.whose != "household" and not _of_one(answer.whose, situation.text):
            answer.whose = "household"  # "wie viel ging diesen monat für essen drauf" asks of no one member's spending
        if "group_by" in situation.choices:  # a breakdown was asked for, whatever categories the model named
            answer.categories = []
        if answer.op in ("max", "min"):  # "which purchase cost the most": a category only where the words name one
            answer.categories = [c for c in answer.categories if c == situation.grounding.category]
        income = INCOME.search(situation.text) is not None
        if income:  # "how much came in" means all income unless the question names a kind of it
            answer.categories = [c for c in answer.categories if c.split("-")[0][:4] in situation.text.lower()]
        kind: Kind = "income" if income else "expense"
        named = categories_named(situation.text, kind)
        # "eating out this month": restaurants, not also groceries; "takeaways" the household's "takeaway" category
        within = [c for c in answer.categories if c in named or category_of(c.replace("-", " "), kind) in named]
        if within:
            answer.categories = within
        conditions: list[dict[str, Any]] = [{"field": "kind", "op": "eq", "value": "income" if income else "expense"}]
        if answer.categories:
            conditions.append({"field": "category", "op": "in", "value": answer.categories})
        span = situation.grounding.span
        period = situation.grounding.period or answer.period
        if span is not None and span.name is None:  # "since the start of the month", "over the summer": its days
            conditions.append(span.condition())
        elif period and period != "all":
            conditions.append({"field": "occurred_at", "op": "period", "value": period})
        if answer.whose != "household":
            conditions.append({"field": "author", "op": "eq", "value": answer.whose})
        if situation.choices.get("merchant"):
            conditions.append({"field": "merchant", "op": "eq", "value": situation.choices["merchant"][0]})
        person = situation.choices.get("person")
        if person and person[0].lower() != answer.whose.lower():  # "what did ben spend" is Ben's, not about him
            conditions.append({"field": "person", "op": "eq", "value": person[0]})
        if relative := situation.choices.get("relative"):
            word, *people = relative
            about = [{"field": "content", "op": "contains", "value": word}]
            conditions.append({"any": about + ([{"field": "person", "op": "in", "value": people}] if people else [])})
        if answer.op in ("max", "min") and answer.group_by == "none":
            # The biggest expense is a memory, not only a number: find it, so the reply can say what it was.
            order = "amount_desc" if answer.op == "max" else "amount_asc"
            found: dict[str, Any] = {"filter": {"all": conditions}, "order": order, "limit": 1}
            return [PlannedCall(id="s1", tool="search", args=found)]
        args: dict[str, Any] = {"op": answer.op, "filter": {"all": conditions}, "group_by": answer.group_by}
        if answer.op != "count":
            args["field"] = "amount"
        return [PlannedCall(id="s1", tool="aggregate", args=args)]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        assert isinstance(answer, SumAnswer)
        language = situation.language
        if answer.whose == "other":
            return {
                "en": "I only know your own household's records, so I can't tell you that.",
                "de": "Ich kenne nur die Einträge eures eigenen Haushalts, dazu kann ich nichts sagen.",
                "zh": "我只知道您自己家里的记录，无法回答这个问题。",
            }.get(language, "I only know your own household's records, so I can't tell you that.")
        if not results or not results[0].ok or not results[0].result:
            return ""
        named = situation.grounding.span
        period = situation.grounding.period or answer.period
        span = named.text if named is not None and named.name is None else ""
        span = span or _SPAN.get(language, _SPAN["en"]).get(period or "", "")
        if results[0].tool == "search":
            found = results[0].result.get("memories", [])
            if not found:
                return say("no_records", language, span=f" {span}" if language != "zh" else span)
            op_named = _OPS[answer.op].get(language, _OPS[answer.op]["en"])
            return f"{op_named} {span}: {quote(found[0])}".replace("  ", " ")
        return describe_aggregate(results[0].result, answer, language, span)


def describe_aggregate(result: dict[str, Any], answer: SumAnswer, language: str, span: str) -> str:
    groups = [g for g in result.get("groups", []) if int(g.get("count") or 0) > 0]
    subject = ", ".join(label(category, language) for category in answer.categories)
    if not groups:
        where = f" ({subject})" if subject else ""
        return say("no_records", language, span=f" {span}{where}" if language != "zh" else f"{span}{subject}")
    named = _OPS[answer.op].get(language, _OPS[answer.op]["en"])
    head = " ".join(part for part in (named, subject, span) if part)
    if answer.group_by != "none":
        ranked = sorted(groups, key=lambda g: _number(g.get("value")), reverse=True)[:8]
        keys = [str(g.get("key") or "?") for g in ranked]
        if answer.group_by == "category":
            keys = [label(key, language) for key in keys]
        lines = [f"{head}:"]
        lines += [f"- {key}: {_value(g, answer.op)}" for key, g in zip(keys, ranked, strict=True)]
        return "\n".join(lines)
    values = "; ".join(_value(g, answer.op) for g in groups)
    count = sum(int(g.get("count") or 0) for g in groups)
    entries = _ENTRIES.get(language, _ENTRIES["en"]).format(n=count)
    return f"{head}: {values}" + ("" if answer.op == "count" else f" ({entries})")


def _value(group: dict[str, Any], op: str) -> str:
    if op == "count":
        return str(group.get("value"))
    return f"{group.get('value')} {group.get('currency') or ''}".strip()


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


# The writer asking of their own spending: "what did i spend on coffee", "was hab ich für sprit ausgegeben",
# "我这个月花了多少".
_MINE = re.compile(r"\b(?:i|i'?ve|i'?d|me|my|ich|mir|mich|mein\w*)\b|我(?!们)", re.IGNORECASE)


def _of_one(name: str, text: str) -> bool:
    """Whether the question asks of one member's spending: it names them, or the writer asks of their own."""
    return _says_name(name, text.lower()) or _MINE.search(text) is not None


def _says_name(name: str, lowered: str) -> bool:
    """Whether the question names someone: a name as a word of its own ("mia", "mia's"), Chinese anywhere."""
    if CJK.search(name):
        return name.lower() in lowered
    return re.search(rf"(?<!\w){re.escape(name.lower())}(?:'?s)?(?!\w)", lowered) is not None
