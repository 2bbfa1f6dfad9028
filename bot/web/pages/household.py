"""The household page (adults): members with their roles, timezones, languages and linked channels; adding a
member; a one-time invite per member (sign-in link with its QR code, and the chat channels' code); digests. The
owner also renames and removes members and changes their roles (`tools.members`, which checks it)."""

from __future__ import annotations

from datetime import time
from typing import Any

import segno
from aiohttp import web
from markupsafe import Markup

from bot.web.pages.i18n import LANGUAGES
from bot.web.pages.onboarding import timezones
from bot.web.pages.render import VIEWER, html, redirect, texts
from bot.web.pages.security import DEPS
from bot.web.pages.tooling import refusal, row_id
from tools.errors import HouseholdError, ToolRetry
from tools.members import Manager, remove_member, rename_member, set_role
from tools.storage import digests, households, identities
from tools.storage.database import Connection
from tools.storage.web_sessions import SessionMember

_LOCALES = {code for code, _ in LANGUAGES}
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _base(request: web.Request) -> str:
    configured = request.app[DEPS].settings.media.base_url
    return configured.rstrip("/") if configured else f"{request.scheme}://{request.host}"


async def _invite(request: web.Request, conn: Connection, member_id: int, name: str) -> dict[str, Any]:
    viewer: SessionMember = request[VIEWER]
    chat_code = await identities.create_invite(conn, viewer.household_id, member_id)
    web_code = await identities.create_invite(conn, viewer.household_id, member_id)
    link = f"{_base(request)}/join/{web_code}"
    qr = segno.make(link, error="m").svg_inline(scale=4, title=name)
    return {"name": name, "link": link, "qr": Markup(qr), "code": chat_code}  # segno's SVG: no input is echoed raw


async def _page(
    request: web.Request, *, invite: dict[str, Any] | None = None, error: str | None = None, status: int = 400
) -> web.Response:
    viewer: SessionMember = request[VIEWER]
    async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
        members = await households.members(conn, viewer.household_id)
        channels = await identities.linked_channels(conn, viewer.household_id)
        schedules = await digests.schedules(conn, viewer.household_id)
    return html(
        request,
        "household.html",
        status=status if error else 200,
        members=members,
        channels=channels,
        schedules={s.kind: s for s in schedules},
        invite=invite,
        error=error,
        welcome="welcome" in request.query,
        timezones=timezones(),
        languages=LANGUAGES,
        weekdays=_WEEKDAYS,
    )


async def household_page(request: web.Request) -> web.Response:
    return await _page(request)


def _text(form: Any, name: str, default: str = "") -> str:
    value = form.get(name, default)
    return value.strip() if isinstance(value, str) else default


async def add_member(request: web.Request) -> web.Response:
    viewer: SessionMember = request[VIEWER]
    form = await request.post()
    role = _text(form, "role", "adult")
    locale = _text(form, "locale", "en")
    if role not in ("adult", "child") or locale not in _LOCALES:
        raise web.HTTPBadRequest(reason="Unknown role or language")
    name = _text(form, "name")
    try:
        async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
            member_id, _ = await households.add_member(
                conn, viewer.household_id, name, timezone=_text(form, "timezone", "UTC"), locale=locale, role=role
            )
            invite = await _invite(request, conn, member_id, name)
    except HouseholdError as exc:
        return await _page(request, error=str(exc))
    return await _page(request, invite=invite)


async def invite_member(request: web.Request) -> web.Response:
    viewer: SessionMember = request[VIEWER]
    member_id = row_id(request, "member_id")
    async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
        found = {m.id: m for m in await households.members(conn, viewer.household_id)}
        if member_id not in found:
            raise web.HTTPNotFound(reason="No such member")
        invite = await _invite(request, conn, member_id, found[member_id].name)
    return await _page(request, invite=invite)


async def update_member(request: web.Request) -> web.Response:
    """An adult changes a member's timezone and language; the owner also their role."""
    viewer: SessionMember = request[VIEWER]
    member_id = row_id(request, "member_id")
    form = await request.post()
    role = _text(form, "role") or None
    locale = _text(form, "locale", "en")
    if role not in (None, "adult", "child") or locale not in _LOCALES:
        raise web.HTTPBadRequest(reason="Unknown role or language")
    try:
        async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
            current = {m.id: m for m in await households.members(conn, viewer.household_id)}.get(member_id)
            if current is None:
                raise web.HTTPNotFound(reason="No such member")
            if role is not None and role != current.role:
                await set_role(conn, viewer.household_id, _manager(viewer), member_id, role)
            await households.update_member(
                conn, viewer.household_id, member_id, timezone=_text(form, "timezone"), locale=locale
            )
    except HouseholdError as exc:
        return await _page(request, error=str(exc))
    except ToolRetry as exc:
        return await _page(request, error=refusal(request, exc)[1], status=refusal(request, exc)[0])
    return redirect("/household")


def _manager(viewer: SessionMember) -> Manager:
    return Manager(viewer.role, viewer.user_id)


async def rename(request: web.Request) -> web.Response:
    """The owner gives a member another name."""
    viewer: SessionMember = request[VIEWER]
    member_id = row_id(request, "member_id")
    name = _text(await request.post(), "name")
    try:
        async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
            await rename_member(conn, viewer.household_id, _manager(viewer), member_id, name)
    except HouseholdError as exc:
        return await _page(request, error=str(exc))
    except ToolRetry as exc:
        status, text = refusal(request, exc)
        return await _page(request, error=text, status=status)
    return redirect("/household")


async def remove(request: web.Request) -> web.Response:
    """The owner removes a member, once their name is typed to confirm: their private rows go, their household
    entries stay as a former member's."""
    viewer: SessionMember = request[VIEWER]
    member_id = row_id(request, "member_id")
    typed = _text(await request.post(), "confirm")
    try:
        async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
            found = {m.id: m for m in await households.members(conn, viewer.household_id)}.get(member_id)
            if found is not None and typed.lower() != found.name.lower():
                return await _page(request, error=texts(request)("household.remove_confirm"))
            await remove_member(conn, viewer.household_id, _manager(viewer), member_id)
    except ToolRetry as exc:
        status, text = refusal(request, exc)
        return await _page(request, error=text, status=status)
    return redirect("/household")


def _clock(value: str) -> time:
    try:
        return time.fromisoformat(value).replace(second=0, microsecond=0)
    except ValueError:
        raise web.HTTPBadRequest(reason=f"{value!r} is not a time like 08:00") from None


async def update_digests(request: web.Request) -> web.Response:
    viewer: SessionMember = request[VIEWER]
    form = await request.post()
    try:
        day = int(_text(form, "monthly_day", "1"))
        weekday = _WEEKDAYS.index(_text(form, "weekly_weekday", "mon")) + 1
    except ValueError:
        raise web.HTTPBadRequest(reason="Unknown day") from None
    changes: dict[str, dict[str, Any]] = {
        "monthly": {"day_of_month": day, "at_time": _clock(_text(form, "monthly_time", "08:00"))},
        "weekly": {"weekday": weekday, "at_time": _clock(_text(form, "weekly_time", "08:00"))},
        "morning": {"at_time": _clock(_text(form, "morning_time", "07:00"))},
    }
    try:
        async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
            for kind, fields in changes.items():
                await digests.configure(conn, viewer.household_id, kind, enabled=f"{kind}_on" in form, **fields)
    except ValueError as exc:
        raise web.HTTPBadRequest(reason=str(exc)) from None
    return redirect("/household")
