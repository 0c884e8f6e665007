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

Threads, no process: one thread accepts on each socket, and one thread serves each connection
(both directions, in turn, as each is ready). A run's listeners share a :class:`Gate`: at most
``limit`` connections at once (``MAX_CONNECTIONS``); one more is closed as it arrives, and
counted. :meth:`Listener.close` (the run's end) shuts every connection down and waits for its
threads to end.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pytest_plugin_evals.util.splice import close_quietly, splice

#: The most an HTTP proxy request's head may hold before it is refused.
MAX_HEAD = 16 * 1024
#: Seconds a connection to an endpoint may take.
CONNECT_TIMEOUT = 30.0
CHUNK = 64 * 1024
#: The most connections one run's listeners hold at once.
MAX_CONNECTIONS = 64
#: Seconds :meth:`Listener.close` waits for its threads to end.
CLOSE_WAIT = 5.0

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
class Gate:
    """The connections a run's listeners hold at once: at most ``limit``; ``turned_away``
    counts those closed as they arrived because ``limit`` were held."""

    limit: int = MAX_CONNECTIONS
    held: int = 0
    turned_away: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def enter(self) -> bool:
        with self._lock:
            if self.held >= self.limit:
                self.turned_away += 1
                return False
            self.held += 1
            return True

    def leave(self) -> None:
        with self._lock:
            self.held -= 1


@dataclass
class Listener:
    """A Unix socket this process serves for one run; :meth:`close` ends it and its
    connections."""

    path: Path
    to: Target | Proxy
    gate: Gate = field(default_factory=Gate)
    #: Destinations a proxy refused, in the order first asked for.
    refused: list[str] = field(default_factory=list)
    _sock: socket.socket | None = None
    _conns: set[socket.socket] = field(default_factory=set)
    _threads: set[threading.Thread] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _closed: bool = False

    def close(self) -> None:
        """Stop accepting, shut every connection down, and wait (a while) for the threads."""
        with self._lock:
            self._closed = True
            conns, threads = list(self._conns), list(self._threads)
            sock, self._sock = self._sock, None
        if sock is not None:
            close_quietly(sock)
        for conn in conns:  # their threads close them
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + CLOSE_WAIT
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(max(0.0, deadline - time.monotonic()))
        with contextlib.suppress(OSError):
            self.path.unlink()

    def _start(self, target: Callable[..., None], args: tuple[object, ...], name: str) -> bool:
        """A thread of this listener's, unless it is closed."""
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        with self._lock:
            if self._closed:
                return False
            self._threads.add(thread)
            thread.start()
        return True

    def _track(self, conn: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._conns.add(conn)
            return True

    def _done(self, *ends: socket.socket | None) -> None:
        """A connection's thread ends: its sockets close, its place at the gate frees."""
        socks = [end for end in ends if end is not None]
        with self._lock:
            self._threads.discard(threading.current_thread())
            self._conns.difference_update(socks)
        for sock in socks:
            close_quietly(sock)
        self.gate.leave()


def listen(
    path: Path, to: Target | Proxy, *, mode: int = 0o600, gate: Gate | None = None
) -> Listener:
    """Serve ``path`` (a Unix socket made now) as a way to ``to``, in background threads; the
    connections it holds count at ``gate`` (a run's, shared by its listeners)."""
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
    listener = Listener(path, to, gate or Gate(), _sock=sock)
    listener._start(_accept_loop, (listener, sock), "evals-relay-accept")
    return listener


def _accept_loop(listener: Listener, sock: socket.socket) -> None:
    while True:
        try:
            conn, _ = sock.accept()
        except OSError:
            return  # closed
        if not listener.gate.enter():
            close_quietly(conn)  # past the run's limit: refused at once
            continue
        if not (
            listener._track(conn) and listener._start(_serve, (listener, conn), "evals-relay-conn")
        ):
            listener._done(conn)
            return


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
        upstream = _dial(listener, target)
        if upstream is None:
            if isinstance(listener.to, Proxy):
                _reply(conn, b"502 Bad Gateway")
            return
        if tunnel:
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        if first:
            upstream.sendall(first)
        splice(conn, upstream, CHUNK)
    except OSError:
        pass
    finally:
        listener._done(conn, upstream)


def _dial(listener: Listener, target: Target) -> socket.socket | None:
    """A connection to ``target`` — to its checked addresses in turn, else to its host —
    tracked while it is made (so that :meth:`Listener.close` cuts a connect short); None when
    none could be made."""
    found = []
    for host in target.addresses or (target.host,):
        with contextlib.suppress(OSError):
            found += socket.getaddrinfo(host, target.port, type=socket.SOCK_STREAM)
    for family, kind, proto, _, address in found:
        sock = socket.socket(family, kind, proto)
        if not listener._track(sock):
            sock.close()
            return None
        try:
            sock.settimeout(CONNECT_TIMEOUT)
            sock.connect(address)
            return sock
        except OSError:
            with listener._lock:
                listener._conns.discard(sock)
            sock.close()
    return None


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


def close_all(listeners: Iterable[Listener]) -> None:
    for listener in listeners:
        listener.close()
