"""The cue words of the household's organising routes — the calendar, shared lists and budgets — in English, German
and Chinese (the other routes' cues are in `engine.routes.cues`)."""

from __future__ import annotations

from engine.routes.cues import cues

# The calendar: asking what is on ("what's on this week?"; not "what's on the shopping list"), reminders before an
# event ("an hour before the dentist"), and a member's request to be forgotten altogether.
AGENDA = cues(
    r"\bwhat(?:'s| is| do (?:we|i) have)(?: going)? on\b(?!.{0,20}\blist\b)",
    r"\b(?:my|our|the family'?s?) (?:calendar|schedule|agenda|appointments)\b",
    r"\bany (?:plans|appointments|events)\b",
    r"\bwas (?:steht|haben wir|habe ich)\b.{0,30}\b(?:an|vor)\b",
    r"\b(?:meine|unsere) termine\b|\bim kalender\b",
    r"什么安排|有安排吗|日程|日历",
)
BEFORE = cues(
    r"\bbefore\b", r"\bahead of\b", r"\bvorher\b", r"\bvor (?:dem|der|den|meinem|meiner|unserem)\b", r"提前|之前|前"
)
MOVED = cues(
    r"\b(?:is |was |has been |got )?moved\b(?! (?:it|that|this) (?:under|into))",
    r"\bmove (?:the|my|our)\b",
    r"\breschedul",
    r"\bpostpone",
    r"\bverschoben\b|\bverschieb|\bverlegt\b",
    r"改到|推迟到|挪到|改期到",
)
FORGET_ME = cues(
    r"\bforget (?:everything|all) (?:about|of) me\b",
    r"\b(?:delete|erase|remove) (?:all )?(?:my (?:data|account)|everything about me)\b",
    r"\bvergiss alles über mich\b",
    r"\blösche? (?:alle )?meine daten\b",
    r"忘记关于我的一切|忘掉关于我的一切|删除我的(?:所有)?数据",
)
# Shared lists (shopping, to-do, packing): naming one, putting on or taking off "the list", ticking a thing bought.
SHARED_LIST = cues(
    r"\b(?:shopping|grocery|groceries|to-?do|todo|packing|camping|holiday|trip)[ -]?lists?\b",
    r"\b(?:on|onto|to|off|from) (?:the|my|our) (?:\w+ )?list\b",
    r"\bwhat'?s on (?:the|my|our) (?:\w+ )?list",
    r"\bnew (?:\w+ )?list\b",
    r"\bclear (?:the |all )?(?:bought|done|ticked|checked)",
    r"^\W*(?:i |we )?(?:just )?(?:bought|got) the [^\W\d]+(?: [^\W\d]+){0,2}\W*$",
    r"\btakes? (?:on |over )?the [^\d]{1,30} (?:task|chore)\b",
    r"einkaufsliste",
    r"packliste",
    r"to-?do-?liste",
    r"aufgabenliste",
    r"\b(?:auf|von) (?:die|der|unsere|meine|meiner|unserer) (?:\w+)?liste\b",
    r"\bneue \w*\s?liste\b",
    r"\bübernimmt\b.{0,30}\baufgabe\b",
    r"\bgekaufte\w* (?:sachen )?(?:löschen|entfernen)\b",
    r"^\W*(?:ich habe |hab(?:e)? )?(?:die |den |das )?[^\d\s]+ (?:ist )?(?:gekauft|besorgt)\W*$",
    r"^[^\d]{1,8}(?:买了|买好了|已经买了)\W*$",
    r"购物清单",
    r"购物单",
    r"清单",
    r"待办",
    r"负责.{0,10}(?:任务|家务)",
)
BUDGET = cues(
    r"\bbudget",
    r"预算",
    r"\bhow much (?:is|do we have|have we got) left\b",
    r"\bwie ?viel (?:ist|haben wir) (?:noch )?übrig\b",
    r"还剩多少",
)
