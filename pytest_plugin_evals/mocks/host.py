"""The mock host: one process per harness process that has the ``mcp`` SDK loaded already.

Loading the SDK takes about a second of CPU, and Claude Code waits for its MCP servers before
the first model call, so starting a fresh Python per stand-in per run would add that second to
every run. Instead the agent starts a tiny :mod:`.stub` that passes its stdio over a Unix socket
to this host, which forks a stand-in (the SDK already imported) serving MCP on those descriptors.
The forked stand-in knows the stub's process ids, so an ``expect:`` violation still kills the
agent's process group.

The host is started lazily by :func:`ensure_host` (a per-process cache) and ends when the
harness closes its stdin (at exit, or when the harness dies). Platforms without ``fork`` or Unix
sockets get no host: the agent starts ``python -m pytest_plugin_evals.mocks.server`` directly.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import threading
import traceback
from collections.abc import Mapping
from pathlib import Path

from ..util.process import Service, start_service, stop_service

#: Unix socket paths longer than this do not fit ``sockaddr_un`` everywhere.
MAX_SOCKET_PATH = 100

_hosts: dict[int, tuple[Service[bytes], Path]] = {}
_hosts_lock = threading.Lock()


def supported() -> bool:
    return hasattr(os, "fork") and hasattr(socket, "AF_UNIX") and hasattr(socket, "send_fds")


def ensure_host() -> Path | None:
    """The socket of this process's mock host, started now if needed; None when unsupported."""
    if not supported():
        return None
    with _hosts_lock:  # runs made ahead of their items prepare their mocks in another thread
        return _ensure_host()


def _ensure_host() -> Path | None:
    known = _hosts.get(os.getpid())
    if known is not None and known[0].poll() is None:
        return known[1]
    folder = Path(tempfile.mkdtemp(prefix="evals-mocks-"))
    path = folder / "host.sock"
    if len(str(path)) > MAX_SOCKET_PATH:
        shutil.rmtree(folder, ignore_errors=True)
        return None
    proc = start_service([sys.executable, "-m", __name__, str(path)])
    # The host binds before it loads the SDK; wait for the socket (connections then queue).
    for _ in range(500):
        if path.exists() or proc.poll() is not None:
            break
        select.select([], [], [], 0.01)
    if not path.exists():
        _stop(proc, folder)
        return None
    _hosts[os.getpid()] = (proc, path)
    atexit.register(_stop, proc, folder)
    return path


def _stop(proc: Service[bytes], folder: Path) -> None:
    stop_service(proc)
    shutil.rmtree(folder, ignore_errors=True)


# -- the host process ------------------------------------------------------------------------


def serve_forever(socket_path: str) -> None:
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # forked stand-ins are reaped by the system
    # Load the SDK once; every forked stand-in inherits it.
    import anyio  # noqa: F401
    import mcp.server.lowlevel
    import mcp.server.stdio
    import mcp.types  # noqa: F401

    from . import server  # noqa: F401

    harness = sys.stdin.fileno()
    while True:
        ready, _, _ = select.select([listener, harness], [], [])
        if harness in ready and not os.read(harness, 4096):
            return  # the harness closed our stdin: it is done (or gone)
        if listener in ready:
            conn, _ = listener.accept()
            _spawn(listener, conn)


def _spawn(listener: socket.socket, conn: socket.socket) -> None:
    try:
        message, fds, _, _ = socket.recv_fds(conn, 65536, 3)
        hello = json.loads(message.decode("utf-8"))
    except (OSError, ValueError):
        conn.close()
        return
    if len(fds) != 3:
        for fd in fds:
            os.close(fd)
        conn.close()
        return
    pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        conn.close()  # the child keeps its copy: the stub sees EOF when the child ends
        return
    # The child: become the stand-in on the stub's stdio.
    code = 0
    try:
        listener.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        code = run_stand_in(hello)
    except BaseException:
        traceback.print_exc()  # onto the stub's stderr: the agent's MCP log shows it
        code = 1
    finally:
        os._exit(code)


def agent_group(hello: Mapping[str, object], harness_pgid: int | None) -> int:
    """The process group an abort kills: the stub's, or its parent's when the agent started
    the stub as the leader of a group of its own (Codex does so for every MCP server) — unless
    that parent's group is the harness's (a ``py:`` agent's stand-in)."""
    own = int(str(hello["pgid"]))
    parent = hello.get("parentPgid")
    leader = own == int(str(hello.get("pid", -1)))
    if leader and isinstance(parent, int) and parent > 1 and parent != harness_pgid:
        return parent
    return own


def run_stand_in(hello: dict[str, object]) -> int:
    import anyio

    from .server import StandIn, serve

    stand_in = StandIn.load(Path(str(hello["spec"])))
    stand_in.agent_pgid = agent_group(hello, stand_in.harness_pgid)
    stand_in.agent_pid = int(str(hello["ppid"]))
    anyio.run(serve, stand_in)
    return 0


if __name__ == "__main__":
    serve_forever(sys.argv[1])
