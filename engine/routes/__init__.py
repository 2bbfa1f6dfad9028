"""The routes: narrow ways through steps 3–5 for the kinds of message families send, each with its own small answer
schema. `ROUTES` lists them; `ROUTE_CHOICE` is the schema the model answers in when the cues leave the route open."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from engine.routes.changes import ForgetRoute, UpdateRoute
from engine.routes.questions import LookupRoute, SumRoute
from engine.routes.records import ExpenseRoute, FactRoute
from engine.routes.reminders import ListRoute, ReminderChangeRoute, ReminderRoute
from engine.routes.route import Ask, Route, Said, Situation
from engine.routes.talk import ChatRoute, UnclearRoute

ROUTES: dict[str, Route] = {
    route.name: route
    for route in (
        ExpenseRoute(),
        FactRoute(),
        ReminderRoute(),
        SumRoute(),
        LookupRoute(),
        UpdateRoute(),
        ForgetRoute(),
        ReminderChangeRoute(),
        ListRoute(),
        ChatRoute(),
        UnclearRoute(),
    )
}

RouteName = Literal[
    "expense", "fact", "reminder", "sum", "lookup", "update", "forget", "reminder_change", "list", "chat", "unclear"
]


class RouteChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    route: RouteName


ROUTER_INSTRUCTIONS = """Sort a family member's message into one route:
expense: money spent or received, to record ("paid 20 for pizza", "工资到账5000元")
fact: anything else to remember: health, plans, appointments, facts ("Tom is allergic to nuts", "周六去奶奶家")
reminder: asks to be reminded at a time ("remind me at 9 to call mom", "明天提醒我交电费")
sum: asks how much / how many / an average over recorded money ("how much did we spend on food?")
lookup: asks about something stored that is not a sum ("what's Lea's shoe size?", "WLAN-Passwort?")
update: corrects something stored earlier ("it was 24.80, not 42.80", "改成50元")
forget: asks to forget or delete something stored ("forget the wifi password")
reminder_change: cancels, snoozes or completes a reminder ("cancel the bins reminder", "done")
list: asks which reminders there are
chat: greetings, thanks, small talk, questions about you
unclear: too vague to act on ("write down the thing", "那个多少钱来着")
Answer with {"route": NAME}."""

__all__ = ["ROUTES", "ROUTER_INSTRUCTIONS", "Ask", "Route", "RouteChoice", "Said", "Situation"]
