"""A lean HTTP/1.1 load generator for the acknowledgement benchmark: non-blocking sockets on one epoll, requests
built before the clock starts, one keep-alive connection per concurrent request.

The load generator shares the 2-core machine with the server under test, so every microsecond it spends per
request is taken from the server and counted in the server's figure. This one runs no event loop during a burst:
it writes prepared bytes, then waits on epoll and reads a status line and a `Content-Length` body per connection
(~25 µs per request against ~50 µs for the same work as asyncio protocols). It is the sender a webhook provider
is: connections kept open, requests written at once. A burst blocks the calling thread, which in the benchmark
process has nothing else to do meanwhile.
"""

from __future__ import annotations

import errno
import gc
import json
import select
import socket
import time
from typing import Any

Result = tuple[float, str | None]  # (milliseconds from write to the whole response, error or None)

TIMEOUT_S = 30.0  # a response not read by then is an error, not a hang


def post(path: str, body: dict[str, Any], headers: dict[str, str]) -> bytes:
    """A `POST` with a JSON body, as bytes on the wire."""
    data = json.dumps(body).encode()
    head = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    head += [f"Content-Length: {len(data)}", *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + data


def settle_heap() -> None:
    """Collect now and freeze what is left. The benchmark process holds the harness's ~300k long-lived objects; its
    first full collection (~270 ms measured) otherwise lands inside a burst and counts as the server's latency."""
    gc.collect()
    gc.freeze()


class _Exchange:
    """One request on one connection: its bytes still to write, what came back, and when it started."""

    __slots__ = ("sock", "request", "started", "buffer", "result")

    def __init__(self, sock: socket.socket, request: bytes, started: float) -> None:
        self.sock, self.request, self.started = sock, request, started
        self.buffer = bytearray()
        self.result: Result | None = None

    def read(self, expect: int) -> None:
        """Read what the socket has; sets `result` once the response is whole (or the connection failed)."""
        try:
            chunk = self.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError as exc:
            self.fail(f"{type(exc).__name__}: {exc}")
            return
        if not chunk:
            self.fail("connection closed by the server")
            return
        self.buffer += chunk
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return
        head = bytes(self.buffer[:end]).decode("latin-1").split("\r\n")
        length = 0
        for line in head[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
        if len(self.buffer) < end + 4 + length:
            return
        finished = time.perf_counter()
        status = int(head[0].split()[1])
        body = bytes(self.buffer[end + 4 : end + 4 + length])
        self.result = ((finished - self.started) * 1000, None if status == expect else f"HTTP {status}: {body[:200]!r}")

    def write(self) -> None:
        """Write the rest of the request."""
        try:
            sent = self.sock.send(self.request)
        except BlockingIOError:
            return
        except OSError as exc:
            self.fail(f"write: {type(exc).__name__}: {exc}")
            return
        self.request = self.request[sent:]

    def fail(self, error: str) -> None:
        self.result = ((time.perf_counter() - self.started) * 1000, error)


def _closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _connected(host: str, port: int) -> socket.socket:
    sock = socket.create_connection((host, port))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


class Load:
    """`concurrency` connections to host:port, each carrying one request of every burst."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._sockets: list[socket.socket] = []

    def open(self, concurrency: int) -> None:
        self._sockets = [_connected(self.host, self.port) for _ in range(concurrency)]

    def close(self) -> None:
        for sock in self._sockets:
            sock.close()
        self._sockets = []

    def burst(self, requests: list[bytes], *, expect: int) -> list[Result]:
        """Write every request at once (one per connection, reopening one the server closed) and time each."""
        assert len(requests) <= len(self._sockets)
        for index, sock in enumerate(self._sockets[: len(requests)]):
            if _closed_by_peer(sock):
                sock.close()
                self._sockets[index] = _connected(self.host, self.port)
        exchanges = []
        for sock, request in zip(self._sockets, requests, strict=False):
            exchange = _Exchange(sock, request, time.perf_counter())
            exchange.write()
            exchanges.append(exchange)
        _drive(exchanges, expect)
        return [exchange.result for exchange in exchanges if exchange.result is not None]

    def burst_on_new_connections(self, requests: list[bytes], *, expect: int) -> list[Result]:
        """Each request on a connection opened for it, timed from the connect (a sender with no open connection)."""
        exchanges = []
        for request in requests:
            started = time.perf_counter()
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setblocking(False)
            exchange = _Exchange(sock, request, started)
            code = sock.connect_ex((self.host, self.port))
            if code not in (0, errno.EINPROGRESS):
                exchange.fail(f"connect: {errno.errorcode.get(code, code)}")
            exchanges.append(exchange)
        try:
            _drive(exchanges, expect)
        finally:
            for exchange in exchanges:
                exchange.sock.close()
        return [exchange.result for exchange in exchanges if exchange.result is not None]


def _drive(exchanges: list[_Exchange], expect: int) -> None:
    """Run the exchanges on one epoll until each has its result: write what is still unwritten (a new connection's
    whole request, once it is connected), then read the response."""
    poller = select.epoll()
    waiting: dict[int, _Exchange] = {}
    try:
        for exchange in exchanges:
            if exchange.result is None:
                waiting[exchange.sock.fileno()] = exchange
                poller.register(exchange.sock.fileno(), select.EPOLLOUT if exchange.request else select.EPOLLIN)
        deadline = time.monotonic() + TIMEOUT_S
        while waiting and (left := deadline - time.monotonic()) > 0:
            for fd, events in poller.poll(left):
                exchange = waiting[fd]
                if exchange.request and events & select.EPOLLOUT:  # connected, or failed to connect
                    code = exchange.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    exchange.fail(f"connect: {errno.errorcode.get(code, code)}") if code else exchange.write()
                    if not exchange.request and exchange.result is None:
                        poller.modify(fd, select.EPOLLIN)
                else:
                    exchange.read(expect)
                if exchange.result is not None:
                    poller.unregister(fd)
                    del waiting[fd]
        for exchange in waiting.values():
            exchange.fail(f"no response within {TIMEOUT_S:.0f} s")
    finally:
        poller.close()
