"""Where a push may go: a subscription's endpoint is a URL the browser's push service made, and the worker posts to
it, so it must lie on one of the push services WEBPUSH_SERVICES lists (never on an address a page made up)."""

from __future__ import annotations

from urllib.parse import urlsplit

MAX_ENDPOINT_CHARS = 2048


def allowed(endpoint: str, services: list[str]) -> bool:
    """Whether the endpoint is on one of the services: URL prefixes; `https://*.example.com/` admits subdomains."""
    if len(endpoint) > MAX_ENDPOINT_CHARS or any(ch.isspace() for ch in endpoint):
        return False
    url = urlsplit(endpoint)
    if url.scheme not in ("https", "http") or not url.hostname or url.username or url.password:
        return False
    return any(_matches(url.scheme, url.netloc.lower(), url.path, service) for service in services)


def _matches(scheme: str, netloc: str, path: str, service: str) -> bool:
    prefix = urlsplit(service)
    if prefix.scheme != scheme:
        return False
    wanted = prefix.netloc.lower()
    host_ok = netloc.endswith(wanted[1:]) and netloc != wanted[2:] if wanted.startswith("*.") else netloc == wanted
    return host_ok and path.startswith(prefix.path or "/")
