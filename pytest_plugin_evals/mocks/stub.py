"""The stand-in's launcher: hands this process's stdio to the mock host, which serves it.

Run by the agent as ``python -I -S stub.py <the run's socket> <server>`` (standard library only,
no site-packages: it starts in milliseconds). It passes its stdin, stdout and stderr to the host
over the run's Unix socket with the server's name, and nothing else: the host knows the run by
the socket, and everything the stand-in serves, records and may kill by what the harness
registered (see :mod:`.host`). The host forks a stand-in that already has the ``mcp`` SDK loaded
and serves MCP on those descriptors; the stub waits until that stand-in ends. When the host
cannot be reached, or refuses, the stub says so on its stderr and exits 1: the agent sees an MCP
server that did not start.
"""

from __future__ import annotations

import json
import socket
import sys


def main() -> int:
    socket_path, server = sys.argv[1], sys.argv[2]
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(socket_path)
        socket.send_fds(conn, [json.dumps({"server": server}).encode()], [0, 1, 2])
    except OSError as exc:
        print(f"mock stand-in {server}: the mock host is not reachable: {exc}", file=sys.stderr)
        return 1
    try:
        # The host's stand-in holds the other end until it ends; the host itself only ever
        # writes here to say it refused.
        said = conn.recv(4096)
        if said:
            sys.stderr.write(said.decode("utf-8", errors="replace"))
            return 1
        return 0
    except (OSError, KeyboardInterrupt):
        return 0


if __name__ == "__main__":
    sys.exit(main())
