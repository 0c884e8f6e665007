"""A ``cmd:`` agent that floods its one endpoint with connections: the run holds 64 at once,
the rest are refused as they arrive and counted in one note, and the harness (pytest's own
process) never holds a thread per connection. CI runs this module as root and again as an
ordinary user."""

from __future__ import annotations

import json
import shlex
import socket
import sys
import threading
from collections.abc import Iterator

import pytest

from pytest_plugin_evals.agents import confine

#: How many connections the agent opens, and how many a run holds at once (the default).
FLOOD = 200
HELD = 64

#: Opens FLOOD connections to 127.0.0.1:PORT and keeps them; says how many stayed open.
AGENT = """\
import socket, sys, time
sys.stdin.read()
port, flood, held = (int(a) for a in sys.argv[1:4])
conns = [socket.create_connection(("127.0.0.1", port), timeout=20) for _ in range(flood)]
for conn in conns:
    conn.setblocking(False)
def shut(conn):
    try:
        return conn.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
end = time.monotonic() + 20
while sum(map(shut, conns)) < flood - held and time.monotonic() < end:
    time.sleep(0.1)
time.sleep(0.5)
refused = sum(map(shut, conns))
print(f"held={flood - refused} refused={refused}")
"""


@pytest.fixture
def silent_server() -> Iterator[socket.socket]:
    """The agent's endpoint: it never accepts (the kernel queues each connection), so every
    connection the relay makes stays open until the run ends."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1024)
    yield server
    server.close()


def relay_threads() -> int:
    return sum(t.name.startswith("evals-relay") for t in threading.enumerate())


def test_a_flood_of_connections_is_held_to_the_runs_limit(
    pytester: pytest.Pytester, silent_server: socket.socket
) -> None:
    why = confine.problem()
    if why is not None:
        pytest.skip(why)
    files = {
        "evals/flood/prompt.md": "---\nruns: 1\n---\nOpen connections.\n",
        "evals/flood/graders/held.md": f"---\ntype: regex\npattern: held={HELD} \n---\n",
        "agent.py": AGENT,
    }
    for name, body in files.items():
        (pytester.path / name).parent.mkdir(parents=True, exist_ok=True)
        (pytester.path / name).write_text(body, encoding="utf-8")
    port = silent_server.getsockname()[1]
    agent = [sys.executable, str(pytester.path / "agent.py"), str(port), str(FLOOD), str(HELD)]
    most, stop = [0], threading.Event()

    def sample() -> None:  # the relay's threads in this process while the run goes on
        while not stop.wait(0.02):
            most[0] = max(most[0], relay_threads())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = pytester.runpytest(
            "evals", "-p", "no:cacheprovider", "--eval-ablation", "none",
            "--eval-agent", "cmd:" + shlex.join(agent),
            "--eval-allow-network", f"127.0.0.1:{port}", "--eval-json", "out.json",
        )  # fmt: skip
    finally:
        stop.set()
        sampler.join()
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    (case,) = doc["cases"]
    (run,) = case["arms"]["with"]
    assert run["infraError"] is None, run
    note = f"network: {FLOOD - HELD} connection(s) refused past {HELD} at once"
    assert note in (run.get("notes") or []), run
    # One thread per held connection, one accepting on the endpoint's socket.
    assert 0 < most[0] <= HELD + 1, most[0]
    assert relay_threads() == 0
    result.assert_outcomes(passed=1)
