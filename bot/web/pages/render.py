"""Rendering the web app's pages: one Jinja2 environment (autoescaped), the member's language, and error pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web

from bot.web.pages.i18n import Catalog, catalog, language
from tools.storage.web_sessions import SessionMember

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"

VIEWER = web.RequestKey("viewer", SessionMember)
CSRF = web.RequestKey("csrf", str)
JINJA = web.AppKey("jinja", jinja2.Environment)


def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def texts(request: web.Request) -> Catalog:
    """The interface language: the member's locale once signed in, else what the browser asks for."""
    viewer = request.get(VIEWER)
    return catalog(language(viewer.locale if viewer is not None else request.headers.get("Accept-Language", "")))


def html(request: web.Request, template: str, *, status: int = 200, **context: Any) -> web.Response:
    t = texts(request)
    body = (
        request.app[JINJA]
        .get_template(template)
        .render(t=t, lang=t.lang, viewer=request.get(VIEWER), csrf=request.get(CSRF, ""), path=request.path, **context)
    )
    return web.Response(text=body, content_type="text/html", status=status, headers={"Cache-Control": "no-store"})


def error_page(request: web.Request, status: int, reason: str) -> web.Response:
    return html(request, "error.html", status=status, status_code=status, reason=reason)


def redirect(location: str) -> web.Response:
    """303 See Other: after a form, the browser GETs `location` (a path of this site)."""
    return web.Response(status=303, headers={"Location": location})
