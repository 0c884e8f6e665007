"""The stand-in's launcher: hands this process's stdio to the mock host, which serves it.

Run by the agent as ``python -I -S stub.py <host socket> <spec.json>`` (standard library only,
no site-packages: it starts in milliseconds). It passes its stdin, stdout and stderr to the host
over the Unix socket together with the spec path and its own process ids; the host forks a
stand-in that already has the ``mcp`` SDK loaded and serves MCP on those descriptors. The stub
waits until that stand-in ends. When the host cannot be reached it becomes the stand-in itself
(``python -m pytest_plugin_evals.mocks.server <spec.json>``), only slower to start.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys

SERVER_MODULE = "pytest_plugin_evals.mocks.server"


def main() -> None:
    socket_path, spec = sys.argv[1], sys.argv[2]
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(socket_path)
        hello = {"spec": spec, "pgid": os.getpgrp(), "ppid": os.getppid(), "pid": os.getpid()}
        with contextlib.suppress(OSError):  # a server in a group of its own (Codex): the agent's
            hello["parentPgid"] = os.getpgid(os.getppid())
        socket.send_fds(conn, [json.dumps(hello).encode()], [0, 1, 2])
    except (OSError, AttributeError):
        os.execv(sys.executable, [sys.executable, "-m", SERVER_MODULE, spec])
    try:
        while conn.recv(256):  # the host's stand-in holds the other end until it ends
            pass
    except (OSError, KeyboardInterrupt):
        pass


if __name__ == "__main__":
    main()
