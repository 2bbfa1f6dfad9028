"""The words of time as families type them, written the way the grammars read them: "evry" is every, "tmrw"
tomorrow, "tuesdy" Tuesday, "two" 2 and "zwölf" 12; and the words that ask FAA to do something, typed in a hurry
("cancle", "delte", "remvoe").

Misspellings of the longer words of time are found by one edit (a letter missing, added, changed or two swapped);
the short ones and the chat forms by a table. Number words become digits with text2num (English and German).
"""

from __future__ import annotations

import re
from functools import lru_cache

from text_to_num import alpha2digit

_CHAT_FORMS = {
    "evry": "every", "evrey": "every", "evey": "every", "eveyr": "every", "eveery": "every", "tmrw": "tomorrow",
    "tmr": "tomorrow", "tommorow": "tomorrow", "tommorrow": "tomorrow", "tmrrw": "tomorrow", "tmmrw": "tomorrow",
    "tomoz": "tomorrow", "2moro": "tomorrow",
    "2morrow": "tomorrow", "2mrw": "tomorrow", "tonite": "tonight", "2nite": "tonight", "nite": "night",
    "yday": "yesterday", "ystd": "yesterday", "yest": "yesterday", "wknd": "weekend", "wkend": "weekend",
    "weds": "wednesday", "tues": "tuesday", "thurs": "thursday", "morn": "morning", "arvo": "afternoon",
    "hrs": "hours", "hr": "hour", "wks": "weeks", "wk": "week", "mths": "months", "mth": "month",
    "fortnite": "fortnight", "remnid": "remind", "rmind": "remind", "remid": "remind",
}  # fmt: skip
# Words worth correcting by one edit: long enough that one edit does not reach another common word.
_VOCABULARY = (
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "tomorrow", "tonight",
    "yesterday", "every", "weekdays", "weekday", "weekend", "fortnight", "morning", "evening", "afternoon",
    "minutes", "remind", "montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag",
    "übermorgen", "wochenende", "erinnere",
)  # fmt: skip
_BY_LENGTH: dict[int, tuple[str, ...]] = {}
for _word in _VOCABULARY:
    for _length in (len(_word) - 1, len(_word), len(_word) + 1):
        _BY_LENGTH[_length] = (*_BY_LENGTH.get(_length, ()), _word)
_WORD = re.compile(r"[^\W\d_]+")
_KEEP = frozenset({"ever", "jede", "minute"})


@lru_cache(maxsize=64)  # moments, repeats and money read the same message
def normalised(text: str, language: str) -> str:
    """`text` lowercased, with chat forms and misspelt words of time corrected and number words in digits."""
    return with_digits(_ABOUT.sub(r"\1", _WORD.sub(_corrected, text.lower())), language)


# A number said roughly ("9ish", "5-ish"): the number.
_ABOUT = re.compile(r"(\d)\s?-?ish\b")


# What a member asks FAA to do, and the list it is done to, long enough that a letter missing or two swapped reach no
# other word ("forge" does).
_COMMANDS = (
    "cancel", "delete", "remove", "remind", "reminder", "forget", "change", "update", "erinner", "erinnere", "erinnern",
    "erinnerung", "löschen", "entfernen", "verschieben", "einkaufsliste", "einkaufszettel",
)  # fmt: skip
_REAL_WORDS = frozenset({"forge"})


def commands_spelt(text: str) -> str:
    """`text` with the words of asking that lost a letter or swapped two ("cancle", "delte") written right; a changed
    letter is left alone ("remote", "forgot" and "cancer" are words)."""

    def spelt(match: re.Match[str]) -> str:
        word = match.group(0).lower()
        if len(word) < 5 or word in _COMMANDS or word in _REAL_WORDS:
            return match.group(0)
        candidates = (known for known in _COMMANDS if len(known) in (len(word), len(word) + 1) and known[0] == word[0])
        return next((known for known in candidates if _swapped_or_short(word, known)), match.group(0))

    return _WORD.sub(spelt, text)


def _swapped_or_short(word: str, known: str) -> bool:
    """Whether `word` is `known` with two neighbouring letters swapped or one letter missing."""
    if len(word) == len(known):
        return _one_edit(word, known) and sorted(word) == sorted(known)
    return _one_edit(word, known)


def with_digits(text: str, language: str) -> str:
    """`text` with its English or German number words written in digits ("zwölf Euro" → "12 Euro"); German "ein"
    stays a word, since it is far more often the article."""
    if language not in ("en", "de"):
        return text
    return str(alpha2digit(text, language, threshold=0 if language == "en" else 2))


def _corrected(match: re.Match[str]) -> str:
    word = match.group(0)
    if word in _CHAT_FORMS:
        return _CHAT_FORMS[word]
    if len(word) < 5 or word in _KEEP or word in _VOCABULARY or word.removesuffix("s") in _VOCABULARY:
        return word  # "dienstags", "mornings": a known word with an ending, not a misspelling
    candidates = (known for known in _BY_LENGTH.get(len(word), ()) if known[0] in word[:2])
    return next((known for known in candidates if _one_edit(word, known)), word)


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one insertion, deletion, substitution or swap of neighbours."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    start = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    if len(a) == len(b):
        swapped = start + 1 < len(a) and a[start] == b[start + 1] and a[start + 1] == b[start]
        return a[start + 1 :] == b[start + 1 :] or (swapped and a[start + 2 :] == b[start + 2 :])
    longer, shorter = (a, b) if len(a) > len(b) else (b, a)
    return longer[start + 1 :] == shorter[start:]
