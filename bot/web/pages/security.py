"""Sessions, CSRF and security headers for the web app's routes.

A route's name says who may use it: `public:*` anyone (setup, sign-in), `page:*` a signed-in member, `adult:*`
an adult (owner or adult role). The session is an HttpOnly, SameSite=Lax cookie holding a random token whose hash
is a `web_sessions` row; every POST must carry the CSRF token (form field `csrf` or header `X-CSRF-Token`) and,
when the browser sends one, an Origin of this site. The CSRF token is derived from the session token (signed-in)
or is the value of an HttpOnly, SameSite=Strict cookie of its own (anonymous forms: double submit).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable

import structlog
from aiohttp import web

from bot.web.pages.render import CSRF, VIEWER, error_page
from engine.deps import Deps
from tools.storage import web_sessions
from tools.storage.web_sessions import SESSION_TTL

log = structlog.get_logger()

SESSION_COOKIE = "faa_session"
CSRF_COOKIE = "faa_csrf"
DEPS = web.AppKey("pages_deps", Deps)
SESSION_TOKEN = web.RequestKey("session_token", str)
_NEW_CSRF = web.RequestKey("new_csrf", str)

CONTENT_SECURITY_POLICY = (
    # blob: for the chat's previews of a photo or voice note before it is sent (the browser's own object URLs).
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; "
    "connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    # Setup and sign-in links carry their code in the path: never hand it to another site. (Not no-referrer:
    # with it, browsers send "Origin: null" on this site's own forms.)
    "Referrer-Policy": "same-origin",
}


def csrf_for_session(token: str) -> str:
    return hmac.new(token.encode(), b"faa-csrf", hashlib.sha256).hexdigest()


def set_session(response: web.StreamResponse, request: web.Request, token: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(SESSION_TTL.total_seconds()),
        path="/",
        httponly=True,
        samesite="Lax",
        secure=request.secure,
    )


def clear_session(response: web.StreamResponse) -> None:
    response.del_cookie(SESSION_COOKIE, path="/")


def _access(request: web.Request) -> str | None:
    route = request.match_info.route
    name = route.name or ""
    kind, _, _ = name.partition(":")
    return kind if kind in ("public", "page", "adult") else None


def _json(request: web.Request) -> bool:
    """Whether the route answers JSON (`/app/…`, for scripts and the chat page's own requests): its errors too."""
    return request.path.startswith("/app/")


def _same_origin(request: web.Request) -> bool:
    origin = request.headers.get("Origin")
    return origin is None or origin == f"{request.scheme}://{request.host}"


async def _given_csrf(request: web.Request) -> str:
    header = request.headers.get("X-CSRF-Token")
    if header is not None:
        return header
    if request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        value = (await request.post()).get("csrf")
        return value if isinstance(value, str) else ""
    return ""


async def _viewer(request: web.Request) -> None:
    token = request.cookies.get(SESSION_COOKIE)
    if not token or len(token) > 200:
        return
    async with request.app[DEPS].db.unscoped() as conn:
        member = await web_sessions.resolve(conn, token)
    if member is not None:
        request[VIEWER] = member
        request[SESSION_TOKEN] = token
        request[CSRF] = csrf_for_session(token)


def _anonymous_csrf(request: web.Request) -> None:
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if len(cookie) < 32:
        cookie = request[_NEW_CSRF] = secrets.token_urlsafe(32)
    request[CSRF] = cookie


@web.middleware
async def pages_middleware(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Session, access and CSRF for the web app's routes; their errors as HTML pages, or as JSON for the JSON
    routes (`/app/…`)."""
    access = _access(request)
    if access is None:
        return await handler(request)
    try:
        await _viewer(request)
        if VIEWER not in request:
            _anonymous_csrf(request)
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            given = await _given_csrf(request)
            if not (_same_origin(request) and hmac.compare_digest(given.encode(), request[CSRF].encode())):
                log.warning("web.csrf.refused", path=request.path)
                raise web.HTTPForbidden(reason="CSRF check failed")
        if access != "public" and VIEWER not in request:
            if request.method == "GET" and not _json(request):
                raise web.HTTPSeeOther("/login")
            raise web.HTTPUnauthorized(reason="Sign in first")
        if access == "adult" and not request[VIEWER].adult:
            raise web.HTTPForbidden(reason="Only adults of the household can open this page")
        response = await handler(request)
    except web.HTTPException as exc:
        if isinstance(exc, web.HTTPRedirection):
            response = web.Response(status=exc.status, headers={"Location": exc.headers.get("Location", "/")})
        elif _json(request):
            code = exc.reason.lower().replace(" ", "_")
            response = web.json_response({"error": {"code": code, "message": exc.reason}}, status=exc.status)
            for name in ("Retry-After", "Allow"):
                if name in exc.headers:
                    response.headers[name] = exc.headers[name]
        else:
            response = error_page(request, exc.status, exc.reason)
            if "Retry-After" in exc.headers:
                response.headers["Retry-After"] = exc.headers["Retry-After"]
    if _NEW_CSRF in request and not response.prepared:
        response.set_cookie(
            CSRF_COOKIE, request[_NEW_CSRF], path="/", httponly=True, samesite="Strict", secure=request.secure
        )
    return response


async def security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: the web app's security headers on every response (media keep their own CSP)."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
