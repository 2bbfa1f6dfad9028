"""Whether a stored note is about what a question asks: they share a word of substance — not a name, not a word of
asking. A small model asked to pick the notes that answer a question sometimes picks the nearest one even when it
is about something else (asked for a passport's expiry, it quotes the wifi password); this keeps such a pick from
reaching the member as an answer."""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.grounding.language import CJK, han_pairs, language_of

_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_STOP = frozenset(
    """what when where which who whom whose how many much does did do the and for with from that this are was were
    is has have had may can could would should will about our your their his her its there here been into than then
    tell show please wie was wann wer wo welche welcher welches wieviel viel viele ist sind hat haben der die das den
    dem des ein eine einen und für mit von bei mein meine unser unsere noch schon""".split()
)
_CJK_STOP = frozenset(
    "什么 多少 时候 几点 哪里 怎么 是不 不是 的是 我的 我们 你们 他们 一下 来着 现在 今天 这个 那个 还是".split()
)


def shares_topic(question: str, note: str, names: Iterable[str] = ()) -> bool:
    """The note and the question have a word of substance in common (names and words of asking do not count)."""
    return overlap(question, note, names) > 0


def overlap(question: str, note: str, names: Iterable[str] = ()) -> int:
    """How many words of substance the note and the question have in common. A word spelt with a capital inside an
    English question is a name ("What is Lea's favourite food?"); German spells every noun so ("der Code fürs
    Garagentor"), and there only the names given count as names."""
    skip = people(question, names)
    return len(terms(question, skip) & terms(note, skip))


def people(question: str, names: Iterable[str]) -> set[str]:
    """The words of the question that name people rather than a topic: the names given and, in English, the words
    it spells with a capital."""
    skip = {name.lower() for name in names}
    if language_of(question) != "de":
        skip |= {word.lower() for word in re.findall(r"\b[A-Z][a-z]+\b", question)[1:]}
    return skip


def same_word(one: str, other: str) -> bool:
    """One word in two forms: equal without a plural or possessive ending ("ben's", "bens" and "ben"), or one the
    start of the other, as in a compound ("zahnarzt" and "zahnarzttermin"), the shorter of five letters or more."""
    short, long = sorted((_stem(one.lower()), _stem(other.lower())), key=len)
    return short == long or (len(short) >= 5 and long.startswith(short))


def terms(text: str, skip: set[str]) -> set[str]:
    """The words of substance of the text (stemmed), and its pairs of Chinese characters, without those in `skip`."""
    words = {_stem(word.lower()) for word in _WORD.findall(CJK.sub(" ", text))}
    pairs = han_pairs(text)
    return {w for w in words if w not in _STOP and w not in skip} | {
        p for p in pairs if p not in _CJK_STOP and p not in skip
    }


def _stem(word: str) -> str:
    """Plural and possessive endings off: "shoes" and "shoe's" are "shoe"."""
    for ending in ("'s", "’s", "es", "s"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word
