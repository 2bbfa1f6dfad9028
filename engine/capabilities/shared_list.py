"""Shared lists (shopping, to-do, packing, chores): "milk and eggs on the shopping list", "bought the eggs", "take
the crisps off the list", "tom will do the hoovering this week", "what's on the list?". The words decide what is done
to the list where they can;
the model names the list, the items (only those the message names) and who takes one on."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from engine.analysis import PlannedCall
from engine.capabilities.capability import Ask, Capability, Picked, Reading, Reroute, Said, Situation
from engine.capabilities.words import FILLER, INFORMATION, QUESTION, SPEND, VAGUE, cues, has_substance, is_vague, own
from engine.checklists import render
from engine.executor import StepResult
from engine.grounding import Grounding
from engine.grounding.language import CJK
from tools.lists import canonical_name, kinds_named

# Bought or brought home: a tick when a list has the thing ("grabbed milk on the way home").
_GOT = r"(?:got|bought|picked up|grabbed|fetched)"
_FETCHED = r"gekauft|besorgt|mitgebracht|mitgenommen|geholt|eingekauft"  # German participles of _GOT
_TICK = "[✅✔☑✓]"  # a tick after a thing: it is done
# Bought or brought, in Chinese: "买了", "买好了", "刚买好" (not "买好吃的", good things to buy), "带回来了".
_CN_GOT = r"(?:买|带|拿)(?:(?:回来|回家|好|到)(?![吃看玩的])了?|了)"

# A thing told as bought or fetched, on no list named ("pizza geholt", "got the pizza"): beside its price it is one
# purchase (`routed.two_requests`), not a tick and a sum.
_BOUGHT = cues(rf"\b(?:{_GOT}|{_FETCHED})\b", _CN_GOT)
_LIST_NAMED = cues(r"\blists?\b|liste\b|zettel\b", r"清单|购物单")


def told_bought(text: str) -> bool:
    return _BOUGHT.search(text) is not None and _LIST_NAMED.search(text) is None


# Shared lists (shopping, to-do, packing): naming one, putting on or taking off "the list", ticking a thing bought.
SHARED_LIST = cues(
    r"\b(?:shopping|grocery|groceries|to[- ]?do|packing|camping|holiday|trip)[ -]?lists?\b",
    r"\b(?:on|onto|to|off|from|for) (?:the|my|our) (?:\w+[ -]){0,2}list\b",
    r"\bwhat'?s on (?:the|my|our) (?:\w+ )?list",
    r"\bnew (?:\w+ )?list\b",
    r"\bclear (?:the |all )?(?:bought|done|ticked|checked)",
    r"^\W*(?:i |we )?(?:just )?(?:bought|got) the [^\W\d]+(?: [^\W\d]+){0,2}\W*$",
    r"\btakes? (?:on |over )?the [^\d]{1,30} (?:task|chore)\b",
    r"einkaufsliste|einkaufszettel",
    r"packliste",
    r"to-?do-?liste",
    r"aufgabenliste",
    r"\b(?:auf|von) (?:die|der|den|unsere|meine|meiner|unserer|unseren|meinen) (?:\w+)?(?:liste|zettel)\b",
    r"\bneue \w*\s?liste\b",
    r"^\W*(?:bitte |kannst du |kannste )?(?:schreib|notier)\w*\b(?! (?:mir|dir|ihm|ihr|uns|das|es|dies\w*)\b)"
    r"[^\d?]{1,60}\bauf\W*$",
    r"\bübernimmt\b.{0,30}\baufgabe\b",
    r"\bgekaufte\w* (?:sachen )?(?:löschen|entfernen)\b",
    r"^\W*(?:ich |wir )?(?:habe |hab |haben |ham )?[^\d?]{1,60} (?:ist |sind )?"
    rf"(?:{_FETCHED})\W*$",
    rf"^[^\d]{{1,10}}{_CN_GOT}(?:[，,][^\d?？]{{1,12}})?\W*$",  # "牛奶刚买好，放冰箱了": a remark may follow
    # Bought without a price: a tick when the list has the item, news otherwise (`prepare`).
    rf"^\W*(?:i |we |just |finally )*{_GOT}\b"
    r"(?! (?:it|that|this|you|ya|u|anything|any)\b)(?!.*\bback\b)[^\d?]{1,60}$",
    # things to add, on no list named: "add nappies, wipes & formula pls" (not a note, the calendar, a sum)
    r"^\W*(?:pls |please )?add\b(?! (?:a note|note|that|this)\b)(?!.*\b(?:calendar|diary|kalender|notes?)\b)"
    r"[^\d?]{1,60}$",
    r"\b(?:tick|check|cross)(?:ed)? (?:off|out)\b|\bcross (?:\w+ ){1,3}off\b|\babhaken\b|划掉|勾掉",
    # a thing not needed after all: "käse brauchen wir doch nicht", "don't need the bread after all", "牛奶不用买了"
    r"^\W*[^\d?]{1,40}\s+brauchen wir (?:doch |jetzt |nun )?nicht(?: mehr)?\W*$|"
    r"\bdon'?t need (?:the |any )?[^\d?]{1,30} (?:any ?more|after all)\b|^[^\d]{1,10}不用买了\W*$",
    # "toilet roll ✅": ticked off ("all done ✅", "搞定了✅" are said of a reminder just sent)
    r"^(?!.*(?:\b(?:done|ok|okay|erledigt|fertig|gemacht)\b|搞定|好了|完成))[^\d?]{1,40}?\s*"
    rf"{_TICK}\ufe0f?\W*$",
    r"购物清单",
    r"购物单",
    r"清单",
    r"待办",
    r"负责.{0,10}(?:任务|家务)",
)

# Running out says what to buy, for the shopping list: "we're out of milk", "need eggs n bread", "milch ist alle",
# "wir haben kein waschmittel mehr", "家里没有鸡蛋了". Each form names the thing run out of (`item`).
_THING = r"(?P<item>[^\W\d_]+(?: [^\W\d_]+){0,2})"
_RUNNING_OUT = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        r"(?:^\W*|\b(?:we'?re|we are|i'?m|all|running|run|ran) )(?:\w+ )?(?:out of|low on) (?P<item>[^\d.!?;]{1,40})",
        r"^\W*(?:we |i |the kids |the baby |[^\W\d_]+ )?(?:still )?needs? (?:more |some |new )?(?!to\b)"
        r"(?P<item>[^\d?]{1,40})$",
        # told on: "mia says we need glue sticks for school", "mia reckons we need more glue sticks"
        r"\b(?:says?|said|reckons?|thinks?|meinte?|meint|sagt|findet)\b,? (?:that |dass )?(?:we|they|she|he|wir) "
        r"(?:still |also )?(?:needs?|brauch\w*) "
        r"(?:more |some |new |noch |mehr |neue[nsr]? )?(?!to\b)(?P<item>[^\d?.!]{1,40})$",
        rf"\b(?:we have|we'?ve got|there'?s) no (?:more )?{_THING}",
        rf"\bno (?:more )?{_THING} left\b",
        rf"\b{_THING} (?:is|are) (?:almost|nearly|basically) (?:empty|gone|finished)\b",
        rf"\b{_THING} (?:ist|sind) (?:schon |fast |bald |gleich |so gut wie )?(?:alle|leer)\b",
        rf"\b{_THING} (?:is|are) running (?:low|out)\b",
        rf"\b{_THING} (?:geht|gehen) (?:langsam |bald |fast )?(?:zur neige|aus)\b",
        rf"\b{_THING} (?:wird|werden) (?:langsam |schon )?knapp\b",
        r"\bbrauchen (?:dringend |unbedingt |bald |auch |noch |mehr |wieder |neue[nsr]? )+(?P<item>[^\d?]{1,40})",
        r"\bcould do with (?:more |some |new )?(?P<item>[^\d?.!]{1,40})",
        rf"\b(?:haben|hab|ham|gibt(?:'s| es)?)\b.{{0,10}}\bkeine?n? {_THING} mehr\b",
        r"^\W*[^\W\d_]+ braucht (?:noch |mehr |neue[nsr]? )(?P<item>[^\d?]{1,40})",
        r"没有(?P<item>\S{1,16}?)了",
        r"(?:^|[\s，。,、]|家里|冰箱里?|的)(?P<item>[^\s\d，。,、的]{1,12}?)(?:也|又|都)?(?:快没了|快用完了|没了|用完了)",
        r"(?:家里|冰箱里?|家)(?:已经|都)?没(?:有)?(?P<item>[^\s\d，。]{1,16}?)了",
        r"(?:要买|该买|得买)(?P<item>[^\s\d，。]{1,8})",
        # things still to buy: "need to buy batteries", "müssen noch batterien besorgen"
        r"\b(?:(?:need|needs|have|got) to|gotta) buy (?:more |some |new )?(?P<item>[^\d?.!]{1,40})",
        r"\b(?:muss|müssen|sollten|sollen)\b (?:(?:ich|wir) )?(?:noch |mal |wieder )*(?P<item>[^\d?.!]{1,40}?) "
        r"(?:besorgen|kaufen|nachkaufen)\b",
    )
)
_INFORMATION = re.compile(rf"\b{INFORMATION}\b|{INFORMATION}$", re.IGNORECASE)
_APART = re.compile(r"\s*(?:,|&|\+|\band\b|\bund\b|\bn\b|和|跟|、|还有)\s*", re.IGNORECASE)
_NOT_THE_THING = re.compile(
    r"^(?:some|more|any|the|our|new|an?|die|der|das|den|ein|eine[nm]?|noch|mehr|neue[nsr]?|家里的|家里)\s*|"
    r"\s*(?:mehr|anymore|again|soon|already)$|[^\w\s]+",
    re.IGNORECASE,
)


# Asked to put things on a list, naming them: "can u put eggs and bread on the list", "setz windeln auf die
# einkaufsliste", "清单上加个洗衣液", "把猫粮加到购物清单".
_ADDING = tuple(
    re.compile(form, re.IGNORECASE)
    for form in (
        r"\b(?:add|put|pop|stick|write)\s+(?P<item>[^?!.]{1,60}?)\s+(?:on|to|onto|in)\s+(?:the |my |our )?"
        r"(?:\w+ )?list\b",
        r"\b(?:setz|schreib|pack|tu)\w*\s+(?P<item>[^?!.]{1,60}?)\s+auf (?:die|unsere|meine)\s+\w*liste\b",
        r"\bauf (?:die|den|unsere[n]?|meine[n]?) \w*(?:liste|zettel)\b\W*(?:bitte |noch |mal )*(?P<item>[^?!.]{1,60})$",
        r"^\W*(?:bitte )?(?:schreib|notier)\w*\s+(?:bitte |mal |noch )*(?P<item>[^?!.\d]{1,60}?)\s+auf\W*$",
        r"(?:清单|单子)(?:上|里)?(?:再)?(?:加|添)(?:个|点|些|上|一下)?(?P<item>[^\s，。？！]{1,12})",
        r"把(?P<item>[^\s，。]{1,12}?)(?:加|添|放|记)(?:到|进|在|上)(?:购物)?(?:清单|单子)",
        r"(?:加|添)(?:个|点|些|上)?(?P<item>[^\s，。]{1,10}?)(?:到|进)(?:购物)?(?:清单|单子)",
    )
)


def running_out(text: str) -> list[str] | None:
    """What the house ran out of, as the message names it ("we're nearly out of loo roll and eggs": loo roll, eggs),
    and in each clause after the one that says so ("卫生纸快用完了，洗洁精也没了");
    None when the message says nothing of running out (or needs a piece of information: "need the plumbers number"),
    [] when it does without naming the thing."""
    first = _things(_RUNNING_OUT, text)
    if first is None:
        return None
    later = (_things(_RUNNING_OUT, clause) or [] for clause in _CLAUSE_END.split(text)[1:])
    things = list(dict.fromkeys([*first, *(thing for clause in later for thing in clause)]))
    if things and all(_INFORMATION.search(thing) for thing in things):
        return None
    return things


# Where a later clause may name more things run out of: "卫生纸快用完了，洗洁精也没了", "milch ist alle, und wir haben
# kein brot mehr".
_CLAUSE_END = re.compile(r"[，,;；。]\s*")


def added(text: str) -> list[str]:
    """What the message asks to put on a list, as it names it ("清单上加个洗衣液": 洗衣液); [] when it names nothing."""
    return _things(_ADDING, text) or []


# The words of a list and of putting on one, which name no thing ("setz mal auf die liste", "put that on the list").
_LISTING = cues(
    r"\b(?:lists?|liste|zettel|on|onto|drauf|mal|die|der|den|dem)\b",
    r"清单|单子|购物|[上里到]",
)


def names_nothing(text: str) -> bool:
    """Nothing to put on a list is named: only words of listing, of putting and of pointing back ("put that on the
    list", "setz mal auf die liste", "帮我加到清单上")."""
    rest = FILLER.sub(" ", VAGUE.sub(" ", _LISTING.sub(" ", _PUT.sub(" ", SHARED_LIST.sub(" ", text)))))
    return not has_substance(rest)


# One more thing, said after the last: "oh and butter", "brot auch noch", "还有鸡蛋", "eggs too".
_MORE = cues(r"\b(?:and|also|too|as well|auch|noch|und|ebenfalls)\b", r"还有|也|再")


def one_more(text: str, before: str, grounding: Grounding) -> bool:
    """A short message naming one more thing right after the member's last message (`before`) put things on a list:
    it goes on the same list ("setz milch auf die einkaufsliste", then "brot auch noch"). A sum, a time, a person or
    a reference that names nothing ("that too") is something else."""
    if len(text) > 40 or not _MORE.search(text) or list_action(before) != "add":
        return False
    return not (grounding.money or grounding.moments or grounding.people or is_vague(text))


def referred(text: str, before: str) -> list[str]:
    """The things a message that names none points back to ("can you put that on the list" after "ugh we're out of
    dishwasher tabs"): what the member's last message ran out of or asked to add; [] when it names things itself."""
    if not names_nothing(text) or not VAGUE.search(text):
        return []
    return [thing for thing in running_out(before) or added(before) if not names_nothing(thing)]


def _things(forms: tuple[re.Pattern[str], ...], text: str) -> list[str] | None:
    for form in forms:
        match = form.search(text)
        if match:
            things = (_NOT_THE_THING.sub("", part).strip() for part in _APART.split(match.group("item")))
            return [thing for thing in things if thing]
    return None


# A member taking a chore on: "ben can you do the bins this week", "tom will do the hoovering", "Ben übernimmt den
# Müll", "这周小明负责倒垃圾" — claimed when the message names a member of the household.
# Asked to bring things home: "pick up nappies n wipes next time ur at the shop", "bring noch brot mit wenn du beim
# edeka bist", "顺路带两袋尿不湿".
ERRAND = cues(
    r"\b(?:pick up|grab|get|bring)\b.{1,50}\b(?:(?:at|from) the (?:shops?|store|supermarket)|on (?:the|your|ur) way"
    r"|next time (?:you'?re|ur|u r|you are)|when (?:you'?re|ur|u r|you are) (?:at|in)"
    r"|if (?:you'?re|ur|u r|you are|youre) (?:passing|going past|near|at|in))\b",
    r"\bbring\w*\b.{1,50}\bmit\b",
    r"顺路带|顺便带|回来(?:的时候)?带",
)
TAKING_ON = cues(
    r"\b(?:can|could|would) you (?:do|take|handle|sort)\b|\bwill do\b|\b(?:'s|is) on\b.{0,20}\b(?:duty|this week)\b|"
    r"\b(?:can|will|'ll|is going to|gonna) (?:do|sort|take|handle)\b(?=.{0,40}\b(?:this|next) week\b)|"
    r"\b(?:'s|is) (?:your |his |her )?turn\b|"
    # "tom's doing the hoovering", not "he's doing really well in maths"
    r"\b(?:is|'s) doing\b(?! (?:really |so |very |pretty |quite )?(?:well|great|fine|better|worse|good|badly|ok|okay|"
    r"alright|amazing|brilliant)\b)",
    r"\bübernimmt\b|\bkannst du\b.{0,30}\b(?:machen|übernehmen)\b|\bist\b.{0,30}\bdran\b",
    r"负责|轮到|归",
)

Action = Literal["add", "show", "done", "remove", "assign", "empty", "clear", "new_list"]


_I = re.IGNORECASE


# Asking to put something on a list, even as a question ("can you add milk?", "could you pop oat milk on the list").
_PUT = re.compile(
    r"\b(?:add|put|pop|stick|chuck|bung|throw|whack|jot|write)\b|\bhinzu|\bsetz|\bschreib|\btun\b|\btu\b.{0,40}\bdrauf\b|"
    r"加|添加|放到|放进|记上|写上|写到",
    _I,
)


# Every item off, open ones too: "lösch die ganze einkaufsliste", "empty the list", "清空购物清单" — unless the
# message names the ticked ones only, which is `clear`.
_EMPTYING = cues(
    r"\bempty\b.{0,30}\blist\b",
    r"\b(?:clear|delete|remove|wipe|scrap)\b.{0,25}\b(?:whole|entire|full)\b.{0,20}\blist\b",
    r"\b(?:clear|delete|remove|wipe|take)\b (?:off )?everything\b.{0,10}\b(?:on|from|off)\b.{0,20}\blist\b",
    r"\b(?:lösch|leer|entfern)\w*\b.{0,40}\b(?:ganze|komplette|gesamte)n? \w*(?:liste|zettel)",
    r"\b(?:ganze|komplette|gesamte)n? \w*(?:liste|zettel)\b.{0,30}\b(?:lösch|leer|entfern)\w*",
    r"\balles (?:von|auf) (?:der|die|dem|unserer?|meiner) \w*(?:liste|zettel)\b.{0,20}\b(?:lösch|entfern|weg)\w*",
    r"\b\w*(?:liste|zettel) leeren\b",
    # the list itself deleted, nothing on it named: "please delete the shopping list", "lösch die einkaufsliste"
    r"\b(?:delete|remove|scrap|bin)\b (?:the |our |my )?\w*[ -]?list\W*$",
    r"\b(?:lösch|entfern)\w* (?:die|unsere|meine) \w*(?:liste|zettel)\W*$",
    r"(?:清单|购物单|单子)(?:都|全)?(?:删了|删掉|删除)",
    r"清空.{0,6}(?:清单|购物单|单子)",
    r"(?:清单|购物单|单子).{0,6}(?:全|都)(?:删|清|去掉)",
    r"把.{0,10}(?:清单|购物单|单子).{0,4}(?:清空|删光|全删)",
)
_TICKED_ONLY = cues(
    r"\b(?:bought|ticked|done|checked|gekauft\w*|erledigt\w*|abgehakt\w*)\b", r"买好|买了的|勾掉|完成的"
)

EMPTIES = re.compile(rf"^(?!.*(?:{_TICKED_ONLY.pattern}))(?:.*(?:{_EMPTYING.pattern}))", _I)


# What the member does to a list, by its words; the first family that matches decides.
_ACTIONS: list[tuple[Action, re.Pattern[str]]] = [
    ("new_list", re.compile(r"\bnew\b.{0,30}\blist\b|\bneue\b.{0,30}liste|新建|新的.{0,10}清单|创建.{0,10}清单", _I)),
    ("empty", EMPTIES),
    (
        "clear",
        re.compile(
            r"\bclear\b|\bremove (?:the |all )?(?:bought|done|ticked)|\b(?:gekauft|erledigt|abgehakt)\w*\b.{0,20}"
            r"\b(?:lösch|entfern)|清除|清空|(?:买了|买好|勾掉|完成)的.{0,6}(?:删|去掉)",
            _I,
        ),
    ),
    (  # one item not needed after all: off the list, not ticked
        "remove",
        re.compile(
            r"\btake\b.{1,40}\boff\b|\b(?:remove|delete|scratch)\b|\bdon'?t need\b.{0,40}\b(?:any ?more|after all)\b|"
            r"\b(?:nimm|nehmt?|nehmen)\b.{1,40}\b(?:von|runter)\b|\bvon (?:der |unserer )?\w*liste\b.{0,20}\bnehmen\b|"
            r"\brunter ?nehmen\b|\bstreich\w*|\blösch\w*|\bentfern\w*|"
            r"\bbrauchen wir\b.{0,30}\bdoch nicht\b|删掉|删除|去掉|拿掉|不用买|不要买|别买",
            _I,
        ),
    ),
    (
        "assign",
        re.compile(
            r"\btakes?\b|\bwill do\b|\b(?:can|could) you do\b|\b(?:can|will|'ll) (?:do|sort|handle)\b|\bassign|"
            r"\bübernimmt\b|\bmacht\b|"
            r"\bkannst du\b.{0,30}\bmachen\b|负责|来做|去做",
            _I,
        ),
    ),
    (
        "done",
        re.compile(
            rf"\b{_GOT}\b|\btick|\bcheck(?:ed)? off\b|\bcross(?:ed)? (?:off|out)\b|\bcross (?:\w+ ){{1,3}}off\b"
            rf"|划掉|勾掉|{_TICK}|\b(?:is |are )?done\b"
            rf"|\b(?:{_FETCHED})\b|\berledigt\b|\babhaken\b"
            r"|\b(?:hab|habe|haben) (?:ich|wir)(?: schon)?\W*$"
            rf"|{_CN_GOT}|完成了|搞定了|做完了",
            _I,
        ),
    ),
    ("add", re.compile(rf"{_PUT.pattern}|\bneed\b|\bauf die\b|\bbrauchen\b", _I)),
    ("show", re.compile(r"\bshow\b|\bwhat'?s on\b|\bzeig|\bwas steht\b|看看|有什么|有哪些", _I)),
]


_PHRASES: dict[str, dict[str, str]] = {
    "added": {
        "en": "Added to the {list} list: {items}.",
        "de": "Auf der Liste {list}: {items}.",
        "zh": "已加到{list}清单：{items}。",
    },
    "ticked": {"en": "Ticked off: {items}.", "de": "Abgehakt: {items}.", "zh": "已勾掉：{items}。"},
    "removed": {
        "en": "Taken off the {list} list: {items}.",
        "de": "Von der Liste {list} genommen: {items}.",
        "zh": "已从{list}清单删除：{items}。",
    },
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
    "already_listed": {
        "en": "Already on the list: {items}.",
        "de": "Steht schon auf der Liste: {items}.",
        "zh": "清单上已经有了：{items}。",
    },
}


def _say(key: str, language: str, **values: object) -> str:
    texts = _PHRASES[key]
    return texts.get(language, texts["en"]).format(**values)


def list_action(text: str) -> Action:
    """What the member's words do to a list; a question shows it ("what do we still need?", "did you get the milk?")
    unless it asks to put something on it, anything else adds to it."""
    asked = QUESTION.search(text) is not None
    for action, pattern in _ACTIONS:
        if pattern.search(text) and not (asked and (action == "done" or (action == "add" and not _PUT.search(text)))):
            return action
    return "show" if asked else "add"


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


INSTRUCTIONS = """\
You keep a family's shared lists (shopping, todo, packing, and lists of their own). From the message give:
- action: what the message does (the only choice offered).
- list_name: "shopping" for things to buy, "todo" for tasks and chores, "packing" for things to pack, or the
  name of one of the family's lists; null when the message names none.
- items: each thing named, short, in the member's words, without the quantity; quantity as written ("2 kg",
  "6") or null. For ticking off, taking off or assigning, the item as it is on the list.
- assignee: the member who takes something on, from the members given, else null.
Examples:
Lists: shopping (bread) | Members: Anna, Tom | Message: add milk and eggs to the shopping list
{"action":"add","list_name":"shopping","items":[{"text":"milk","quantity":null},{"text":"eggs","quantity":null}],"assignee":null}
Lists: - | Members: Anna, Tom | Message: put 2 kg flour on the list
{"action":"add","list_name":"shopping","items":[{"text":"flour","quantity":"2 kg"}],"assignee":null}
Lists: shopping (milk, eggs) | Members: Anna, Tom | Message: bought the milk
{"action":"done","list_name":null,"items":[{"text":"milk","quantity":null}],"assignee":null}
Lists: shopping (milk, crisps) | Members: Anna, Tom | Message: take the crisps off the list
{"action":"remove","list_name":null,"items":[{"text":"crisps","quantity":null}],"assignee":null}
Lists: todo (bins, lawn) | Members: Anna, Tom | Message: Tom takes the bins task
{"action":"assign","list_name":"todo","items":[{"text":"bins","quantity":null}],"assignee":"Tom"}
Lists: shopping (milk) | Members: Li, Wei | Message: 把牛奶加到购物清单
{"action":"add","list_name":"shopping","items":[{"text":"牛奶","quantity":null}],"assignee":null}
Lists: shopping (Brot) | Members: Anna, Ben | Message: Milch auf die Einkaufsliste
{"action":"add","list_name":"shopping","items":[{"text":"Milch","quantity":null}],"assignee":null}
Lists: shopping (milk) | Members: Anna, Tom | Message: new packing list for the trip
{"action":"new_list","list_name":"packing","items":[],"assignee":null}
"""


class SharedList(Capability):
    name = "shared_list"
    instructions = INSTRUCTIONS
    description = "adds to, ticks off, assigns or shows a shared list (shopping, to-do, packing, chores)"
    examples = {
        "en": (
            "milk and eggs on the shopping list",
            "we need more coffee and toilet paper",
            "bought the eggs",
            "tom will do the hoovering this week",
            "what's on the list?",
            "add sunscreen to the packing list",
            "no bread left 🍞",
            "pick up nappies n wipes next time ur at the shop",
            "got the butter and bananas ✔️",
            "mia's turn to empty the dishwasher this week",
            "whats still on the shopping list",
            "put swimming goggles on the holiday packing list",
            "add clean the gutters to the todo list",
            "ben's on bathroom duty till sunday",
        ),
        "de": (
            "Setz Windeln und 3 Gläser Babybrei auf die Einkaufsliste",
            "wir brauchen Klopapier",
            "Milch ist gekauft",
            "Lena übernimmt das Rasenmähen",
            "kaffee is alle",
            "bring noch brot und bananen mit wenn du beim edeka bist",
            "butter und eier hab ich 👍",
            "was steht noch auf der einkaufsliste",
            "sonnencreme für den urlaub einpacken, auf die packliste damit",
            "ben is diese woche mit spülmaschine ausräumen dran",
            "dachrinne sauber machen auf die todo liste",
            "keine spüli mehr da",
            "tom saugt diese woche",
        ),
        "zh": (
            "把牛奶加到购物清单",
            "鸡蛋买好了",
            "这周小明负责倒垃圾",
            "家里没有洗衣液了",
            "酱油快用完了",
            "购物单上还剩啥",
            "香蕉和面包都买了✔️",
            "这周轮到小红洗碗",
            "出门旅游要带防晒霜 加到行李清单里",
            "纸巾没了",
            "顺路带两袋尿不湿",
            "周末拖地归老公",
            "待办里加一条 修水龙头",
        ),
    }
    refines = ("fact", "expense", "lookup", "sum", "update", "forget", "unclear")
    tools = ("show_list", "add_list_items", "update_list_item", "remove_list_item", "clear_done_items")

    def claims(self, reading: Reading) -> bool:
        if reading.grounding.money:
            return False
        text = reading.text
        listed = (
            SHARED_LIST.search(text) or ERRAND.search(text) or EMPTIES.search(text) or running_out(text) is not None
        )
        return bool(listed or (reading.grounding.people and TAKING_ON.search(text)))

    def eligible(self, reading: Reading) -> bool:
        """Without a cue, a question may show a list ("what do we still need from the shops") and a terse statement
        may name things bought or chores ("butter und eier hab ich", "tom saugt diese woche"); a sentence telling how
        things are ("die reisepässe liegen im blauen ordner", "zoo trip was great, kids loved the penguins") is a
        note, never list items."""
        text = reading.text
        size = len(re.findall(r"[^\W\d_]+", CJK.sub("", text))) + len(CJK.findall(text)) / 2
        return reading.question or size <= 5

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        action = list_action(situation.text)
        cued = self.claims(Reading(situation.text, situation.grounding, question=False, reminder_just_sent=False))
        if action == "add" and situation.grounding.moments and not cued:
            return Reroute("fact")  # chosen by likeness alone, a message with dates is a plan, not a list item
        run = situation.run
        registry = run.deps.registry
        args = registry.validate("show_list", {"include_done": True})
        async with run.transaction() as conn:
            shown = await registry.run(run.tool_context(conn), "show_list", args)
        situation.rows = [item for view in shown.get("lists", []) for item in view.get("items", [])]
        if action == "done" and not any(_named(item, situation.text) for item in situation.rows):
            # Not on any list: a purchase, whose price FAA asks ("bought ben new football boots"), or news
            # ("picked up grandma from the station").
            return Reroute("expense" if SPEND.search(situation.text) else "fact")
        if action == "remove" and not any(_named(item, situation.text) for item in situation.rows):
            return Reroute("forget")  # "delete the shed code": nothing on a list, so a memory
        if action in ("show", "clear", "empty") and not shown.get("lists"):
            return Said(_say("no_lists", situation.language))
        if action == "add" and situation.history.turns:
            things = referred(situation.text, situation.history.turns[-1].user_text)
            listed = [row for row in situation.rows if not row.get("done")]
            if things and all(any(_named(row, thing) for row in listed) for thing in things):
                return Said(_say("already_listed", situation.language, items=", ".join(things)))
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
        items = [  # what is added is only what the member named: an item the message does not hold is not theirs
            {"text": i.text, **({"quantity": i.quantity} if i.quantity else {})}
            for i in answer.items
            if (
                own(i.text, situation.text) and not names_nothing(i.text)
                if action in ("add", "new_list")
                else _named({"text": i.text}, situation.text)
            )
        ]  # and what is ticked off or taken on is only what the message names ("hab brot mitgebracht": not the Käse)
        name = self._list(situation, answer)
        if action == "show":
            return [PlannedCall(id="s1", tool="show_list", args={"list_name": name})]
        if action in ("clear", "empty"):  # emptying waits for a yes (`consent`)
            args = {"list_name": name or "shopping", **({"everything": True} if action == "empty" else {})}
            return [PlannedCall(id="s1", tool="clear_done_items", args=args)]
        if action == "new_list":
            args = {"list_name": answer.list_name or "packing", "items": items}
            return [PlannedCall(id="s1", tool="add_list_items", args=args)]
        ran_out = running_out(situation.text) if not SHARED_LIST.search(situation.text) else None
        if action == "add" and ran_out is not None:
            name = "shopping"  # what the house ran out of is bought, whatever list the model named
            items = items or [{"text": thing} for thing in ran_out]  # the model's words were not the member's
        if action == "add" and not items:  # the model's were not the member's, or named nothing: "add that"
            turns = situation.history.turns
            things = (turns and referred(situation.text, turns[-1].user_text)) or added(situation.text)
            items = [{"text": thing} for thing in things if not names_nothing(thing)]
        if action in ("done", "remove") and not items:  # the model named none: the listed things the words name
            items = [{"text": str(row["text"])} for row in situation.rows if _named(row, situation.text)]
        if not items:
            return Ask(_say("ask_items", language))
        if action in ("add", "assign"):
            for item, who in zip(items, _takers(situation, items, answer.assignee), strict=True):
                if who:
                    item["assignee"] = who
            if any(item.get("assignee") for item in items):  # a member's chore the model left out, by the words
                given = {item.get("assignee") for item in items}
                items += [{"text": chore, "assignee": who} for who, chore in _chores(situation) if who not in given]
        if action == "assign" and not all(item.get("assignee") for item in items):
            return Ask(_say("ask_who", language))
        if action == "assign":  # a chore on no list yet is put on the to-do list, taken on
            listed = [item for item in items if any(_named(row, item["text"]) for row in situation.rows)]
            taken = [
                PlannedCall(id=f"s{n}", tool="update_list_item", args={"item": i["text"], "assignee": i["assignee"]})
                for n, i in enumerate(listed, 2)
            ]
            unlisted = {"list_name": name or "todo", "items": [item for item in items if item not in listed]}
            if not unlisted["items"]:
                return taken
            return [PlannedCall(id="s1", tool="add_list_items", args=unlisted), *taken]
        if action == "add":  # on no list named, things taken on are chores; anything else is to buy
            name = name or ("todo" if any(item.get("assignee") for item in items) else "shopping")
            return [PlannedCall(id="s1", tool="add_list_items", args={"list_name": name, "items": items})]
        if action == "remove":
            return [
                PlannedCall(id=f"s{n}", tool="remove_list_item", args={"item": item["text"]})
                for n, item in enumerate(items, 1)
            ]
        return [
            PlannedCall(id=f"s{n}", tool="update_list_item", args={"item": item["text"], "done": True})
            for n, item in enumerate(items, 1)
        ]

    def _list(self, situation: Situation, answer: ListAnswer) -> str | None:
        """The list the answer names, when it names one the household has or a common one the message names by its
        words ("setz windeln auf die liste" names none: not the packing list); else None (all)."""
        if answer.list_name is None:
            return None
        name, kind = canonical_name(answer.list_name)
        said = name.lower() in situation.text.lower() or kind in kinds_named(situation.text)
        known = {known.lower() for known in situation.choices.get("lists", [])}
        return name if said and (name.lower() in known or name in ("shopping", "todo", "packing")) else None

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
            elif result.tool == "remove_list_item":
                parts.append(_say("removed", language, list=data["list_name"], items=data["text"]))
            elif result.tool == "clear_done_items":
                key = "cleared" if data.get("cleared") else "nothing_cleared"
                parts.append(_say(key, language, list=data["list_name"]))
        changed = [r.result or {} for r in done if r.tool == "update_list_item"]
        if changed:
            labels = ", ".join(str(item["text"]) for item in changed)
            if situation.choices["action"][0] == "done":
                parts.append(_say("ticked", language, items=labels))
            elif changed[0].get("assignee"):
                takers = dict.fromkeys(str(item["assignee"]) for item in changed)
                for who in takers:
                    taken = ", ".join(str(item["text"]) for item in changed if item["assignee"] == who)
                    parts.append(_say("assigned", language, who=who, items=taken))
            else:
                parts.append(_say("unassigned", language, items=labels))
        return "\n".join(parts)


def _takers(situation: Situation, items: list[dict[str, Any]], picked: str | None) -> list[str | None]:
    """Who takes each item on: in a message naming several members ("ben's doing the hoovering and anna the
    dishes"), the one named last before the item; otherwise the member the model picked."""
    said = situation.text.casefold()
    named = sorted(
        (found.start(), member.name)
        for member in situation.run.members
        for found in re.finditer(rf"(?<!\w){re.escape(member.name.casefold())}(?!\w)", said)
    )
    if len({name for _, name in named}) < 2:
        return [picked] * len(items)
    takers: list[str | None] = []
    for item in items:
        words = sorted(re.findall(r"[^\W\d_]{3,}", str(item["text"]).casefold()), key=len, reverse=True)
        at = next((said.find(word[:5]) for word in words if word[:5] in said), -1)
        before = [name for position, name in named if position < at]
        takers.append(before[-1] if at >= 0 and before else picked)
    return takers


# What frames a member's chore in "ben's doing the hoovering and anna the dishes this week": the verb after the name,
# an article, the "and" before the next name and the week it is for.
_TAKES_ON = re.compile(
    r"^[\s,:]*(?:['’]s\b|\bis\b|\bare\b|\bwill\b|\bcan\b|\bdoes\b|\bmacht\b|\bübernimmt\b|\bist\b)?\s*"
    r"(?:\bdoing\b|\bdo\b|\bon\b|\bdran mit\b)?\s*(?:\b(?:the|das|den|die|der)\b)?\s*",
    re.IGNORECASE,
)
_FOR_THE_WEEK = re.compile(r"\s*(?:\b(?:this|next) week(?:end)?\b|\b(?:diese|nächste) woche\b|这周|下周|本周).*$", re.I)
_SAYING = re.compile(r"(?:said|says|asked|wants|thinks|meinte?|sagt|findet|will)\b", re.IGNORECASE)
_AND_NEXT = re.compile(r"\s*(?:,|\band\b|\bund\b|和|&)\s*$", re.IGNORECASE)


def _chores(situation: Situation) -> list[tuple[str, str]]:
    """Each member's chore in a message that gives two or more members one each ("ben's doing the hoovering and
    anna the dishes this week": Ben hoovering, Anna dishes); [] when it names fewer than two members."""
    said = situation.text
    named = sorted(
        (found.start(), found.end(), member.name)
        for member in situation.run.members
        for found in re.finditer(rf"(?<!\w){re.escape(member.name)}(?!\w)", said, re.IGNORECASE)
    )
    if len({name for *_, name in named}) < 2:
        return []
    chores: dict[str, str] = {}
    for index, (_, end, name) in enumerate(named):
        part = said[end : named[index + 1][0] if index + 1 < len(named) else len(said)]
        chore = _TAKES_ON.sub("", _AND_NEXT.sub("", _FOR_THE_WEEK.sub("", part)), count=1).strip(" ,.!?")
        if chore and len(chore.split()) <= 5 and not _SAYING.match(chore):
            chores.setdefault(name, chore)
    return list(chores.items())


def _named(item: dict[str, Any], text: str) -> bool:
    """Whether the message names the item: the item's words in it, or a word of it (three letters or more, or
    any Chinese character pair) in the item."""
    said, listed = text.casefold(), str(item.get("text", "")).casefold()
    if listed in said:
        return True
    words = re.findall(r"[^\W\d_]{3,}", said) + re.findall(r"(?=([\u4e00-\u9fff]{2}))", said)
    return any(word in listed for word in words if word not in _FILLER)


_FILLER = frozenset(
    {"the", "and", "for", "bought", "got", "done", "und", "die", "der", "das", "den", "hab", "habe", "ich", "wir",
     "mit", "gekauft", "besorgt", "mitgebracht", "geholt", "erledigt", "买了", "买好"}
)  # fmt: skip


def _label(item: dict[str, Any]) -> str:
    label = f"{item['quantity']} {item['text']}" if item.get("quantity") else str(item["text"])
    return f"{label} ({item['assignee']})" if item.get("assignee") else label
