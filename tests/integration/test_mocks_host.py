"""The mock host trusts only the harness: a hostile process plays the stub against a real host.

Every test registers real runs (``prepare_mocks``) with this process's real mock host and then
connects to their sockets as an agent's shell could. Around them sit canaries: a secret file
outside any run, a log that must not be appended to, and a ``sleep`` in a process group of its
own that must survive. What the host refuses, the run records, and ``attach`` turns into the
run's error (``mock_host``).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from pytest_plugin_evals.mocks import (
    MockOptions,
    MockSetup,
    attach,
    collect_calls,
    prepare_mocks,
)
from pytest_plugin_evals.mocks.host import supported
from pytest_plugin_evals.model import Case, Transcript
from pytest_plugin_evals.util.process import RUN_TAG
from tests.helpers import write_tree
from tests.unit.test_mocks_server import talk_over_stdio

pytestmark = pytest.mark.skipif(not supported(), reason="no mock host on this platform")

FORGE = Path(__file__).parents[1] / "agents" / "forge_hello.py"
SECRET = "canary-secret-5f3a9c"
TRACKER = "plugin:tracker-kit:tracker"
FORGED_SPEC = "a process in the run sent the mock host a forged hello (spec path given): refused"


@dataclass
class Canaries:
    secret: Path
    log: Path
    sleeper: subprocess.Popen[bytes]

    def assert_untouched(self) -> None:
        assert self.log.read_text(encoding="utf-8") == "untouched\n"
        time.sleep(0.2)  # a kill, if any, has landed
        assert self.sleeper.poll() is None, "the canary's process group was killed"


@pytest.fixture
def canaries(tmp_path: Path) -> Iterator[Canaries]:
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text(SECRET, encoding="utf-8")
    log = outside / "canary.log"
    log.write_text("untouched\n", encoding="utf-8")
    sleeper = subprocess.Popen(["sleep", "300"], start_new_session=True)
    yield Canaries(secret, log, sleeper)
    sleeper.kill()
    sleeper.wait()


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    return write_tree(
        tmp_path / "kit",
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "tracker-kit"}),
            ".mcp.json": json.dumps({"mcpServers": {"tracker": {"command": "x"}}}),
            "evals/mocks/tracker/create_issue.md": (
                "---\nexpect:\n  priority: [low, medium, high]\n---\nCreated #1: {{input.title}}"
            ),
            "evals/mocks/kb/search.md": "Found {{input.q}}",
            "evals/c/prompt.md": "x",
        },
    )


def make_case(plugin: Path) -> Case:
    evals = plugin / "evals"
    return Case("c", "x", "prose", evals / "c/prompt.md", evals / "c", evals)


@pytest.fixture
def runs() -> Iterator[list[MockSetup]]:
    """Make runs, registered with the host; each closed at the end."""
    made: list[MockSetup] = []
    yield made
    for setup in made:
        setup.close()


def register(
    made: list[MockSetup], plugin: Path, folder: Path, *, with_arm: bool = False
) -> MockSetup:
    """A run registered with the host: the without arm serves ``kb``; the with arm the
    tracker's shadow too."""
    setup = prepare_mocks(
        make_case(plugin), plugin, with_arm, folder, MockOptions(shared_host=True)
    )
    made.append(setup)
    assert setup.socket is not None and setup.socket.is_socket()
    return setup


def stub_argv(setup: MockSetup, server: str) -> list[str]:
    assert setup.mcp_config is not None
    entry = json.loads(setup.mcp_config.read_text(encoding="utf-8"))["mcpServers"][server]
    return [entry["command"], *entry["args"]]


def forge(setup: MockSetup, canaries: Canaries) -> str:
    """The whole attack of :mod:`tests.agents.forge_hello`, on the run's socket."""
    done = subprocess.run(
        [sys.executable, str(FORGE), str(canaries.secret), str(canaries.log),
         str(canaries.sleeper.pid), str(setup.socket)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def send_hello(path: Path, payload: bytes, *, fds: int = 3) -> tuple[str, bytes]:
    """Connect to ``path``, send ``payload`` with ``fds`` pipe ends as the stdio, then ask for
    a tool as MCP would. Returns what the host said on the socket and what a stand-in (if one
    was started) wrote on the stdout given."""
    stdin_r, stdin_w = os.pipe()
    stdout_r, stdout_w = os.pipe()
    given = [stdin_r, stdout_w, stdout_w][:fds]
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(str(path))
    except OSError:
        conn.close()
        for fd in (stdin_r, stdin_w, stdout_r, stdout_w):
            os.close(fd)
        raise
    if given:
        socket.send_fds(conn, [payload], given)
    else:
        conn.sendall(payload)
    os.close(stdin_r)
    os.close(stdout_w)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "x", "version": "1"}}}  # fmt: skip
    with contextlib.suppress(OSError):
        os.write(stdin_w, (json.dumps(init) + "\n").encode())
    said, out = b"", b""
    watched = [conn.fileno(), stdout_r]
    deadline = time.monotonic() + 10
    while watched and time.monotonic() < deadline:
        for fd in select.select(watched, [], [], 1)[0]:
            try:
                chunk = os.read(fd, 65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                watched.remove(fd)
            elif fd == stdout_r:
                out += chunk
            else:
                said += chunk
    os.close(stdin_w)
    os.close(stdout_r)
    conn.close()
    return said.decode(), out


def host_lines(setup: MockSetup) -> list[dict[str, Any]]:
    assert setup.calls_file is not None
    lines = [json.loads(x) for x in setup.calls_file.read_text(encoding="utf-8").splitlines()]
    return [x["mockHost"] for x in lines if "mockHost" in x]


def run_error(setup: MockSetup) -> tuple[str | None, str | None]:
    transcript = Transcript(final_message="done")
    attach(setup, transcript)
    return transcript.infra_error, transcript.error


def test_a_hello_naming_a_spec_is_refused_and_nothing_outside_is_touched(
    plugin: Path, tmp_path: Path, runs: list[MockSetup], canaries: Canaries
) -> None:
    setup = register(runs, plugin, tmp_path / "a", with_arm=True)
    said = forge(setup, canaries)
    assert said.startswith(
        "FORGED-HELLO host: refused by the mock host: a process in the run "
        "sent the mock host a forged hello (spec path given) stand-in: none"
    )
    assert SECRET not in said
    canaries.assert_untouched()
    assert host_lines(setup) == [
        {"refused": "a process in the run sent the mock host a forged hello (spec path given)"}
    ]
    assert run_error(setup) == ("mock_host", FORGED_SPEC)
    # The run's own stand-ins still start, on the same socket.
    assert talk_over_stdio(stub_argv(setup, "kb")) == (["search"], "Found release")


def test_the_host_never_opens_a_path_the_client_names(
    plugin: Path, tmp_path: Path, runs: list[MockSetup]
) -> None:
    """The named spec is a FIFO: had anything opened it for reading, a writer could open it."""
    setup = register(runs, plugin, tmp_path / "a")
    fifo = tmp_path / "spec.fifo"
    os.mkfifo(fifo)
    hello = {"server": "kb", "spec": str(fifo), "calls": str(fifo), "root": "/"}
    said, out = send_hello(setup.socket or Path(), json.dumps(hello).encode())
    assert said.startswith("refused by the mock host: ") and out == b""
    time.sleep(0.2)
    with pytest.raises(OSError):  # ENXIO: no reader ever opened it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert run_error(setup) == ("mock_host", FORGED_SPEC)


@pytest.mark.parametrize(
    ("hello", "what"),
    [
        ({"server": "kb", "pgid": 1, "calls": "/x"},
         "sent the mock host a forged hello (fields it may not send: 'calls', 'pgid')"),
        ({"server": "kb", "parentPgid": 1, "pid": 2, "ppid": 3},
         "sent the mock host a forged hello (fields it may not send: 'parentPgid', 'pid', "
         "'ppid')"),
        ({"server": "evil"}, "asked the mock host for a server the run does not have ('evil')"),
        ({"server": ""}, "sent the mock host a malformed hello (no server name)"),
        ([1, 2], "sent the mock host a malformed hello (not a JSON object)"),
        (b"\xff not json", "sent the mock host a malformed hello (not JSON)"),
        (b"x" * 2000, "sent the mock host a malformed hello (too long)"),
    ],
    ids=["paths-and-pgid", "pids", "unknown-server", "no-name", "list", "not-json", "long"],
)  # fmt: skip
def test_any_other_hello_is_refused_and_recorded(
    plugin: Path,
    tmp_path: Path,
    runs: list[MockSetup],
    canaries: Canaries,
    hello: Any,
    what: str,
) -> None:
    setup = register(runs, plugin, tmp_path / "a")
    payload = hello if isinstance(hello, bytes) else json.dumps(hello).encode()
    said, out = send_hello(setup.socket or Path(), payload)
    assert said == f"refused by the mock host: a process in the run {what}\n"
    assert out == b""  # no stand-in was started on the stdio given
    canaries.assert_untouched()
    assert run_error(setup) == ("mock_host", f"a process in the run {what}: refused")


def test_a_hello_without_its_stdio_is_refused(
    plugin: Path, tmp_path: Path, runs: list[MockSetup]
) -> None:
    setup = register(runs, plugin, tmp_path / "a")
    said, _ = send_hello(setup.socket or Path(), b'{"server": "kb"}', fds=0)
    what = "sent the mock host a hello without its stdio (0 descriptors, 3 expected)"
    assert said == f"refused by the mock host: a process in the run {what}\n"


def test_a_run_serves_only_its_own_servers_whatever_another_run_has(
    plugin: Path, tmp_path: Path, runs: list[MockSetup], canaries: Canaries
) -> None:
    """Run A (without arm) has kb; run B (with arm) has the tracker too. On A's socket the
    tracker is a server A does not have; naming B's socket in the hello changes nothing."""
    a = register(runs, plugin, tmp_path / "a")
    b = register(runs, plugin, tmp_path / "b", with_arm=True)
    assert a.socket != b.socket
    said, out = send_hello(a.socket or Path(), json.dumps({"server": TRACKER}).encode())
    assert said.startswith("refused by the mock host: ") and out == b""
    hello = {"server": TRACKER, "socket": str(b.socket), "run": b.run_token}
    said, out = send_hello(a.socket or Path(), json.dumps(hello).encode())
    assert said.startswith("refused by the mock host: ") and out == b""
    assert run_error(a) == (
        "mock_host",
        "a process in the run asked the mock host for a server the run does not have "
        f"('{TRACKER}'): refused (and 1 more refusal)",
    )
    assert host_lines(a)[1] == {
        "refused": "a process in the run sent the mock host a forged hello (fields it may "
        "not send: 'run', 'socket')"
    }
    assert b.calls_file is not None and b.calls_file.read_text(encoding="utf-8") == ""
    assert run_error(b) == (None, None)
    canaries.assert_untouched()


def test_a_finished_runs_socket_is_gone_and_serves_nothing(
    plugin: Path, tmp_path: Path, runs: list[MockSetup]
) -> None:
    setup = register(runs, plugin, tmp_path / "a")
    assert setup.socket is not None
    early = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    early.connect(str(setup.socket))  # connected while the run lived, hello sent after it ended
    time.sleep(0.2)  # accepted: waiting for its hello
    setup.close()
    assert not setup.socket.exists()
    stdin_r, stdin_w = os.pipe()
    with contextlib.suppress(OSError):
        socket.send_fds(early, [b'{"server": "kb"}'], [stdin_r, stdin_w, stdin_w])
    early.settimeout(5)
    try:
        said = early.recv(100)
    except ConnectionResetError:
        said = b""
    assert said == b""  # closed, nothing said, nothing started
    os.close(stdin_r)
    os.close(stdin_w)
    early.close()
    with pytest.raises(OSError):
        send_hello(setup.socket, b'{"server": "kb"}')
    assert setup.calls_file is not None and setup.calls_file.read_text(encoding="utf-8") == ""
    setup.close()  # a second close does nothing


def test_a_silent_connection_does_not_hold_up_the_others(
    plugin: Path, tmp_path: Path, runs: list[MockSetup]
) -> None:
    setup = register(runs, plugin, tmp_path / "a")
    idle = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(3)]
    for conn in idle:
        conn.connect(str(setup.socket))
    start = time.monotonic()
    assert talk_over_stdio(stub_argv(setup, "kb")) == (["search"], "Found release")
    assert time.monotonic() - start < 4  # not after the idle ones' 5 s
    for conn in idle:
        conn.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another user")
def test_a_peer_of_another_user_is_refused(
    plugin: Path, tmp_path: Path, runs: list[MockSetup]
) -> None:
    setup = register(runs, plugin, tmp_path / "a")
    assert setup.socket is not None
    os.chmod(setup.socket.parent, 0o755)  # only so that another user can reach it at all
    os.chmod(setup.socket, 0o666)
    code = (
        "import os, socket, sys; os.setgid(65534); os.setuid(65534); "
        "c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); print(c.recv(200).decode())"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, str(setup.socket)],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    os.chmod(setup.socket.parent, 0o700)
    what = "a process of another user (uid 65534) connected to the run's mock host socket"
    assert done.stdout.strip() == f"refused by the mock host: {what}", done.stderr
    assert run_error(setup) == ("mock_host", f"{what}: refused")


def test_an_abort_kills_the_runs_processes_and_nothing_else(
    plugin: Path, tmp_path: Path, canaries: Canaries
) -> None:
    """The registered token decides: a process carrying it dies with the run; a process of
    another run, one in a group of its own and the harness survive."""
    token, other = "run-token-0123", "run-token-4567"
    setup = prepare_mocks(
        make_case(plugin), plugin, True, tmp_path / "a", MockOptions(shared_host=True),
        run_token=token,
    )  # fmt: skip
    try:
        assert setup.environment() == {RUN_TAG: token}
        env = {**os.environ, RUN_TAG: token}
        victim = subprocess.Popen(["sleep", "300"], env=env, start_new_session=True)
        neighbour = subprocess.Popen(
            ["sleep", "300"], env={**os.environ, RUN_TAG: other}, start_new_session=True
        )
        agent = subprocess.Popen(
            stub_argv(setup, TRACKER), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        assert agent.stdin is not None and agent.stdout is not None
        messages = [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "x", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "create_issue", "arguments": {"title": "T", "priority": "urgent"}}},
        ]  # fmt: skip
        agent.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        agent.stdin.flush()
        assert agent.wait(timeout=30) == -signal.SIGKILL  # the stub carried the token
        agent.stdin.close()
        agent.stdout.close()
        assert victim.wait(timeout=10) == -signal.SIGKILL
        assert neighbour.poll() is None
        canaries.assert_untouched()
        outcome = collect_calls(setup)
        assert outcome.aborted is not None and outcome.aborted.tool == "create_issue"
        assert outcome.host_error is None
        neighbour.kill()
        neighbour.wait()
    finally:
        setup.close()


def test_an_in_process_agents_abort_only_records(plugin: Path, tmp_path: Path) -> None:
    token = "run-token-89ab"
    setup = prepare_mocks(
        make_case(plugin), plugin, True, tmp_path / "a", MockOptions(shared_host=True),
        run_token=token, kill_agent=False,
    )  # fmt: skip
    try:
        victim = subprocess.Popen(
            ["sleep", "300"], env={**os.environ, RUN_TAG: token}, start_new_session=True
        )
        argv = stub_argv(setup, TRACKER)

        async def talk() -> str:
            from mcp import Client, StdioServerParameters, types

            params = StdioServerParameters(command=argv[0], args=argv[1:])
            async with Client(params) as client:
                result = await client.call_tool("create_issue", {"title": "T", "priority": "x"})
                first = result.content[0]
                assert isinstance(first, types.TextContent)
                return first.text

        assert anyio.run(talk).startswith("run aborted by the mock: ")
        assert victim.poll() is None
        assert collect_calls(setup).aborted is not None
        victim.kill()
        victim.wait()
    finally:
        setup.close()


def test_a_flood_of_refusals_is_counted_not_written_out(
    plugin: Path, tmp_path: Path, runs: list[MockSetup]
) -> None:
    setup = register(runs, plugin, tmp_path / "a")
    for n in range(25):
        said, _ = send_hello(setup.socket or Path(), json.dumps({"server": f"x{n}"}).encode())
        assert said.startswith("refused by the mock host: ")
    setup.close()
    assert len(host_lines(setup)) == 21  # 20 refusals, then how many more
    assert host_lines(setup)[-1] == {"more": 5}
    assert run_error(setup) == (
        "mock_host",
        "a process in the run asked the mock host for a server the run does not have ('x0'): "
        "refused (and 24 more refusals)",
    )
