"""A run's MCP servers as Codex's ``mcp_servers`` config: one ``-c mcp_servers={…}`` override.

What a run gets is :func:`pytest_plugin_evals.agents.mcp.plan_for`'s: each server of the plan
becomes an entry of Codex's form (``command`` / ``args`` / ``env`` / ``cwd`` for stdio,
``url`` / ``http_headers`` for streamable HTTP) under its own name, and each plugin server
that must not start (``plan.suppressed``) an entry that is ``enabled = false``: Codex starts a
plugin's servers itself when the plugin is installed, and a configured server of the same name
takes the plugin's place (without ``${CLAUDE_PLUGIN_ROOT}``, which Codex does not expand).

Every server given is ``required``: Codex waits for it before its first request, as Claude
Code waits for its MCP servers (without it Codex does not wait, and a server slower to start
than Codex is left out of the first turns: noise no plugin made). A server that does not start
ends the run before it starts (``required MCP servers failed to initialize: <server>: …``):
for a stand-in that is an ``agent_start`` error (the harness failed); for one of the plugin's
own servers it is the plugin's failure — the run is graded on what it did (nothing), with the
error ``the plugin's MCP server <name> did not start: …`` (:func:`failed_servers`).

Tools: ``codex exec`` never asks, so a tool that needs approval is refused. A stand-in's tools
are approved (``default_tools_approval_mode = "approve"``); a real server offers only the tools
the case lists and you grant (``enabled_tools``), and those are approved. Entries of
``disallowed`` (Claude Code's names) are ``disabled_tools``. Codex names a server's tool
``mcp__<server>__<tool>`` and takes only ``[A-Za-z0-9_-]`` in a server's name: another
character becomes ``_`` (:func:`codex_name`), and :class:`CodexServers` maps it back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_plugin_evals.agents.mcp import McpPlan, McpServer
from pytest_plugin_evals.agents.permissions import ToolAccess

#: What Codex takes in a server's name (its tools' namespace).
_SAFE = re.compile(r"[^A-Za-z0-9_-]")

#: The command of an entry that only turns a plugin's server off (never run).
OFF_COMMAND = "true"


def codex_name(name: str) -> str:
    """The name Codex is given for the server ``name``."""
    return _SAFE.sub("_", name) or "_"


def toml_value(value: Any) -> str:
    """``value`` (str, bool, number, list, dict) as a TOML inline value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # JSON's escapes are TOML's
    if isinstance(value, Mapping):
        fields = (f"{toml_value(str(k))}={toml_value(v)}" for k, v in value.items())
        return "{" + ",".join(fields) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


_WHOLE_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_ANY_REF = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}")


def _whole_ref(value: str) -> str | None:
    """``VAR`` when ``value`` is just a reference to it (``${VAR}`` or ``$VAR``), else None."""
    found = _WHOLE_REF.fullmatch(value.strip())
    return (found.group(1) or found.group(2)) if found else None


def _header_ref(key: str, value: str) -> tuple[str, str] | None:
    """How Codex can take a header from a variable: ``("bearer", VAR)`` for
    ``Authorization: Bearer ${VAR}``, ``("header", VAR)`` for a value that is just ``${VAR}``;
    None when it cannot (or the value refers to none)."""
    if key.lower() == "authorization" and value.startswith("Bearer "):
        name = _whole_ref(value[len("Bearer ") :])
        if name is not None:
            return "bearer", name
    name = _whole_ref(value)
    return ("header", name) if name is not None else None


def unexpanded(server: McpServer) -> list[str]:
    """Where ``server``'s configuration refers to a variable in a way Codex cannot give it
    (Claude Code expands ``${VAR}`` everywhere; Codex takes a variable only as a whole
    ``env`` value of the same name, a whole header value, or a bearer token)."""
    places: list[str] = []
    if server.command is not None:
        places += [f"args[{i}]" for i, a in enumerate(server.args) if _ANY_REF.search(a)]
        places += [
            f"env {k}" for k, v in server.env.items() if _ANY_REF.search(v) and _whole_ref(v) != k
        ]
    else:
        if server.url and _ANY_REF.search(server.url):
            places.append("url")
        for key, value in server.headers.items():
            if _ANY_REF.search(value) and _header_ref(key, value) is None:
                places.append(f"header {key}")
    return places


def server_entry(server: McpServer, access: ToolAccess) -> dict[str, Any]:
    """Codex's ``mcp_servers`` entry for ``server``."""
    entry: dict[str, Any] = {}
    if server.command is not None:
        entry["command"] = server.command
        entry["args"] = server.args
        env = {k: v for k, v in server.env.items() if _whole_ref(v) != k}
        passed = [k for k, v in server.env.items() if _whole_ref(v) == k]
        if env:
            entry["env"] = env
        if passed:
            entry["env_vars"] = passed  # Codex passes these from its own environment
        cwd = server.config.get("cwd")
        if isinstance(cwd, str) and cwd:
            entry["cwd"] = cwd
    else:
        entry["url"] = server.url or ""
        headers, from_env = {}, {}
        for key, value in server.headers.items():
            found = _header_ref(key, value)
            if found is None:
                headers[key] = value
            elif found[0] == "bearer":
                entry["bearer_token_env_var"] = found[1]
            else:
                from_env[key] = found[1]
        if headers:
            entry["http_headers"] = headers
        if from_env:
            entry["env_http_headers"] = from_env
    # Codex waits for a required server before its first request (else a server slower to
    # start than Codex is simply not there), and fails the run when it does not start.
    entry["required"] = True
    entry["default_tools_approval_mode"] = "approve"
    granted = access.granted(server)
    if "*" not in granted:
        entry["enabled_tools"] = list(granted)
    disabled = access.denied(server)
    if "*" in disabled:
        entry["enabled_tools"] = []
    elif disabled:
        entry["disabled_tools"] = list(disabled)
    return entry


@dataclass(frozen=True)
class CodexServers:
    """A plan's servers as Codex gets them, and their names back."""

    #: Codex's ``mcp_servers`` table (empty: no override is given).
    table: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Codex's name of a server -> the plan's, where they differ.
    renamed: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def args(self) -> list[str]:
        """``-c mcp_servers={…}`` (nothing when the run has no server to give or turn off)."""
        if not self.table:
            return []
        return ["-c", f"mcp_servers={toml_value(self.table)}"]

    def canonical(self, plan: McpPlan, server: str, tool: str) -> str:
        """Claude Code's name of the tool ``tool`` of the server Codex calls ``server``."""
        return plan.canonical(self.renamed.get(server, server), tool)


def codex_servers(plan: McpPlan, access: ToolAccess) -> CodexServers:
    """The plan's servers in Codex's form (see the module's docstring)."""
    table: dict[str, dict[str, Any]] = {}
    renamed: dict[str, str] = {}
    notes: list[str] = []
    for server in plan.servers:
        name = codex_name(server.name)
        if name in table:
            notes.append(f"MCP server {server.name}: its name is taken, left out")
            continue
        if name != server.name:
            renamed[name] = server.name
        if server.command is None and server.config.get("type") == "sse":
            notes.append(f"MCP server {server.name}: Codex speaks streamable HTTP, not SSE")
        table[name] = server_entry(server, access)
        if places := unexpanded(server):
            notes.append(
                f"MCP server {server.name}: Codex does not expand the variables in "
                f"{', '.join(places)} (passed as written)"
            )
    off = {"command": OFF_COMMAND, "enabled": False}
    # A plugin server given under another name would also start as the plugin declares it.
    given_elsewhere = [s.name for s in plan.servers if not s.stand_in and s.name not in table]
    for name in (*plan.suppressed, *given_elsewhere):
        table.setdefault(name, dict(off))
    return CodexServers(table, renamed, tuple(notes))


#: What Codex says when a required server did not start.
FAILED_TO_START = "required MCP servers failed to initialize"


def failed_servers(plan: McpPlan, servers: CodexServers, said: str) -> tuple[list[str], bool]:
    """The plan's servers Codex says did not start (``said``: its stderr), and whether any of
    them is a stand-in. Empty when Codex said no such thing."""
    if FAILED_TO_START not in said:
        return [], False
    reason = said[said.index(FAILED_TO_START) + len(FAILED_TO_START) :]
    names = {codex: servers.renamed.get(codex, codex) for codex in servers.table}
    failed = [plan_name for codex, plan_name in names.items() if f"{codex}:" in reason]
    stand_ins = {s.name for s in plan.servers if s.stand_in}
    return failed, any(name in stand_ins for name in failed)
