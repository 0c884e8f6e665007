"""A confined run's network: the endpoints it may reach, and how they are reached.

The run has a network namespace of its own (loopback only). Each endpoint on loopback
(``http://127.0.0.1:8765``, ``localhost:3000``) is served inside at the same address by a
forwarder (``socat``, started by the sandbox's launcher) that hands every connection to a Unix
socket the harness serves (:mod:`pytest_plugin_evals.util.relay`), which connects to the real
endpoint. Endpoints elsewhere (``https://api.anthropic.com``) are reached through an HTTP
proxy the harness runs the same way (``HTTPS_PROXY`` inside), which connects to them and to
nothing else. Nothing else is reachable: no other loopback port, no abstract Unix socket, no
outside interface.
"""

from __future__ import annotations

import atexit
import ipaddress
import os
import shlex
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urlsplit

from pytest_plugin_evals.util.relay import MAX_CONNECTIONS, Gate, Listener, Proxy, Target, listen
from pytest_plugin_evals.util.tempdirs import mark_owner

#: The port the proxy listens on inside the run (loopback of its own network).
PROXY_PORT = 18080

#: Proxy variables of the operator's that mean nothing inside the run (its proxy is not
#: reachable there): replaced by the run's own, or removed.
PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
)


@dataclass(frozen=True)
class Endpoint:
    """A TCP endpoint a run may reach."""

    host: str
    port: int
    #: Named by the operator (an endpoint variable's value, ``--eval-allow-network``), not a
    #: default of the harness's: only such an endpoint may be reached at an address of
    #: :data:`~pytest_plugin_evals.util.relay.NEVER_REACHED` (a private or link-local one).
    named: bool = field(default=True, compare=False)

    @classmethod
    def parse(cls, value: str) -> Endpoint | None:
        """An endpoint from a URL (``https://api.openai.com/v1``: port 443) or ``HOST:PORT``;
        None when it names none."""
        value = value.strip()
        if not value:
            return None
        if "://" not in value:
            value = "tcp://" + value
        try:
            parts = urlsplit(value)
            port = parts.port
        except ValueError:
            return None
        host = (parts.hostname or "").lower()
        if not host:
            return None
        if port is None:
            port = {"https": 443, "http": 80, "wss": 443, "ws": 80}.get(parts.scheme.lower())
        if port is None or not 0 < port < 65536:
            return None
        return cls(host, port)

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def __str__(self) -> str:
        return str(Target(self.host, self.port))


def endpoints_from(env: Mapping[str, str], variables: Mapping[str, str | None]) -> list[Endpoint]:
    """The endpoints named by the variables ``variables`` lists (name → the default URL when
    the variable is unset, or None for no default)."""
    found: list[Endpoint] = []
    for name, default in variables.items():
        given = (env.get(name) or "").strip()
        value = given or default
        endpoint = Endpoint.parse(value) if value else None
        if endpoint is not None and not given:
            endpoint = replace(endpoint, named=False)
        if endpoint is not None and endpoint not in found:
            found.append(endpoint)
    return found


@dataclass(frozen=True)
class Forward:
    """One forwarder inside the run: ``bind``:``port`` (IPv4 or IPv6) to a Unix socket."""

    family: int  # 4 or 6
    bind: str
    port: int
    socket: Path

    def command(self, socat: str = "socat") -> str:
        # A backlog above socat's default (5): a burst of connections waits to be accepted
        # instead of being dropped and retried by the agent's kernel (seconds each).
        listen_on = (
            f"TCP{self.family}-LISTEN:{self.port},bind={self._bind},reuseaddr,fork,backlog=128"
        )
        return (
            f"{shlex.quote(socat)} {shlex.quote(listen_on)} "
            f"{shlex.quote('UNIX-CONNECT:' + str(self.socket))} </dev/null >/dev/null 2>&1 &"
        )

    @property
    def _bind(self) -> str:
        return f"[{self.bind}]" if self.family == 6 else self.bind


@dataclass
class NetPlan:
    """The forwarders of one run, the harness's listeners behind them, the variables the
    agent gets (its proxy), and the gate that bounds the connections its listeners hold."""

    forwards: list[Forward]
    listeners: list[Listener]
    env: dict[str, str]
    gate: Gate = field(default_factory=Gate)

    def close(self) -> list[str]:
        """End the listeners; the destinations the proxy refused (for the run's notes)."""
        refused: list[str] = []
        for listener in self.listeners:
            refused.extend(r for r in listener.refused if r not in refused)
            listener.close()
        return refused

    def crowd(self) -> list[str]:
        """The note of the connections refused for being past the run's limit (after
        :meth:`close`), or none."""
        gate = self.gate
        if not gate.turned_away:
            return []
        return [f"network: {gate.turned_away:,} connection(s) refused past {gate.limit} at once"]


def plan_network(
    endpoints: Iterable[Endpoint],
    sockets_dir: Path,
    tag: str,
    *,
    max_connections: int = MAX_CONNECTIONS,
) -> NetPlan:
    """Open the harness's listeners for ``endpoints`` (sockets named ``<tag>-<n>.sock`` in
    ``sockets_dir``; ``max_connections`` at once, all of them together) and say what the
    launcher starts inside."""
    endpoints = list(endpoints)
    named = frozenset(Target(e.host, e.port) for e in endpoints if e.named)
    endpoints = list(dict.fromkeys(endpoints))
    gate = Gate(max_connections)
    forwards: list[Forward] = []
    listeners: list[Listener] = []
    env: dict[str, str] = {}
    try:
        direct = [e for e in endpoints if e.loopback]
        for number, endpoint in enumerate(direct):
            path = sockets_dir / f"{tag}-{number}.sock"
            listeners.append(listen(path, Target(endpoint.host, endpoint.port), gate=gate))
            for family, bind in _binds(endpoint.host):
                forwards.append(Forward(family, bind, endpoint.port, path))
        remote = [e for e in endpoints if not e.loopback]
        if remote:
            path = sockets_dir / f"{tag}-proxy.sock"
            allowed = frozenset(Target(e.host, e.port) for e in remote)
            listeners.append(listen(path, Proxy(allowed, named & allowed), gate=gate))
            forwards.append(Forward(4, "127.0.0.1", PROXY_PORT, path))
            proxy = f"http://127.0.0.1:{PROXY_PORT}"
            direct_hosts = ",".join(dict.fromkeys(["localhost", "127.0.0.1", "::1"]))
            env.update(
                {
                    "HTTPS_PROXY": proxy,
                    "HTTP_PROXY": proxy,
                    "https_proxy": proxy,
                    "http_proxy": proxy,
                    "NO_PROXY": direct_hosts,
                    "no_proxy": direct_hosts,
                }
            )
    except OSError:
        for listener in listeners:
            listener.close()
        raise
    return NetPlan(forwards, listeners, env, gate)


def _binds(host: str) -> list[tuple[int, str]]:
    """Where a loopback endpoint's forwarder listens inside: its address, or both loopback
    addresses for ``localhost``."""
    if host == "localhost":
        return [(4, "127.0.0.1"), (6, "::1")]
    address = ipaddress.ip_address(host)
    return [(address.version, str(address))]


def launcher_script(
    forwards: Iterable[Forward], limits: str, *, socat: str = "socat", prlimit: str = "prlimit"
) -> str:
    """The shell script that starts a confined run inside its sandbox: the forwarders, a wait
    until they listen (a connection made sooner would be refused), then the agent (its
    arguments) under ``limits`` (``prlimit`` options)."""
    forwards = list(forwards)
    lines = ["set -u"]
    lines += [f.command(socat) for f in forwards]
    if forwards:
        lines.append(
            "ready() { while read -r _ local _ st _; do "
            'case "$local" in *":$2") [ "$st" = 0A ] && return 0;; esac; '
            'done < "$1"; return 1; }'
        )
        checks = " && ".join(
            f"ready /proc/net/tcp{'6' if f.family == 6 else ''} {f.port:04X}" for f in forwards
        )
        lines.append(
            f"n=0; until {checks}; do n=$((n+1)); "
            'if [ "$n" -gt 500 ]; then echo "the sandbox network did not come up" >&2; '
            "exit 125; fi; sleep 0.01; done"
        )
    lines.append(f'exec {shlex.quote(prlimit)} {limits} -- "$@"')
    return "\n".join(lines)


_sockets_lock = threading.Lock()
_sockets_dir: list[Path] = []


def sockets_dir() -> Path:
    """This process's folder for the Unix sockets of its runs: short (socket paths are limited
    to about 100 bytes), private, removed at exit."""
    with _sockets_lock:
        if _sockets_dir and _sockets_dir[0].is_dir():
            return _sockets_dir[0]
        base = "/tmp" if os.access("/tmp", os.W_OK) else tempfile.gettempdir()
        folder = Path(tempfile.mkdtemp(prefix="plugin-evals-net-", dir=base))
        mark_owner(folder)
        _sockets_dir[:] = [folder]
        atexit.register(shutil.rmtree, folder, True)
        return folder
