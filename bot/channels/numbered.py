"""Quick replies for channels without buttons (Threema, email): options go out as a numbered list, and an answer
"2" comes back as the second option. The numbering is the order of `options` in the outbox row that was delivered
last to that sender on that channel, so it is deterministic and survives restarts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from engine.deps import Deps
from tools.storage import identities, outbox

_NUMBER = re.compile(r"\s*(\d{1,2})\s*[.)]?\s*")


def render(text: str, options: Sequence[str]) -> str:
    """The reply with its options listed below it, numbered from 1."""
    if not options:
        return text
    listed = "\n".join(f"{number}. {option}" for number, option in enumerate(options, 1))
    return f"{text}\n\n{listed}\n\n(Reply with a number.)"


async def resolve_choice(deps: Deps, channel: str, sender: str, text: str) -> tuple[str, dict[str, Any]]:
    """(text, payload extras): a bare number that picks one of the options of the last message we delivered
    to this sender becomes that option's label; anything else is returned unchanged."""
    match = _NUMBER.fullmatch(text)
    if match is None:
        return text, {}
    async with deps.db.unscoped() as conn:
        principal = await identities.resolve_identity(conn, channel, sender)
    if principal is None:
        return text, {}
    async with deps.db.household(principal.household_id, principal.user_id) as conn:
        last = await outbox.last_sent(conn, principal.user_id, channel, sender)
    options = [] if last is None else list(last.payload.get("options") or [])
    number = int(match.group(1))
    if last is None or not 1 <= number <= len(options):
        return text, {}
    extras: dict[str, Any] = {"choice": {"number": number, "outbox_id": last.id}}
    if last.payload.get("reminder_id") is not None:
        extras["answers"] = {"kind": last.payload.get("kind", "reminder"), "reminder_id": last.payload["reminder_id"]}
    return str(options[number - 1]), extras
