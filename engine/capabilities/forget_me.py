"""Forgetting a member: "forget everything about me" — their private data and links go, their household entries
stay with a "former member" — always after a yes."""

from __future__ import annotations

from pydantic import BaseModel

from engine.analysis import PlannedCall
from engine.capabilities.capability import Ask, Capability, Reading, Said, Situation
from engine.capabilities.phrases import say
from engine.capabilities.reminder import DONT_FORGET
from engine.capabilities.words import (
    cues,
)
from engine.executor import StepResult

FORGET_ME = cues(
    r"\b(?:delete|erase|remove|forget) everything (?:you know )?about me\b",
    r"\bforget (?:everything|all) (?:about|of) me\b",
    r"\b(?:delete|erase|remove) (?:all )?(?:my (?:data|account)|everything about me)\b",
    r"\bvergiss alles über mich\b",
    r"\blösche? (?:alle )?meine daten\b",
    r"忘记关于我的一切|忘掉关于我的一切|删除我的(?:所有)?数据",
)
# Said casually, a removal and the member as its whole scope ("nuke all my info 🙏", "sämtliche infos zu meiner
# person sollen weg", "关于我的所有内容都抹掉"); it always waits for a yes.
_REMOVAL = cues(
    r"\b(?:delete|erase|remove|forget|wipe|nuke|clear|purge|removed|gone)\b|\b(?:don'?t|do not|stop) (?:keep|stor|sav)|"
    r"\b(?:don'?t|dont|do not) want (?:you )?(?:to )?(?:keep|stor|sav|know)",
    r"\b(?:lösch\w*|vergiss|weg|entfern\w*)|\b(?:nichts? mehr|will nicht|möchte nicht|mag nicht)\b.{0,40}"
    r"\b(?:speicher\w*|gespeichert|wissen|weißt|kennst)\b",
    r"删|清空|清除|抹掉|别留|不要再保存|不想再让你保存|不要再存",
)
_ME = cues(
    r"\b(?:about|on|of) me\b|\bmy (?:whole |personal |own )?(?:data|info|information|stuff|details|profile|history|"
    r"account|entries)\b",
    r"\büber mich\b|\b(?:alles|nichts|was)\b.{0,25}\bvon mir\b|\bzu meiner person\b|"
    r"\bmeine[nr]? (?:ganzen )?(?:daten|infos?|einträge|person)\b",
    r"关于我|我的(?:所有|全部|任何)?(?:资料|数据|信息|记录|东西|内容)",
)


class ForgetMe(Capability):
    name = "forget_me"
    description = "the member asks FAA to forget everything about them"
    examples = {
        "en": (
            "forget everything about me",
            "delete my data",
            "erase everything you know about me",
            "wipe all my stuff pls, i'm out",
            "i want all my personal info removed",
            "wipe everything you have on me",
            "i'm leaving the family group, erase everything about me",
            "clear my whole profile and history",
            "don't keep any of my info anymore",
            "nuke all my info 🙏",
        ),
        "de": (
            "vergiss alles über mich",
            "lösche meine Daten",
            "lösch meine daten bitte komplett",
            "ich will nicht dass hier noch irgendwas über mich gespeichert ist",
            "sämtliche infos zu meiner person sollen weg",
            "ich möchte, dass du gar nichts mehr von mir speicherst",
            "alles was ihr von mir habt bitte weg, ich bin raus aus der gruppe",
            "alles was du über mich gespeichert hast soll weg",
            "mach meine ganzen einträge weg, ich bin raus",
            "ich möchte nicht mehr dass du was über mich weißt",
        ),
        "zh": (
            "忘记关于我的一切",
            "删除我的所有数据",
            "不要再保存任何关于我的信息",
            "你记的关于我的东西都清空吧",
            "我不想再让你保存我的任何资料",
            "我的资料全部清空",
            "关于我的所有内容都抹掉",
            "我要退出 把我的数据都清除",
            "删除我的所有数据 谢谢",
            "关于我的记录一条都别留",
        ),
    }
    refines = ("*",)
    tools = ("forget_me",)
    consent = "always"
    needs_cue = True

    def claims(self, reading: Reading) -> bool:
        text = reading.text
        casual = _REMOVAL.search(text) and _ME.search(text) and not (reading.question or DONT_FORGET.search(text))
        return bool(FORGET_ME.search(text) or casual)

    async def prepare(self, situation: Situation) -> Ask | Said | None:
        return None

    def answer_model(self, situation: Situation) -> type[BaseModel] | None:
        return None

    def prompt(self, situation: Situation) -> str:
        return ""

    def plan(self, situation: Situation, answer: BaseModel | None) -> list[PlannedCall] | Ask:
        return [PlannedCall(id="s1", tool="forget_me", args={})]

    def reply(self, situation: Situation, answer: BaseModel | None, results: list[StepResult]) -> str:
        ok = bool(results) and results[0].ok
        return say("forgot_me", situation.language) if ok else ""
