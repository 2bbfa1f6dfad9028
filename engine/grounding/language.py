"""Which language a member wrote in — English, German or Chinese — so that replies written without the model answer
in it, and number words are read in it.

Chinese characters decide at once. Otherwise the function words of each language are counted ("ich", "und",
"the", "is"); a casual message that has none or as many of each ("friseur zwanzig euro", "alles klar", "tanken
60€") is weighed by lingua's letter statistics, and German only when it is fairly sure: a short message that could be
either ("ok", "Netflix 13.99") stays English.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lingua import Language, LanguageDetector, LanguageDetectorBuilder

CJK = re.compile(r"[\u4e00-\u9fff]")
_HAN_RUN = re.compile(r"[\u4e00-\u9fff]+")
_LETTER = "A-Za-zÀ-ÖØ-öø-ÿ"
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
_SURE = 0.65  # lingua's confidence in German above which an undecided message counts as German


@lru_cache(maxsize=1024)  # the grounding, consent and replies ask about the same message
def language_of(text: str) -> str:
    """ "zh" when the text has Chinese characters, "de" when German words outnumber English ones or, with neither
    ahead, when its letters read as German; else "en"."""
    if CJK.search(text):
        return "zh"
    german, english = len(_GERMAN.findall(text)), len(_ENGLISH.findall(text))
    if german != english:
        return "de" if german > english else "en"
    if not re.search(r"[^\W\d_]{3}", text):
        return "en"
    return "de" if _detector().compute_language_confidence(text, Language.GERMAN) >= _SURE else "en"


@lru_cache(maxsize=1)
def _detector() -> LanguageDetector:
    """English and German only, their models loaded at the first undecided message (about 2 s, 70 MB)."""
    return LanguageDetectorBuilder.from_languages(Language.ENGLISH, Language.GERMAN).build()


@lru_cache(maxsize=256)
def name_pattern(name: str) -> re.Pattern[str]:
    """A person's name as a word of its own ("mia" in "mia's" and "那Mia呢", not in "miami"); a Chinese name
    anywhere."""
    if CJK.search(name):
        return re.compile(re.escape(name))
    return re.compile(rf"(?<![{_LETTER}]){re.escape(name)}(?![{_LETTER}])", re.IGNORECASE)


def han_pairs(text: str) -> set[str]:
    """Each two Chinese characters side by side: Chinese puts no spaces between words, so a pair stands for one."""
    return {run[i : i + 2] for run in _HAN_RUN.findall(text) for i in range(len(run) - 1)}
