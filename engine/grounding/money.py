"""Amounts of money in a member's message: the number as an exact decimal and its currency, in English, German and
Chinese writing ("$62.30", "71,40 €", "1.250,00 EUR", "86元", "三十五块五", "25欧元").

A number is money when a currency stands next to it, or when nothing marks it as something else (104 cm, 2 pills,
room 305, 38.5 degrees, "3 Gläser") and the message reads as a purchase: it speaks of paying ("paid 48 for
dinner"), or names something bought and writes the number as a price ("groceries 37.20 at aldi"), per month
("400 a month") or jotted down with what it was for ("32 on petrol"); number words count ("zwölf Euro", "twenty
quid"). The currency of a bare amount is left open; the engine asks or uses the household's usual one.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

import cn2an
from babel import Locale, UnknownLocaleError
from babel.core import get_global
from babel.numbers import get_territory_currencies

from engine.grounding.categories import Kind, category_of, synonym_spans
from engine.grounding.days import MONTH_NAMES
from engine.grounding.language import CJK, language_of
from engine.grounding.spelling import with_digits

# Written forms of currencies, longest first where one is a prefix of another. ¥ is the yuan here: families writing
# in yen are rare and can write JPY.
_CURRENCY_WORDS: tuple[tuple[str, str], ...] = (
    ("us$", "USD"),
    ("usd", "USD"),
    ("eur", "EUR"),
    ("gbp", "GBP"),
    ("cny", "CNY"),
    ("rmb", "CNY"),
    ("chf", "CHF"),
    ("jpy", "JPY"),
    ("euros", "EUR"),
    ("euro", "EUR"),
    ("dollars", "USD"),
    ("dollar", "USD"),
    ("bucks", "USD"),
    ("pounds", "GBP"),
    ("pound", "GBP"),
    ("quid", "GBP"),
    ("yuan", "CNY"),
    ("franken", "CHF"),
    ("francs", "CHF"),
    ("€", "EUR"),
    ("$", "USD"),
    ("£", "GBP"),
    ("¥", "CNY"),
    ("欧元", "EUR"),
    ("美元", "USD"),
    ("美金", "USD"),
    ("英镑", "GBP"),
    ("人民币", "CNY"),
    ("块钱", "CNY"),
    ("日元", "JPY"),
    ("元", "CNY"),
    ("块", "CNY"),
    ("镑", "GBP"),
)
_CURRENCY = "|".join(  # a currency word is a whole word: not the "eur" of "friseur"
    (r"(?<![a-z])" if word[0].isascii() and word[0].isalpha() else "")
    + re.escape(word)
    + (r"(?![a-z])" if word[-1].isascii() and word[-1].isalpha() else "")
    for word, _ in sorted(_CURRENCY_WORDS, key=lambda item: -len(item[0]))
)
_CODES = dict(_CURRENCY_WORDS)

# 1,250.00 · 1.250,00 · 1 250,00 · 1'280 (Swiss) · 71,40 · 18.5 · 1250 · 1.5k
_NUMBER = r"\d{1,3}(?:[,.\u202f '’]\d{3})+(?:[.,]\d{1,2})?(?!\d)|\d+(?:[.,]\d{1,2}(?!\d))?"
_AMOUNT = re.compile(
    rf"(?P<pre>{_CURRENCY})?\s?(?P<number>{_NUMBER})(?P<k>k\b)?\s?(?P<post>{_CURRENCY})?"
    r"(?:(?<=[块元])(?P<jiao>\d)(?!\d)|(?<=[a-z€£$])\s(?P<cents>\d{2})\b(?!\s*(?:[:.]\d|uhr|am|pm|[a-z]*\s+o'clock)))?",
    re.IGNORECASE,
)
_CN_NUMERAL = re.compile(
    r"[零〇一二两三四五六七八九十百千万]+(?:点[零〇一二三四五六七八九]+)?(?=块|元|毛|欧元|美元|英镑|镑)"
)
# A Chinese number with a multiplier written without a currency ("年终奖发了 八千", "两百五"): digits, so that the
# rules for bare amounts decide whether it is money.
_CN_BARE_NUMERAL = re.compile(r"[零〇一二两三四五六七八九]*[十百千万][零〇一二两三四五六七八九十百千万]*")
_CN_JIAO = re.compile(r"(?<=[块元])([一二两三四五六七八九])(?:毛|角)?")
# What makes a number something other than money when no currency marks it.
# German writes an ordinal as a number and a full stop ("die 2. Impfung", "zum 3. Mal"); number words are read as
# digits, so "die zweite Impfung" reads so too. A sentence ending in a sum rarely goes on in lowercase.
_ORDINAL_AFTER = re.compile(r"\.\s+[a-zäöüß]", re.IGNORECASE)
_UNIT = re.compile(
    r"\s?(?:(?:%|°|cm|mm|km|kg|g|m|ml|l|h|min|mins|minutes?|hours?|days?|weeks?|months?|years?|pills?|tablets?|"
    r"times?|x|st|nd|rd|th|am|pm|o'clock|uhr|jahre?|tage?|stunden?|minuten|wochen|monate|monaten|degrees?|grad|"
    r"fever|fieber|temp|steps|schritte|seiten|pages)(?![a-zäöüß])|"
    r"岁|次|个|天|小时|分钟|周|月|年|号|点|斤|公斤|厘米|米|度|片|粒|层|楼|室|号房)",
    re.IGNORECASE,
)
# A physical measure: a message that measures something ("2.4 bar front and 2.2 back", "3.2 kg, 52.5 tall") and
# speaks of no paying holds no money in its bare numbers ("20 bar bezahlt" is cash: it speaks of paying).
_MEASURE = re.compile(
    r"\s?(?:bar|psi|kwh|kw|ps|mph|kmh|km/h|watt|volt|gb|mb|tb|inch|inches|zoll|ft|feet|lbs?|oz|qm|m²|sqm|"
    r"liters?|litres?|cm|mm|km|kg|ml|°c?|grad|degrees?|kcal|calories)(?![a-zäöüß])|"
    r"\s?(?:斤|公斤|厘米|米|度|公里|升)",
    re.IGNORECASE,
)
# A meter's or a counter's reading ("zählerstand strom heute 48213", "mileage 84,200", "水表读数1023").
_READING = re.compile(
    r"\b(?:\w*zählerstand|zähler|kilometerstand|meter reading|reading|mileage|odometer)\b|读数|里程", re.IGNORECASE
)
# A whole number followed by a word counts things ("3 Gläser", "2 coffees") unless the word is one that follows a sum
# or a verb's participle ("35 gegeben", "40 paid").
_COUNTED = re.compile(
    r"\s*(?!(?:for|on|at|in|a|an|per|each|total|monthly|weekly|yearly|today|yesterday|and|to|from|back|cash|with|via|"
    r"so|now|last|this|only|altogether|all in|und|für|bei|am|im|pro|insgesamt|heute|gestern|monatlich|zusammen|von|"
    r"an|zu|bar|mit|nur|letzte\w*|diese\w*|k|ge[a-zäöüß]+(?:t|en)|\w+ed|after|before|net|gross|netto|brutto|"
    # a sigh or an aside after the sum counts nothing: "vet bill came to 180 ugh"
    r"ugh|argh|lol|omg|haha\w*|sigh|wow|phew|meh|jeez|oof|yikes|ouch|damn|wtf|smh|tbh|btw|fyi|pls|please|bitte|puh|"
    r"boah|uff|autsch|mist|krass)"
    r"(?![a-zäöüß]))[a-zäöüß]{2,}",
    re.IGNORECASE,
)
# "花" is spending when money follows it ("花了", "花三百", "花多少"), not in "花生" (peanuts) or "花园" (garden).
SPENT_ZH = r"花(?=了|钱|费|掉|光|多|在|[\d零〇一二两三四五六七八九十百千万几])"
_MONEY_WORDS = re.compile(
    r"\b(?:spent|spend|paid|pay|cost|costs|bought|buy|price|bill|charged|salary|earned|income|refund|received|"
    r"sold|budget|fee|fees|ausgegeben|bezahlt|gezahlt|gekostet|kostet|gehalt|einkauf|rechnung|bekommen|erhalten|"
    r"verkauft|gebühr|budget|reimbursed|refunded|zurückbekommen|zurückgezahlt|erstattet|dropped|blew|blown|"
    r"splashed out|shelled out|forked out|tip|tipped|trinkgeld|split|geteilt|renewed|verlängert|sent|gave|gifted|"
    r"transferred|geschickt|geschenkt|überwiesen|zugesteckt|gegeben)\b|\bgot\s+[\d.,]+\s+back\b|"
    r"\b(?:came|comes|come) (?:to|out at)\s*[€$£]?\s*\d|\bset (?:us|me|them) back\b|💸|红包|压岁钱|转了|转账|"
    rf"{SPENT_ZH}|付了|付|买|消费|收入|工资|奖金|报销|交了|充值|收到|预算|退款|退回|退还|退钱|返现|续费|小费|交费",
    re.IGNORECASE,
)


_CLOCK_BEFORE = re.compile(
    r"\b(?:at|um|by|gegen|ab|till|until|bis|around|half|halb|quarter|viertel|past|to|nach|vor)\s*$", re.IGNORECASE
)
_YEAR_BEFORE = re.compile(rf"\b(?:in|im|since|seit|of|von|for|für|{'|'.join(MONTH_NAMES)})\.?,?\s*$", re.IGNORECASE)
KINDS: tuple[Kind, ...] = ("expense", "income")
_PER_PERIOD = re.compile(
    r"\s*(?:(?:a|per|each|every|pro|im|jeden|je)\s+(?:month|week|year|monat|woche|jahr)\b|monthly\b|weekly\b|"
    r"monatlich\b|每月|每个月)",
    re.IGNORECASE,
)
# A price per piece and the sum of them: "18 each, so 36 total", "je 9 euro, zusammen 18", "每张50 一共100". With
# both said, the sum is the money spent.
_CURRENCY_WORD = r"(?:[€$£]|euros?|eur\b|dollars?|pounds?|quid|bucks)?"
_EACH_AFTER = re.compile(rf"\s*{_CURRENCY_WORD}\s*(?:each|apiece|a piece|pro (?:stück|person|kopf|kind))\b", re.I)
_EACH_BEFORE = re.compile(r"(?:\b(?:je|jeweils|each)|每(?:张|个|人|份|件))\s*$", re.I)
_TOTAL_AFTER = re.compile(rf"\s*{_CURRENCY_WORD}\s*(?:(?:in )?(?:total|altogether|insgesamt|zusammen)|all in)\b", re.I)
_TOTAL_BEFORE = re.compile(
    r"(?:\b(?:total|insgesamt|zusammen|altogether)|一共|总共|合计|总计)\s*(?:of\s*|von\s*)?[€$£]?\s*$", re.I
)
# A bill shared and the family's part of it ("86 split with the neighbours, our half was 43", "rechnung geteilt, unser
# anteil 38", "AA制，我们出了120"): the part is what the family spent.
_SHARE_BEFORE = re.compile(
    r"(?:\b(?:our|my) (?:half|share|part|bit)|\bunser(?:e|en)? (?:anteil|hälfte|teil)|\bmein anteil|"
    r"我们(?:那份|那一半|一半|出了))\s*(?:was|is|came to|war|ist|betrug|waren)?\s*[:€$£]?\s*$",
    re.I,
)
_CASH = re.compile(r"\s*(?:in )?(?:cash\b|bar\b|现金)", re.IGNORECASE)  # "gave the window cleaner 30 cash"
_CEILING_BEFORE = re.compile(
    r"(?:\b(?:max(?:imum)?|at most|no more than|under|below|höchstens|maximal|nicht mehr als|unter|bis zu)|"
    r"最多|不超过|别超过|控制在)\s*$",
    re.IGNORECASE,
)
_PAID_FOR = re.compile(
    r"\d\s+(?:for|für)\s+(?:the|a|an|my|our|his|her|den|die|das|ein|eine|einen|meine?n?|unsere?n?)\b", re.I
)


_SPOKEN_CENTS = re.compile(r"\b(\d{1,4}) ([1-9]\d)\b(?! ?[\d.,:])")


@dataclass(frozen=True)
class Money:
    amount: Decimal
    currency: str | None  # ISO 4217; None when the message gave none
    text: str  # as the member wrote it


def find_money(text: str) -> list[Money]:
    """Every amount of money in `text`, in order, each once."""
    normal = unicodedata.normalize("NFKC", text)
    language = language_of(normal)
    german = language == "de"
    if CJK.search(normal):
        normal = with_arabic_numerals(normal)
    elif re.search(r"\d", normal):
        normal = with_digits(normal, language)
    else:  # a spoken price: "a hundred and forty two fifty euros" is 142.50, "drei fünfzig" 3.50
        normal = _SPOKEN_CENTS.sub(r"\1.\2", with_digits(normal, language))
    paying = _MONEY_WORDS.search(normal) is not None or _PAID_FOR.search(normal) is not None
    paying = paying or category_of(normal, "income") is not None  # "年终奖发了 八千", "kindergeld ist da 250"
    measuring = not paying and (
        _READING.search(normal) is not None
        or any(_MEASURE.match(normal, match.end()) for match in _AMOUNT.finditer(normal))
    )
    bought = any(category_of(normal, kind) for kind in KINDS)  # "groceries 37.20 at aldi"
    found: list[Money] = []
    each: list[Money] = []  # prices per piece
    shares: list[Money] = []  # the family's part of a bill shared
    totals = False
    for match in _AMOUNT.finditer(normal):
        word = match.group("pre") or match.group("post")
        if word is None and (
            measuring or not (_reads_as_money(normal, match, paying, bought) and _bare_amount(normal, match, german))
        ):
            continue
        amount = _decimal(match.group("number"))
        if amount is None:
            continue
        if match.group("k"):
            amount = (amount * 1000).quantize(Decimal(1))
        if match.group("jiao"):  # 35块5: thirty-five yuan and five jiao
            amount += Decimal(match.group("jiao")) / 10
        if match.group("cents") and word and amount == amount.to_integral_value():  # "2 Euro 50", "9 pounds 50"
            amount += Decimal(match.group("cents")) / 100
        money = Money(amount, _CODES.get(word.lower()) if word else None, match.group(0).strip())
        if money.amount > 0 and money not in found:
            found.append(money)
            if _EACH_AFTER.match(normal, match.end()) or _EACH_BEFORE.search(normal[: match.start()]):
                each.append(money)
            if _SHARE_BEFORE.search(normal[: match.start()]):
                shares.append(money)
            totals = totals or bool(
                _TOTAL_AFTER.match(normal, match.end()) or _TOTAL_BEFORE.search(normal[: match.start()])
            )
    if shares:
        return shares
    return [money for money in found if money not in each] if totals and len(each) < len(found) else found


def answered_amount(text: str) -> Money | None:
    """The amount in a reply that is nothing but a number ("38.50", "38,50", "二百八"): the answer to "how much was
    it?"; None when the reply says anything else."""
    normal = unicodedata.normalize("NFKC", text).strip()
    normal = with_arabic_numerals(normal) if CJK.search(normal) else with_digits(normal, language_of(normal))
    if not re.fullmatch(r"\d[\d.,' ]*", normal):
        return None
    amount = _decimal(normal)
    return Money(amount, None, text.strip()) if amount is not None and amount > 0 else None


def find_currencies(text: str) -> list[str]:
    """The currencies a text names, with or without amounts ("it was dollars, not euros"), in order, each once."""
    found: list[str] = []
    for match in re.finditer(_CURRENCY, unicodedata.normalize("NFKC", text), re.IGNORECASE):
        code = _CODES[match.group(0).lower()]
        if code not in found:
            found.append(code)
    return found


def _reads_as_money(text: str, match: re.Match[str], paying: bool, bought: bool) -> bool:
    """Whether a number without a currency is a sum: the message speaks of paying, or names something bought and
    the number is written as a price (37.20, 86.5) or per month ("400 a month"); never a number glued to a word
    ("sunflower2026")."""
    if re.search(r"[a-zäöüß]\Z", text[: match.start("number")], re.IGNORECASE):
        return False
    if paying or _PER_PERIOD.match(text, match.end()) or _CASH.match(text, match.end()):
        return True
    priced = (_EACH_AFTER, _TOTAL_AFTER)
    if bought and (any(p.match(text, match.end()) for p in priced) or _TOTAL_BEFORE.search(text[: match.start()])):
        return True  # "kids haircuts 18 each, so 36 total"
    if _CEILING_BEFORE.search(text[: match.start()]) and _PER_PERIOD.search(text):
        return True  # "max 300 für lebensmittel im monat": a ceiling on a month's spending
    if bought and _SPENT_ON.match(text, match.end()) and _terse(text, match):
        return True  # a terse record of what was bought: "32 on petrol", "12 für den metzger"
    if bought and _jotted(text, match):
        return True
    return bought and re.search(r"[.,]\d{1,2}$", match.group("number")) is not None


def _jotted(text: str, match: re.Match[str]) -> bool:
    """A whole number of two digits or more closing a short note of what was bought, a word or more after the thing
    ("dinner at the thai place 62", "abendessen beim italiener 54"), in Chinese right after it ("晚饭吃火锅268",
    "打车35"): its price. Right after an English or German word, a number is what the thing goes by ("bus 42"); a
    thing inside a compound ("schuhgröße 31") is no purchase."""
    if not re.fullmatch(r"[1-9]\d+", match.group("number")) or re.search(r"\w", text[match.end() :]):
        return False
    before = text[: match.start()].rstrip()
    if re.search(r"\d$", before):
        return False  # the end of a phone number ("0176 5551234")
    spans = synonym_spans(before)
    if CJK.search(text):
        return any(end == len(before) for _, end in spans)
    return _terse(text, match) and any(re.search(r"\w", before[end:]) for _, end in spans)


# A sum's "on" or "for" the thing bought ("32 on petrol", "12 für den metzger").
_SPENT_ON = re.compile(r"\s*(?:on|for|für|auf)\b", re.IGNORECASE)


def _terse(text: str, match: re.Match[str]) -> bool:
    """A message of six words or fewer, the number not told as what something is or is not ("the code is 3391",
    "war doch 30, nicht 35"): how a purchase is jotted down. Chinese, written without spaces, is not counted so."""
    told = re.search(r"\b(?:is|was|are|ist|war|sind|not|nicht|instead of|statt)\s*$", text[: match.start()], re.I)
    return not CJK.search(text) and not told and len(re.findall(r"\S+", text)) <= 6


# What is measured, said before its number.
_MEASURED_BEFORE = re.compile(
    r"(?:\b(?:fever|temp(?:erature)?|blood pressure|weight|weighs|height|fieber|temperatur|blutdruck|gewicht|wiegt)"
    r"(?: of| von| was| is| at| bei| war| ist| bei)?|体温|发烧|烧到|血压|体重|身高)\s*$",
    re.IGNORECASE,
)


# A number told as what something is numbered by: a flight, a customer, a locker number, a code.
_LABELLED = re.compile(
    r"(?:\b(?:number|\w*nummer|code|pin)\b|号码|编号|户号|密码)\W*(?:is|ist|was|war|是)?\W*[A-Z]{0,3}\W*$", re.I
)


_DAY_MONTH = re.compile(r"(?:0?[1-9]|[12]\d|3[01])\.(?:0?[1-9]|1[0-2])")
_ON_DAY = re.compile(r"\b(?:am|bis|vom|ab|zum|seit|den|on|by|from)\s*$", re.IGNORECASE)


def _bare_amount(text: str, match: re.Match[str], german: bool) -> bool:
    """A number without a currency counts as money when nothing around it says what else it is."""
    after = text[match.end() :]
    before = text[: match.start()]
    if _UNIT.match(after) or re.search(r"(?:room|zimmer|nr\.?|no\.?|#|第|/)\s*$", before, re.IGNORECASE):
        return False
    if _LABELLED.search(before):
        return False  # "toms flight number is BA 2490", "kundennummer 4471298"
    if _MEASURED_BEFORE.search(before):
        return False  # "a fever of 38.5", "blood pressure was 128 over 84"
    hour = int(re.split(r"\D", match.group("number"), maxsplit=1)[0])  # the number's whole part
    if (hour <= 24 and _CLOCK_BEFORE.search(before)) or (  # "up to 450" is no clock
        re.fullmatch(r"(?:19|20)\d\d", match.group("number")) and _YEAR_BEFORE.search(before)
    ):
        return False  # "at 7", "half 5", "in 2025"
    if re.fullmatch(r"\d+", match.group("number")) and _COUNTED.match(after):
        return False  # "3 Gläser", "2 coffees"
    if re.match(r"\s*[:/.-]\d", after) or re.search(r"\d[:/.-]$", before):  # times and dates: 7:30, 3/12
        return False
    if _DAY_MONTH.fullmatch(match.group("number")) and (after.startswith(".") or _ON_DAY.search(before)):
        return False  # a German date: "am 12.12. um 15 uhr", "bis 3.1."
    if re.search(r"\b(?:a|an|ein|eine|einen)\s+$", text[: match.start("number")], re.IGNORECASE):
        return False  # "got a 2 in maths", "eine 1 in Mathe bekommen": a grade or a count, not a sum
    if re.search(r"(?<![\d\w])[-+−]$", before):
        return False  # a signed number is a measure ("-0.75 both eyes", "+2 dioptres"); a sum is paid, not signed
    if german and re.fullmatch(r"\d{1,2}", match.group("number")) and _ORDINAL_AFTER.match(after):
        return False  # "die 2. Impfung"
    return not re.match(r"\s*(?:岁|号|点|月|日)", after)


def _decimal(number: str) -> Decimal | None:
    """The value of a written number, deciding what its separators mean: one followed by exactly three digits
    groups thousands (1,250 · 1.250), a last one followed by one or two digits is the decimal point (71,40)."""
    digits = re.sub(r"[\u202f '’]", "", number)  # spaces and Swiss apostrophes only ever group thousands
    separators = [c for c in digits if c in ",."]
    if separators:
        last = max(digits.rfind(","), digits.rfind("."))
        tail = digits[last + 1 :]
        if len(tail) == 3 and (len(separators) > 1 and separators[-1] == separators[0] or len(separators) == 1):
            digits = digits.replace(",", "").replace(".", "")
        else:
            digits = re.sub(r"[,.]", "", digits[:last]) + "." + tail
    try:
        return Decimal(digits)
    except InvalidOperation:
        return None


def with_arabic_numerals(text: str) -> str:
    """Chinese numerals in front of a currency (三十五块五, 两百元) and bare ones with a multiplier (八千) written as
    digits; other text stays as it is."""

    def convert(match: re.Match[str]) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return str(cn2an.cn2an(match.group(0), "smart"))
            except (ValueError, KeyError):
                return match.group(0)

    text = _CN_NUMERAL.sub(convert, text)
    text = _CN_JIAO.sub(lambda m: str(cn2an.cn2an(m.group(1), "smart")), text)
    return _CN_BARE_NUMERAL.sub(convert, text)


def home_currency(locale: str, timezone: str, today: date) -> str | None:
    """The currency of where the member lives: their timezone's country ("Europe/Berlin" is Germany's), else their
    locale's ("de-DE"); None when neither says (UTC and a bare "en")."""
    territory = get_global("zone_territories").get(timezone)
    if not territory:
        try:
            territory = Locale.parse(locale.replace("-", "_")).territory
        except (ValueError, UnknownLocaleError):
            territory = None
    if not territory:
        return None
    currencies = get_territory_currencies(territory, today)
    return str(currencies[0]) if currencies else None
