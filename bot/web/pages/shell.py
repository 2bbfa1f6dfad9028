"""The installable app's shell: the favicon, the web app manifest, the service worker (served from the site's root
so that it may control every page) and the page it shows offline."""

from __future__ import annotations

from aiohttp import web

from bot.web.pages.render import STATIC, html

_DAY = "public, max-age=86400"


async def favicon(request: web.Request) -> web.FileResponse:
    return web.FileResponse(STATIC / "favicon.ico", headers={"Cache-Control": _DAY, "Content-Type": "image/x-icon"})


async def manifest(request: web.Request) -> web.FileResponse:
    return web.FileResponse(
        STATIC / "manifest.webmanifest",
        headers={"Cache-Control": _DAY, "Content-Type": "application/manifest+json"},
    )


async def service_worker(request: web.Request) -> web.FileResponse:
    # Never cached by HTTP: a new version of the app reaches the browser at its next visit.
    return web.FileResponse(
        STATIC / "sw.js", headers={"Cache-Control": "no-cache", "Content-Type": "text/javascript; charset=utf-8"}
    )


async def offline_page(request: web.Request) -> web.Response:
    """What the service worker shows when a page cannot be loaded; it names nobody (it is cached for anyone)."""
    response = html(request, "offline.html")
    response.headers["Cache-Control"] = "no-cache"
    return response
