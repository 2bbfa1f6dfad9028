"""Every interface text a template or page asks for exists in English and in Chinese."""

from __future__ import annotations

import re
from pathlib import Path

from bot.web.pages.i18n import catalog, language
from bot.web.pages.render import TEMPLATES
from bot.web.pages.texts import CHINESE, ENGLISH

_KEY = re.compile(r"""\bt\(\s*["']([a-z_]+\.[a-z_0-9]*[a-z0-9])["']""")
# t("role." ~ member.role): some key starts with the prefix
_PREFIXED = re.compile(r"""\bt\(\s*["']([a-z_]+\.[a-z_]*)["']\s*~""")


def test_every_key_a_template_uses_exists_in_both_languages() -> None:
    sources = [*TEMPLATES.glob("*.html"), *Path(TEMPLATES.parent).glob("*.py")]
    used = {key for path in sources for key in _KEY.findall(path.read_text())}
    prefixes = {prefix for path in sources for prefix in _PREFIXED.findall(path.read_text())}
    assert used and prefixes
    assert sorted(used - ENGLISH.keys()) == []
    assert all(any(key.startswith(prefix) for key in ENGLISH) for prefix in prefixes)
    assert sorted(ENGLISH.keys() - CHINESE.keys()) == []
    assert sorted(CHINESE.keys() - ENGLISH.keys()) == []


def test_the_language_follows_the_locale() -> None:
    assert [language(x) for x in ("zh", "zh-CN", "zh_TW", "zh-CN,zh;q=0.9,en;q=0.8", "en", "de-DE", "")] == [
        "zh", "zh", "zh", "zh", "en", "en", "en",
    ]  # fmt: skip
    assert catalog("zh")("chat.hello", name="梅").startswith("梅")
