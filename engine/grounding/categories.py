"""The categories money is filed under: one small taxonomy, with the words families use for each in English, German
and Chinese. The engine offers the names as the model's enum and files an entry by its words when they decide it
("window cleaner" is household, "swimming class fee" is sports); a word that names a currency ("quid") or a
quantity names no category.

A message is matched against every synonym: the longest match wins (so "swimming class" beats "class"), then the
earliest. English and German synonyms match whole words, and German ones also at the start or end of a compound
("Lebensmitteleinkauf", "Kinderschuhe"); Chinese ones match anywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Kind = Literal["expense", "income"]

# category -> synonyms (en | de | zh). Each line is one language; a synonym is a word or a phrase, lowercase.
_EXPENSES: dict[str, tuple[str, str, str]] = {
    "groceries": (
        "groceries|grocery|supermarket|food shop|food shopping|weekly shop|big shop|veg|vegetables|fruit|bread|"
        "milk|eggs|aldi|lidl|tesco|sainsbury's|asda|rewe|edeka|penny|netto|kaufland|whole foods|trader joe's|costco|"
        "snacks|sweets|crisps|chocolate",
        "lebensmittel|einkauf|supermarkt|wocheneinkauf|brötchen|brot|milch|eier|obst|gemüse|bäcker|bäckerei|"
        "metzger|rewe|edeka|aldi|lidl|penny|netto|kaufland|süßigkeiten|süßkram|naschzeug|schokolade",
        "买菜|菜钱|超市|水果|蔬菜|面包|牛奶|鸡蛋|菜市场|生鲜|粮油|零食|巧克力",
    ),
    "restaurants": (
        "restaurant|restaurants|dinner out|lunch out|takeaway|takeout|take-away|delivery|pizza|sushi|burger|"
        "kebab|curry|chinese takeaway|mcdonald's|deliveroo|uber eats|just eat|brunch|eating out|dining out|"
        "meals out|takeaways|dinner|lunch|breakfast|ordered in|ordered food|food order",
        "restaurant|essen gehen|essen bestellen|essen bestellt|bestelltes essen|essen liefern|abendessen|mittagessen|"
        "frühstück|lieferando|lieferdienst|pizzeria|pizza|döner|imbiss|"
        "sushi|burger",
        "餐厅|饭店|餐饮|外卖|吃饭|聚餐|火锅|烧烤|早餐|午饭|晚饭|午餐|晚餐|披萨|寿司",
    ),
    "drinks": (
        "coffee|coffees|latte|cappuccino|tea|bubble tea|beer|beers|wine|drinks|pub|bar|starbucks|smoothie",
        "kaffee|cappuccino|tee|bier|wein|getränke|kneipe|bar|cocktail",
        "咖啡|奶茶|茶|啤酒|红酒|饮料|酒吧|喝酒",
    ),
    "fuel": (
        "fuel|petrol|gas station|diesel|filled up|fill up|tank|shell|esso|bp|aral|charging|ev charging",
        "tanken|getankt|benzin|diesel|sprit|tankstelle|aral|shell|esso|ladestation",
        "加油|油费|汽油|柴油|充电",
    ),
    "transport": (
        "bus|train ticket|train tickets|bus tickets|tram|metro|subway|tube|taxi|uber|lyft|cab|parking|toll|"
        "bus ticket|travelcard|oyster|"
        "bike hire|scooter",
        "bus|bahn|s-bahn|u-bahn|straßenbahn|taxi|fahrkarte|ticket|parken|parkhaus|parkgebühr|maut|deutschlandticket|"
        "monatskarte",
        "公交|地铁|打车|出租车|滴滴|停车|停车费|过路费|车票|交通",
    ),
    "travel": (
        "flight|flights|hotel|holiday|vacation|trip|airbnb|hostel|ferry|booking.com|travel|luggage|visa",
        "flug|flüge|hotel|urlaub|reise|ferienwohnung|ausflug|fähre|koffer|visum",
        "机票|酒店|旅游|旅行|度假|民宿|签证|出差",
    ),
    "rent": (
        "rent|mortgage|landlord|housing",
        "miete|kaltmiete|warmmiete|hypothek|vermieter|nebenkosten",
        "房租|租金|房贷|月供",
    ),
    "utilities": (
        "electricity|electric bill|power bill|gas bill|water bill|utilities|internet|broadband|wifi|phone bill|"
        "mobile bill|council tax|heating|energy bill",
        "strom|stromrechnung|gasrechnung|wasserrechnung|heizung|internet|handyrechnung|handyvertrag|rundfunkbeitrag|gez|"
        "nebenkostenabrechnung",
        "电费|水费|燃气费|煤气费|网费|宽带|话费|物业费|暖气费",
    ),
    "health": (
        "doctor|dentist|hospital|physio|physiotherapy|therapy|optician|glasses|contact lenses|vet bill|"
        "prescription charge|check-up|checkup",
        "arzt|ärztin|zahnarzt|zahnreinigung|prophylaxe|krankenhaus|physiotherapie|therapie|optiker|brille|"
        "kontaktlinsen|praxisgebühr",
        "看病|医院|牙医|体检|挂号|医药费|眼镜|诊所",
    ),
    "pharmacy": (
        "pharmacy|chemist|medicine|medication|painkillers|paracetamol|ibuprofen|cough syrup|vitamins|plasters",
        "apotheke|medikament|medikamente|tabletten|hustensaft|vitamine|pflaster|drogerie|dm|rossmann",
        "药店|药房|买药|药|维生素|感冒药",
    ),
    "clothing": (
        "clothes|clothing|shoes|trainers|sneakers|jacket|coat|dress|shirt|t-shirt|jeans|trousers|socks|"
        "boots|h&m|zara|primark|uniform",  # not "hat": German for "has"
        "kleidung|klamotten|schuhe|jacke|mantel|kleid|hemd|hose|socken|mütze|turnschuhe|stiefel|h&m|zara",
        "衣服|鞋|鞋子|外套|裤子|裙子|袜子|校服|帽子",
    ),
    "kids": (
        "nappies|diapers|baby food|babysitter|childcare|nursery|daycare|kindergarten|toys|toy|pocket money|"
        "pram|stroller|wipes",
        "windeln|babybrei|babynahrung|babysitter|kita|kindergarten|tagesmutter|spielzeug|taschengeld|"
        "kinderwagen|feuchttücher",
        "尿布|纸尿裤|奶粉|辅食|保姆|托儿所|幼儿园|玩具|零花钱|婴儿车",
    ),
    "education": (
        "school|school fees|tuition|tutor|tutoring|class fee|course|lessons|textbook|textbooks|school books|"
        "stationery|school trip|school bag|exam fee|university|piano lessons|music lessons|instrument|recorder|flute|"
        "violin|cello|guitar|ukulele|sheet music",
        "schule|schulgeld|klassenfahrt|schulranzen|nachhilfe|kurs|kursgebühr|unterricht|schulbücher|schulsachen|schreibwaren|studium|"
        "klavierunterricht|musikschule|instrument|flöte|blockflöte|querflöte|geige|cello|gitarre|noten",
        "学费|补习|辅导|培训|课|课程|课本|教材|文具|兴趣班|钢琴课|书包|学校|春游|乐器|笛子|小提琴|吉他|尤克里里",
    ),
    "sports": (
        "gym|swimming|swimming class|swimming lessons|swim class|football|football club|tennis|yoga|sports|"
        "sport club|club fees|membership fee|ski|skiing|climbing|bike",
        "fitnessstudio|schwimmen|schwimmkurs|schwimmbad|fußball|fußballverein|verein|vereinsbeitrag|tennis|yoga|"
        "sport|ski|klettern|fahrrad",
        "健身|游泳|游泳课|足球|篮球|网球|瑜伽|运动|滑雪|自行车",
    ),
    "books": (
        "book|books|magazine|magazines|newspaper|comic|comics|kindle|audiobook",
        "buch|bücher|zeitschrift|zeitung|magazin|comic|hörbuch",
        "书|书籍|杂志|报纸|漫画",
    ),
    "gifts": (
        "gift|gifts|present|presents|birthday present|wedding gift|flowers",
        "geschenk|geschenke|mitbringsel|blumen",
        "礼物|红包|送礼|鲜花",
    ),
    "entertainment": (
        "cinema|movie|movies|film|theatre|theater|concert|tickets|museum|zoo|game|games|playstation|xbox|"
        "nintendo|steam|bowling|festival|fair",
        "kino|film|theater|konzert|museum|zoo|spiel|spiele|freizeitpark|bowling|festival|eintritt",
        "电影|电影票|演唱会|音乐会|博物馆|动物园|游戏|游乐园|门票|娱乐",
    ),
    "household": (
        "cleaning|cleaner|window cleaner|cleaning lady|detergent|washing powder|toilet paper|kitchen roll|"
        "bin bags|light bulbs|furniture|ikea|homeware|repairs|plumber|electrician|garden|gardening|hardware|"
        "diy|paint|tools|boiler|washing machine|dishwasher|fridge|freezer|oven|hoover|vacuum cleaner",
        "putzmittel|reinigung|putzfrau|fensterputzer|waschmittel|toilettenpapier|klopapier|küchenrolle|"
        "müllbeutel|glühbirnen|möbel|ikea|haushalt|reparatur|klempner|handwerker|elektriker|garten|baumarkt|"
        "werkzeug|farbe|therme|waschmaschine|spülmaschine|kühlschrank|staubsauger",
        "清洁|保洁|洗衣液|卫生纸|纸巾|垃圾袋|灯泡|家具|宜家|维修|水管工|家政|日用品|热水器|洗衣机|洗碗机|冰箱|吸尘器",
    ),
    "electronics": (
        "phone|laptop|computer|tablet|ipad|iphone|headphones|charger|tv|television|camera|printer|cable|"
        "apple store|media markt|currys",
        "handy|smartphone|laptop|computer|tablet|kopfhörer|ladegerät|fernseher|kamera|drucker|kabel|"
        "media markt|saturn|elektronik",
        "手机|电脑|笔记本|平板|耳机|充电器|电视|相机|打印机|数码",
    ),
    "car": (
        "car|mot|car service|tyres|tires|car wash|car repair|garage|road tax",
        "auto|tüv|inspektion|reifen|werkstatt|autowäsche|waschanlage|kfz-steuer|kfz",
        "汽车|车|保养|轮胎|洗车|修车|年检",
    ),
    "subscriptions": (
        "subscription|subscriptions|netflix|spotify|disney+|disney plus|amazon prime|prime|youtube premium|"
        "apple music|icloud|membership|streaming|app store",
        "abo|abonnement|netflix|spotify|disney+|amazon prime|streaming|mitgliedschaft",
        "订阅|会员|视频会员|爱奇艺|腾讯视频|优酷|网易云",
    ),
    "beauty": (  # personal care
        "haircut|hairdresser|hairdressers|barber|barbers|hair salon|nails|manicure|cosmetics|make-up|makeup|"
        "toiletries|shampoo|skincare|beauty",
        "friseur|frisör|haarschnitt|haare schneiden|barbier|nagelstudio|maniküre|kosmetik|make-up|shampoo|"
        "hautpflege|drogerieartikel",
        "理发|剪头发|剪头|美发|美甲|化妆品|护肤品|洗发水|美容",
    ),
    "pets": (
        "pet|pets|dog|cat|dog food|cat food|vet|kitty litter|cat litter|pet food",
        "haustier|hund|katze|hundefutter|katzenfutter|tierarzt|katzenstreu|futter",
        "宠物|狗粮|猫粮|猫砂|宠物医院|兽医",
    ),
    "insurance": (
        "insurance|health insurance|life insurance|home insurance|car insurance|premium",
        "versicherung|krankenversicherung|haftpflicht|hausrat|lebensversicherung",
        "保险|保险费|医保|社保",
    ),
}
_INCOME: dict[str, tuple[str, str, str]] = {
    "salary": (
        "salary|wages|wage|paycheck|paycheque|pay day|payday",
        "gehalt|lohn|gehaltseingang|monatsgehalt",
        "工资|薪水|月薪|发工资",
    ),
    "bonus": (
        "bonus|christmas bonus|commission",
        "bonus|prämie|weihnachtsgeld|urlaubsgeld",
        "奖金|年终奖|提成",
    ),
    "refund": (
        "refund|refunded|reimbursement|reimbursed|cashback|money back|tax return",
        "erstattung|rückerstattung|zurückerstattet|steuererstattung|rückzahlung",
        "退款|退回|退还|退钱|报销|退税|返现",
    ),
    "benefits": (
        "child benefit|benefits|allowance|pension",
        "kindergeld|elterngeld|rente|zuschuss",
        "补贴|补助|养老金|低保",
    ),
    "sales": (
        "sold|sale|selling|ebay|vinted",
        "verkauft|verkauf|kleinanzeigen|flohmarkt",
        "卖了|卖掉|出售|闲鱼",
    ),
    "gifts": (
        "gift|present|birthday money",
        "geschenkt|geschenk|geldgeschenk",
        "红包|压岁钱|礼金",
    ),
    "interest": (
        "interest|dividend|dividends",
        "zinsen|dividende",
        "利息|分红",
    ),
}
OTHER = "other"
EXPENSE_CATEGORIES: tuple[str, ...] = (*_EXPENSES, OTHER)
INCOME_CATEGORIES: tuple[str, ...] = (*_INCOME, OTHER)


@dataclass(frozen=True)
class _Table:
    """One kind's synonyms as one pattern per way of matching, and the category of each synonym."""

    patterns: tuple[re.Pattern[str], ...]
    category: dict[str, str]


def _compile(table: dict[str, tuple[str, str, str]]) -> _Table:
    category: dict[str, str] = {}
    whole: list[str] = []  # English and German: whole words
    starts: list[str] = []  # German: the start of a compound ("Lebensmitteleinkauf")
    ends: list[str] = []  # German: the end of a compound ("Kinderschuhe"), not "Preise" for "Reise"
    anywhere: list[str] = []  # Chinese
    for name, (english, german, chinese) in table.items():
        for language, line in (("en", english), ("de", german), ("zh", chinese)):
            for words in line.split("|"):
                category.setdefault(words, name)
                if language == "zh":
                    anywhere.append(words)
                    continue
                whole.append(words)
                if language == "de" and " " not in words:
                    starts += [words] if len(words) >= 5 else []
                    ends += [words] if len(words) >= 6 else []

    def alternation(words: list[str]) -> str:
        return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))

    patterns = (  # each names its synonym `w`; a whole word may be an English plural ("haircuts")
        rf"(?<![\w-])(?P<w>{alternation(whole)})(?:e?s)?(?![\w-])",
        rf"(?<![\w-])(?P<w>{alternation(starts)})",
        rf"(?P<w>{alternation(ends)})(?![\w-])",
        rf"(?P<w>{alternation(anywhere)})",
    )
    return _Table(tuple(re.compile(p, re.IGNORECASE) for p in patterns), category)


_TABLES = {"expense": _compile(_EXPENSES), "income": _compile(_INCOME)}


def categories(kind: Kind) -> tuple[str, ...]:
    """The category names for `kind`, "other" last: the enum the model chooses from."""
    return EXPENSE_CATEGORIES if kind == "expense" else INCOME_CATEGORIES


# Going out for something: in "grocery trip" or "bakery run" the first word is what the money went on.
_ERRAND = re.compile(r"(?:trip|run|haul|shop|einkauf)s?\b", re.IGNORECASE)


@lru_cache(maxsize=256)  # the grounding asks for the same message's category more than once
def category_of(text: str, kind: Kind = "expense") -> str | None:
    """The category the words of `text` name for money of `kind`: the longest synonym found, the earliest of equal
    ones, where of two side by side the second counts (it is what was bought: "school shoes", "car insurance");
    None when no synonym is in the text."""
    table = _TABLES[kind]
    found = [match for pattern in table.patterns for match in pattern.finditer(text)]
    starts = {match.start() for match in found}
    best: tuple[int, int, str] | None = None  # (-length, position, category)
    for match in found:
        after = re.match(r"[ -]+", text[match.end() :])
        if after and match.end() + after.end() in starts and not _ERRAND.match(text, match.end() + after.end()):
            continue  # the first of two synonyms side by side qualifies the second: "school shoes" are shoes
        candidate = (-len(match.group(0)), match.start(), table.category[match.group("w").lower()])
        if best is None or candidate < best:
            best = candidate
    return None if best is None else best[2]


def synonym_spans(text: str, kind: Kind = "expense") -> list[tuple[int, int]]:
    """Where synonyms of `kind` stand in `text` as words of their own, not inside a German compound: (start, end)."""
    table = _TABLES[kind]
    whole, _, _, chinese = table.patterns
    return [match.span() for pattern in (whole, chinese) for match in pattern.finditer(text)]


def categories_named(text: str, kind: Kind = "expense") -> frozenset[str]:
    """Every category a synonym in `text` names ("groceries and fuel": both)."""
    table = _TABLES[kind]
    return frozenset(table.category[m.group("w").lower()] for pattern in table.patterns for m in pattern.finditer(text))


# How a reply names a category to a member who writes German or Chinese (English replies use the names themselves).
_LABELS: dict[str, tuple[str, str]] = {
    "groceries": ("Lebensmittel", "买菜"),
    "restaurants": ("Essen gehen", "餐饮"),
    "drinks": ("Getränke", "饮品"),
    "fuel": ("Tanken", "加油"),
    "transport": ("Verkehr", "交通"),
    "travel": ("Reisen", "旅行"),
    "rent": ("Miete", "房租"),
    "utilities": ("Nebenkosten", "水电网"),
    "health": ("Gesundheit", "医疗"),
    "pharmacy": ("Apotheke", "药店"),
    "clothing": ("Kleidung", "服装"),
    "kids": ("Kinder", "孩子"),
    "education": ("Bildung", "教育"),
    "sports": ("Sport", "运动"),
    "books": ("Bücher", "书籍"),
    "gifts": ("Geschenke", "礼物"),
    "entertainment": ("Freizeit", "娱乐"),
    "household": ("Haushalt", "家居"),
    "electronics": ("Elektronik", "电子产品"),
    "car": ("Auto", "汽车"),
    "subscriptions": ("Abos", "订阅"),
    "beauty": ("Körperpflege", "美容"),
    "pets": ("Haustiere", "宠物"),
    "insurance": ("Versicherungen", "保险"),
    "salary": ("Gehalt", "工资"),
    "bonus": ("Bonus", "奖金"),
    "refund": ("Erstattungen", "退款"),
    "benefits": ("Leistungen", "补贴"),
    "sales": ("Verkäufe", "卖东西"),
    "interest": ("Zinsen", "利息"),
    "other": ("Sonstiges", "其他"),
}


def label(category: str, language: str) -> str:
    """The category as a reply in `language` names it: "groceries" is "Lebensmittel" to a German member and "买菜"
    to a Chinese one; a household's own category is named as it is."""
    labels = _LABELS.get(category)
    if labels is None or language not in ("de", "zh"):
        return category
    return labels[0] if language == "de" else labels[1]
