"""A shared list as a member reads it: the reply text of a list and the checklist a channel with buttons shows
beside it (one tick button per item, see `bot.channels.telegram`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

MAX_CHECKLIST_ITEMS = 20  # buttons under one message; a longer list shows its first items as buttons

_EMPTY = {
    "en": "The {name} list is empty.",
    "de": "Die Liste {name} ist leer.",
    "zh": "{name}清单是空的。",
}
_TITLE = {"en": "{name} list:", "de": "Liste {name}:", "zh": "{name}清单："}


def item_label(item: Mapping[str, Any]) -> str:
    """'2 kg flour → Tom'."""
    text = str(item.get("text", ""))
    if item.get("quantity"):
        text = f"{item['quantity']} {text}"
    if item.get("assignee"):
        text += f" → {item['assignee']}"
    return text


def render(name: str, items: Sequence[Mapping[str, Any]], language: str) -> str:
    """The list as lines, open items first; ticked ones (when shown) struck through with a tick."""
    if not items:
        return _EMPTY.get(language, _EMPTY["en"]).format(name=name)
    lines = [_TITLE.get(language, _TITLE["en"]).format(name=name)]
    lines += [f"{'✅' if item.get('done') else '•'} {item_label(item)}" for item in items]
    return "\n".join(lines)


def checklist(view: Mapping[str, Any]) -> dict[str, Any] | None:
    """The payload a channel builds tick buttons from, for one list as `show_list` returns it."""
    items = [item for item in view.get("items", ()) if isinstance(item, Mapping)][:MAX_CHECKLIST_ITEMS]
    if not items:
        return None
    return {
        "list_name": str(view.get("list_name", "")),
        "items": [[int(item["item_id"]), item_label(item), bool(item.get("done"))] for item in items],
    }
