"""The words every capability reads, in English, German and Chinese: a question, filler, words of paying, a dose,
contact details, and whether a text is the member's own."""

from __future__ import annotations

import re

from engine.grounding.language import han_pairs
from engine.grounding.money import SPENT_ZH


def cues(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(patterns), _I)


_I = re.IGNORECASE


# A piece of information rather than a thing: asked for ("need the home insurance policy number"), never bought.
INFORMATION = r"(?:number|nummer|code|password|passwort|pw|pin|address|adresse|login|details|电话|号码|密码|地址)"

# "At that time", said instead of a time: "到时候提醒我一下", "remind me then", "erinner mich dann dran".
THEN = re.compile(
    r"\b(?:then|at that time|when it'?s time|dann|da|zu der zeit|rechtzeitig)\b|到时候?|那时候?|届时", re.IGNORECASE
)

# The words that ask for someone to be told, before whom ("remind Ben", "nudge me", "sag Ben", "提醒Ben", "喊我",
# "叫Ben").
TELLING = r"remind|ping|nudge|buzz|tell|erinnere?|sag(?:e|st)?|stups\w*|schubs\w*|提醒|喊|叫"

# Words that take back or correct what was just asked, saying nothing of their own: "no wait, tuesday", "actually
# make it 8", "ne, lieber um 9", "不对，是八点吧".
CORRECTING = cues(
    r"\b(?:no|nope|nah|wait|hang on|actually|sorry|oops|i mean|i meant|meant|make (?:it|that)|rather|instead|not|"
    r"please|pls|ok|oh|then)\b",
    r"\b(?:nein|ne|nee|doch|lieber|eher|ach|äh|ähm|mach|machs|mach's|draus|daraus|statt|stattdessen|nicht|bitte|dann|"
    r"oder|noch)\b",
    r"不对|不是|等等|等一下|改成|改到|还是|算了吧|吧|是|哦|呃",
)

# "were" typed for "we're": followed by what follows "we are", not by a subject ("were almost out of coffee", "were
# going to be late"; "were the kids ok" asks).
WE_ARE = (
    r"(?:almost|nearly|out|running|low|short|off|going|gonna|having|getting|doing|done|all|just|still|also|home|back|"
    r"ready|busy|late|leaving|staying|coming|moving|thinking|planning|looking|trying|so|really|finally)\b"
)

# After "remind", what asks to be told again now rather than later: "remind me what the wifi password is".
TOLD_AGAIN = r"(?:me|us) (?:what|who|where|which|how|whats|what's)\b"

# The start of a message, past a greeting: "hey what did groceries come to", "hallo, hast du omas nummer".
_GREETED = r"^\W*(?:(?:hey|hi|hiya|hello|yo|hallo|moin|servus|嗨|喂)\b[\s,!.]*)?"
QUESTION = cues(
    r"[?？]\W*(?:\w+\W*){0,3}$",  # a question mark last, or before a short tail ("…right? which one")
    r"\b(?:what'?s|whats|how much|how many|how bad|wie ?viel|wie oft|wie schlimm)\b",
    # a question word opening a later clause: "takeaways this month, how bad is it", "stimmt das? wie ist der code"
    r"(?:[,:;?!]|\s[-–—])\s*(?:how|what|when|where|who|which|why|wie|wann|wo|wer|welche[rsmn]?|warum)\s+"
    r"(?:is|are|was|were|do|does|did|much|many|long|often|ist|sind|war|hat|haben|viel|oft|lange)\b",
    # "remind me what the wifi password is": asked to be told again, now
    rf"\bremind {TOLD_AGAIN}",
    rf"{_GREETED}(?:how|what|what's|whats|when|where|who|whom|which|why|is|are|was|were(?!\s+{WE_ARE})|do|does|did|"
    r"can|could(?! do with)|have|has|"
    r"tell me|show me|wie|was|wann|wo|wer|welche[rsmn]?|wieviel|zeig|warum|wieso|weshalb|"
    r"wo(?:bei|mit|für|ran|rauf|raus|zu|hin|her|von|nach|rüber|durch))\b",
    # German "hat/haben/ist/sind" first asks, unless a participle follows: the subject was only left out ("haben
    # beschlossen dass …", "ist gut angekommen" asks; "hat geklappt" tells)
    r"^\W*(?:hat|haben|ist|sind)\b(?!\s+(?:\w*ge\w+(?:t|en)|(?:be|ver|er|ent|zer)\w+(?:t|en)|\w+iert)\b)",
    # asked to be given a piece of information: "need the plumbers number", "send me the wifi password"
    rf"^\W*(?:(?:i|we) )?(?:need|want|send me|give me|gimme|brauch\w*|schick mir)\b(?!\s+(?:to|zu)\b).{{0,40}}"
    rf"\b{INFORMATION}\b",
    # asked to be given what is stored: "gib mir mal alle notizen von anna", "send me our notes", "把记录发给我"
    r"^\W*(?:show|give|send|tell|gimme|zeig|gib|schick)\w*\s+(?:me|us|mir|uns)\b.{0,40}\b(?:notes?|entries|memories|"
    r"records|data|notizen|einträge|daten)\b|(?:给我看|发给我|给我).{0,10}(?:记录|笔记|备忘)",
    # a question word after its preposition: "auf was is mia nochmal allergisch", "in which drawer is the key"
    r"^\W*(?:in|on|at|for|from|to|with|by|about|auf|an|mit|für|von|bei|zu|um|über|nach|aus|seit|bis)\s+"
    r"(?:which|what|whose|whom|was|wen|wem|wann|welche[rsmn]?)\b",
    r"多大|多久|多长|多高|多重|几岁|怎么说|为啥|为什么",
    r"(?:告诉|发给)我(?:一下)?[^，。！？]{0,12}(?:密码|号码|电话|地址|编号)",  # "告诉我家里wifi密码"
    r"^\W*(?:steht|stehen|gibt'?s|gibt es|läuft)\b",  # impersonal verb first: "steht freitag abend schon was"
    # a German verb first with its subject after it asks: "hast du omas nummer", "brauchen wir noch milch"
    rf"{_GREETED}(?:hast|habt|haben|hattest|hattet|hatten|weißt|weisst|wisst|wissen|kennst|kennt|kennen|brauchst|braucht|"
    r"brauchen|bist|seid|warst|wart|waren|findest|erinnerst)\s+(?:du|ihr|wir|sie)\b",
    r"有\S{0,12}没\W*$",  # "孩子们周四有活动没"
    r"多少",
    r"(?<![好十])几[次点号个天]",  # not "好几次" (several times)
    r"什么",
    r"哪(?!怕)",
    r"啥|咋",
    r"来着\W*$",
    r"吗\W*$",
    r"呢\W*$",
    r"谁",
    r"是否",
    r"有没有",
    r"怎么样",
)
# A request asked as a question ("can u warn me a day ahead of …", "kannst du mich morgen um 8 erinnern"): it asks
# for something to be done, not to be told something.
REQUEST = cues(
    r"^\W*(?:(?:can|could|would|will) (?:you|u|ya)|(?:kannst|könntest|würdest) du|(?:können|könnten) sie)\b",
    r"^\W*(?:你)?(?:能不能|可以|能|帮我)",
)


# References without content: "the thing", "that", "it" — a message made only of these and function words says
# nothing to store or look up.
VAGUE = cues(  # the longer forms first: "das übliche" is one reference, not "das" and a word
    # what was done before, named by nothing else: "the usual", "same again", "wie immer", "按上次的来"
    r"\b(?:the usual|same again|same as (?:before|last time|always|usual)|as usual)\b",
    r"\b(?:wie immer|wie (?:letztes|beim letzten) mal|wie gehabt|das übliche|dasselbe|das gleiche)\b",
    r"老样子|按上次的?|跟上次一样|和上次一样|照旧",
    r"\b(?:the|that|this) (?:thing|stuff|one)\b",
    # what was said before, pointed at by its having been said: "the thing we talked about", "das, was wir besprochen
    # haben", "我们说好的那个"
    r"\b(?:we|i|you) (?:talked about|discussed|mentioned|agreed(?: on)?)\b|\bwie besprochen\b"
    r"|\bwas wir (?:besprochen|beredet|ausgemacht)\b|(?:说好|说过|聊过|提过)的",
    r"\banother one\b|\bnoch (?:eins|einen|eine)\W*$|再来一个|再加一个",  # one more of nothing named
    r"(?:那|这)笔(?:钱|账|开销)?",  # "那笔钱记一下": which money?
    r"\b(?:it|that|this|those|them)\b",
    r"那个事",  # before "那个": "Ben那个事怎么样了" names no thing
    r"这个事",
    r"那个",
    r"这个",
    r"那件事",
    r"这件事",
    r"它",
    r"\bdas ding\b",
    r"\bdas\b",
    r"\bda(?:mit|von|für|rüber|zu|nach|bei|ran)\b",  # "was ist jetzt damit": of what?
    r"\bes\b",
    # left to FAA, with nothing named: "up to you", "mach wie du meinst", "你看着办吧"
    r"\b(?:up to you|what(?:ever)? you think(?: is (?:best|right|good))?|your call|you decide)\b",
    r"\b(?:wie du (?:meinst|willst|denkst)|wie du es für richtig hältst|entscheide du|du entscheidest)\b",
    r"看着办|你决定吧?|你定吧?|随你",
    # what was said before, for someone else too: "same for ben", "ben bitte auch", "Ben也一样"
    r"\b(?:same|too|also|as well)\b",
    r"\b(?:auch|ebenso|ebenfalls|genauso)\b",
    r"也一样|一样|也",
)


FILLER = cues(
    r"\b(?:i|we|you|me|my|our|please|pls|can|could|would|just|now|from|of|for|to|the|a|an|was|is|be|have|has|had|add|"
    r"did|do|paid|pay|put|stick|pop|jot|write|down|note|save|remember|record|log|yesterday|today|earlier|again|"
    r"already|much|how|about|with|and|or|so|then|ok|"
    r"what|ich|wir|du|bitte|von|gestern|heute|jetzt|schon|nochmal|nochmals|noch mal|bezahlt|notier|merk|dir|schreib|"
    r"auf|wie|viel|war|ist|cost|costs|kostet|kosten|einfach|halt|eben|ruhig|simply)\b",
    r"我|们|你|的|了|过|把|就|记下来|记住|记一下|记下|记|帮我|帮|昨天|今天|多少钱|来着|付|是|吗|呢|吧|一下|请|怎么样|怎样",
)


# Money gone on something, in German: "was ging diesen monat für sprit drauf", "ist fürs essen draufgegangen".
GONE_ON = r"\bdrauf ?ge(?:gangen|hen|ht)\b|\bg(?:eht|ing|ingen)\b.{0,30}\bdrauf\b"


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
    GONE_ON,
    SPENT_ZH,
    r"付了",
    r"付",
    r"买了",
    r"消费",
    r"交了",
)


# Money told as something other than a payment: a price, a quote or a rate ("the plumber quoted 450", "swimming
# costs 80 a term", "the babysitter charges 12 an hour", "der klempner hat 450 veranschlagt", "游泳课每节课收费80"), a
# debt ("tom still owes us 40", "小王还欠我们400块") or a balance ("2300 left in the holiday fund", "im urlaubstopf sind
# noch 2300 übrig"), or a purchase only thought about ("gift idea: could buy him a new reel", "可以考虑买个新鱼竿").
# Such an amount is something to remember, not money spent — unless the words also say it was paid.
UNPAID = cues(
    r"\b(?:thinking (?:of|about) buying|might buy|could buy|(?:plan|planning|want|wants) to buy)\b",
    r"\b(?:überleg\w*|wollen|könnten|würden)\b.{0,40}\b(?:kaufen|holen)\b",
    r"(?:考虑|打算|准备|可以)买",
    r"是(?:在|从).{1,10}买的",  # where a thing was bought from: "车险是在平安买的"
    r"\b(?:quoted?|quotes|estimated?|estimates|costs|(?:will|would|'ll|'d|going to|gonna|might|could|should) cost|"
    r"charges|asking|asks|wants?|priced?|prices?|offered|offers|owes?|owed|owing|lent|loaned|borrowed|remaining|"
    r"balance|saved(?: up)?|(?:put|set) aside|left (?:in|on|over)|still in (?:the|our|my)|does\b.{0,40}\bcost)\b"
    r"|\b(?:an?|per|each|every) (?:hour|lesson|session|class|term|night|visit)\b|/\s?(?:h|hr|hour)\b",
    r"\b(?:veranschlagt|kostenvoranschlag|angebot|angeboten|kostet|kosten würde|würde\b.{0,30}\bkosten|"
    r"soll\b.{0,30}\bkosten|verlangt|will\b.{0,30}\bhaben|"
    r"will\s+(?:\w+\s+)?\d[\d.,]*\s*(?:€|euro?\s+)?\s*für|(?:pro|die|je) (?:stunde|einheit|termin|nacht)|"
    r"schuldet|schulden|geliehen|ausgeliehen|übrig|gespart|zur seite gelegt|beiseite gelegt|guthaben|kontostand)\b|"
    r"\b(?:ist|sind) noch (?:im|in der|auf dem)\b|\b(?:im|in der|auf dem) \w+ (?:ist|sind) noch\b",
    r"报价|要价|估价|收费|大概要|得花|要花|(?<!平均)每(?:节|个)?(?:课|小时|次|晚)|欠|借了|借给|还剩|剩下|余额|攒了|存了",
)

SPEND = cues(
    r"\bspen[dt]\b",
    r"\bpaid\b",
    r"\bpay\b",
    r"\bbought\b",
    r"\bgot \w+ (?:a|an|some) (?:new|pair of)\b",  # "got mia a new raincoat"
    r"\b(?:ne|eine|nen|einen) neue[nrs]?\b.{0,40}\b(?:geholt|besorgt)\b",  # "ne neue regenjacke geholt"
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
    GONE_ON,
    r"\bgehalt\b",
    SPENT_ZH,
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


RECORD_VERB = cues(
    r"^\W*(?:note|write down|remember|save|store|log|record|put down|keep in mind|merk dir|notier|speicher)\b",
    r"^\W*add (?:a note|note|that|this|to (?:the |my |our )?notes)\b",  # "add nappies, wipes & formula": a list's
    r"^\W*(?:记下|记住|记一下|帮我记|存一下)",
)
# Asked, as a question, to keep something ("can you remember that the bins go out on tuesdays", "kannst du dir
# merken, dass …", "能不能记一下"): a note to keep, not a question to look up.
RECORD_ASKED = cues(
    r"^\W*(?:(?:can|could|would|will) (?:you|u|ya)|(?:kannst|könntest|würdest) du)\s+(?:please |pls |bitte )?"
    r"(?:note|write down|remember|save|store|log|keep in mind|(?:dir )?merken|(?:dir )?notieren|speichern)\b",
    r"^\W*(?:你)?(?:能不能|可以|能)(?:帮我)?(?:记下|记住|记一下)",
)


# A dose of a medicine, or how often it is taken ("3 times a day for a week", "zweimal täglich", "一天三次"): whatever
# else the message says, it is a health note.
DOSE = cues(
    r"\d\s?(?:mg|ml|µg|mcg|milligram\w*|pills?|drops|tabletten|tropfen|hübe)\b|"
    r"\b(?:\d|once|twice|three|four)\s?(?:x|times)? (?:a|per|every) day\b|\b(?:once|twice) daily\b",
    r"\b(?:\d\s?x|\d\s?mal|einmal|zweimal|dreimal|viermal) (?:täglich|am tag|pro tag)\b",
    r"\d\s?(?:毫克|毫升|片|粒|滴)|(?:一天|每天|每日|一日)(?:[一二三四两\d]次)",
)


# A place's, a service's or a job's hours: "the gp is closed on wednesday afternoons", "der bäcker hat sonntags bis 11
# offen", "儿科王医生周二上午出诊", "my new work hours are 8 till 4" — when someone can be reached, no plan to note.
HOURS = cues(
    r"\b(?:closed|shut|opening (?:hours|times)|surgery hours|office hours|consulting hours|work(?:ing)? hours)\b|"
    r"\b(?:is|are|'s) open\b|\bopen (?:from|till|until|til|on|only)\b",
    r"\b(?:geschlossen|geöffnet|offen)\b|\b(?:hat|ist|sind|haben)\b.{0,40}\b(?:zu|auf)\s*(?:[,.!?;]|$)|"
    r"\bsprechstunde\b|\böffnungszeit\w*|\barbeitszeit\w*",
    r"出诊|坐诊|营业|开门|关门|休息日|不开|上班时间|工作时间",
)


# An occasion to be at: a plan's, also when told as how things now stand ("ab jetzt im schwimmverein, training immer
# dienstags").
OCCASION = cues(
    r"\b(?:trip|appointment|lessons?|class(?:es)?|training|practice|birthday)\b",
    r"\b(?:termin|unterricht|training|kurs|geburtstag)\b",
    r"预约|课|生日",
)
# What speaks of something coming when no day or time is named: "we're going to paris in summer", "mia will start
# ballet", "wir wollen umziehen", "打算明年去日本".
COMING = cues(
    r"\b(?:will|going to|gonna|plan\w*|next|soon|someday|sometime|later|upcoming|summer|winter|spring|autumn|"
    r"holidays?|vacation|easter|christmas|xmas|weekend)\b|'ll\b",
    r"\b(?:wird|werden|wollen|will|planen|geplant|nächste\w*|kommende\w*|bald|demnächst|später|sommer|winter|"
    r"urlaub|ferien|reise|ostern|weihnachten|silvester|wochenende)\b",
    r"要|打算|准备|计划|下(?:周|个?月|次|回)|明年|以后|将来|暑假|寒假|旅游|旅行|春节|过年|周末",
    OCCASION.pattern,
)
# A thing lent or borrowed: where it is, not a plan of the family's ("lent the drill to tom, he'll bring it back
# next week").
LENT = cues(r"\b(?:lent|loaned|borrowed)\b", r"\b(?:geliehen|verliehen|ausgeliehen|geborgt)\b", r"借给|借了|借走")


# What says how things stand from now on rather than what happens once: "the bus comes at 7:42 now, not 7:35", "from
# december the hort closes at 16:30", "校车现在早上7点40到". A time of day told so, with no day, is a schedule — a fact,
# never a calendar event; and so is a repetition ("the bin men come on thursdays now, not wednesdays").
STANDING = cues(
    r"\b(?:now|nowadays|these days|from now on|any ?more|no longer|instead of|not \d{1,2}(?:[:.]\d{2})?\b|"
    r"(?:moved|changed|switched) to|"
    r"from (?:next|this|january|february|march|april|may|june|july|august|september|october|november|december)|"
    r"starting (?:next|this|in|from|january|february|march|april|may|june|july|august|september|october|"
    r"november|december))\b",
    r"\b(?:jetzt|neuerdings|mittlerweile|inzwischen|nicht mehr|statt|anstatt|ab (?:sofort|jetzt|nächste\w*|"
    r"kommende\w*|januar|februar|märz|april|mai|juni|juli|august|september|oktober|november|dezember))\b",
    r"现在|目前|如今|从.{1,6}起|改成|改为|不再|不是.{1,8}了|今后|往后|(?<![点\d])以后(?=每|都|就)",
)


# A time of day as a bound, a rule's rather than a moment's: "parking is free after 6pm", "no screens after 7", "kein
# fernsehen nach 19 uhr", "九点以后不能玩手机". Without a day, such a time is no calendar event.
BOUND = cues(
    r"\b(?:after|before|until|till|til|by) (?:\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm)?|noon|midnight)(?!\w)",
    r"\b(?:nach|vor|bis) \d{1,2}(?:[:.]\d{2})?\s*uhr\b",
    r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})点(?:半|\d{1,2}分?)?(?:以后|之后|以前|之前)",
)

# A thing told as done: "had a temp of 38.5, gave him calpol at 10", "hatte fieber, hab ihm um 22 uhr nurofen
# gegeben". A time of day without a day in such a message is when it happened, not a moment to come.
TOLD_DONE = cues(
    r"\b(?:had|gave|took|was|were|did|went|came|felt|slept|woke|threw up)\b",
    r"\b(?:hatte|hatten|war|waren|gegeben|genommen|bekommen|gehabt|geschlafen|erbrochen|gemessen)\b",
)

# What a health note speaks of: the body, its ailments, its care and its measures. A note without any of these is
# not a health note whatever the model says ("the boiler pressure should sit at 1.5", "tyre pressure 2.4 bar").
BODY = cues(
    r"\b(?:allerg\w*|intoleran\w*|sick|ill|illness|fever|temp|temperature|pain\w*|hurts?|sore|\w*aches?|rash|"
    r"cough\w*|cold|flu|virus|medicine|meds|medication|doctor|doc|gp|nurse|p(?:a)?ediatrician|physio\w*|dentist|"
    r"orthodontist|optician|hospital|clinic|ward|surgery|operation|check-?up|prescription|jabs?|vaccin\w*|booster|"
    r"blood|dose|inhaler|antibiotic\w*|tablets?|pills?|cream|ointment|stitches|threw up|throw(?:ing|s)? up|"
    r"vomit\w*|diarrh\w*|constipat\w*|nause\w*|itch\w*|swollen|sprain\w*|fractur\w*|bruise\w*|tick bite|"
    r"height|weight|teeth|tooth|filling|braces|glasses|eyes?|ears?|knees?|ankle|wrist|tummy|stomach|throat|"
    r"chest|skin|nose|asthma|eczema|diabet\w*|insulin|lice|nits|pregnan\w*)\b",
    r"\d\s?(?:cm|kg)\b",
    r"\b(?:allergi\w*|unverträglich\w*|verträgt|krank\w*|fieber|\w*schmerz\w*|\w*weh|ausschlag|husten|schnupfen|"
    r"erkält\w*|grippe|medikament\w*|\w*arzt\w*|\w*ärzt\w*|physio\w*|klinik|station|praxis|operation|"
    r"untersuchung|vorsorge\w*|rezept|\w*impf\w*|blut\w*|tablette\w*|antibiotik\w*|salbe|gips|genäht|übergeben|"
    r"gekotzt|erbrochen|durchfall|verstopf\w*|übel|juck\w*|geschwollen|verstaucht|zecke|\w*zahn\w*|zähne|brille|"
    r"auge\w*|ohr\w*|knie|bauch\w*|hals|rücken|haut|nase|asthma|neurodermitis|läuse|schwanger\w*|"
    r"zentimeter|kilo)\b",
    r"过敏|不耐受|病|发烧|烧到|疼|痛|咳|感冒|流感|药|医|住院|门诊|体检|手术|疫苗|打针|血|体温|吐|拉肚子|腹泻|便秘|痒|肿|"
    r"牙|眼|耳|膝|肚子|嗓子|喉咙|腰|皮肤|鼻|身高|体重|厘米|公斤|哮喘|湿疹|怀孕",
)


# A measure of a body, with its number: "baby weighed 6.4 kg", "die Kleine wiegt jetzt 6,4 Kilo", "体重6.4公斤",
# "Mia is 1.08 m tall" — a health note whatever the model says (not a suitcase's or a parcel's weight).
BODY_MEASURE = cues(
    r"^(?!.*\b(?:suitcase|luggage|bag|parcel|package|box|koffer|gepäck|paket|karton)\b)(?:.*\b(?:weigh\w*|wiegt|"
    r"wog|gewogen|height|tall|groß|gemessen|measured)\b.{0,30}\d[\d.,]*\s*(?:kg|kilos?|g|grams?|gramm|cm|m|lbs?|pounds)\b)",
    r"(?:体重|身高)\D{0,6}\d[\d.]*\s*(?:公斤|千克|斤|厘米|米|kg|cm)",
)


# What makes a note a contact: a phone number, an email or a web address.
CONTACT_DETAILS = cues(
    r"\+?\d[\d /-]{6,}\d",
    r"[\w.+-]+@[\w-]+\.[\w.]+",
    r"\bhttps?://|\bwww\.",
)


# What a request does with a thing and when, without naming it: beside a reference only, a message still says
# nothing of its own ("put it in the calendar", "did u sort it", "mach das bitte bis morgen", "明天那个别忘了").
DOING = cues(
    r"\b(?:sort(?:ed)?|handle[ds]?|deal|dealt|done|finish(?:ed)?|fix(?:ed)?|calendar|diary|list|schedule|remind|"
    r"forget|don'?t|dont|in|on|into|by|till|until|tomorrow|tonight|later|morning|evening|let|know)\b",
    r"\b(?:mach\w*|erledig\w*|trag\w*|ein|kalender|liste|bis|morgen|später|nachher|vergiss|nicht|kümmer\w*|"
    r"sich|mal|drum|um|erinner\w*|dran|daran|vorhin|eben|grad|gerade)\b",
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b(?:mon|diens|donners|frei|sams|sonn)tags?\b|\bmittwochs?\b",
    r"别忘了?|加上|加|处理|弄|搞|安排|日历|日程|清单|明天|今天|晚上|早上|下午|上午|提醒|好|来|(?:周|星期)[一二三四五六日天]",
)


# A change asked for with no new value: "change it", "改一下" — what to, and of what, is not said ("korrigier das auf
# gestern", "改到五点" say to what).
CHANGING = cues(
    r"\b(?:change|edit|update|fix|correct|adjust)\b(?!.*\b(?:to|into|on)\b)",
    r"\b(?:änder\w*|korrigier\w*|anpassen)\b(?!.*\b(?:auf|zu|in|nach)\b)",
    r"改(?![到成为])",
    # said to be wrong, with no right value: "der betrag stimmt nicht", "the amount is wrong", "时间不对"
    r"\b(?:is|was|are|were|looks?) (?:wrong|off|not right|incorrect)\b",
    r"\bstimmt (?:so )?nicht\b|\bist falsch\b",
    r"不对|错了",
)
# What of a thing a change is to (its time, date, place, amount, name), which names no thing: "改一下时间",
# "change the date", "änder mal die uhrzeit" say neither of what nor to what.
_ASPECT = cues(
    r"\b(?:the |its )?(?:time|date|day|place|amount|name|title|price)s?\b",
    r"\b(?:die |das |den |der )?(?:zeit|uhrzeit|datum|tag|ort|betrag|name|namen|titel|preis)\b",
    r"时间|日期|地点|金额|名字|价格|几点",
)


_SUBSTANCE = re.compile(r"[^\W\d_]{3,}|[\u4e00-\u9fff]")
_SENTENCE_END = re.compile(r"[.!?]+\s+|[。！？]+\s*|\n+")


def sentences(text: str) -> list[str]:
    """The message's sentences, parted where a full stop, question or exclamation mark is followed by a space (any
    Chinese one), or at a line break."""
    return [part for part in _SENTENCE_END.split(text.strip()) if part.strip()]


def has_substance(rest: str) -> bool:
    """A word of substance is left in what remains of a message once the words a reading knows are taken out: a
    word of three letters or more, or any Chinese character."""
    return _SUBSTANCE.search(rest) is not None


# Words that ask for something to be noted down ("jot down", "bitte eintragen", "记一下"): beside a number alone they
# say nothing of what it is.
NOTING = cues(
    r"\b(?:add|put|stick|pop|jot|write|note|save|record|log)\b",
    r"\b(?:notier\w*|merk\w*|schreib\w*|aufschreiben|eintragen|einschreiben|trag\w*|ein|vermerk\w*)\b",
    r"记",
)


def is_vague(text: str) -> bool:
    """The message says nothing of its own: a reference without content ("the thing", "that"), with at most words
    of doing and of when (`DOING`), or only words of asking and noting ("write it down", "帮我记一下"), or a change
    with no value ("the thing from this morning, change it", "改一下"). A number beside a reference or beside words of
    noting alone is no content either: "add 15 for it" and "12,50 bitte eintragen" do not say what for."""
    short = len(text.split()) <= 5 and len(text.strip()) <= 30
    referring = VAGUE.search(text) is not None
    if not (referring or short):
        return False
    changing = not re.search(r"\d", text) and CHANGING.search(text) is not None
    rest = CHANGING.sub(" ", _ASPECT.sub(" ", text)) if changing else text
    rest = FILLER.sub(" ", VAGUE.sub(" ", rest))
    if referring:
        rest = DOING.sub(" ", rest)
    rest = NOTING.sub(" ", rest)
    return not has_substance(rest) and (referring or NOTING.search(text) is not None or not re.search(r"\d", rest))


_CN_SUM = re.compile(r"[零〇一二两三四五六七八九十百千万]+(?:块钱?|元|毛|欧元|美元|英镑)")


def says_what(text: str, amounts: list[str]) -> bool:
    """Whether a message about money says what it was for: a word of substance is left once the amounts, the
    words of paying and the filler are gone ("paid 50" says nothing; "paid 50 for pizza" does)."""
    rest = _CN_SUM.sub(" ", text)  # "二十块": the grounding's amount text is in digits
    for amount in amounts:
        rest = rest.replace(amount, " ")
    rest = FILLER.sub(" ", VAGUE.sub(" ", PAYING.sub(" ", _WHEN_PAID.sub(" ", rest))))
    return has_substance(rest)


# When the money went, which says nothing of what it was for: "刚才花了85", "gerade 30 euro ausgegeben".
_WHEN_PAID = cues(
    r"\b(?:just now|earlier|this (?:morning|afternoon|evening)|tonight|last night)\b",
    r"\b(?:gerade|grad|eben|vorhin|heute (?:morgen|früh|mittag|abend))\b",
    r"刚才|刚刚|方才|早上|上午|中午|下午|晚上",
)


# "Everything", "all of it": a request for more than one row, which waits for a yes rather than asking which.
EVERYTHING = cues(
    r"\b(?:everything|all (?:of )?(?:my|our|the|your|that|those|these|it|them|memories|notes|entries|data|reminders)|"
    r"all\b\W*$|every reminder)",
    r"\b(?:alles|sämtliche|alle (?:einträge|notizen|erinnerungen))\b",
    r"全部|所有|一切|统统|都(?:删|忘)",
)


def own(said: str, message: str) -> bool:
    """Every word of `said` is the message's (three letters or more, by their first five letters; Chinese by pairs of
    characters): a text the model wrote that the member could have written, not a prompt example or a translation."""
    return _substance(said) <= _substance(message)


def _substance(text: str) -> set[str]:
    pairs = han_pairs(text)
    return {word.lower()[:5] for word in re.findall(r"[^\W\d_]{3,}", text)} | pairs
