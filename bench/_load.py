"""A lean HTTP/1.1 load generator for the acknowledgement benchmark: non-blocking sockets on one epoll, requests
built before the clock starts, one keep-alive connection per concurrent request.

The load generator shares the 2-core machine with the server under test, so every microsecond it spends per
request is taken from the server and counted in the server's figure. This one runs no event loop during a burst:
it writes prepared bytes, then waits on epoll and reads a status line and a `Content-Length` body per connection
(~30 µs of CPU per request, building the requests included, against ~50 µs as asyncio protocols). It is the
sender a webhook provider is: connections kept open, requests written at once. A burst blocks the calling thread,
which in the benchmark process has nothing else to do meanwhile.
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
        if self.buffer:
            self.buffer += chunk
            chunk = bytes(self.buffer)
        end = chunk.find(b"\r\n\r\n")
        length = _content_length(chunk[:end]) if end >= 0 else -1
        if length < 0 or len(chunk) < end + 4 + length:
            self.buffer[:] = chunk  # usually the whole response comes in one read; this is the exception
            return
        finished = time.perf_counter()
        status = int(chunk[9:12])  # b"HTTP/1.1 202 Accepted"
        error = None if status == expect else f"HTTP {status}: {chunk[end + 4 : end + 4 + length][:200]!r}"
        self.result = ((finished - self.started) * 1000, error)

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


def _content_length(head: bytes) -> int:
    at = head.lower().find(b"\r\ncontent-length:")
    if at < 0:
        return 0
    value = head[at + 17 :]
    return int(value[: value.find(b"\r\n")] if b"\r\n" in value else value)


def _unusable(sock: socket.socket) -> bool:
    """Closed by the server, or holding bytes no request asked for: not a connection to send the next one on."""
    try:
        sock.recv(1, socket.MSG_PEEK)
    except BlockingIOError:
        return False
    except OSError:
        pass
    return True


def _tuned(sock: socket.socket) -> socket.socket:
    """Non-blocking, and each request leaves at once (no Nagle delay), as with a webhook provider's client."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


class Load:
    """`concurrency` connections to host:port, each carrying one request of every burst."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self._sockets: list[socket.socket] = []
        self._poller = select.epoll()  # the kept connections stay registered for reading: no epoll_ctl per burst

    def open(self, concurrency: int) -> None:
        if self._poller.closed:
            self._poller = select.epoll()
        self._sockets = [self._connect() for _ in range(concurrency)]

    def close(self) -> None:
        for sock in self._sockets:
            sock.close()
        self._sockets = []
        self._poller.close()

    def _connect(self) -> socket.socket:
        sock = _tuned(socket.create_connection((self.host, self.port)))
        self._poller.register(sock, select.EPOLLIN)
        return sock

    def burst(self, requests: list[bytes], *, expect: int) -> list[Result]:
        """Write every request at once (one per connection, reopening one the server closed) and time each."""
        assert len(requests) <= len(self._sockets)
        for index, sock in enumerate(self._sockets[: len(requests)]):
            if _unusable(sock):
                self._poller.unregister(sock)
                sock.close()
                self._sockets[index] = self._connect()
        exchanges = []
        for sock, request in zip(self._sockets, requests, strict=False):
            exchange = _Exchange(sock, request, time.perf_counter())
            exchange.write()
            exchanges.append(exchange)
        _drive(self._poller, exchanges, expect, registered=True)
        return [exchange.result for exchange in exchanges if exchange.result is not None]

    def burst_on_new_connections(self, requests: list[bytes], *, expect: int) -> list[Result]:
        """Each request on a connection opened for it, timed from the connect (a sender with no open connection)."""
        exchanges = []
        for request in requests:
            started = time.perf_counter()
            sock = _tuned(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            exchange = _Exchange(sock, request, started)
            code = sock.connect_ex((self.host, self.port))
            if code not in (0, errno.EINPROGRESS):
                exchange.fail(f"connect: {errno.errorcode.get(code, code)}")
            exchanges.append(exchange)
        poller = select.epoll()
        try:
            _drive(poller, exchanges, expect, registered=False)
        finally:
            poller.close()
            for exchange in exchanges:
                exchange.sock.close()
        return [exchange.result for exchange in exchanges if exchange.result is not None]


def _drive(poller: select.epoll, exchanges: list[_Exchange], expect: int, *, registered: bool) -> None:
    """Run the exchanges on `poller` until each has its result: write what is still unwritten (a new connection's
    whole request, once it is connected), then read the response. With `registered` the sockets are on the poller
    for reading already (kept connections) and stay there; otherwise they are added, and removed once done."""
    waiting: dict[int, _Exchange] = {}
    for exchange in exchanges:
        if exchange.result is None:
            fd = exchange.sock.fileno()
            waiting[fd] = exchange
            if not registered:
                poller.register(fd, select.EPOLLOUT)
            elif exchange.request:  # a kept connection whose request did not fit its socket's buffer at once
                poller.modify(fd, select.EPOLLIN | select.EPOLLOUT)
    deadline = time.monotonic() + TIMEOUT_S
    while waiting and (left := deadline - time.monotonic()) > 0:
        for fd, events in poller.poll(left):
            exchange = waiting.get(fd)
            if exchange is None:  # a kept connection outside this burst, closed by the server: no more events
                poller.modify(fd, 0)  # (`Load.burst` finds it unusable and replaces it before using it again)
                continue
            if exchange.request and events & select.EPOLLOUT:  # connected, or failed to connect
                code = exchange.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if code:
                    exchange.fail(f"connect: {errno.errorcode.get(code, code)}")
                else:
                    exchange.write()
                if not exchange.request and exchange.result is None:
                    poller.modify(fd, select.EPOLLIN)
            else:
                exchange.read(expect)
            if exchange.result is not None:
                del waiting[fd]
                if not registered:
                    poller.unregister(fd)
    for exchange in waiting.values():
        exchange.fail(f"no response within {TIMEOUT_S:.0f} s")
