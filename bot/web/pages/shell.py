"""The installable app's shell: its static assets, the favicon, the web app manifest, the service worker (served
from the site's root so that it may control every page) and the page it shows offline.

The assets are a few kilobytes, read once and served from memory with an ETag: nothing holds a file open while a
browser that navigated away drops the request."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from aiohttp import web

from bot.web.pages.render import STATIC, html

_DAY = "public, max-age=86400"
_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".ico": "image/x-icon",
    ".png": "image/png",
    ".webmanifest": "application/manifest+json",
}


@dataclass(frozen=True)
class _Asset:
    body: bytes
    content_type: str
    etag: str


def _read() -> dict[str, _Asset]:
    assets = {}
    for path in sorted(STATIC.iterdir()):
        if path.suffix in _TYPES:
            body = path.read_bytes()
            assets[path.name] = _Asset(body, _TYPES[path.suffix], hashlib.sha256(body).hexdigest()[:20])
    return assets


_ASSETS = _read()


def _serve(request: web.Request, name: str, cache_control: str) -> web.Response:
    asset = _ASSETS.get(name)
    if asset is None:
        raise web.HTTPNotFound()
    headers = {"Cache-Control": cache_control, "ETag": f'"{asset.etag}"'}
    if any(tag.value in (asset.etag, "*") for tag in request.if_none_match or ()):
        return web.Response(status=304, headers=headers)
    return web.Response(body=asset.body, headers={**headers, "Content-Type": asset.content_type})


async def static_asset(request: web.Request) -> web.Response:
    # Revalidated at every visit (a 304 when unchanged), so a new version of the app's CSS and scripts is never stale.
    return _serve(request, request.match_info["name"], "no-cache")


async def favicon(request: web.Request) -> web.Response:
    return _serve(request, "favicon.ico", _DAY)


async def manifest(request: web.Request) -> web.Response:
    return _serve(request, "manifest.webmanifest", _DAY)


async def service_worker(request: web.Request) -> web.Response:
    # Never cached by HTTP: a new version of the app reaches the browser at its next visit.
    return _serve(request, "sw.js", "no-cache")


async def offline_page(request: web.Request) -> web.Response:
    """What the service worker shows when a page cannot be loaded; it names nobody (it is cached for anyone)."""
    response = html(request, "offline.html")
    response.headers["Cache-Control"] = "no-cache"
    return response
