"""A pytest plugin that stops tests from reaching the network: only loopback and Unix sockets may connect.

Any TCP connect to another address raises `NetworkBlockedError` at the call site and is also recorded, so the
test fails even when a library catches the error and retries or wraps it (the openai client does both). This
is how the suite guarantees it never calls a real model. `expect_blocked()` is for tests of the guard itself.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

__all__ = ["NetworkBlockedError", "expect_blocked"]

_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex
_violations: list[str] = []
_expected: list[list[str]] = []


class NetworkBlockedError(OSError):
    """A test tried to open a TCP connection to a non-loopback address.

    An OSError, like a refused connection, so that socket.create_connection, asyncio and anyio close the new
    socket as they would after any failed connect (a RuntimeError leaks it, and the ResourceWarning then fails
    an unrelated test). Loudness comes from the recording instead: the test fails whatever the caller does.
    """

    def __init__(self, address: object) -> None:
        super().__init__(f"network guard: tests may not connect to {address!r} (only loopback is allowed)")
        self.address = address


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # drop an IPv6 scope id
    except ValueError:
        return False  # an unresolved host name: refuse rather than guess
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _check(sock: socket.socket, address: Any) -> None:
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
        return
    host = address[0] if isinstance(address, tuple) and address else address
    if isinstance(host, bytes):
        host = host.decode()
    if isinstance(host, str) and _is_loopback(host):
        return
    blocked = NetworkBlockedError(address)
    (_expected[-1] if _expected else _violations).append(str(blocked))
    raise blocked


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self, address)
    _original_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self, address)
    return _original_connect_ex(self, address)


@contextmanager
def expect_blocked() -> Iterator[list[str]]:
    """Inside this block blocked attempts still raise, but are collected in the yielded list instead of
    failing the test."""
    attempts: list[str] = []
    _expected.append(attempts)
    try:
        yield attempts
    finally:
        _expected.remove(attempts)


def pytest_configure(config: pytest.Config) -> None:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign, assignment]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign, assignment]


def pytest_unconfigure(config: pytest.Config) -> None:
    socket.socket.connect = _original_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _original_connect_ex  # type: ignore[method-assign]


def _fail_on_violations() -> None:
    if _violations:
        found = list(_violations)
        _violations.clear()
        pytest.fail("\n".join(found), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        _fail_on_violations()  # the guard's message outranks whatever error the blocked call turned into


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        _fail_on_violations()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        _fail_on_violations()
