"""The mock host: one process per harness process that has the ``mcp`` SDK loaded already, and
that trusts only the harness.

Loading the SDK takes about a second of CPU, and Claude Code waits for its MCP servers before
the first model call, so starting a fresh Python per stand-in per run would add that second to
every run. Instead the agent starts a tiny :mod:`.stub` that passes its stdio over a Unix socket
to this host, which forks a stand-in (the SDK already imported) serving MCP on those descriptors.

**Whom it trusts.** The agent starts the stub, so the agent can reach the socket, and the agent
may be hostile: it can connect and send anything. So everything the host acts on comes from the
harness, over a control channel only the harness holds (the host's stdin and stdout pipes), one
JSON line each way, before the agent starts::

    harness → host   {"op": "register", "run": "<id>", "token": "<the run's RUN_TAG>" | null,
                      "kill": true, "calls": "<calls file>", "servers": {"<name>": "<spec.json>"}}
    host → harness   {"ok": true, "socket": "<the run's socket>"}    (or {"ok": false, "error"})
    harness → host   {"op": "unregister", "run": "<id>"}
    host → harness   {"ok": true}

On registration the host reads the run's specs (files the harness wrote in the run's private
``out/mocks/``) and opens its calls file, then listens on a socket of the run's own: a short
random name in the host's private folder (mode 0700), well under ``sockaddr_un``'s limit. A stub
connecting there sends only ``{"server": "<name>"}`` and its three stdio descriptors. The host
knows the run from the socket that accepted the connection; it checks that the peer runs as
the harness's user and that the run has that server, and forks the stand-in for it. Anything
else — an unknown server, a malformed hello, a hello naming a spec, a calls file, a root or a
process group — is refused: the client gets one line and the connection closed, and the run's
calls file gets ``{"mockHost": {"refused": "<what happened>"}}`` (the run becomes an
infrastructure error, ``mock_host``). No path or process the client names is ever used.

An ``expect:`` abort kills the processes that carry the registered run token in their
environment (:func:`~pytest_plugin_evals.util.process.kill_tagged`), or, for a run registered
without ``kill`` (an in-process agent), only records. Unregistering closes and removes the
run's socket and kills its stand-ins still running. The host ends when the harness closes its
stdin (at exit, or when the harness dies).

Platforms without ``fork``, Unix sockets or descriptor passing get no host: the agent starts
``python -m pytest_plugin_evals.mocks.server <spec.json>`` directly.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import socket
import struct
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..util.process import Service, fork_child, start_service, stop_service
from ..util.safeload import json_data
from ..util.tempdirs import mark_owner

#: Unix socket paths longer than this do not fit ``sockaddr_un`` everywhere.
MAX_SOCKET_PATH = 100
#: The longest folder the host's private folder is made in (the socket path stays ≤ 90 bytes).
MAX_BASE = 60
#: How long the harness waits for the host's answer (the host answers at once, unless it is
#: still loading the SDK for an earlier run).
REPLY_SECONDS = 30.0

_hosts: dict[int, MockHost] = {}
_hosts_lock = threading.Lock()


class HostError(RuntimeError):
    """The mock host could not be started, or refused or never answered a registration."""


def supported() -> bool:
    return hasattr(os, "fork") and hasattr(socket, "AF_UNIX") and hasattr(socket, "send_fds")


# -- the harness's end -----------------------------------------------------------------------


@dataclass
class Registration:
    """One run registered with the host: its socket; :meth:`close` unregisters it."""

    host: MockHost
    run: str
    socket: Path
    closed: bool = False

    def close(self) -> None:
        """Unregister the run: its socket is removed, its stand-ins still running are killed
        and nothing more is recorded for it. Never raises; a second call does nothing."""
        if not self.closed:
            self.closed = True
            self.host.unregister(self.run)


class MockHost:
    """The harness's end of one mock host process: its control pipes, one request at a time."""

    def __init__(self, proc: Service[bytes], folder: Path) -> None:
        self.proc = proc
        self.folder = folder
        self._lock = threading.Lock()  # runs made ahead register from other threads
        self._buffer = b""
        self._asked = 0

    def running(self) -> bool:
        return self.proc.poll() is None

    def register(
        self,
        servers: Mapping[str, Path],
        calls: Path,
        *,
        token: str | None,
        kill: bool,
    ) -> Registration:
        """Register a run: its servers (name → spec file), its calls file, its token and
        whether an abort kills the processes carrying it. Returns the run's socket."""
        run = uuid.uuid4().hex
        answer = self._ask(
            {
                "op": "register",
                "run": run,
                "token": token,
                "kill": bool(kill and token),
                "calls": str(calls),
                "servers": {name: str(path) for name, path in servers.items()},
            }
        )
        if not answer.get("ok"):
            raise HostError(f"the mock host refused the run: {answer.get('error', '?')}")
        path = Path(str(answer.get("socket", "")))
        if path.parent != self.folder:
            raise HostError(f"the mock host answered a socket outside its folder: {path}")
        return Registration(self, run, path)

    def unregister(self, run: str) -> None:
        with contextlib.suppress(HostError):
            self._ask({"op": "unregister", "run": run})

    def _ask(self, message: Mapping[str, Any]) -> dict[str, Any]:
        stdin, stdout = self.proc.stdin, self.proc.stdout
        if stdin is None or stdout is None:
            raise HostError("the mock host has no control pipe")
        with self._lock:
            self._asked += 1
            asked = self._asked
            try:
                stdin.write((json.dumps({**message, "id": asked}) + "\n").encode())
                stdin.flush()
            except (OSError, ValueError) as exc:
                raise HostError(f"the mock host has ended ({exc})") from exc
            deadline = time.monotonic() + REPLY_SECONDS
            while True:  # the answer to this request (a late one to an earlier is dropped)
                answer = self._read_line(stdout.fileno(), deadline)
                if answer.get("id") == asked:
                    return answer

    def _read_line(self, fd: int, deadline: float) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise HostError(f"the mock host did not answer within {REPLY_SECONDS:g}s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise HostError("the mock host has ended")
            self._buffer += chunk
        reply, _, self._buffer = self._buffer.partition(b"\n")
        try:
            answer = json.loads(reply)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise HostError(f"the mock host answered something else: {reply[:200]!r}")
        return answer

    def stop(self) -> None:
        stop_service(self.proc)
        shutil.rmtree(self.folder, ignore_errors=True)


def ensure_host() -> MockHost:
    """This process's mock host, started now if needed. Raises :class:`HostError` when it
    cannot be (call only where :func:`supported`)."""
    with _hosts_lock:
        known = _hosts.get(os.getpid())
        if known is not None and known.running():
            return known
        folder = private_folder()
        try:
            proc = start_service([sys.executable, "-m", __name__, str(folder)])
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise HostError(f"the mock host could not be started: {exc}") from exc
        host = MockHost(proc, folder)
        _hosts[os.getpid()] = host
        atexit.register(host.stop)
        return host


def private_folder() -> Path:
    """A new folder only this user may enter, in the first of the temp folder, ``/tmp``,
    ``/dev/shm`` and ``/var/tmp`` whose path is short enough for the sockets inside."""
    for base in (tempfile.gettempdir(), "/tmp", "/dev/shm", "/var/tmp"):
        if len(base) > MAX_BASE or not os.path.isdir(base) or not os.access(base, os.W_OK):
            continue
        with contextlib.suppress(OSError):
            folder = Path(tempfile.mkdtemp(prefix="evm-", dir=base))
            mark_owner(folder)
            return folder
    raise HostError("no folder with a path short enough for the mock host's sockets")


# -- the host process ------------------------------------------------------------------------

#: Seconds a connection may take to send its hello.
HELLO_SECONDS = 5.0
#: The longest hello read (the stub's is about 40 bytes).
HELLO_BYTES = 1024
#: Connections of one run waiting for their hello at once.
MAX_PENDING = 32
#: Refusals written to one run's calls file; more are only counted.
MAX_RECORDED = 20


@dataclass(eq=False)
class _Run:
    """One registered run, as the host holds it: all from the harness."""

    id: str
    token: str | None
    kill: bool
    specs: dict[str, dict[str, Any]]
    calls_fd: int
    listener: socket.socket
    path: Path
    children: set[int] = field(default_factory=set)
    pending: dict[socket.socket, float] = field(default_factory=dict)
    refused: int = 0


class _Host:
    def __init__(self, folder: Path, control_in: int, control_out: int) -> None:
        self.folder = folder
        self.control_in = control_in
        self.control_out = control_out
        self.runs: dict[str, _Run] = {}
        self.listeners: dict[socket.socket, _Run] = {}
        self.waiting: dict[socket.socket, _Run] = {}
        self.children: dict[int, _Run] = {}
        self.buffer = b""
        self.loaded = False
        self.uid = os.getuid()

    # -- the loop

    def serve(self) -> None:
        try:
            while self._turn():
                pass
        finally:
            for run in list(self.runs.values()):
                self._unregister(run.id)
            shutil.rmtree(self.folder, ignore_errors=True)

    def _turn(self) -> bool:
        self._reap()
        if not self.loaded and not select.select([self.control_in], [], [], 0)[0]:
            self._load_sdk()  # idle: the first stand-in will not wait for it
        now = time.monotonic()
        deadlines = [d for run in self.runs.values() for d in run.pending.values()]
        timeout = max(0.0, min([now + 1.0, *deadlines]) - now)
        watched: list[Any] = [self.control_in, *self.listeners, *self.waiting]
        ready = select.select(watched, [], [], timeout)[0]
        for item in ready:
            if item == self.control_in:
                chunk = os.read(self.control_in, 65536)
                if not chunk:
                    return False  # the harness closed our stdin: it is done (or gone)
                self.buffer += chunk
                while b"\n" in self.buffer:
                    line, _, self.buffer = self.buffer.partition(b"\n")
                    self._answer(line)
            elif item in self.listeners:
                self._accept(self.listeners[item], item)
            elif item in self.waiting:
                self._hello(self.waiting[item], item)
        now = time.monotonic()
        for run in list(self.runs.values()):
            for conn, deadline in list(run.pending.items()):
                if deadline <= now:
                    self._drop(run, conn)
                    self._refuse(run, conn, "a process in the run connected to the mock host "
                                 "and sent no hello")  # fmt: skip
        return True

    def _reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            run = self.children.pop(pid, None)
            if run is not None:
                run.children.discard(pid)

    def _load_sdk(self) -> None:
        """Import the SDK once; every forked stand-in inherits it."""
        if self.loaded:
            return
        self.loaded = True
        with contextlib.suppress(ImportError):  # a stand-in then says why, on its stderr
            import anyio  # noqa: F401
            import mcp.server.lowlevel
            import mcp.server.stdio
            import mcp.types  # noqa: F401

            from . import server  # noqa: F401

    # -- the control channel (the harness)

    def _answer(self, line: bytes) -> None:
        """Do what one line of the harness's asks; answer it, with the request's ``id``."""
        try:
            asked = json.loads(line).get("id")
        except (ValueError, AttributeError):
            asked = None
        data = (json.dumps({**self._control(line), "id": asked}) + "\n").encode()
        while data:
            data = data[os.write(self.control_out, data) :]

    def _control(self, line: bytes) -> dict[str, Any]:
        try:
            message = json.loads(line)
            op = message["op"]
            if op == "register":
                return self._register(message)
            if op == "unregister":
                self._unregister(str(message["run"]))
                return {"ok": True}
            return {"ok": False, "error": f"unknown op {op!r}"}
        except (ValueError, KeyError, TypeError, OSError) as exc:
            return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}

    def _register(self, message: Mapping[str, Any]) -> dict[str, Any]:
        run_id = str(message["run"])
        if run_id in self.runs:
            return {"ok": False, "error": f"run {run_id} is registered already"}
        servers = message["servers"]
        if not isinstance(servers, dict) or not servers:
            return {"ok": False, "error": "a run needs at least one server"}
        specs: dict[str, dict[str, Any]] = {}
        for name, spec_path in servers.items():
            doc = json.loads(Path(str(spec_path)).read_text(encoding="utf-8"))
            if not isinstance(doc, dict):
                return {"ok": False, "error": f"{spec_path}: not a stand-in spec"}
            specs[str(name)] = doc
        token = message.get("token")
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        calls_fd = os.open(str(message["calls"]), flags, 0o600)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            path = self.folder / f"{secrets.token_hex(4)}.sock"
            while path.exists():
                path = self.folder / f"{secrets.token_hex(4)}.sock"
            listener.bind(str(path))
            os.chmod(path, 0o600)
            listener.listen(MAX_PENDING)
            listener.setblocking(False)
        except OSError:
            listener.close()
            os.close(calls_fd)
            raise
        run = _Run(
            id=run_id,
            token=str(token) if token else None,
            kill=bool(message.get("kill")) and bool(token),
            specs=specs,
            calls_fd=calls_fd,
            listener=listener,
            path=path,
        )
        self.runs[run_id] = run
        self.listeners[listener] = run
        return {"ok": True, "socket": str(path)}

    def _unregister(self, run_id: str) -> None:
        run = self.runs.pop(run_id, None)
        if run is None:
            return
        self.listeners.pop(run.listener, None)
        run.listener.close()
        with contextlib.suppress(OSError):
            run.path.unlink()
        for conn in list(run.pending):
            self._drop(run, conn)
            conn.close()
        for pid in run.children:  # our children, not yet reaped: the pid is still theirs
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if run.refused > MAX_RECORDED:
            self._record(run, {"mockHost": {"more": run.refused - MAX_RECORDED}})
        os.close(run.calls_fd)

    # -- the runs' sockets (the agent)

    def _accept(self, run: _Run, listener: socket.socket) -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        uid = peer_uid(conn)
        if uid != UNKNOWN and uid != self.uid:
            self._refuse(run, conn, f"a process of another user (uid {uid}) connected to the "
                         "run's mock host socket")  # fmt: skip
            return
        if len(run.pending) >= MAX_PENDING:
            self._refuse(run, conn, "a process in the run opened more connections to the "
                         f"mock host than {MAX_PENDING} at once")  # fmt: skip
            return
        conn.setblocking(False)
        run.pending[conn] = time.monotonic() + HELLO_SECONDS
        self.waiting[conn] = run

    def _drop(self, run: _Run, conn: socket.socket) -> None:
        run.pending.pop(conn, None)
        self.waiting.pop(conn, None)

    def _hello(self, run: _Run, conn: socket.socket) -> None:
        self._drop(run, conn)
        try:
            message, fds, flags, _ = socket.recv_fds(conn, HELLO_BYTES, 3)
        except OSError:
            conn.close()
            return
        if not message and not fds:  # gone before it said anything (a stub killed at once)
            conn.close()
            return
        server, problem = read_hello(message, fds, flags, run.specs)
        if problem is not None or server is None:
            for fd in fds:
                os.close(fd)
            self._refuse(run, conn, f"a process in the run {problem}")
            return
        self._spawn(run, server, conn, fds)

    def _refuse(self, run: _Run, conn: socket.socket, what: str) -> None:
        # Recorded first: whoever is told of the refusal finds it in the run's calls file.
        run.refused += 1
        if run.refused <= MAX_RECORDED:
            self._record(run, {"mockHost": {"refused": what}})
        with contextlib.suppress(OSError):  # the stub prints it: the agent's MCP log shows it
            conn.setblocking(False)
            conn.send(f"refused by the mock host: {what}\n".encode())
            conn.shutdown(socket.SHUT_WR)
            for _ in range(16):  # what it sent unread would reset the line: the text is lost
                for fd in socket.recv_fds(conn, 65536, 16)[1]:
                    os.close(fd)
        conn.close()

    def _record(self, run: _Run, record: dict[str, Any]) -> None:
        from ..util.timestamps import utc_iso

        line = json.dumps({**record, "time": utc_iso()}, separators=(",", ":")) + "\n"
        with contextlib.suppress(OSError):
            os.write(run.calls_fd, line.encode())

    def _spawn(self, run: _Run, server: str, conn: socket.socket, fds: list[int]) -> None:
        self._load_sdk()

        def stand_in() -> int:
            # The child: the stand-in on the stub's stdio, holding nothing else of the host's.
            for target, fd in enumerate(fds):  # the host's own 0, 1, 2 are /dev/null: fd > 2
                os.dup2(fd, target)
                os.close(fd)
            calls = os.dup(run.calls_fd)
            self._forget_all()
            return run_stand_in(run.specs[server], calls, run.token, run.kill)

        # When no process can be made, the stub sees EOF, the agent a failed server.
        pid = fork_child(stand_in)
        for fd in fds:
            os.close(fd)
        conn.close()  # the child keeps its copy: the stub sees EOF when the child ends
        if pid > 0:
            run.children.add(pid)
            self.children[pid] = run

    def _forget_all(self) -> None:
        """In a forked stand-in: close every descriptor of the host's (other runs' sockets and
        calls files, the control pipes), keeping only the stdio and the connection."""
        for sock in [*self.listeners, *self.waiting]:
            with contextlib.suppress(OSError):
                os.close(sock.detach())
        for run in self.runs.values():
            with contextlib.suppress(OSError):
                os.close(run.calls_fd)
        for fd in (self.control_in, self.control_out):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.runs, self.listeners, self.waiting, self.children = {}, {}, {}, {}


#: :func:`peer_uid` where the system has no way to tell (the folder's mode 0700 still keeps
#: other users out).
UNKNOWN = -1


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of ``conn``: Linux's ``SO_PEERCRED``, the BSDs'
    and macOS's ``LOCAL_PEERCRED``; None when the system could not say, :data:`UNKNOWN` where
    it has no such option."""
    try:
        if hasattr(socket, "SO_PEERCRED"):
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            return int(struct.unpack("3i", creds)[1])
        if hasattr(socket, "LOCAL_PEERCRED"):  # struct xucred: version, uid, groups …
            creds = conn.getsockopt(0, socket.LOCAL_PEERCRED, 256)
            return int(struct.unpack_from("=II", creds)[1])
    except (OSError, struct.error):
        return None
    return UNKNOWN


def read_hello(
    message: bytes, fds: list[int], flags: int, specs: Mapping[str, object]
) -> tuple[str | None, str | None]:
    """``(server, None)`` for a hello the run may have, else ``(None, what it did)``: the
    hello is ``{"server": "<name>"}`` with the three stdio descriptors, nothing else."""
    if not message:
        return None, "connected to the mock host and sent no hello"
    if len(message) >= HELLO_BYTES or flags & getattr(socket, "MSG_CTRUNC", 0):
        return None, "sent the mock host a malformed hello (too long)"
    try:
        hello = json_data(message.decode("utf-8"))
    except ValueError:
        return None, "sent the mock host a malformed hello (not JSON)"
    if not isinstance(hello, dict):
        return None, "sent the mock host a malformed hello (not a JSON object)"
    if "spec" in hello:
        return None, "sent the mock host a forged hello (spec path given)"
    extra = sorted(str(k) for k in hello if k != "server")
    if extra:
        return None, f"sent the mock host a forged hello (fields it may not send: {shown(extra)})"
    server = hello.get("server")
    if not isinstance(server, str) or not server:
        return None, "sent the mock host a malformed hello (no server name)"
    if len(fds) != 3:
        return None, (
            f"sent the mock host a hello without its stdio ({len(fds)} descriptors, 3 expected)"
        )
    if server not in specs:
        return None, f"asked the mock host for a server the run does not have ({shown([server])})"
    return server, None


def shown(names: list[str]) -> str:
    """Names a client sent, for a record: quoted, ASCII, each cut at 40 characters, at most 5."""
    cut = [ascii(n[:40]) + ("…" if len(n) > 40 else "") for n in names[:5]]
    return ", ".join(cut) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def run_stand_in(doc: dict[str, Any], calls_fd: int, token: str | None, kill: bool) -> int:
    import anyio

    from .server import StandIn, serve

    stand_in = StandIn.from_spec(doc)
    stand_in.calls_fd = calls_fd
    stand_in.on_abort = "kill-run" if kill else "record"
    stand_in.run_token = token
    anyio.run(serve, stand_in)
    return 0


def main(folder: str) -> None:
    # The control pipes move off 0 and 1, which become /dev/null: nothing the host or a
    # library prints can reach the harness, and the stdio a stub passes is always fd > 2.
    control_in, control_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    _Host(Path(folder), control_in, control_out).serve()


if __name__ == "__main__":
    main(sys.argv[1])
