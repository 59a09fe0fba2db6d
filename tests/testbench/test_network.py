from __future__ import annotations

import socket

import pytest

from harn_mcp_mock.testbench import NetworkDeniedError, Testbench
from harn_mcp_mock.testbench.network import NetworkPolicy

REAL_GETADDRINFO = socket.getaddrinfo


def test_an_outbound_connection_is_refused_before_connecting() -> None:
    bench = Testbench.builder().deny_network().build()
    with bench:
        with pytest.raises(NetworkDeniedError, match=r"192\.0\.2\.1:80") as info:
            socket.create_connection(("192.0.2.1", 80), timeout=1)
        assert isinstance(info.value, OSError)
        with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
            sock.connect(("192.0.2.1", 443))  # an OSError subclass libraries already handle
        with pytest.raises(OSError, match=r"example\.invalid:443"):
            socket.getaddrinfo("example.invalid", 443)
    assert bench.finalize().denied_connections == ["192.0.2.1:80", "192.0.2.1:443", "example.invalid:443"]
    assert socket.getaddrinfo is REAL_GETADDRINFO


def test_loopback_is_allowed_by_default() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        with Testbench.builder().deny_network().build(), socket.create_connection(("127.0.0.1", port)):
            pass


def test_allow_rules_names_cidrs_and_loopback() -> None:
    policy = NetworkPolicy(["github.com", "10.0.0.0/8", "2001:db8::/32"], allow_loopback=False)
    assert policy.allowed("GitHub.com.")
    assert policy.allowed("10.1.2.3")
    assert policy.allowed("2001:db8::1")
    assert not policy.allowed("api.github.com")
    assert not policy.allowed("127.0.0.1")
    assert not policy.allowed("localhost")
    assert NetworkPolicy().allowed("::1")
