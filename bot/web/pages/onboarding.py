"""Getting in: the setup link that creates the household and its first adult, sign-in links (one-time invite
codes, spent by a POST so that link previews cannot use them up), and signing out."""

from __future__ import annotations

from functools import cache
from zoneinfo import available_timezones

from aiohttp import web

from bot.web.pages.attempts import check_login_attempt
from bot.web.pages.i18n import LANGUAGES
from bot.web.pages.render import VIEWER, html, redirect, texts
from bot.web.pages.security import DEPS, SESSION_TOKEN, clear_session, set_session
from tools.errors import HouseholdError
from tools.storage import web_sessions

_LOCALES = {code for code, _ in LANGUAGES}


@cache
def timezones() -> list[str]:
    return sorted(zone for zone in available_timezones() if "/" in zone or zone == "UTC")


def _field(form: dict[str, str] | object, name: str, default: str = "") -> str:
    value = form.get(name, default) if isinstance(form, dict) else default
    return value.strip() if isinstance(value, str) else default


async def setup_page(request: web.Request) -> web.Response:
    if VIEWER in request:
        raise web.HTTPSeeOther("/")
    async with request.app[DEPS].db.unscoped() as conn:
        state = await web_sessions.setup_code_state(conn, request.match_info["code"][:200])
    if state != "open":  # said before the form is filled in, and how to get in instead
        return html(request, "setup.html", status=410, state=state)
    form = {"household": "", "name": "", "timezone": "UTC", "locale": texts(request).lang}
    return _setup_form(request, form)


def _setup_form(
    request: web.Request, form: dict[str, str], error: str | None = None, status: int = 200
) -> web.Response:
    return html(
        request,
        "setup.html",
        status=status,
        state="open",
        form=form,
        error=error,
        timezones=timezones(),
        languages=LANGUAGES,
    )


async def setup_submit(request: web.Request) -> web.Response:
    posted = dict(await request.post())
    form = {
        "household": _field(posted, "household"),
        "name": _field(posted, "name"),
        "timezone": _field(posted, "timezone", "UTC"),
        "locale": _field(posted, "locale", "en"),
    }
    if form["locale"] not in _LOCALES:
        form["locale"] = "en"
    try:
        async with request.app[DEPS].db.unscoped() as conn:
            opened = await web_sessions.setup_household(
                conn,
                request.match_info["code"],
                household=form["household"],
                timezone=form["timezone"],
                member=form["name"],
                locale=form["locale"],
            )
    except HouseholdError as exc:
        return _setup_form(request, form, str(exc), status=400)
    if opened is None:  # spent meanwhile (another tab, another person) or expired
        async with request.app[DEPS].db.unscoped() as conn:
            state = await web_sessions.setup_code_state(conn, request.match_info["code"][:200])
        return html(request, "setup.html", status=410, state=state)
    response = redirect("/household?welcome=1")
    set_session(response, request, opened[1])
    return response


async def join_page(request: web.Request) -> web.Response:
    return html(request, "join.html", code=request.match_info["code"])


async def login_page(request: web.Request) -> web.Response:
    if VIEWER in request:
        raise web.HTTPSeeOther("/")
    return html(request, "login.html", failed=False, limited=False)


async def login_submit(request: web.Request) -> web.Response:
    code = _field(dict(await request.post()), "code")
    try:
        await check_login_attempt(request, code)
    except web.HTTPTooManyRequests as exc:
        response = html(request, "login.html", status=429, failed=False, limited=True)
        response.headers["Retry-After"] = exc.headers["Retry-After"]
        return response
    opened = None
    if 0 < len(code) <= 64:
        async with request.app[DEPS].db.unscoped() as conn:
            opened = await web_sessions.open_session(conn, code)
    if opened is None:
        return html(request, "login.html", status=400, failed=True, limited=False)
    response = redirect("/")
    set_session(response, request, opened[1])
    return response


async def logout(request: web.Request) -> web.Response:
    viewer = request[VIEWER]
    async with request.app[DEPS].db.household(viewer.household_id, viewer.user_id) as conn:
        await web_sessions.close(conn, request[SESSION_TOKEN])
    response = redirect("/login")
    clear_session(response)
    return response
