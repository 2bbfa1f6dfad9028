"""The Threema Gateway's HTTP API in end-to-end mode: public keys (cached), send_e2e, blob upload and download."""

from __future__ import annotations

import io
import re
from typing import Any

import aiohttp
import structlog
from redis.exceptions import RedisError

from bot.channels.errors import GatewayError
from bot.channels.threema.crypto import KEY_BYTES, public_key_of
from engine.channel_settings import ThreemaSettings

log = structlog.get_logger()

_HEX_KEY = re.compile(rf"[0-9a-fA-F]{{{KEY_BYTES * 2}}}")
_BLOB_TIMEOUT_FACTOR = 6  # blobs are megabytes where the other calls are bytes
_RETRY_AFTER_DEFAULT_S = 30.0


class GatewayClient:
    """One Gateway ID's view of the API. The HTTP session is opened on first use, in the running loop."""

    def __init__(self, settings: ThreemaSettings, redis: Any = None) -> None:
        if not settings.enabled:
            raise ValueError("THREEMA_GATEWAY_ID, THREEMA_SECRET and THREEMA_PRIVATE_KEY must all be set")
        assert settings.gateway_id and settings.secret and settings.private_key
        self.identity = settings.gateway_id
        self.secret = settings.secret.get_secret_value()
        self.private_key = bytes.fromhex(settings.private_key.get_secret_value())
        self.own_public_key = public_key_of(self.private_key)
        self._base = settings.base_url.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=settings.timeout_s)
        self._blob_timeout = aiohttp.ClientTimeout(total=settings.timeout_s * _BLOB_TIMEOUT_FACTOR)
        self._key_ttl_s = settings.pubkey_ttl_s
        self._redis = redis
        self._session: aiohttp.ClientSession | None = None

    @property
    def _auth(self) -> dict[str, str]:
        return {"from": self.identity, "secret": self.secret}

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(raise_for_status=False)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    async def public_key(self, threema_id: str) -> bytes:
        """The ID's public key, from the cache (the normal path) or the Gateway (`GET /pubkeys/{id}`)."""
        cache_key = f"faa:threema:pubkey:{threema_id}"
        cached = await self._cache_get(cache_key)
        if cached is not None and _HEX_KEY.fullmatch(cached):
            return bytes.fromhex(cached)
        body = await self._request("GET", f"/pubkeys/{threema_id}", "public key lookup", params=self._auth)
        key_hex = body.decode(errors="replace").strip()
        if _HEX_KEY.fullmatch(key_hex) is None:
            raise GatewayError("the Gateway sent a malformed public key", status=502)
        await self._cache_set(cache_key, key_hex.lower())
        return bytes.fromhex(key_hex)

    async def send_e2e(self, to: str, nonce: bytes, box: bytes) -> str:
        """Hand one encrypted message to the Gateway; its message id."""
        form = {**self._auth, "to": to, "nonce": nonce.hex(), "box": box.hex()}
        body = await self._request("POST", "/send_e2e", "send_e2e", data=form)
        return body.decode(errors="replace").strip()

    async def upload_blob(self, data: bytes) -> str:
        """Store an encrypted blob; its hex id."""
        form = aiohttp.FormData()
        form.add_field("blob", io.BytesIO(data), filename="blob", content_type="application/octet-stream")
        body = await self._request(
            "POST", "/upload_blob", "upload_blob", params=self._auth, data=form, timeout=self._blob_timeout
        )
        return body.decode(errors="replace").strip()

    async def download_blob(self, blob_id: str, *, max_bytes: int) -> bytes:
        """An encrypted blob's bytes (`GET /blobs/{id}`), refusing more than `max_bytes`."""
        return await self._request(
            "GET",
            f"/blobs/{blob_id}",
            "blob download",
            params=self._auth,
            timeout=self._blob_timeout,
            max_bytes=max_bytes,
        )

    async def _request(
        self,
        method: str,
        path: str,
        what: str,
        *,
        timeout: aiohttp.ClientTimeout | None = None,
        max_bytes: int = 1024 * 1024,
        **kwargs: Any,
    ) -> bytes:
        try:
            async with self._http().request(
                method, self._base + path, timeout=timeout or self._timeout, **kwargs
            ) as response:
                if response.status != 200:
                    raise _status_error(what, response)
                body = await response.content.read(max_bytes + 1)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise GatewayError(f"{what}: Gateway unreachable ({type(exc).__name__})") from exc
        if len(body) > max_bytes:
            raise GatewayError(f"{what}: larger than {max_bytes} bytes", status=413)
        return body

    async def _cache_get(self, key: str) -> str | None:
        if self._redis is None:
            return None
        try:
            value = await self._redis.get(key)
        except (RedisError, OSError) as exc:
            log.warning("threema.pubkey.cache_failed", error=type(exc).__name__)
            return None
        return value.decode() if isinstance(value, bytes) else value

    async def _cache_set(self, key: str, value: str) -> None:
        if self._redis is None:
            return
        try:
            await self._redis.set(key, value, ex=self._key_ttl_s)
        except (RedisError, OSError) as exc:
            log.warning("threema.pubkey.cache_failed", error=type(exc).__name__)


_REASONS = {
    400: "bad request (unknown recipient or invalid fields)",
    401: "wrong Gateway ID or secret",
    402: "no credits left",
    404: "unknown Threema ID or blob",
    413: "too large",
    429: "rate limited",
}


def _status_error(what: str, response: aiohttp.ClientResponse) -> GatewayError:
    status = response.status
    retry_after = None
    if status == 429:
        try:
            retry_after = float(response.headers.get("Retry-After", ""))
        except ValueError:
            retry_after = _RETRY_AFTER_DEFAULT_S
    reason = _REASONS.get(status, "Gateway error")
    return GatewayError(f"{what}: HTTP {status}, {reason}", status=status, retry_after_s=retry_after)
