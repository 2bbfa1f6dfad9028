"""Taking back the member's latest change: "undo", "take that back", "nvm, scrap what i just asked for"."""

from __future__ import annotations

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities.capability import Ask, Capability, Reading, Reroute, Said, Situation
from engine.capabilities.phrases import say
from engine.capabilities.words import (
    cues,
)
from engine.executor import StepResult
from tools.storage import inbox, journal

UNDO = cues(
    # "scrap that" alone; "scrap that reminder" says what to drop
    r"\bscrap (?:that|it|this)\b(?!\s+[^\W\d_])|\bscrap what i (?:just )?(?:said|asked for|wrote)\b",
    r"^\W*undo\b",
    r"\bundo (?:that|it|this)\b(?!\s+[^\W\d_])|\bundo (?:the|my) last\b",
    r"\btake (?:that|it) back\b",
    r"撤销",
    r"撤回",
    r"\brückgängig\b",
    # the last change pointed at: "nope undo that last bit", "revert ur last change", "nimm das zurück"
    r"\bundo (?:that|it|this)(?: last)?(?: bit| one| change| thing)?\W*$",
    r"\b(?:reverse|revert)\b (?:that|it|this|ur|your|my|the last)\b",
    r"\bput it back (?:how|the way) it was\b",
    r"\bnimm (?:das|es) (?:wieder )?zurück\b|\bzurücknehmen\b|\bwiderruf\w*\b|\bstell (?:das|es) wieder her\b|"
    r"\bmach das letzte wieder weg\b",
    r"(?:刚才|刚刚)(?:那个|那条|的)?(?:不算|撤了)|退回去|恢复成原来|恢复原样|(?:刚才|刚刚)\S{0,6}撤",
    # said by mistake: "ugh didnt mean that, go back", "halt stopp, das wollte ich nicht"
    r"\b(?:didn'?t|didnt|did not) mean (?:that|it|this)\b|\bgo back\W*$",
    r"\bdas wollte ich (?:so )?nicht\b|\bso war das nicht gemeint\b|\bwar ein versehen\b",
)
# The request just made taken back, the whole message, maybe with its reason after a comma ("actually never mind,
# cancel that", "never mind, he just rang", "ach lass mal, brauch ich doch nicht", "ach doch nicht, haben noch
# welche", "算了，他已经打过来了"): the member's last message, if it changed something. A reason is no command of its
# own ("算了，取消这个提醒" cancels the reminder it names).
_COMMAND = r"cancel|delete|remove|change|move|lösch|streich|verschieb|取消|删|改|提醒"
_WHY = rf"(?:\s*[,;–-]\s*(?:(?!{_COMMAND})[^.!?\n]){{0,40}})?\W*$"
TAKE_BACK = cues(
    r"^\W*(?:(?:actually|oh|ah|wait|hmm|oops|sorry|never ?mind|nvm)\W+)*cancel (?:that|it)\W*$",
    rf"^\W*(?:(?:actually|oh|ah|wait|hmm|oops|sorry)\W+)*(?:never ?mind|nvm|no need){_WHY}",
    r"^\W*(?:(?:ach|och|nee|ne|hm+)\W+)*(?:lass (?:mal|es)\W+)?(?:brauch\w* (?:ich|wir) (?:das |es )?doch nicht|"
    rf"doch nicht){_WHY}",
    rf"^\W*(?:(?:哦|啊|呃|诶)\W*)?(?:算了|不用了|不要了)(?:\W*(?:(?!{_COMMAND})[^。！？?!\n]){{0,20}})?\W*$",
)


class Undo(Capability):
    """Take back the member's latest change; nothing for the model to choose."""

    name = "undo"
    description = "take back FAA's last change ('undo that', 'scrap what I just asked')"
    examples = {
        "en": (
            "undo",
            "undo that",
            "take that back",
            "nvm, scrap what i just asked for",
            "oops, undo the last one",
            "wait no reverse that",
            "ugh didnt mean that, go back",
            "revert ur last change",
            "nope undo that last bit",
            "put it back how it was",
            "oh wait, cancel that",
        ),
        "de": (
            "mach das rückgängig",
            "rückgängig bitte",
            "nimm das zurück",
            "rückgängig, hab mich im chat vertan",
            "halt stopp, das wollte ich nicht",
            "mach das letzte wieder weg",
            "falscher chat sorry, bitte zurücknehmen 🙈",
            "stell das wieder her wie vorher",
            "das von eben bitte widerrufen",
            "das eben rückgängig machen",
            "nee lass mal, doch nicht",
        ),
        "zh": (
            "撤销",
            "撤回刚才的",
            "刚才那条撤销吧",
            "哎呀发错了 撤回",
            "刚刚那个不算",
            "恢复成原来那样",
            "撤回上一步",
            "手滑了 退回去",
            "刚才的操作撤了吧",
            "不是这个意思 帮我撤回",
        ),
    }
    refines = ("*",)
    tools = ("undo",)
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        return UNDO.search(reading.text) is not None or TAKE_BACK.search(reading.text) is not None

    async def prepare(self, situation: Situation) -> Ask | Said | Reroute | None:
        if UNDO.search(situation.text) or await _last_message_changed(situation):
            return None
        return Said(say("nothing_to_undo", situation.language))  # "cancel that" after a question: nothing just done

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None

    def prompt(self, situation: Situation) -> str:
        return ""

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        return [PlannedCall(id="s1", tool="undo", args={})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        if not results or not results[0].ok or not results[0].result:
            return ""
        undone = results[0].result.get("undone") or []
        if not undone:
            return say("nothing_to_undo", situation.language)
        return say("undone", situation.language, what="; ".join(str(line) for line in undone))


async def _last_message_changed(situation: Situation) -> bool:
    """Whether the member's message before this one changed something that is not undone yet."""
    run = situation.run
    message = run.message
    async with run.transaction() as conn:
        latest = await journal.last_undoable(conn, message.household_id, message.user_id, message.inbox_id)
        previous = await inbox.previous_id(conn, message.household_id, message.user_id, message.inbox_id)
    return bool(latest) and latest[0].payload["inbox_id"] == previous
