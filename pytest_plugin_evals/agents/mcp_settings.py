"""A run's MCP servers as the ``mcpServers`` setting of the agents that read Gemini CLI's
settings form (Gemini CLI, Qwen Code): a command, its arguments, environment and folder, or an
``httpUrl`` / ``url``, with ``includeTools`` / ``excludeTools``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pytest_plugin_evals.agents.mcp import McpPlan, McpServer
from pytest_plugin_evals.agents.permissions import grants_for


def settings_server(config: dict[str, Any]) -> dict[str, Any] | None:
    """One Claude-format MCP server entry in the ``mcpServers`` form (None: not
    translatable)."""
    kind = config.get("type")
    server: dict[str, Any]
    if isinstance(config.get("command"), str):
        server = {k: config[k] for k in ("command", "args", "env", "cwd") if k in config}
        return server
    url = config.get("url")
    if isinstance(url, str):
        key = "url" if kind == "sse" else "httpUrl"
        server = {key: url}
        if isinstance(config.get("headers"), dict):
            server["headers"] = config["headers"]
        return server
    return None


def _disallowed_of(server: McpServer, disallowed: Iterable[str]) -> tuple[bool, list[str]]:
    """Whether ``disallowed`` (Claude Code's names) takes away every tool of ``server``
    (``mcp__<s>``, ``mcp__<s>__``, ``mcp__<s>__*``), and the tools it names one by one."""
    every = False
    named: list[str] = []
    bare = server.prefix[:-2]
    for entry in (e.strip() for e in disallowed):
        if entry in (bare, server.prefix, server.prefix + "*"):
            every = True
        elif entry.startswith(server.prefix):
            named.append(entry[len(server.prefix) :])
    return every, named


def mcp_servers(
    plan: McpPlan,
    *,
    case_tools: Iterable[str],
    grants: Iterable[str],
    disallowed: Iterable[str],
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The run's ``mcpServers`` setting (under the plan's names), and notes.

    A stand-in offers all its tools; a real server only those the case lists by Claude Code's
    name and the operator grants (``includeTools``; none: the server starts, its tools are not
    offered). The case's and the operator's disallowed MCP tools are left out
    (``excludeTools``, or ``includeTools: []`` for a whole server)."""
    case_tools, disallowed = tuple(case_tools), tuple(disallowed)
    grants = tuple(g.strip() for g in grants if g.strip())
    servers: dict[str, Any] = {}
    notes: list[str] = []
    for server in plan.servers:
        config = settings_server(dict(server.config))
        if config is None:
            notes.append(f"MCP server {server.name}: no command or url, left out")
            continue
        granted = server.granted_tools(case_tools, grants)
        if not server.stand_in:
            notes.extend(
                f"not granted (add --eval-allow-tools): {entry}"
                for entry in case_tools
                if entry.strip().startswith(server.prefix) and not grants_for(entry, grants)
            )
        every, named = _disallowed_of(server, disallowed)
        if every:
            config["includeTools"] = []
        elif "*" not in granted:
            config["includeTools"] = list(granted)
        if named and not every:
            config["excludeTools"] = named
        servers[server.name] = config
    return servers, tuple(notes)
