"""Reach is the operator's decision, never the plugin's: what of a program a run sees (its file,
a runtime's installation, never the folder above a ``bin/``), what a plugin's MCP servers ask
for and are refused (one note each), and the proxy that never connects to a private, link-local
or metadata address the operator did not name."""

from __future__ import annotations

import dataclasses
import json
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_plugin_evals.agents.cli import confinement_for, reach_of
from pytest_plugin_evals.agents.confine.network import Endpoint, endpoints_from, plan_network
from pytest_plugin_evals.agents.confine.programs import is_runtime, program_reach
from pytest_plugin_evals.agents.mcp import plan_for
from pytest_plugin_evals.util.relay import Proxy, Target, listen
from tests.unit.test_agent_mcp import request_for

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")


def program(path: Path, body: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    path.chmod(0o755)
    return path


# -- the rule: a program, never the folder around it -------------------------------------


def test_a_program_in_a_bin_folder_is_shown_alone(tmp_path: Path) -> None:
    agent = program(tmp_path / "tools" / "bin" / "agent.py")
    (tmp_path / "tools" / "secret").write_text("s")
    found = program_reach(str(agent), [])
    assert found.read == (agent,)
    assert found.refused == (tmp_path / "tools",)


@pytest.mark.parametrize(
    "marker", ["pyvenv.cfg", "lib/python3.12/os.py", "lib/pypy3.10/os.py", "lib/node_modules/"]
)
def test_a_runtimes_installation_comes_with_its_interpreter(tmp_path: Path, marker: str) -> None:
    root = tmp_path / "runtime"
    interpreter = program(root / "bin" / "python3")
    (root / marker.rstrip("/")).parent.mkdir(parents=True, exist_ok=True)
    if marker.endswith("/"):
        (root / marker).mkdir()
    else:
        (root / marker).write_text("")
    found = program_reach(str(interpreter), [])
    assert found.read == (interpreter, root) and found.refused == ()


def test_a_runtime_that_is_the_home_or_holds_a_hidden_folder_is_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "runtime"
    interpreter = program(root / "bin" / "python3")
    (root / "pyvenv.cfg").write_text("")
    assert is_runtime(root)
    assert not is_runtime(root, [root / "project"])  # it holds the folder pytest runs in
    assert program_reach(str(interpreter), [root / "project"]).refused == (root,)
    monkeypatch.setenv("HOME", str(root))
    assert not is_runtime(root)
    monkeypatch.setenv("HOME", str(root / "user"))
    assert not is_runtime(root)  # it holds the home


def test_a_link_shows_where_it_leads_and_that_runtime(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    real = program(venv / "bin" / "python3")
    (venv / "pyvenv.cfg").write_text("")
    link = tmp_path / "home" / "bin" / "py"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    found = program_reach(str(link), [])
    assert set(found.read) == {link, real, venv}
    assert found.refused == (tmp_path / "home",)


def test_only_an_executable_file_when_a_plugin_names_it(tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("KEY")
    assert program_reach(str(secret), [], files_only=True).read == ()
    assert program_reach(str(secret.parent), [], files_only=True).read == ()
    assert program_reach("relative/bin/x", []).read == ()
    assert program_reach(str(tmp_path / "missing" / "bin" / "x"), []).read == ()


# -- a plugin's MCP servers ask; the operator decides --------------------------------------


def hostile_plugin(tmp_path: Path) -> tuple[Path, Path]:
    """A plugin whose ``.mcp.json`` names a program in an operator's ``~/bin``, a data file
    beside it, and an operator's service on loopback; returns the plugin and that home."""
    home = tmp_path / "operator"
    tool = program(home / "bin" / "x")
    (home / "data.json").write_text("{}")
    plugin = tmp_path / "kit"
    servers = {
        "local": {"command": str(tool), "args": ["--db", str(home / "data.json")]},
        "tracker": {"type": "http", "url": "http://127.0.0.1:9911/mcp"},
    }
    for name, body in {
        ".claude-plugin/plugin.json": json.dumps({"name": "kit"}),
        ".mcp.json": json.dumps({"mcpServers": servers}),
        "evals/files-bug/prompt.md": "File a bug.",
    }.items():
        (plugin / name).parent.mkdir(parents=True, exist_ok=True)
        (plugin / name).write_text(body)
    return plugin, home


def test_a_plugins_servers_add_no_folder_and_no_endpoint(tmp_path: Path) -> None:
    plugin, home = hostile_plugin(tmp_path)
    request = request_for(tmp_path, plugin, "with", mode="off")
    reach = reach_of(request, sys.executable, env={}, mcp=plan_for(request))
    assert home / "bin" / "x" in reach.read  # the command, as a file
    assert home not in reach.read and home / "data.json" not in reach.read
    assert reach.endpoints == ()
    assert reach.notes == (
        f"MCP server local: {home} (around {home}/bin/x) not readable (the plugin asked for it;"
        f" the operator can allow it with --eval-allow-read {home})",
        f"MCP server local: {home}/data.json not readable (the plugin asked for it; the "
        f"operator can allow it with --eval-allow-read {home}/data.json)",
        "MCP server tracker: http://127.0.0.1:9911/mcp not reachable (the plugin asked for it;"
        " the operator can allow it with --eval-allow-network 127.0.0.1:9911)",
    )
    shown = confinement_for(request, reach).read
    assert home not in shown


def test_what_the_operator_allows_is_shown_and_not_noted(tmp_path: Path) -> None:
    plugin, home = hostile_plugin(tmp_path)
    request = dataclasses.replace(
        request_for(tmp_path, plugin, "with", mode="off"),
        allow_read=(home,),
        allow_network=(Endpoint("127.0.0.1", 9911),),
    )
    reach = reach_of(request, sys.executable, env={}, mcp=plan_for(request))
    assert reach.notes == ()
    assert reach.endpoints == (Endpoint("127.0.0.1", 9911),)
    assert home in confinement_for(request, reach).read


# -- the proxy: never a private, link-local or metadata address the operator did not name --


@pytest.mark.parametrize(
    "address",
    ["169.254.169.254", "fe80::1", "fd00:ec2::254", "100.100.100.200", "10.1.2.3",
     "172.16.0.1", "192.168.1.1", "100.64.0.1", "fc00::1", "127.0.0.1", "::ffff:169.254.169.254"],
)  # fmt: skip
def test_these_addresses_are_never_reached_unnamed(address: str) -> None:
    from pytest_plugin_evals.util.relay import _never_reached

    assert _never_reached(address)


@pytest.mark.parametrize("address", ["93.184.216.34", "2606:4700::1", "172.32.0.1"])
def test_public_addresses_are_reached(address: str) -> None:
    from pytest_plugin_evals.util.relay import _never_reached

    assert not _never_reached(address)


@pytest.fixture
def service() -> Iterator[tuple[socket.socket, list[int]]]:
    """A loopback service that answers ``pong`` and counts its connections."""
    sock = socket.create_server(("127.0.0.1", 0))
    seen: list[int] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            seen.append(1)
            with conn:
                conn.sendall(b"pong\n")

    threading.Thread(target=serve, daemon=True).start()
    yield sock, seen
    sock.close()


def ask(path: Path, where: str) -> bytes:
    """The proxy's status for ``CONNECT where``, and what came after it."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(path))
        conn.settimeout(10)
        conn.sendall(f"CONNECT {where} HTTP/1.1\r\n\r\n".encode())
        got = b""
        try:
            while b"pong" not in got:
                chunk = conn.recv(64)
                if not chunk:
                    break
                got += chunk
        except TimeoutError:
            pass
    head, _, rest = got.partition(b"\r\n\r\n")
    return head.split()[1] + b" " + rest if head else b"timeout"


def test_the_proxy_refuses_a_name_that_resolves_to_loopback_unless_named(
    tmp_path: Path, service: tuple[socket.socket, list[int]]
) -> None:
    sock, seen = service
    target = Target("localhost", sock.getsockname()[1])
    for named, answer in ((frozenset(), b"403 "), (frozenset({target}), b"200 pong\n")):
        proxy = listen(tmp_path / "p.sock", Proxy(frozenset({target}), named))
        try:
            assert ask(tmp_path / "p.sock", str(target)) == answer
            if not named:
                (note,) = proxy.refused
                assert note.startswith(f"network: {target} refused: it resolves to 127.0.0.1")
                assert f"--eval-allow-network {target}" in note
                assert seen == []
        finally:
            proxy.close()
    assert seen == [1]


def test_the_proxy_refuses_a_metadata_address_at_once(tmp_path: Path) -> None:
    metadata = Target("169.254.169.254", 80)
    proxy = listen(tmp_path / "p.sock", Proxy(frozenset({metadata})))
    try:
        assert ask(tmp_path / "p.sock", str(metadata)) == b"403 "
        assert len(proxy.refused) == 1 and "169.254.169.254" in proxy.refused[0]
    finally:
        proxy.close()


def test_only_the_endpoints_the_operator_named_may_be_private(tmp_path: Path) -> None:
    env = {"ANTHROPIC_BASE_URL": "https://gateway.internal:8443"}
    variables = {"ANTHROPIC_BASE_URL": None, "OTHER_URL": "https://api.example.com"}
    given, default = endpoints_from(env, variables)
    assert given.named and not default.named
    plan = plan_network([given, default, Endpoint("api.example.com", 443)], tmp_path, "u")
    try:
        (listener,) = plan.listeners
        assert isinstance(listener.to, Proxy)
        # Named again by --eval-allow-network: the default is the operator's too.
        named = {Target("gateway.internal", 8443), Target("api.example.com", 443)}
        assert listener.to.named == named
    finally:
        plan.close()
    plan = plan_network([default], tmp_path, "v")
    try:
        (listener,) = plan.listeners
        assert isinstance(listener.to, Proxy) and listener.to.named == frozenset()
    finally:
        plan.close()
