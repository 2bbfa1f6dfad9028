"""Every route of the web app, listed explicitly, and how it is mounted on the web process's aiohttp app.

A route's name says who may use it (see `bot.web.pages.security`): `public:` anyone, `page:` a signed-in
member, `adult:` an adult of the household.
"""

from __future__ import annotations

from aiohttp import web

from bot.web.pages import (
    calendar,
    chat,
    household,
    lists,
    memories,
    money,
    notifications,
    onboarding,
    portability,
    push,
    reminders,
    shell,
    visibility,
)
from bot.web.pages.render import JINJA, environment
from bot.web.pages.security import DEPS, security_headers
from engine.deps import Deps

ROUTES = [
    web.get("/setup/{code}", onboarding.setup_page, name="public:setup"),
    web.post("/setup/{code}", onboarding.setup_submit, name="public:setup-submit"),
    web.get("/join/{code}", onboarding.join_page, name="public:join"),
    web.get("/login", onboarding.login_page, name="public:login"),
    web.post("/login", onboarding.login_submit, name="public:login-submit"),
    web.post("/logout", onboarding.logout, name="page:logout"),
    web.get("/", chat.chat_page, name="page:chat"),
    web.post("/chat", chat.send_form, name="page:chat-send"),
    web.post("/app/chat/stream", chat.stream, name="page:chat-stream"),
    web.get("/app/chat/replies/{inbox_id}", chat.reply, name="page:chat-reply"),
    web.get("/app/media/{media_id}", chat.media_file, name="page:media"),
    web.get("/app/events", notifications.events, name="page:events"),
    web.get("/app/push", push.key, name="page:push-key"),
    web.post("/app/push", push.subscribe, name="page:push-subscribe"),
    web.post("/app/push/remove", push.unsubscribe, name="page:push-unsubscribe"),
    web.get("/memories", memories.memories_page, name="page:memories"),
    web.post("/memories/restore", memories.restore_memories, name="page:memories-restore"),
    web.post("/memories/{memory_id}/edit", memories.edit_memory, name="page:memory-edit"),
    web.post("/memories/{memory_id}/forget", memories.forget_memory, name="page:memory-forget"),
    web.post("/app/memories/{memory_id}", memories.edit_memory_json, name="page:memory-edit-json"),
    web.post("/app/memories/{memory_id}/forget", memories.forget_memory_json, name="page:memory-forget-json"),
    web.get("/reminders", reminders.reminders_page, name="page:reminders"),
    web.post("/reminders", reminders.create, name="page:reminder-create"),
    web.post("/reminders/quiet-hours", reminders.quiet_hours, name="page:quiet-hours"),
    web.post("/reminders/{reminder_id}/snooze", reminders.snooze, name="page:reminder-snooze"),
    web.post("/reminders/{reminder_id}/complete", reminders.complete, name="page:reminder-complete"),
    web.post("/reminders/{reminder_id}/cancel", reminders.cancel, name="page:reminder-cancel"),
    web.post("/app/reminders", reminders.create_json, name="page:reminder-create-json"),
    web.post("/app/reminders/{reminder_id}/{action}", reminders.act_json, name="page:reminder-act-json"),
    web.get("/calendar", calendar.calendar_page, name="page:calendar"),
    web.post("/calendar", calendar.create, name="page:event-create"),
    web.post("/calendar/import", calendar.upload, name="page:calendar-upload"),
    web.post("/calendar/rotate", calendar.rotate, name="adult:calendar-rotate"),
    web.post("/calendar/{event_id}/cancel", calendar.cancel, name="page:event-cancel"),
    web.post("/app/events", calendar.create_json, name="page:event-create-json"),
    web.post("/app/events/{event_id}/move", calendar.move_json, name="page:event-move-json"),
    web.post("/app/events/{event_id}/cancel", calendar.cancel_json, name="page:event-cancel-json"),
    web.get("/ics/{token}.ics", calendar.feed, name="feed:calendar"),
    web.get("/data", portability.data_page, name="page:data"),
    web.get("/data/mine.zip", portability.export_mine, name="page:export-mine"),
    web.get("/data/household.zip", portability.export_household, name="adult:export-household"),
    web.post("/data/forget", portability.forget, name="page:forget-me"),
    web.get("/lists", lists.lists_page, name="page:lists"),
    web.post("/lists/items", lists.add_item, name="page:list-add"),
    web.post("/lists/items/{item_id}/tick", lists.tick_item, name="page:list-tick"),
    web.post("/lists/items/{item_id}/assign", lists.assign_item, name="page:list-assign"),
    web.post("/lists/items/{item_id}/edit", lists.edit_item, name="page:list-edit"),
    web.post("/lists/items/{item_id}/remove", lists.remove_item, name="page:list-remove"),
    web.post("/lists/clear", lists.clear_items, name="page:list-clear"),
    web.get("/app/lists", lists.lists_json, name="page:lists-json"),
    web.post("/app/lists/items", lists.add_items_json, name="page:list-add-json"),
    web.post("/app/lists/items/{item_id}", lists.update_item_json, name="page:list-update-json"),
    web.post("/app/lists/items/{item_id}/remove", lists.remove_item_json, name="page:list-remove-json"),
    web.post("/app/lists/clear", lists.clear_json, name="page:list-clear-json"),
    web.get("/money", money.money_page, name="page:money"),
    web.post("/money/budgets", money.set_budget_form, name="adult:budget-set"),
    web.post("/money/budgets/{budget_id}/remove", money.remove_budget_form, name="adult:budget-remove"),
    web.get("/app/budgets", money.budgets_json, name="page:budgets-json"),
    web.post("/app/budgets", money.set_budget_json, name="page:budget-set-json"),
    web.post("/app/budgets/{budget_id}/remove", money.remove_budget_json, name="page:budget-remove-json"),
    web.post("/visibility/{kind}/{row_id}", visibility.change, name="page:visibility"),
    web.post("/app/visibility/{kind}/{row_id}", visibility.change_json, name="page:visibility-json"),
    web.get("/money.csv", money.money_csv, name="page:money-csv"),
    web.get("/household", household.household_page, name="adult:household"),
    web.post("/household/members", household.add_member, name="adult:member-add"),
    web.post("/household/members/{member_id}", household.update_member, name="adult:member-update"),
    web.post("/household/members/{member_id}/invite", household.invite_member, name="adult:member-invite"),
    web.post("/household/members/{member_id}/rename", household.rename, name="adult:member-rename"),
    web.post("/household/members/{member_id}/remove", household.remove, name="adult:member-remove"),
    web.post("/household/digests", household.update_digests, name="adult:digests"),
    web.get("/favicon.ico", shell.favicon, name="asset:favicon"),
    web.get("/manifest.webmanifest", shell.manifest, name="asset:manifest"),
    web.get("/sw.js", shell.service_worker, name="asset:service-worker"),
    web.get("/offline", shell.offline_page, name="asset:offline"),
    web.get("/static/{name}", shell.static_asset, name="asset:static"),
]


def mount(app: web.Application, deps: Deps) -> None:
    """Add the web app's routes to `app` (its middleware is `security.pages_middleware`, listed by the app)."""
    app[DEPS] = deps
    app[JINJA] = environment()
    app.add_routes(ROUTES)
    app.cleanup_ctx.append(notifications.hub_context(deps))
    app.on_response_prepare.append(security_headers)
