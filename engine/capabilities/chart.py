"""Charts of the household's money: "show me a chart of our spending", "zeig mir ein diagramm der ausgaben",
"给我看看这个月的开销图", "how has our spending changed over the last months".

The words and the grounding settle everything a chart needs, so no model call is made: the period (the one the
message names, this month by default, recent months for a change over time), how it is split (by category, by member,
or over time by day, week, month or year), the categories and the member the words name, and whether it is money
spent or received. `aggregate` adds the numbers up in SQL in the member's own transaction, so other members' private
rows are never counted (in a group chat, nobody's are); `render_chart` draws them and the image goes out with the
reply on every channel. The reply states the total the query returned. A period with nothing in it gets a sentence,
never an empty chart.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo

from dateutil.relativedelta import relativedelta
from pydantic import BaseModel, ConfigDict

from engine.analysis import PlannedCall
from engine.capabilities.capability import Ask, Capability, Reading, Said, Situation
from engine.capabilities.phrases import say
from engine.capabilities.sum import INCOME
from engine.capabilities.words import cues
from engine.executor import StepResult, run_plan
from engine.grounding import Grounding
from engine.grounding.categories import categories_named
from tools.charts import MAX_POINTS, MAX_SERIES

# A picture of numbers asked for. Whole words only where a longer word means something else ("Grafikkarte").
CHART = cues(
    r"\bcharts?\b",
    r"\bgraphs?\b",
    r"\bdiagrams?\b",
    r"\bplot (?:our|my|the|us|me|it)\b",
    r"\bvisuali[sz]",
    r"\binfographic",
    r"\b(?:draw|make|show)\b.{0,12}\bpie\b",
    r"diagramm",  # "Balkendiagramm", "Ausgabendiagramm" too
    r"\bgra(?:f|ph)ik\b",
    r"\bschaubild",
    r"\bvisualisier",
    r"图表",
    r"(?:饼|柱状|条形|折线|趋势|统计|曲线|走势)图",
    r"[画做弄出][个张一幅]?\S{0,6}图表?(?![片书纸])",
    r"(?:开销|开支|支出|花费|花销|消费|收支|收入|账|钱)\S{0,3}图表?(?![片书纸])",
)

# What a chart here can show: money spent or received.
MONEY = cues(
    r"\bspen[dt]",
    r"\bspending\b",
    r"\bexpens",
    r"\bcosts?\b",
    r"\bmoney\b",
    r"\bfinances?\b",
    r"\boutgoings\b",
    r"\bpurchases\b",
    r"\bshopping\b",
    r"\beinkäufe\b",
    r"\bincome\b",
    r"\bearn",
    r"ausgaben",
    r"\bkosten\b",
    r"\bgeld\b",
    r"\bausgegeben\b",
    r"\beinnahmen\b",
    r"\bfinanzen\b",
    r"\bverdien",
    r"开销|开支|支出|花费|花销|消费|花了|花的|收支|收入|账|钱",
)

# The words around a bare request ("show me a chart", "kannst du mir ein Diagramm machen", "给我画个图表").
_ASKING = cues(
    r"\b(?:show|make|draw|create|give|send|see|get|do|can|could|would|will|you|u|me|us|a|an|the|some|one|pls|please"
    r"|plz|i|want|need|like|to|quick|new|again|now)\b",
    r"\b(?:zeig|zeige|mach|mache|erstell|erstelle|gib|schick|kannst|könntest|du|mir|uns|ein|eine|einen|mal|bitte|ich"
    r"|will|möchte|hätte|gern|gerne|nochmal|jetzt|machen|erstellen|zeigen|schicken|geben|kurz)\b",
    r"给|我|们|看看|看|一下|画|做|弄|出|个|张|一|幅|来|请|吧|能|可以|帮|你|再",
)

# A change over time asked about without the word "chart": the answer is one.
TREND = cues(
    r"\bhow (?:has|have|did|do|does|is|are) (?:our |my |the |all )?(?:spending|expenses|costs|outgoings)\b.{0,30}"
    r"\b(?:chang|develop|go(?:ne)? (?:up|down)|trend)",
    r"\b(?:spending|expenses?|costs?|outgoings) (?:trend|over time|month by month|week by week)\b",
    r"\bwie (?:haben|hat) sich (?:unsere |meine |die )?(?:ausgaben|kosten)\b.{0,30}\b(?:entwickelt|verändert)",
    r"\b(?:ausgaben|kosten)(?:entwicklung|verlauf)\b",
    r"\bentwicklung (?:der|unserer|meiner) (?:ausgaben|kosten)\b",
    r"(?:开销|开支|支出|花费|花销|消费)\S{0,6}(?:变化|趋势|走势)",
)

# Over time, and at which step.
OVER_TIME = cues(
    r"\bover time\b",
    r"\bchang",
    r"\btrend",
    r"\bdevelop",
    r"\b(?:month|week|day) by (?:month|week|day)\b",
    r"\b(?:month|week) over (?:month|week)\b",
    r"\b(?:by|per|each|every) (?:month|week|day)\b",
    r"\b(?:monthly|weekly|daily)\b",
    r"\b(?:last|past|previous) (?:few |couple of |several |\d+ |\w+ )?(?:months|weeks)\b",
    r"\bverlauf",
    r"\bentwick",
    r"\bveränder",
    r"\b(?:monatlich|wöchentlich|täglich)",
    r"\b(?:pro|je) (?:monat|woche|tag)\b",
    r"\b(?:monat|woche|tag) für (?:monat|woche|tag)\b",
    r"\b(?:letzten|vergangenen) (?:paar |\d+ |\w+ )?(?:monaten?|wochen)\b",
    r"变化|趋势|走势|折线|每个?月|每周|每星期|每天|按月|按周|按天|几个月|几周",
)
WEEKLY = cues(
    r"\bweek by week\b|\b(?:by|per|each|every) week\b|\bweekly\b|\b(?:last|past|previous) (?:few |\d+ |\w+ )?weeks\b",
    r"\bwöchentlich|\b(?:pro|je) woche\b|\bwoche für woche\b|\b(?:letzten|vergangenen) (?:paar |\d+ |\w+ )?wochen\b",
    r"每周|每星期|按周|几周",
)
MONTHLY = cues(
    r"\bmonth by month\b|\b(?:by|per|each|every) month\b|\bmonthly\b",
    r"\b(?:last|past|previous) (?:few |\d+ |\w+ )?months\b",
    r"\bmonatlich|\b(?:pro|je) monat\b|\bmonat für monat\b|\b(?:letzten|vergangenen) (?:paar |\d+ |\w+ )?monaten?\b",
    r"每个?月|按月|几个月",
)
DAILY = cues(r"\bday by day\b|\b(?:by|per|each|every) day\b|\bdaily\b", r"\btäglich|\b(?:pro|je) tag\b", r"每天|按天")
BY_MEMBER = cues(
    r"\b(?:by|per|for each|each) (?:person|member|family member)\b|\beach of us\b|\bwho spen[dt]s?\b",
    r"\b(?:pro|nach|je) (?:person|kopf|mitglied)|\bwer (?:wie ?viel|am meisten)\b|\bjede[rn]? von uns\b",
    r"每个人|每人|按人|按成员|谁花",
)
MINE = cues(
    r"\bmy (?:own )?(?:spending|expenses|costs|money|income|outgoings)\b|\bwhat i (?:spent|spend|earned|paid)\b",
    r"\bmeine[rn]? (?:ausgaben|kosten|einnahmen)\b|\bwas ich\b.{0,20}\b(?:ausgegeben|verdient|bezahlt)\b",
    r"我(?:自己)?的(?:开销|开支|支出|花费|花销|消费|收入)|我(?:自己)?花",
)
# "over the last 3 months", "in den letzten drei Monaten", "最近三个月"
_RECENT = re.compile(
    r"\b(?:last|past|previous|letzten|vergangenen)\s+(?P<n>\d{1,2}|[a-zäöüß]+)\s+(?P<unit>months?|weeks?|monaten?|wochen)\b"
    r"|(?:最近|过去|近)(?P<zh>\d{1,2}|[一二两三四五六七八九十]+)(?P<zh_unit>个月|周|个星期)",
    re.IGNORECASE,
)
_NUMBER_WORDS = {
    **dict(zip("two three four five six seven eight nine ten eleven twelve".split(), range(2, 13), strict=True)),
    **dict(zip("zwei drei vier fünf sechs sieben acht neun zehn elf zwölf".split(), range(2, 13), strict=True)),
    **dict(zip("两二三四五六七八九", (2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True)),
    "十": 10, "十一": 11, "十二": 12,
}  # fmt: skip
RECENT_MONTHS, RECENT_WEEKS = 6, 8  # "how has our spending changed" without a period: the last months, weeks

By = Literal["category", "author", "day", "week", "month", "year"]
OVER = ("day", "week", "month", "year")

_PHRASES: dict[str, dict[str, str]] = {
    "chart": {
        "en": "Here is the chart of {subject} {span}, {by}: {totals} in total ({entries}).",
        "de": "Hier ist das Diagramm {subject} {span}, {by}: insgesamt {totals} ({entries}).",
        "zh": "这是{span}{subject}的图表（{by}）：合计 {totals}（{entries}）。",
    },
    "nothing": {
        "en": "I found no {subject} {span}, so there is nothing to chart yet.",
        "de": "Ich habe {span} keine {subject} gefunden, also gibt es noch nichts für ein Diagramm.",
        "zh": "{span}没有找到{subject}记录，暂时没有可以画图的数据。",
    },
    "expense": {"en": "spending", "de": "Ausgaben", "zh": "支出"},
    "income": {"en": "income", "de": "Einnahmen", "zh": "收入"},
    "your": {"en": "your {subject}", "de": "eurer {subject}", "zh": "{subject}"},
    "the": {"en": "{subject}", "de": "der {subject}", "zh": "{subject}"},
    "on": {"en": "{subject} on {categories}", "de": "{subject} für {categories}", "zh": "{categories}{subject}"},
    "of": {"en": "{subject} by {whose}", "de": "{subject} von {whose}", "zh": "{whose}的{subject}"},
    "recent": {"en": "over the {text}", "de": "in den {text}", "zh": "{text}"},
    "this_month": {"en": "this month", "de": "diesen Monat", "zh": "这个月"},
    "recently": {"en": "over the last months", "de": "in den letzten Monaten", "zh": "最近几个月"},
    "recent_weeks": {"en": "over the last weeks", "de": "in den letzten Wochen", "zh": "最近几周"},
    "entries": {"en": "{n} entries", "de": "{n} Einträge", "zh": "{n}笔"},
    "entry": {"en": "1 entry", "de": "1 Eintrag", "zh": "1笔"},
    "category": {"en": "by category", "de": "nach Kategorie", "zh": "按类别"},
    "author": {"en": "by person", "de": "nach Person", "zh": "按成员"},
    "day": {"en": "day by day", "de": "Tag für Tag", "zh": "按天"},
    "week": {"en": "week by week", "de": "Woche für Woche", "zh": "按周"},
    "month": {"en": "month by month", "de": "Monat für Monat", "zh": "按月"},
    "year": {"en": "year by year", "de": "Jahr für Jahr", "zh": "按年"},
    # The title is drawn in the image, where the bundled fonts have no Chinese: a Chinese chart is titled by its days.
    "title": {"en": "{Subject}, {by}: {first} – {last}", "de": "{Subject}, {by}: {first} – {last}",
              "zh": "{first} – {last}"},
    # What the chart shows in words, for whoever cannot see it (its numbers follow: `tools.charts.description`).
    "caption": {"en": "{Subject} {by}, {span}", "de": "{Subject} {by}, {span}", "zh": "{span}{Subject}（{by}）"},
}  # fmt: skip


def _say(key: str, language: str, **values: object) -> str:
    texts = _PHRASES[key]
    return texts.get(language, texts["en"]).format(**values)


class ChartAnswer(BaseModel):
    """What the chart shows, settled by the engine from the words and the grounding."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["expense", "income"]
    by: By
    first: date
    last: date  # included
    categories: list[str]
    whose: str | None  # a member's name: only their money
    span: str  # the period as the reply names it


class Chart(Capability):
    name = "chart"
    description = "asks for a chart, graph or picture of spending or income, or how spending changed over time"
    examples = {
        "en": (
            "show me a chart of our spending",
            "can u show me a graph of what we spent this month",
            "how has our spending changed over the last months",
            "chart of last month's expenses by category pls",
            "graph our grocery spending since the start of the year",
            "draw me a pie of where the money went",
            "can i see a chart of spending per person this month",
            "spending trend over the past 3 months?",
            "make a graph of our income this year",
            "visualise our costs week by week",
        ),
        "de": (
            "zeig mir ein diagramm der ausgaben",
            "kannst du mir ein diagramm von unseren ausgaben diesen monat machen",
            "wie haben sich unsere ausgaben in den letzten monaten entwickelt",
            "balkendiagramm der kosten letzten monat bitte",
            "grafik mit den ausgaben seit jahresanfang",
            "mach mal ein schaubild wofür das geld draufgeht",
            "diagramm einkäufe pro monat",
            "zeig die einnahmen dieses jahr als diagramm",
        ),
        "zh": (
            "给我看看这个月的开销图",
            "画个图看看上个月钱都花哪了",
            "最近几个月开销的变化趋势",
            "做个今年支出的图表",
            "按类别给我一个支出饼图",
            "每个人花了多少 画个柱状图",
            "今年以来买菜的开销图",
            "收入走势图",
        ),
    }
    refines = ("sum", "lookup", "fact", "calendar", "expense", "update", "unclear")
    tools = ("aggregate", "render_chart")

    def claims(self, reading: Reading) -> bool:
        text, grounding = reading.text, reading.grounding
        money = MONEY.search(text) is not None or grounding.category is not None
        drawn = CHART.search(text) is not None and (money or bare(text)) and not grounding.money  # an amount: a record
        return drawn or TREND.search(text) is not None

    def hint(self, reading: Reading) -> float:
        return 0.3 if CHART.search(reading.text) else 0.0

    def eligible(self, reading: Reading) -> bool:
        """Chosen by its examples' nearness only for a message that asks for a picture ("can you make me a graph?"):
        money questions and records go where they went before."""
        return CHART.search(reading.text) is not None

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        run = situation.run
        today = run.deps.clock.now().astimezone(ZoneInfo(run.timezone)).date()
        writer = next((member.name for member in run.members if member.id == run.message.user_id), None)
        answer = settle(situation.text, situation.grounding, today, writer)
        situation.decided = answer
        step = PlannedCall(id="a1", tool="aggregate", args=aggregate_args(answer))
        [added] = await run_plan(situation.run, [step])
        language = situation.language
        if not added.ok or added.result is None:
            return Said(say("failed", language, reason=added.member_reason()))
        if not added.result.get("matched"):
            return Said(_say("nothing", language, subject=subject(answer, language), span=answer.span))
        situation.rows = [added.result]  # the numbers the chart and the reply may state
        return None

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        settled = situation.decided
        assert isinstance(settled, ChartAnswer)
        args = drawing(situation.rows[0], settled, situation.language)
        return [PlannedCall(id="s1", tool="render_chart", args=args)]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        settled = situation.decided
        assert isinstance(settled, ChartAnswer)
        if not results or not results[0].ok:
            return ""
        language = situation.language
        totals = situation.rows[0].get("totals", [])
        count = sum(int(total.get("count") or 0) for total in totals)
        entries = _say("entry", language) if count == 1 else _say("entries", language, n=count)
        amounts = "; ".join(f"{total['value']} {total.get('currency') or ''}".strip() for total in totals)
        return _say(
            "chart",
            language,
            subject=_say("your" if settled.whose is None else "the", language, subject=subject(settled, language)),
            span=settled.span,
            by=_say(settled.by, language),
            totals=amounts,
            entries=entries,
        )


def bare(text: str) -> bool:
    """A request for a chart that names nothing else ("show me a chart", "Diagramm bitte", "画个图表"): of spending,
    the only chart FAA draws. "A graph of Mia's height" names something else."""
    return CHART.search(text) is not None and re.search(r"\w", _ASKING.sub(" ", CHART.sub(" ", text))) is None


def subject(answer: ChartAnswer, language: str) -> str:
    """What was added up, in the member's language: "spending", "spending on groceries", "income by Ben"."""
    words = _say(answer.kind, language)
    if answer.categories:
        words = _say("on", language, subject=words, categories=", ".join(answer.categories))
    if answer.whose is not None:
        words = _say("of", language, subject=words, whose=answer.whose)
    return words


def settle(text: str, grounding: Grounding, today: date, writer: str | None) -> ChartAnswer:
    """The chart a message asks for, from its words and grounding alone (`today`: the member's date; `writer`: the
    member's name, for "my spending")."""
    kind: Literal["expense", "income"] = "income" if INCOME.search(text) else "expense"
    categories = sorted(categories_named(text, kind))
    whose = grounding.people[0] if len(grounding.people) == 1 else None
    if not grounding.people and MINE.search(text):
        whose = writer
    by_member = BY_MEMBER.search(text) is not None and whose is None
    over_time = not by_member and (
        OVER_TIME.search(text) is not None or TREND.search(text) is not None or bool(categories)
    )
    language = grounding.language
    span = grounding.span
    if span is not None:
        first, last, named = span.first, span.last, span.text
    elif over_time:
        first, last, named = _recent(text, today, language)
    else:
        first, last = today.replace(day=1), today.replace(day=1) + relativedelta(months=1, days=-1)
        named = _say("this_month", language)
    if over_time and first <= today < last:
        last = today  # a change so far: no empty steps ahead
    by: By = "author" if by_member else _step(text, first, last) if over_time else "category"
    return ChartAnswer(kind=kind, by=by, first=first, last=last, categories=categories, whose=whose, span=named)


def _recent(text: str, today: date, language: str) -> tuple[date, date, str]:
    """The last months (or weeks) up to today, as many as the words say ("the last 3 months")."""
    recent = _RECENT.search(text)
    count = None
    weeks = WEEKLY.search(text) is not None and MONTHLY.search(text) is None
    if recent is not None:
        raw = (recent.group("n") or recent.group("zh") or "").lower()
        unit = (recent.group("unit") or recent.group("zh_unit") or "").lower()
        count = int(raw) if raw.isdigit() else _NUMBER_WORDS.get(raw)
        weeks = unit.startswith(("week", "woche", "周", "个星期"))
    if weeks:
        count = min(max(count or RECENT_WEEKS, 1), MAX_POINTS)
        first = today - timedelta(days=today.weekday()) - timedelta(weeks=count - 1)
    else:
        count = min(max(count or RECENT_MONTHS, 1), MAX_POINTS)
        first = today.replace(day=1) - relativedelta(months=count - 1)
    if recent is not None:
        return first, today, _say("recent", language, text=recent.group(0))
    return first, today, _say("recent_weeks" if weeks else "recently", language)


def _step(text: str, first: date, last: date) -> By:
    """The step of a chart over time: the one the words name, else one that gives a handful of points."""
    days = (last - first).days + 1
    months = (last.year - first.year) * 12 + last.month - first.month + 1
    if DAILY.search(text) and days <= MAX_POINTS:
        return "day"
    if WEEKLY.search(text) and not MONTHLY.search(text) and days <= 7 * MAX_POINTS:
        return "week"
    if MONTHLY.search(text) and months <= MAX_POINTS:
        return "month"
    if days <= 14:
        return "day"
    if days <= 63:
        return "week"
    return "month" if months <= 36 else "year"


def aggregate_args(answer: ChartAnswer) -> dict[str, Any]:
    """The `aggregate` call that adds up what the chart shows."""
    conditions: list[dict[str, Any]] = [
        {"field": "kind", "op": "eq", "value": answer.kind},
        {"field": "occurred_at", "op": "between", "value": [answer.first.isoformat(), answer.last.isoformat()]},
    ]
    if answer.categories:
        conditions.append({"field": "category", "op": "in", "value": answer.categories})
    if answer.whose is not None:
        conditions.append({"field": "author", "op": "eq", "value": answer.whose})
    return {"op": "sum", "field": "amount", "filter": {"all": conditions}, "group_by": answer.by}


def drawing(result: dict[str, Any], answer: ChartAnswer, language: str) -> dict[str, Any]:
    """The `render_chart` arguments for an `aggregate` result: one series per currency (at most MAX_SERIES; the reply
    states every currency's total); over time every step of the period is drawn, those with nothing as 0; by category
    or member the biggest first, at most MAX_POINTS."""
    groups = [group for group in result.get("groups", []) if int(group.get("count") or 0) > 0]
    currencies = list(dict.fromkeys(str(group.get("currency") or "?") for group in groups))[:MAX_SERIES]
    values: dict[str, dict[str, str]] = {}
    for group in groups:
        key = str(group.get("key") or ("other" if answer.by == "category" else "?"))[:40]
        values.setdefault(key, {})[str(group.get("currency") or "?")] = str(group["value"])
    over_time = answer.by in OVER
    labels = steps(answer) if over_time else list(values)[:MAX_POINTS]
    series = [
        {"name": currency, "values": [values.get(label, {}).get(currency, "0") for label in labels]}
        for currency in currencies
    ]
    kind = "line" if over_time and len(labels) > 12 else "bar"
    by = _say(answer.by, language)
    named = subject(answer, language)
    named = named[:1].upper() + named[1:]
    title = _say("title", language, Subject=named, by=by, first=answer.first.isoformat(), last=answer.last.isoformat())
    caption = _say("caption", language, Subject=named, by=by, span=answer.span)
    return {
        "kind": kind,
        "title": title[:100],
        "labels": labels,
        "series": series,
        "unit": currencies[0] if len(currencies) == 1 else None,
        "caption": caption[:100],
    }


def steps(answer: ChartAnswer) -> list[str]:
    """Every step of the period as `aggregate` names its time groups (weeks by their Monday), at most MAX_POINTS."""
    first, last = answer.first, answer.last
    labels: list[str] = []
    if answer.by == "day":
        day = first
        while day <= last:
            labels.append(day.isoformat())
            day += timedelta(days=1)
    elif answer.by == "week":
        monday = first - timedelta(days=first.weekday())
        while monday <= last:
            labels.append(monday.isoformat())
            monday += timedelta(weeks=1)
    elif answer.by == "month":
        month = first.replace(day=1)
        while month <= last:
            labels.append(month.strftime("%Y-%m"))
            month += relativedelta(months=1)
    else:
        labels = [str(year) for year in range(first.year, last.year + 1)]
    return labels[-MAX_POINTS:]
