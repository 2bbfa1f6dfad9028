"""The routes: narrow ways through steps 3–5 for the kinds of message families send, each with its own small answer
schema. `ROUTES` lists them; `ROUTE_CHOICE` is the schema the model answers in when the cues leave the route open."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from engine.routes.calendar import (
    CalendarRoute,
    EventCancelRoute,
    EventMoveRoute,
    EventReminderRoute,
    ForgetMeRoute,
)
from engine.routes.changes import ForgetRoute, UndoRoute, UpdateRoute
from engine.routes.lists import BudgetRoute, SharedListRoute
from engine.routes.questions import LookupRoute, SumRoute
from engine.routes.records import ExpenseRoute, FactRoute
from engine.routes.reminders import ListRoute, ReminderChangeRoute, ReminderRoute
from engine.routes.route import Ask, Reroute, Route, Said, Situation
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
        UndoRoute(),
        ReminderChangeRoute(),
        ListRoute(),
        CalendarRoute(),
        EventReminderRoute(),
        EventMoveRoute(),
        EventCancelRoute(),
        ForgetMeRoute(),
        SharedListRoute(),
        BudgetRoute(),
        ChatRoute(),
        UnclearRoute(),
    )
}

RouteName = Literal[
    "expense",
    "fact",
    "reminder",
    "sum",
    "lookup",
    "update",
    "forget",
    "reminder_change",
    "list",
    "chat",
    "unclear",
    "calendar",
    "event_reminder",
    "event_change",
    "event_cancel",
    "shared_list",
    "budget",
]


class RouteChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    route: RouteName


__all__ = ["ROUTES", "Ask", "Reroute", "Route", "RouteChoice", "Said", "Situation"]
