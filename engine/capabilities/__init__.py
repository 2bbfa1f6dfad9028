"""The capabilities: one module each says everything about one kind of thing families ask FAA to do (see
`engine.capabilities.capability`). `CAPABILITIES` lists them; routing, the router's prompt and the consent policy
are derived from them, and `check` holds their tools against the registry when a process starts."""

from __future__ import annotations

from engine.capabilities.agenda import Agenda
from engine.capabilities.budget import Budget
from engine.capabilities.capability import LANGUAGES, Ask, Capability, Reading, Reroute, Said, Situation
from engine.capabilities.chart import Chart
from engine.capabilities.chat import Chat
from engine.capabilities.correction import Correction
from engine.capabilities.event_cancel import EventCancel
from engine.capabilities.event_move import EventMove
from engine.capabilities.event_reminder import EventReminder
from engine.capabilities.expense import Expense
from engine.capabilities.forget import Forget
from engine.capabilities.forget_me import ForgetMe
from engine.capabilities.lookup import Lookup
from engine.capabilities.note import Note
from engine.capabilities.reminder import Reminder
from engine.capabilities.reminder_change import ReminderChange
from engine.capabilities.reminder_list import ReminderList
from engine.capabilities.shared_list import SharedList
from engine.capabilities.sum import Sum
from engine.capabilities.unclear import Unclear
from engine.capabilities.undo import Undo
from tools.registry import ToolRegistry

CAPABILITIES: dict[str, Capability] = {
    capability.name: capability
    for capability in (
        Expense(),
        Note(),
        Reminder(),
        ReminderChange(),
        ReminderList(),
        EventReminder(),
        EventMove(),
        EventCancel(),
        Agenda(),
        SharedList(),
        Budget(),
        Sum(),
        Chart(),
        Lookup(),
        Correction(),
        Forget(),
        Undo(),
        ForgetMe(),
        Chat(),
        Unclear(),
    )
}
UNCLEAR = "unclear"


def check(registry: ToolRegistry) -> None:
    """Every capability is complete and calls only tools the registry has; raises `ValueError` naming what is not."""
    known = set(registry.names())
    for capability in CAPABILITIES.values():
        missing = [tool for tool in capability.tools if tool not in known]
        if missing:
            raise ValueError(f"capability {capability.name!r} uses unknown tools {missing}")
        languages = [language for language in LANGUAGES if not capability.examples.get(language)]
        if languages or not capability.description:
            raise ValueError(f"capability {capability.name!r} lacks a description or examples in {languages}")
        unknown = [name for name in capability.refines if name != "*" and name not in CAPABILITIES]
        if unknown:
            raise ValueError(f"capability {capability.name!r} refines unknown capabilities {unknown}")


__all__ = ["CAPABILITIES", "UNCLEAR", "Ask", "Capability", "Reading", "Reroute", "Said", "Situation", "check"]
