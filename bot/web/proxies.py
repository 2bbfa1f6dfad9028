"""The scheme the browser used, as a trusted reverse proxy that terminates TLS tells it.

The web process speaks plain HTTP; behind such a proxy every request arrives as `http`, while the browser's
`Origin` is `https://…` and its cookies should be `Secure`. A request from a configured proxy address
(`WEB_TRUSTED_PROXIES`) is handled with the scheme of its `Forwarded: proto=` (RFC 7239) or `X-Forwarded-Proto`
header; from any other peer these headers are ignored, since anyone can send them.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from ipaddress import IPv4Network, IPv6Network

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

_SCHEMES = ("http", "https")


def forwarded_scheme(trusted: Sequence[IPv4Network | IPv6Network]) -> Middleware:
    """Middleware (first in the chain) that gives a trusted proxy's requests the scheme it forwarded."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if trusted and _is_trusted(request.remote, trusted):
            scheme = _forwarded_proto(request)
            if scheme is not None and scheme != request.scheme:
                request = request.clone(scheme=scheme)
        return await handler(request)

    return middleware


def _is_trusted(remote: str | None, trusted: Sequence[IPv4Network | IPv6Network]) -> bool:
    try:
        peer = ipaddress.ip_address(remote or "")
    except ValueError:  # a Unix socket, or no peer address at all
        return False
    if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
        peer = peer.ipv4_mapped
    return any(peer in network for network in trusted)


def _forwarded_proto(request: web.Request) -> str | None:
    """The scheme the nearest proxy reports (the last entry: a proxy appends its own), `None` if it reports none.
    X-Forwarded-Proto first: the proxies that set it (nginx, Caddy, Traefik) replace what the client sent, while
    many pass a client's `Forwarded` header on untouched."""
    if "X-Forwarded-Proto" in request.headers:
        proto: str | None = request.headers["X-Forwarded-Proto"].rpartition(",")[2]
    elif request.forwarded:
        proto = request.forwarded[-1].get("proto")
    else:
        proto = None
    proto = (proto or "").strip().lower()
    return proto if proto in _SCHEMES else None


def client_address(request: web.Request, trusted: Sequence[IPv4Network | IPv6Network]) -> str:
    """The address of the client a request comes from: the peer, or — for a request from a trusted proxy — the
    address that proxy appended to X-Forwarded-For (the last entry: earlier ones the client may have written)."""
    peer = request.remote or ""
    if trusted and _is_trusted(peer, trusted):
        forwarded = request.headers.get("X-Forwarded-For", "").rpartition(",")[2].strip()
        if forwarded:
            return forwarded
    return peer
