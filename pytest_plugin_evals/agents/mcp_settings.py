"""The ``settings.json`` of the agents that read Gemini CLI's settings form (Gemini CLI, Qwen
Code): what both get (:func:`settings_form`), and a run's MCP servers as its ``mcpServers``
setting: a command, its arguments, environment and folder, or an ``httpUrl`` / ``url``, with
``includeTools`` / ``excludeTools``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pytest_plugin_evals.agents.launch import NOT_GRANTED
from pytest_plugin_evals.agents.mcp import McpPlan
from pytest_plugin_evals.agents.permissions import ToolAccess


def settings_form(
    auth: str,
    core: Iterable[str],
    *,
    exclude: Iterable[str] = (),
    servers: Mapping[str, Any] | None = None,
    general: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A run's ``settings.json``: API-key auth of the kind ``auth``; no usage statistics,
    telemetry, auto-update or checkpoints (``general`` adds the CLI's own keys); only the
    tools ``core`` names offered (``tools.exclude``: removed even so); its MCP servers."""
    settings: dict[str, Any] = {
        "security": {"auth": {"selectedType": auth}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False, "logPrompts": False},
        "general": {
            "enableAutoUpdate": False,
            "checkpointing": {"enabled": False},
            **(general or {}),
        },
        "tools": {"core": list(dict.fromkeys(core))},
    }
    if exclude := list(dict.fromkeys(exclude)):
        settings["tools"]["exclude"] = exclude
    if servers:
        settings["mcpServers"] = dict(servers)
    return settings


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


def mcp_servers(plan: McpPlan, access: ToolAccess) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The run's ``mcpServers`` setting (under the plan's names), and notes.

    A stand-in offers all its tools; a real server only those the case lists by Claude Code's
    name and the operator grants (``includeTools``; none: the server starts, its tools are not
    offered). The case's and the operator's disallowed MCP tools are left out
    (``excludeTools``, or ``includeTools: []`` for a whole server)."""
    servers: dict[str, Any] = {}
    notes: list[str] = []
    for server in plan.servers:
        config = settings_server(dict(server.config))
        if config is None:
            notes.append(f"MCP server {server.name}: no command or url, left out")
            continue
        notes.extend(NOT_GRANTED.format(tool=entry) for entry in access.not_granted(server))
        granted, denied = access.granted(server), access.denied(server)
        if "*" in denied:
            config["includeTools"] = []
        elif "*" not in granted:
            config["includeTools"] = list(granted)
        if denied and "*" not in denied:
            config["excludeTools"] = list(denied)
        servers[server.name] = config
    return servers, tuple(notes)
