"""The harness's side of a confined run's network: Unix sockets that lead to named TCP endpoints.

A confined agent runs in a network namespace of its own, where nothing but loopback exists.
Inside it, a forwarder listens where the agent expects its model endpoint (``127.0.0.1:8765``)
and hands every connection to a Unix socket; the harness listens on that socket here, outside,
and connects to the one endpoint that socket stands for. A socket that stands for a proxy
(:class:`Proxy`) reads an HTTP ``CONNECT host:port`` (or an absolute-form request) first and
connects only to the endpoints it allows; every other destination is refused (``403``) and
remembered, so the run can say what it was denied. An allowed endpoint whose name resolves to
an address of :data:`NEVER_REACHED` (loopback, link-local and cloud metadata, private ranges)
is refused too, unless the operator named it; the proxy connects to the addresses it checked.

Threads, no process: one thread accepts on each socket, two threads copy each connection's
bytes. Everything ends with :meth:`Listener.close` (the run's end) or this process.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

#: The most an HTTP proxy request's head may hold before it is refused.
MAX_HEAD = 16 * 1024
#: Seconds a connection to an endpoint may take.
CONNECT_TIMEOUT = 30.0
CHUNK = 64 * 1024

#: The addresses the proxy never connects to for an endpoint the operator did not name:
#: loopback and unspecified, link-local (cloud metadata: 169.254.169.254, fd00:ec2::254),
#: private and shared ranges (100.100.100.200 is in 100.64/10).
NEVER_REACHED = tuple(
    ipaddress.ip_network(n)
    for n in (
        "127.0.0.0/8", "0.0.0.0/8", "::1/128", "::/128",
        "169.254.0.0/16", "fe80::/10",
        "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7",
    )
)  # fmt: skip


@dataclass(frozen=True)
class Target:
    """One TCP endpoint: a host (name or address) and a port."""

    host: str
    port: int
    #: The addresses to connect to, checked (else the host is resolved on connecting).
    addresses: tuple[str, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


@dataclass(frozen=True)
class Proxy:
    """An HTTP proxy that connects only to ``allowed`` endpoints; of them, only the ``named``
    ones (by the operator) at an address of :data:`NEVER_REACHED`."""

    allowed: frozenset[Target]
    named: frozenset[Target] = frozenset()


@dataclass
class Listener:
    """A Unix socket this process serves for one run; :meth:`close` ends it and its
    connections."""

    path: Path
    to: Target | Proxy
    #: Destinations a proxy refused, in the order first asked for.
    refused: list[str] = field(default_factory=list)
    _sock: socket.socket | None = None
    _conns: set[socket.socket] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _closed: bool = False

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns = list(self._conns)
            self._conns.clear()
            sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        for conn in conns:
            _close(conn)
        with contextlib.suppress(OSError):
            self.path.unlink()

    def _track(self, conn: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._conns.add(conn)
            return True

    def _untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._conns.discard(conn)


def listen(path: Path, to: Target | Proxy, *, mode: int = 0o600) -> Listener:
    """Serve ``path`` (a Unix socket made now) as a way to ``to``, in background threads."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        os.chmod(path, mode)
        sock.listen(64)
    except OSError:
        sock.close()
        raise
    listener = Listener(path, to, _sock=sock)
    threading.Thread(
        target=_accept_loop, args=(listener, sock), name="evals-relay", daemon=True
    ).start()
    return listener


def _accept_loop(listener: Listener, sock: socket.socket) -> None:
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return  # closed
        if not listener._track(conn):
            _close(conn)
            return
        threading.Thread(
            target=_serve, args=(listener, conn), name="evals-relay-conn", daemon=True
        ).start()


def _serve(listener: Listener, conn: socket.socket) -> None:
    upstream: socket.socket | None = None
    try:
        first, tunnel = b"", False
        target = listener.to
        if isinstance(target, Proxy):
            found = _proxy_request(listener, conn, target)
            if found is None:
                return
            target, first, tunnel = found
        try:
            upstream = _connect(target)
        except OSError:
            if isinstance(listener.to, Proxy):
                _reply(conn, b"502 Bad Gateway")
            return
        if not listener._track(upstream):
            return
        if tunnel:
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        if first:
            upstream.sendall(first)
        _splice(conn, upstream)
    except OSError:
        pass
    finally:
        for end in (conn, upstream):
            if end is not None:
                listener._untrack(end)
                _close(end)


def _proxy_request(
    listener: Listener, conn: socket.socket, proxy: Proxy
) -> tuple[Target, bytes, bool] | None:
    """The endpoint a proxy client asks for, the bytes to send it first (an absolute-form
    request rewritten to origin form, or what followed a ``CONNECT``) and whether it is a
    tunnel (``CONNECT``); None when refused (answered already)."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(CHUNK)
        if not chunk:
            return None
        head += chunk
        if len(head) > MAX_HEAD:
            _reply(conn, b"431 Request Header Fields Too Large")
            return None
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3:
        _reply(conn, b"400 Bad Request")
        return None
    method, where, version = parts
    sent = b""
    if method.upper() == "CONNECT":
        target = _host_port(where, 443)
        body_start = head.index(b"\r\n\r\n") + 4
        sent = head[body_start:]  # bytes the client sent after its CONNECT (a TLS hello)
    elif where.lower().startswith("http://"):
        authority, slash, path = where[len("http://") :].partition("/")
        target = _host_port(authority, 80)
        sent = f"{method} {slash}{path} {version}".encode("latin-1") + b"\r\n" + rest
    else:
        _reply(conn, b"400 Bad Request")
        return None
    if target is None or target not in proxy.allowed:
        shown = where if target is None else str(target)
        with listener._lock:
            if shown not in listener.refused:
                listener.refused.append(shown)
        _reply(conn, b"403 Forbidden")
        return None
    if target not in proxy.named:
        checked = _addresses(listener, conn, target)
        if checked is None:
            return None
        target = Target(target.host, target.port, checked)
    return target, sent, method.upper() == "CONNECT"


def _addresses(listener: Listener, conn: socket.socket, target: Target) -> tuple[str, ...] | None:
    """The addresses ``target``'s host resolves to, when none is in :data:`NEVER_REACHED`;
    else None (refused, remembered, answered)."""
    try:
        found = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        _reply(conn, b"502 Bad Gateway")
        return None
    addresses = tuple(dict.fromkeys(str(info[4][0]) for info in found))
    never = next((a for a in addresses if _never_reached(a)), None)
    if never is None and addresses:
        return addresses
    # A whole note (a refused destination is one word: it never holds "network: ").
    shown = (
        f"network: {target} refused: it resolves to {never}, a loopback, link-local, metadata "
        f"or private address (the operator can allow it with --eval-allow-network {target})"
    )
    with listener._lock:
        if shown not in listener.refused:
            listener.refused.append(shown)
    _reply(conn, b"403 Forbidden")
    return None


def _never_reached(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in NEVER_REACHED)


def _connect(target: Target) -> socket.socket:
    """A connection to ``target``: to its checked addresses in turn, else to its host."""
    if not target.addresses:
        return socket.create_connection((target.host, target.port), CONNECT_TIMEOUT)
    error: OSError = OSError(f"no address for {target}")
    for address in target.addresses:
        try:
            return socket.create_connection((address, target.port), CONNECT_TIMEOUT)
        except OSError as exc:
            error = exc
    raise error


def _host_port(authority: str, default_port: int) -> Target | None:
    authority = authority.strip()
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port_text = rest.removeprefix(":")
    else:
        host, _, port_text = authority.rpartition(":") if ":" in authority else (authority, "", "")
    try:
        port = int(port_text) if port_text else default_port
    except ValueError:
        return None
    if not host or not 0 < port < 65536:
        return None
    return Target(host.lower(), port)


def _reply(conn: socket.socket, status: bytes) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(b"HTTP/1.1 " + status + b"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")


def _splice(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both directions end."""
    other = threading.Thread(target=_copy, args=(b, a), name="evals-relay-copy", daemon=True)
    other.start()
    _copy(a, b)
    other.join()


def _copy(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(CHUNK)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        dst.shutdown(socket.SHUT_WR)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


def close_all(listeners: Iterable[Listener]) -> None:
    for listener in listeners:
        listener.close()
