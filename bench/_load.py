"""A lean HTTP/1.1 load generator for the acknowledgement benchmark: raw asyncio protocols, requests built before
the clock starts, one keep-alive connection per concurrent request.

A general HTTP client spends more CPU per request than the server under test does on this 2-core machine, and a
burst's last responses then wait for the client, not the server. This one only writes prepared bytes and reads a
status line and a `Content-Length` body. It is the sender a webhook provider is: connections kept open, requests
written at once.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from typing import Any, cast

Result = tuple[float, str | None]  # (milliseconds from write to the whole response, error or None)


def post(path: str, body: dict[str, Any], headers: dict[str, str]) -> bytes:
    """A `POST` with a JSON body, as bytes on the wire."""
    data = json.dumps(body).encode()
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    head += [f"Content-Length: {len(data)}", *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


class _Connection(asyncio.Protocol):
    """One keep-alive connection with at most one request in flight."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._pending: asyncio.Future[tuple[float, int, bytes]] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports do not subclass asyncio's

    def send(self, request: bytes) -> asyncio.Future[tuple[float, int, bytes]]:
        assert self.transport is not None and self._pending is None
        self._pending = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return self._pending

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0 or self._pending is None:
            return
        head = bytes(self._buffer[:end]).decode("latin-1").split("\r\n")
        fields = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in head[1:])}
        length = int(fields.get("content-length", "0"))
        if len(self._buffer) < end + 4 + length:
            return
        body = bytes(self._buffer[end + 4 : end + 4 + length])
        del self._buffer[: end + 4 + length]
        pending, self._pending = self._pending, None
        pending.set_result((time.perf_counter(), int(head[0].split()[1]), body))

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self._pending is not None and not self._pending.done():
            self._pending.set_exception(ConnectionError(f"connection closed: {exc}"))


def settle_heap() -> None:
    """Collect now and freeze what is left. The benchmark process holds the harness's ~300k long-lived objects; its
    first full collection (~270 ms measured) otherwise lands inside a burst and counts as the server's latency."""
    gc.collect()
    gc.freeze()


class Load:
    """`concurrency` connections to host:port, each carrying one request of every burst."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._connections: list[_Connection] = []

    async def _open_one(self) -> _Connection:
        _, protocol = await asyncio.get_running_loop().create_connection(_Connection, self.host, self.port)
        return protocol

    async def open(self, concurrency: int) -> None:
        self._connections = list(await asyncio.gather(*(self._open_one() for _ in range(concurrency))))

    def close(self) -> None:
        for connection in self._connections:
            if connection.transport is not None:
                connection.transport.close()
        self._connections = []

    async def burst(self, requests: list[bytes], *, expect: int) -> list[Result]:
        """Write every request at once (one per connection, reopening one the server closed) and time each."""
        assert len(requests) <= len(self._connections)
        for index, connection in enumerate(self._connections):
            if connection.transport is None:
                self._connections[index] = await self._open_one()
        sent = []
        for connection, request in zip(self._connections, requests, strict=False):
            sent.append((time.perf_counter(), connection.send(request)))
        results: list[Result] = []
        for started, response in sent:
            try:
                finished, status, body = await response
            except ConnectionError as exc:
                results.append(((time.perf_counter() - started) * 1000, str(exc)))
                continue
            error = None if status == expect else f"HTTP {status}: {body[:200]!r}"
            results.append(((finished - started) * 1000, error))
        return results

    async def burst_on_new_connections(self, requests: list[bytes], *, expect: int) -> list[Result]:
        """Each request on a connection opened for it, timed from the connect (a sender with no open connection)."""

        async def one(request: bytes) -> Result:
            started = time.perf_counter()
            try:
                connection = await self._open_one()
                finished, status, body = await connection.send(request)
            except OSError as exc:  # ConnectionError included
                return (time.perf_counter() - started) * 1000, f"{type(exc).__name__}: {exc}"
            assert connection.transport is not None
            connection.transport.close()
            return (finished - started) * 1000, None if status == expect else f"HTTP {status}: {body[:200]!r}"

        return list(await asyncio.gather(*(one(request) for request in requests)))
