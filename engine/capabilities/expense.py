"""Money spent or received, to record: amounts and currencies come from the grounding, the model names the category,
the merchant and (unless the words say money came in) the kind. An amount without what it was for is asked about."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from engine.analysis import PlannedCall
from engine.capabilities._records import Label, Short, money_text, occurred, slug
from engine.capabilities.capability import Ask, Capability, Picked, Reading, Situation
from engine.capabilities.phrases import say
from engine.capabilities.words import SPEND, UNPAID, cues, says_what
from engine.executor import StepResult
from engine.grounding.categories import OTHER, categories, category_of, label
from engine.grounding.money import answered_amount, home_currency
from tools.storage import memories as stored

# Money that came in: the words of receiving it (the grounding names salaries, refunds and the like by category).
RECEIVED = cues(
    r"\b(?:received|got paid|earned|sold|refund(?:ed)?|reimbursed)\b|\bgot (?:\S+ ){0,3}back\b|\bgot [€$£]?\d",
    r"\b(?:bekommen|erhalten|verdient|eingenommen|verkauft|zurückbekommen|erstattet)\b",
    r"收到|卖了|退款|退回|退还|退钱|报销|进账|到账",
)
# Words of money paid out: a category that is also income ("birthday present", "Geschenk") does not make a sum the
# member spent income ("spent 40 quid today" / "birthday present for tom").
PAID_OUT = cues(
    r"\b(?:spen[dt]|paid|bought|purchased?)\b",
    r"\b(?:ausgegeben|bezahlt|gezahlt|gekauft)\b",
    r"花了|付了|买",
)
# Money someone else gave the family: "oma hat 50 euro für mia geschickt", "grandma sent 20 for ben's birthday",
# "奶奶给了小明200块红包" — not when the member gave it ("sent grandma 50", "我给奶奶转了200").
GIVEN = cues(
    r"\b(?:sent|gave|gifted|slipped)\s+(?:[^\W\d_]+\s+)?[€$£]?\d",
    r"\b(?:hat|haben)\b.{0,40}\b(?:geschickt|geschenkt|überwiesen|zugesteckt|gegeben)\b",
    r"给了(?:我们?|孩子|宝宝|小\S{1,2})\S{0,3}\d|红包|压岁钱",  # "给孩子买书" is buying for the child
)
_BY_MEMBER = cues(
    r"^\W*(?:i|i've|i have|we|we've|we have|just|sent|gave|gifted|transferred|wired)\b",
    r"^\W*(?:ich|wir|hab|habe|haben)\b|\b(?:ich|wir) (?:hab|habe|haben)\b|\b(?:hab|habe|haben) (?:ich|wir)\b",
    r"^\W*我",
)


def given(text: str, members: tuple[str, ...] = ()) -> bool:
    """Whether the money in `text` was given to the family: someone other than the member or a member of the
    household (`members`, those the text names) sent or gave it — a gift."""
    giver = re.match(r"\W*([^\W\d_]+)", text)
    by_member = _BY_MEMBER.search(text) or (giver and giver.group(1).casefold() in {m.casefold() for m in members})
    return GIVEN.search(text) is not None and not by_member


class OneAmount(BaseModel):
    """The answer for a message with one amount: its content is the message itself."""

    model_config = ConfigDict(extra="forbid")

    kind: Annotated[Literal["expense", "income"], Picked]
    category: Annotated[Label, AfterValidator(slug)]  # offered as the taxonomy's enum; filed by `_filed`
    merchant: Short | None = None


class MoneyItem(OneAmount):
    what: Short = Field(description="a few words in the member's language: what it was for")


class MoneyAnswer(BaseModel):
    """The answer for a message with several amounts: one item each, in order."""

    model_config = ConfigDict(extra="forbid")

    items: list[MoneyItem] = Field(min_length=1, max_length=10)


def _items(answer: BaseModel | None, count: int) -> list[OneAmount]:
    """One item per amount, in order; a model that gave fewer items names the rest like its last one."""
    if isinstance(answer, MoneyAnswer):
        items: list[OneAmount] = list(answer.items)
    else:
        assert isinstance(answer, OneAmount)  # the route's schema is one or the other (`schema` below)
        items = [answer]
    return [*items, *[items[-1]] * (count - len(items))][:count]


INSTRUCTIONS = f"""\
Record money the family spent or received. The amounts are already found. Give:
- kind: "income" for money received (salary, bonus, refund, benefits, money given to the family, things sold),
  otherwise "expense".
- category: for an expense one of {", ".join(categories("expense"))};
  for income one of {", ".join(categories("income"))}.
- merchant: the shop or company named in the message, otherwise null.
With several amounts, one item per amount in the order listed, each also with `what`: a few words in the
member's language saying what it was for.
"""  # the categories are the taxonomy's, the examples plain JSON
INSTRUCTIONS += """\
Amounts: 12 EUR | Message: Paid 12 € for pizza at Luigi's
{"kind":"expense","category":"restaurants","merchant":"Luigi's"}
Amounts: 300 CNY | Message: 给女儿买鞋花了300元
{"kind":"expense","category":"clothing","merchant":null}
Amounts: 3200 EUR | Message: Gehalt ist da, 3.200 €
{"kind":"income","category":"salary","merchant":null}
Amounts: 45 EUR; 30 EUR | Message: shoes for Lea 45 euros and a school bag 30 euros
{"items":[{"kind":"expense","category":"clothing","merchant":null,"what":"shoes for Lea"},
{"kind":"expense","category":"kids","merchant":null,"what":"school bag"}]}
"""


class Expense(Capability):
    name = "expense"
    instructions = INSTRUCTIONS
    description = "money spent or received, to record"
    examples = {
        "en": (
            "paid 20 for pizza",
            "groceries 37.20 at aldi and 4.99 for a magazine",
            "Netflix 13.99 monthly subscription charged today",
            "window cleaner 45 quid",
            "got 150 for the old bike",
            "salary came in, 3200",
            "spotify 10.99 just went out",
            "just dropped 86 at tesco 🙈",
            "petrol 62.40",
            "grandad sent the kids 20 each 🥰",
            "sold the pram on ebay for 90",
            "school trip money 15 paid",
            "kebabs 23 tonight",
            "tax refund came through 412",
        ),
        "de": (
            "71,40 € bei Rewe",
            "zwölf Euro für Brötchen",
            "Habe 150 Euro für das alte Fahrrad bekommen",
            "tanken 68,20",
            "bei dm 23,45 gelassen",
            "friseur 35 plus 5 trinkgeld",
            "kindergeld is da 250",
            "oma hat uns 100 euro zugesteckt 🥰",
            "kinderwagen auf kleinanzeigen für 80 verkauft",
            "disney plus 9,99 abgebucht",
            "pizza bestellt 31 euro",
            "ausflugsgeld für die schule 12 € bezahlt",
        ),
        "zh": (
            "打车去机场花了120块",
            "工资到账5000元",
            "买菜花了八十六块五",
            "加油三百",
            "爷爷给孩子发了200红包🧧",
            "闲鱼卖了婴儿车 收了350",
            "超市买东西 212.8",
            "视频会员续费了25",
            "今晚点外卖花了68",
            "交了班费100",
            "退税到账了1200",
            "剪头发38块",
        ),
    }
    refines = ("fact", "lookup")
    tools = ("store",)
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        """A statement of money spent or received: an amount, or words of paying — not an amount told as a price, a
        debt or a balance (`UNPAID`: "the plumber quoted 450", "tom still owes us 40"), unless the words also say it
        was paid."""
        if reading.question:
            return False
        if SPEND.search(UNPAID.sub(" ", reading.text)):
            return True
        return bool(reading.grounding.money) and not UNPAID.search(reading.text)

    async def prepare(self, situation: Situation) -> Ask | None:
        earlier, _, reply = situation.text.rpartition("\n")
        if earlier and not situation.grounding.money and (amount := answered_amount(reply)) is not None:
            # the member answered "how much was it?" with a bare number ("got mia a new raincoat" / "38.50")
            situation.grounding = replace(situation.grounding, money=(amount,))
        money = situation.grounding.money
        gift = given(situation.text, situation.grounding.people) and not situation.grounding.income_category
        named_income = situation.grounding.income_category and not PAID_OUT.search(situation.text)
        income = bool(named_income or RECEIVED.search(situation.text) or gift)
        if income:
            situation.choices["kind"] = ["income"]
        situation.choices["category"] = ["gifts"] if gift else _categories(situation, income, len(money))
        if not money:
            vague = len(situation.text.split()) <= 4 or len(situation.text) <= 8
            return Ask(say("ask_what_amount" if vague else "ask_amount", situation.language))
        if not says_what(situation.text, [m.text for m in money]):  # "paid 50": for what?
            return Ask(say("ask_what_for", situation.language, amount=money_text(money[0], situation)))
        if any(m.currency is None for m in money):
            run = situation.run
            async with run.transaction() as conn:
                usual = await stored.usual_currency(conn, run.message.household_id)
            me = next((m for m in run.members if m.id == run.message.user_id), None)
            if usual is None and me is not None:
                usual = home_currency(me.locale, run.timezone, run.deps.clock.now().date())
            if usual is None:
                first = next(m for m in money if m.currency is None)
                return Ask(say("ask_currency", situation.language, amount=first.amount), ("EUR", "USD", "GBP", "CNY"))
            situation.choices["currency"] = [usual]
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel]:
        return OneAmount if len(situation.grounding.money) == 1 else MoneyAnswer

    def prompt(self, situation: Situation) -> str:
        amounts = "; ".join(money_text(m, situation) for m in situation.grounding.money)
        return f"Amounts: {amounts} | Message: {situation.text}"

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        money = situation.grounding.money
        calls = []
        for number, (item, amount) in enumerate(zip(_items(answer, len(money)), money, strict=True), 1):
            args = {
                "content": f"{item.what}: {money_text(amount, situation)}"
                if isinstance(item, MoneyItem)
                else situation.text,
                "kind": item.kind,
                "category": _filed(item, situation),
                "amount": str(amount.amount),
                "currency": amount.currency or situation.choices["currency"][0],
            }
            if item.merchant:
                args["merchant"] = item.merchant
            when = occurred(situation)
            if when is not None:
                args["occurred_at"] = when
            calls.append(PlannedCall(id=f"s{number}", tool="store", args=args))
        return calls

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        lines = []
        for item, result in zip(_items(answer, len(results)), results, strict=False):
            if result.ok and result.result:
                amount = f"{result.result.get('amount')} {result.result.get('currency')}"
                what = item.what if isinstance(item, MoneyItem) else _what(item, situation)
                lines.append(say("saved_money", situation.language, what=what, amount=amount))
        return "\n".join(lines)


def _categories(situation: Situation, income: bool, amounts: int) -> list[str]:
    """The categories the model may file the money under: the one the words name when there is one amount to file
    ("twenty quid for mias school trip": education), else the taxonomy's names for its kind (both, while the kind
    is open)."""
    named = _words_category(situation, "income" if income else "expense")
    if named is not None and amounts == 1:
        return [named]
    if income:
        return list(categories("income"))
    return list(dict.fromkeys([*categories("expense")[:-1], *categories("income")]))


def _filed(item: OneAmount, situation: Situation) -> str:
    """The item's category in the taxonomy of its kind: the model's when it is one, else what its word is a synonym
    of ("bike": sports), else what the message's words name, else other. Money received under an expense's
    category is filed by the words for income ("sold the old buggy for 85": sales, not kids)."""
    if item.category in categories(item.kind):
        return item.category
    return category_of(item.category.replace("-", " "), item.kind) or _words_category(situation, item.kind) or OTHER


def _words_category(situation: Situation, kind: str) -> str | None:
    """The category of `kind` the message's own words name, if any."""
    return situation.grounding.income_category if kind == "income" else situation.grounding.category


def _what(item: OneAmount, situation: Situation) -> str:
    category = label(_filed(item, situation), situation.language)  # "Lebensmittel" to a German member
    return f"{category} ({item.merchant})" if item.merchant else category
