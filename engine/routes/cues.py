"""The cue words of each route, in English, German and Chinese: one compiled pattern per family of cues.

`engine.routes.router` decides with them; the routes and consent use a few of them directly.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE


def cues(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), _I)


GREETING = cues(
    r"^\W*(?:hi|hello|hey|yo|hiya|thanks?|thank you|thx|ty|cheers|good (?:morning|night|evening)|ok(?:ay)?|cool|"
    r"great|nice|perfect|super|got it|you'?re (?:great|the best)|hallo|danke(?: schön| dir)?|guten (?:morgen|abend)|"
    r"gute nacht|moin|servus|alles klar|你好|您好|谢谢|谢了|多谢|早上好|早安|晚安|好的|嗯+|哈喽|收到)"
    r"(?:\s+(?:faa|you|so much|a lot|very much|sehr|dir))*\W*$"
)
SMALL_TALK = cues(
    r"\bhow are you\b",
    r"\bwhat can you do\b",
    r"\bwho are you\b",
    r"\bwhat(?:'s| is) up\b",
    r"\btell me a joke\b",
    r"\bhelp\W*$",
    r"你是谁",
    r"你能做什么",
    r"你会什么",
    r"你好吗",
    r"\bwie geht'?s\b",
    r"\bwas kannst du\b",
    r"\bwer bist du\b",
)
UNDO = cues(
    r"^\W*undo\b",
    r"\bundo (?:that|it|this|the last|my last)\b",
    r"\btake (?:that|it) back\b",
    r"撤销",
    r"撤回",
    r"\brückgängig\b",
)
REMIND = cues(
    r"\bremind",
    r"\breminder",
    r"\bremnd",
    r"\bremid\b",
    r"\brmnd\b",
    r"提醒",
    r"\berinner",
    r"\bwecke? mich",
    r"\balarm\b",
    r"\bwake me\b",
    r"闹钟",
    r"叫醒我",
    r"\bwecker\b",
)
# "Don't let me forget …" asks for a reminder; it is no request to forget anything.
DONT_FORGET = cues(
    r"\b(?:don'?t|do not|never) let me forget\b",
    r"\bmake sure i (?:don'?t|do not) forget\b",
    r"别让我忘",
    r"\blass mich (?:das )?nicht vergessen\b",
    r"\bdamit ich (?:das )?nicht vergesse\b",
)
CANCEL = cues(
    r"\bcancel",
    r"\bcall off",
    r"\bstop remind",
    r"\bdon'?t remind",
    r"\bno longer remind",
    r"\bno more remind",
    r"取消",
    r"不用提醒",
    r"别提醒",
    r"不要提醒",
    r"\bstorn",
    r"\babsagen",
    r"nicht mehr erinnern",
)
SNOOZE = cues(
    r"\bsnooze",
    r"\bremind me again\b",
    r"\blater\b",
    r"\bpostpone",
    r"\bpush (?:it|that) ",
    r"推迟",
    r"晚点",
    r"稍后",
    r"等会",
    r"再提醒",
    r"过\S{1,6}再",
    r"\bspäter",
    r"\bverschieb",
    r"\bschlummer",
)
# Said of a reminder: it is no longer wanted.
UNWANTED = cues(
    r"\b(?:dont|don't|do not|no longer) need\b",
    r"\bnot needed\b",
    r"\banymore\b",
    r"\bany more\b",
    r"\bnicht mehr\b",
    r"\bbrauch\w* (?:ich|wir) nicht\b",
    r"不需要",
    r"不用了",
    r"不要了",
)
# Said right after a reminder was sent: done with it.
DONE_WORDS = cues(
    r"\bdone\b",
    r"\bfinished\b",
    r"\bdid it\b",
    r"\bcompleted?\b",
    r"\berledigt\b",
    r"\bgemacht\b",
    r"完了",
    r"好了",
    r"搞定",
    r"完成",
    r"做了",
    r"已经",
)
DONE = cues(
    r"^\W*(?:done|did it|i did it|finished|all done|completed?|taken|erledigt|fertig|gemacht|"
    r"好了|完成了?|做完了|搞定了?|已经?做了|吃过了|交了)\W*$",
    r"\bmark (?:it|that|the \w+) (?:as )?done",
)
FORGET = cues(
    r"\bforget\b",
    r"\bdelete\b",
    r"\bremove\b",
    r"\berase\b",
    r"\bscratch that",
    r"删除",
    r"删掉",
    r"删了",
    r"忘掉",
    r"忘了它",
    r"别记",
    r"不要记",
    r"撤销",
    r"\bvergiss",
    r"\blösch",
    r"\bentfern",
)
LIST = cues(
    r"\b(?:what|which|list|show|any)\b.{0,30}\breminders\b",
    r"\bmy reminders\b",
    r"\breminders do i have",
    r"有哪些提醒",
    r"我的提醒",
    r"提醒列表",
    r"什么提醒",
    r"welche erinnerungen",
    r"meine erinnerungen",
)
UPDATE = cues(
    r"\bactually\b",
    r"\bcorrection\b",
    r"\bcorrect (?:that|it|the)\b",
    r"\bwas wrong\b",
    r"\bwrong\b",
    r"\bshould (?:be|have been)\b",
    r"\bchange\b.{1,40}\bto\b",
    r"\bnot\b[^.?!]{1,30}\bbut\b",
    r"\bwas\b[^?!]{0,30}\bnot\b",
    r"\bwar\b[^?!]{0,30}\bnicht\b",
    r"\bfile (?:it|that|this) under\b",
    r"\b(?:put|move) (?:it|that|this) (?:under|into|in|to)\b",
    r"\bcategor(?:y|ise|ize)\b",
    r"\bkorrektur\b",
    r"不对",
    r"错了",
    r"\d\s*,?\s*not\s+\d",
    r"\bfix (?:the|that|it)\b",
    r"不是\S{1,20}(?:是|而是)",
    r"改成",
    r"改为",
    r"更正",
    r"其实是",
    r"应该是",
    r"记错了",
    r"\beigentlich\b",
    r"\bkorrigier",
    r"\bnicht\b[^.?!]{1,30}\bsondern\b",
    r"\bänder",
    r"\bwar falsch",
)
QUESTION = cues(
    r"[?？]\s*$",
    r"^\W*(?:how|what|what's|whats|when|where|who|whom|which|why|is|are|was|were|do|does|did|can|could|have|has|"
    r"tell me|show me|wie|was|wann|wo|wer|welche[rsmn]?|wieviel|hat|haben|ist|sind|zeig)\b",
    r"多少",
    r"几[次点号个天]",
    r"什么",
    r"哪[里儿个天些]",
    r"吗\W*$",
    r"呢\W*$",
    r"谁",
    r"是否",
    r"有没有",
    r"怎么样",
)
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
)
RECORD_VERB = cues(
    r"^\W*(?:note|write down|remember|save|store|log|add|record|put down|keep in mind|merk dir|notier|speicher)\b",
    r"^\W*(?:记下|记住|记一下|帮我记|存一下)",
)
SPEND = cues(
    r"\bspen[dt]\b",
    r"\bpaid\b",
    r"\bpay\b",
    r"\bbought\b",
    r"\bpurchased?\b",
    r"\bcost\b",
    r"\bcharged\b",
    r"\bfilled up\b",
    r"\brefuel",
    r"\btank(?:en|te|t)?\b",
    r"\bgetankt\b",
    r"\beingekauft\b",
    r"加油",
    r"缴费",
    r"\bsalary\b",
    r"\bearned\b",
    r"\bgot paid\b",
    r"\brefund",
    r"\bbill\b",
    r"\bausgegeben\b",
    r"\bbezahlt\b",
    r"\bgezahlt\b",
    r"\bgekauft\b",
    r"\bgekostet\b",
    r"\bgehalt\b",
    r"花了",
    r"花",
    r"付了",
    r"付过",
    r"买了",
    r"买",
    r"消费",
    r"工资",
    r"奖金",
    r"交了",
    r"充值",
    r"报销",
)
# References without content: "the thing", "that", "it" — a message made only of these and function words says
# nothing to store or look up.
VAGUE = cues(
    r"\b(?:the|that|this) (?:thing|stuff|one)\b",
    r"\b(?:it|that|this|those|them)\b",
    r"那个",
    r"这个",
    r"那件事",
    r"这件事",
    r"它",
    r"\bdas ding\b",
    r"\bdas\b",
    r"\bes\b",
)
FILLER = cues(
    r"\b(?:i|we|you|me|my|our|please|pls|can|could|would|just|now|from|of|for|to|the|a|an|was|is|be|have|has|had|"
    r"did|do|paid|pay|write|down|note|save|remember|record|log|yesterday|today|earlier|again|already|much|how|"
    r"about|with|and|or|so|then|ok|"
    r"what|ich|wir|du|bitte|von|gestern|heute|schon|bezahlt|notier|merk|dir|schreib|auf|wie|viel|war|ist)\b",
    r"我|们|你|的|了|过|把|记下来|记住|记一下|记下|帮我|帮|昨天|今天|多少钱|来着|付|是|吗|呢|一下|请",
)


# Words of paying only, without the ones that name what the money was (salary, bill, rent…).
PAYING = cues(
    r"\bspen[dt]\b",
    r"\bpaid\b",
    r"\bpay\b",
    r"\bbought\b",
    r"\bcost\b",
    r"\bcharged\b",
    r"\bausgegeben\b",
    r"\bbezahlt\b",
    r"\bgezahlt\b",
    r"\bgekauft\b",
    r"\bgekostet\b",
    r"花了",
    r"花",
    r"付了",
    r"付",
    r"买了",
    r"消费",
    r"交了",
)

# A dose of a medicine: whatever else the message says, it is a health note.
DOSE = cues(
    r"\d\s?(?:mg|ml|µg|mcg|milligram\w*|pills?|drops|tabletten|tropfen|hübe)\b",
    r"\d\s?(?:毫克|毫升|片|粒|滴)",
)
# What makes a note a contact: a phone number, an email or a web address.
CONTACT_DETAILS = cues(
    r"\+?\d[\d /-]{6,}\d",
    r"[\w.+-]+@[\w-]+\.[\w.]+",
    r"\bhttps?://|\bwww\.",
)
