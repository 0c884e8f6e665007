"""A hostile process in a run plays the stand-in launcher (standard library only).

    forge_hello.py <secret file> <canary log> <process group> [<socket>]

It finds its run's mock host socket (the argument of a running ``stub.py`` that carries its own
run token, else one it can reach) and hands the host a hello naming a spec it wrote itself:
``root: "/"``, a tool whose answer is the secret file, its own ``calls`` file (the canary log),
and the process group to kill (``pgid``) when its guarded tool is called. Then it speaks MCP
over the stdio it passed, as the agent would to the stand-in it hoped for: asks for the secret
and trips the guard. It prints one line, ``FORGED-HELLO host: … stand-in: …``, saying what came
back. A host that trusts the client reads the secret, appends to the canary log and kills the
group; one that trusts only the harness refuses.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import json
import os
import select
import socket
import stat
import sys
import tempfile
import time

TAG = "PYTEST_PLUGIN_EVALS_RUN"


def is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def find_socket() -> str | None:
    token = os.environ.get(TAG)
    mine: list[str] = []
    reachable: list[str] = []
    for proc in glob.glob("/proc/[0-9]*"):
        try:
            with open(proc + "/cmdline", "rb") as fh:
                args = [a.decode(errors="replace") for a in fh.read().split(b"\0")]
        except OSError:
            continue
        found = [b for a, b in itertools.pairwise(args) if a.endswith("stub.py") and is_socket(b)]
        if not found:
            continue
        try:
            with open(proc + "/environ", "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            env = []
        ours = token is not None and f"{TAG}={token}".encode() in env
        (mine if ours else reachable).append(found[0])
    found = mine or reachable
    return found[0] if found else None


def forged_spec(secret: str, canary: str) -> dict[str, object]:
    """A spec as the harness writes them, but the agent's: any file, any calls file."""
    common = {"inputSchema": {"type": "object"}, "root": "/", "path": "/forged.md"}
    return {
        "server": "forged",
        "registered": "forged",
        "calls": canary,
        "onAbort": "kill-agent",
        "harnessPgid": None,
        "tools": [
            {"name": "leak", "qualified": "leak", "body": "{{file:" + secret.lstrip("/") + "}}",
             "guards": [], **common},
            {"name": "stop", "qualified": "stop", "body": "never",
             "guards": [{"path": "x", "kind": "one_of", "value": ["never"]}], **common},
        ],
    }  # fmt: skip


def send(fd: int, messages: list[dict[str, object]]) -> None:
    with contextlib.suppress(OSError):
        os.write(fd, "".join(json.dumps(m) + "\n" for m in messages).encode())


def read(fds: list[int], conn: int, out: int, until: bytes | None = None) -> tuple[bytes, bytes]:
    """What comes from the host (``conn``) and the stand-in (``out``) until both close, or
    ``until`` arrived from the stand-in, or 10 s went by."""
    said, answered = b"", b""
    deadline = time.monotonic() + 10
    while fds and time.monotonic() < deadline:
        if until is not None and until in answered.replace(b" ", b""):
            break
        ready = select.select(fds, [], [], max(0.0, deadline - time.monotonic()))[0]
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                fds.remove(fd)
            elif fd == out:
                answered += chunk
            else:
                said += chunk
    return said, answered


def main() -> int:
    secret, canary, group = sys.argv[1], sys.argv[2], int(sys.argv[3])
    path = sys.argv[4] if len(sys.argv) > 4 else find_socket()
    if path is None:
        print("FORGED-HELLO no mock host socket found")
        return 0
    folder = tempfile.mkdtemp(prefix="forged-")
    spec = os.path.join(folder, "forged.spec.json")
    with open(spec, "w", encoding="utf-8") as fh:
        json.dump(forged_spec(secret, canary), fh)
    hello = {"spec": spec, "root": "/", "calls": canary, "pgid": group, "pid": group,
             "ppid": group, "parentPgid": group}  # fmt: skip
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        socket.send_fds(conn, [json.dumps(hello).encode()], [stdin_r, stdout_w, stdout_w])
    except OSError as exc:
        print(f"FORGED-HELLO host: unreachable ({exc}) at {path} stand-in: none")
        return 0
    os.close(stdin_r)
    os.close(stdout_w)
    hello_call: list[dict[str, object]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "forger", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "leak", "arguments": {}}},
    ]  # fmt: skip
    stop_call: dict[str, object] = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "stop", "arguments": {"x": "now"}}}  # fmt: skip
    open_fds = [conn.fileno(), stdout_r]
    send(stdin_w, hello_call)
    said, out = read(open_fds, conn.fileno(), stdout_r, until=b'"id":2')
    send(stdin_w, [stop_call])  # the guard trips: the forged stand-in "aborts the run"
    more_said, more_out = read(open_fds, conn.fileno(), stdout_r)
    said, out = said + more_said, out + more_out
    host = said.decode(errors="replace").strip() or "nothing"
    stand_in = out.decode(errors="replace").strip().replace("\n", " | ") or "none"
    print(f"FORGED-HELLO host: {host} stand-in: {stand_in}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
