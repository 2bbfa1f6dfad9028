"""Which language a member wrote in — English, German or Chinese — so that replies written without the model answer
in it."""

from __future__ import annotations

import re

CJK = re.compile(r"[\u4e00-\u9fff]")
_GERMAN = re.compile(
    r"[äöüß]|\b(?:ich|wir|und|der|die|das|ist|nicht|bitte|mich|mir|für|um|uhr|morgen|heute|gestern|habe|haben|"
    r"hat|wie|viel|was|wann|erinnere|jeden|einen|eine|beim|vom|zum|mein|meine|unser|unsere|noch|schon|auch|"
    r"absagen|abgesagt|verschoben|vergiss|lösche|gekauft|bezahlt|ausgegeben|termin|kalender|liste|erinnern|stunden?|"
    r"minuten|tage|woche)\b",
    re.IGNORECASE,
)
_ENGLISH = re.compile(
    r"\b(?:i|we|and|the|is|not|please|me|for|at|tomorrow|today|yesterday|have|has|how|much|what|when|remind|"
    r"every|my|our|was|it|to|of|on|a)\b",  # not "in" nor "an": German has them too
    re.IGNORECASE,
)


def language_of(text: str) -> str:
    """ "zh" when the text has Chinese characters, "de" when German words outnumber English ones, else "en"."""
    if CJK.search(text):
        return "zh"
    return "de" if len(_GERMAN.findall(text)) > len(_ENGLISH.findall(text)) else "en"
