"""The network axis: deny egress at the socket level, with an allow-list of names and CIDRs.

Patched while active: ``socket.socket.connect``, ``connect_ex``, ``sendto``,
``socket.create_connection`` and ``socket.getaddrinfo``. A refused destination raises
:class:`NetworkDeniedError` (an ``OSError``) naming ``host:port`` *before* any packet is sent.

Rules, in order: ``AF_UNIX`` sockets are always allowed (local IPC, asyncio's self-pipe);
loopback (``localhost``, ``127.0.0.0/8``, ``::1``) is allowed unless ``allow_loopback=False``
(``--deny-loopback``); a destination is allowed when its host name equals an allowed name (case
insensitive, exact), or its IP lies in an allowed address/CIDR, or its IP was returned by
``getaddrinfo`` for an allowed name. ``getaddrinfo(None, ...)`` (passive bind) is allowed;
``bind``/``listen`` are never restricted.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

from harn_mcp_mock.errors import NetworkDeniedError
from harn_mcp_mock.testbench import _guard

_REAL_CONNECT = socket.socket.connect
_REAL_CONNECT_EX = socket.socket.connect_ex
_REAL_SENDTO = socket.socket.sendto
_REAL_CREATE_CONNECTION = socket.create_connection
_REAL_GETADDRINFO = socket.getaddrinfo

IpNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


class NetworkPolicy:
    def __init__(self, allow_hosts: Iterable[str] = (), *, allow_loopback: bool = True) -> None:
        self.names: set[str] = set()
        self.networks: list[IpNetwork] = []
        for item in allow_hosts:
            try:
                self.networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                self.names.add(item.lower().rstrip("."))
        self.allow_loopback = allow_loopback
        self.resolved: set[str] = set()
        self.denied: list[str] = []
        self._patcher = _guard.Patcher()

    def allowed(self, host: str) -> bool:
        name = host.lower().rstrip(".")
        if self.allow_loopback and name == "localhost":
            return True
        if name in self.names:
            return True
        ip = _ip(name)
        if ip is None:
            return False
        if self.allow_loopback and ip.is_loopback:
            return True
        if str(ip) in self.resolved:
            return True
        return any(ip.version == net.version and ip in net for net in self.networks)

    def check(self, host: Any, port: Any) -> None:
        if host is None or host == "":
            return
        text = host.decode() if isinstance(host, bytes) else str(host)
        if not self.allowed(text):
            target = f"{text}:{port}"
            self.denied.append(target)
            raise NetworkDeniedError(text, port)

    def _check_address(self, sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
            self.check(address[0], address[1] if len(address) > 1 else None)

    def install(self) -> None:
        policy, p = self, self._patcher

        def connect(sock: socket.socket, address: Any) -> None:
            policy._check_address(sock, address)
            return _REAL_CONNECT(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            policy._check_address(sock, address)
            return _REAL_CONNECT_EX(sock, address)

        def sendto(sock: socket.socket, data: Any, *args: Any) -> int:
            policy._check_address(sock, args[-1])
            return _REAL_SENDTO(sock, data, *args)

        def create_connection(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
            policy.check(address[0], address[1])
            return _REAL_CREATE_CONNECTION(address, *args, **kwargs)

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            policy.check(host, port)
            infos = _REAL_GETADDRINFO(host, port, *args, **kwargs)
            if host is not None:
                for info in infos:
                    policy.resolved.add(str(info[4][0]))
            return infos

        p.set(socket.socket, "connect", connect)
        p.set(socket.socket, "connect_ex", connect_ex)
        p.set(socket.socket, "sendto", sendto)
        p.set(socket, "create_connection", create_connection)
        p.set(socket, "getaddrinfo", getaddrinfo)

    def restore(self) -> None:
        self._patcher.restore()
