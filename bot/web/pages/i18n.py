"""The web app's interface texts in English and Chinese; a member's locale picks the language."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.web.pages.texts import CHINESE, ENGLISH

LANGUAGES = (("en", "English"), ("zh", "中文"))


def language(locale: str) -> str:
    """`zh`, `zh-CN`, `zh_TW` or an Accept-Language list starting with Chinese → "zh"; anything else → "en"."""
    first = locale.split(",", 1)[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


@dataclass(frozen=True)
class Catalog:
    lang: str

    def __call__(self, key: str, **values: Any) -> str:
        text = (CHINESE if self.lang == "zh" else ENGLISH).get(key) or ENGLISH[key]
        return text.format(**values) if values else text


def catalog(lang: str) -> Catalog:
    return Catalog(lang)
