"""A run's MCP servers as Codex's ``mcp_servers`` override: stand-ins approved, real servers
limited to the tools listed and granted, the plugin's own servers turned off by name, names
Codex cannot take renamed and mapped back."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_plugin_evals.agents.codex.servers import (
    codex_name,
    codex_servers,
    failed_servers,
    toml_value,
)
from pytest_plugin_evals.agents.mcp import McpPlan, McpServer, plugin_prefix
from pytest_plugin_evals.agents.permissions import ToolAccess

TRACKER = plugin_prefix("tracker-kit", "tracker")
PEOPLE = plugin_prefix("tracker-kit", "people")
#: Reads Codex's TOML the way Codex does (a standard module from Python 3.11).
tomllib = pytest.importorskip("tomllib")

STUB = {"type": "stdio", "command": "/py", "args": ["-I", "-S", "/stub.py", "/s/host.sock"]}


def table(servers: Any) -> dict[str, Any]:
    """The TOML Codex parses from the ``-c`` override."""
    flag, override = servers.args()
    assert flag == "-c" and override.startswith("mcp_servers=")
    doc = tomllib.loads(override.replace("mcp_servers=", "mcp_servers = ", 1))
    found: dict[str, Any] = doc["mcp_servers"]
    return found


def plan(*servers: McpServer, suppressed: tuple[str, ...] = ()) -> McpPlan:
    prefixes = {s.name: s.prefix for s in servers} | {"tracker": TRACKER, "wiki": "mcp__w__"}
    return McpPlan(servers=servers, suppressed=suppressed, prefixes=prefixes)


def test_stand_ins_are_approved_and_the_plugins_own_servers_turned_off() -> None:
    shadow = McpServer("tracker", STUB, TRACKER, stand_in=True)
    kb = McpServer("kb", STUB, "mcp__kb__", stand_in=True)
    servers = codex_servers(plan(shadow, kb, suppressed=("tracker", "wiki")), ToolAccess())
    got = table(servers)
    assert got["tracker"] == {
        "command": "/py",
        "args": ["-I", "-S", "/stub.py", "/s/host.sock"],
        "required": True,
        "default_tools_approval_mode": "approve",
    }
    assert got["kb"] == got["tracker"]
    # wiki is withheld: an entry that only turns Codex's own start of it off.
    assert got["wiki"] == {"command": "true", "enabled": False}
    assert set(got) == {"tracker", "kb", "wiki"}
    assert servers.canonical(plan(shadow, kb), "tracker", "create_issue") == (
        "mcp__plugin_tracker-kit_tracker__create_issue"
    )
    assert servers.canonical(plan(shadow, kb), "kb", "search") == "mcp__kb__search"


def test_a_real_server_offers_only_listed_and_granted_tools() -> None:
    config = {"command": "node", "args": ["/p/people.js"], "env": {"TOKEN_FILE": "/p/t"},
              "cwd": "/p"}  # fmt: skip
    people = McpServer("people", config, PEOPLE, stand_in=False)
    http = McpServer("docs", {"type": "http", "url": "https://d.example/mcp",
                              "headers": {"X-Team": "a"}}, "mcp__d__", stand_in=False)  # fmt: skip
    listed = [f"{PEOPLE}lookup", f"{PEOPLE}delete_person", "mcp__d__*"]
    servers = codex_servers(
        plan(people, http), ToolAccess(listed, [f"{PEOPLE}lookup", "mcp__d__*"])
    )
    got = table(servers)
    assert got["people"] == {
        "command": "node",
        "args": ["/p/people.js"],
        "env": {"TOKEN_FILE": "/p/t"},
        "cwd": "/p",
        "required": True,
        "default_tools_approval_mode": "approve",
        "enabled_tools": ["lookup"],  # delete_person is listed, not granted
    }
    assert got["docs"] == {
        "url": "https://d.example/mcp",
        "http_headers": {"X-Team": "a"},
        "required": True,
        "default_tools_approval_mode": "approve",  # every tool: mcp__d__* listed and granted
    }
    # Nothing listed: the server starts and offers nothing.
    assert (
        table(codex_servers(plan(people), ToolAccess([], ["mcp__*"])))["people"]["enabled_tools"]
        == []
    )


def test_disallowed_tools_are_removed_even_from_a_stand_in() -> None:
    kb = McpServer("kb", STUB, "mcp__kb__", stand_in=True)
    got = table(codex_servers(plan(kb), ToolAccess(disallowed=["mcp__kb__delete", "Bash"])))
    assert got["kb"]["disabled_tools"] == ["delete"]
    got = table(codex_servers(plan(kb), ToolAccess(disallowed=["mcp__kb__*"])))
    assert got["kb"]["enabled_tools"] == [] and "disabled_tools" not in got["kb"]


def test_a_name_codex_cannot_take_is_renamed_and_mapped_back() -> None:
    assert codex_name("todo.list") == "todo_list" and codex_name("a-b_c") == "a-b_c"
    odd = McpServer("my.server", {"command": "x"}, plugin_prefix("p", "my.server"), stand_in=False)
    the_plan = plan(odd)
    servers = codex_servers(the_plan, ToolAccess())
    got = table(servers)
    assert got["my_server"]["command"] == "x"
    # The plugin would start it under its own name too: that one is turned off.
    assert got["my.server"] == {"command": "true", "enabled": False}
    assert servers.canonical(the_plan, "my_server", "t") == "mcp__plugin_p_my_server__t"


def test_no_server_no_override_and_toml_escapes() -> None:
    assert codex_servers(McpPlan(), ToolAccess()).args() == []
    assert toml_value({"a b": ['q"uote', "back\\slash", "ünï"], "n": 3, "f": False}) == (
        '{"a b"=["q\\"uote","back\\\\slash","ünï"],"n"=3,"f"=false}'
    )
    parsed = tomllib.loads("v = " + toml_value({"a b": ['q"uote', "back\\slash"], "n": 3}))
    assert parsed["v"] == {"a b": ['q"uote', "back\\slash"], "n": 3}


def test_failed_servers_tells_the_plugins_own_from_a_stand_in() -> None:
    kb = McpServer("kb", STUB, "mcp__kb__", stand_in=True)
    people = McpServer("people", {"command": "node"}, PEOPLE, stand_in=False)
    both = plan(kb, people)
    servers = codex_servers(both, ToolAccess())
    said = "Error: required MCP servers failed to initialize: people: handshake failed"
    assert failed_servers(both, servers, said) == (["people"], False)
    said = "required MCP servers failed to initialize: kb: exited, people: exited"
    assert failed_servers(both, servers, said) == (["kb", "people"], True)
    assert failed_servers(both, servers, "people: something else") == ([], False)


def test_variables_reach_a_server_the_ways_codex_takes_them() -> None:
    """Claude Code expands ``${VAR}`` in a server's configuration; Codex takes a variable only
    as an ``env`` entry of its own name (``env_vars``), a whole header value
    (``env_http_headers``) or a bearer token (``bearer_token_env_var``) — and never puts the
    value on its command line. Anything else is passed as written, with a note."""
    local = McpServer(
        "people",
        {"command": "node", "args": ["/p/s.js", "--team=${TEAM}"],
         "env": {"PEOPLE_TOKEN": "${PEOPLE_TOKEN}", "TOKEN": "${SECRET}", "MODE": "fast"}},
        PEOPLE, stand_in=False,
    )  # fmt: skip
    remote = McpServer(
        "docs",
        {"type": "http", "url": "https://d.example/mcp",
         "headers": {"Authorization": "Bearer ${DOCS_KEY}", "X-Team": "${TEAM}",
                     "X-Mixed": "team-${TEAM}", "X-Plain": "a"}},
        "mcp__d__", stand_in=False,
    )  # fmt: skip
    servers = codex_servers(plan(local, remote), ToolAccess())
    got = table(servers)
    assert got["people"]["env"] == {"TOKEN": "${SECRET}", "MODE": "fast"}
    assert got["people"]["env_vars"] == ["PEOPLE_TOKEN"]
    assert got["docs"]["bearer_token_env_var"] == "DOCS_KEY"
    assert got["docs"]["env_http_headers"] == {"X-Team": "TEAM"}
    assert got["docs"]["http_headers"] == {"X-Mixed": "team-${TEAM}", "X-Plain": "a"}
    assert servers.notes == (
        "MCP server people: Codex does not expand the variables in args[1], env TOKEN "
        "(passed as written)",
        "MCP server docs: Codex does not expand the variables in header X-Mixed "
        "(passed as written)",
    )
