"""Which of Copilot CLI's tools a run is offered and may use: pure rules, no process.

The case's ``allowed_tools`` are in Claude Code's names (the canonical ones). A run is offered
(``--available-tools``) only:

* the readers ``view``, ``glob`` and ``grep``, always: Copilot's own path check holds them to
  the working directory (and the folders given with ``--add-dir``);
* ``skill``, always, as Claude Code offers its ``Skill`` tool whatever a case lists (Copilot
  loads no skill at all without it);
* the read-only tools the case lists: ``Task``/``Agent`` → ``task`` and its agent tools;
* a tool that acts only when the case lists it **and** the operator grants it
  (``--eval-allow-tools``): ``Write`` → ``create``, ``Edit``/``MultiEdit`` → ``edit`` (approved
  with ``--allow-tool write``, which Copilot holds to the working directory), ``Bash`` →
  ``bash`` and its session tools (approved with ``--allow-tool shell`` or, for a narrowed grant
  ``Bash(npm test *)``, ``shell(npm test:*)``).

Everything else is not offered, and nothing is approved beyond the above (no
``--allow-all-tools``): an unapproved call is refused, since no one can answer the prompt.
A case entry Copilot has no tool or rule for (a ``Write(docs/**)`` path pattern, web tools)
is dropped with a note. The case's ``disallowed_tools`` and ``--eval-disallow-tools`` remove
tools whatever else says.

MCP servers (:func:`plan_mcp`, from :mod:`pytest_plugin_evals.agents.mcp`'s plan): each server
of the run is given in ``--additional-mcp-config`` (which replaces the plugin's own server of
the same name) and offered whole (``--available-tools=<server>``: Copilot names its tools
``<server>-<tool>``); a stand-in's calls are approved (``--allow-tool=<server>``), a real
server's only for the tools the case lists by Claude Code's name and the operator grants
(``--allow-tool=<server>(<tool>)``). The plugin's servers that must not start are turned off
(``--disable-mcp-server``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_plugin_evals.agents.mcp import McpPlan
from pytest_plugin_evals.agents.permissions import ToolAccess, base_tool, grants_for

#: Offered in every run.
READERS = ("view", "glob", "grep")
#: Offered in every run too (unless disallowed): Claude Code offers its Skill tool whatever a
#: case lists, and Copilot loads no skill without it.
ALWAYS = (*READERS, "skill")

#: Read-only canonical tools: offered when the case lists them, no grant needed.
READ_ONLY: dict[str, tuple[str, ...]] = {
    "Read": READERS,
    "Glob": READERS,
    "Grep": READERS,
    "LS": READERS,
    "Skill": ("skill",),
    "Task": ("task", "read_agent", "list_agents", "write_agent"),
    "Agent": ("task", "read_agent", "list_agents", "write_agent"),
}

#: Canonical tools that act: offered when listed and granted, with their approval rule.
WRITERS: dict[str, tuple[str, ...]] = {
    "Write": ("create",),
    "Edit": ("edit",),
    "MultiEdit": ("edit",),
}
#: A canonical reader -> the one Copilot tool it names.
READERS_OF = {"Read": "view", "LS": "view", "Glob": "glob", "Grep": "grep"}
SHELL_NAMES = ("bash", "read_bash", "write_bash", "stop_bash", "list_bash")


def shell_rule(grant: str) -> str:
    """A Claude Code shell grant as a Copilot approval rule: ``Bash`` → ``shell``,
    ``Bash(npm test *)`` or ``Bash(npm test:*)`` → ``shell(npm test:*)``, ``Bash(git status)``
    → ``shell(git status)``."""
    spec = grant.strip()[len(base_tool(grant)) :].strip()
    if not spec.startswith("(") or not spec.endswith(")"):
        return "shell"
    command = spec[1:-1].strip()
    for tail in (":*", " *", "*"):
        if command.endswith(tail):
            return f"shell({command[: -len(tail)].strip()}:*)"
    return f"shell({command})"


@dataclass(frozen=True)
class CopilotTools:
    #: ``--available-tools``: what the model is offered.
    available: tuple[str, ...]
    #: ``--allow-tool`` rules.
    allow: tuple[str, ...]
    #: ``--deny-tool`` rules.
    deny: tuple[str, ...]
    #: Whether a shell is offered.
    shell: bool
    #: Case entries dropped for want of a grant (add ``--eval-allow-tools``).
    not_granted: tuple[str, ...] = ()
    #: Case entries Copilot has no tool or rule for.
    unsupported: tuple[str, ...] = ()


def plan_tools(access: ToolAccess) -> CopilotTools:
    grants = access.grants
    available: list[str] = list(ALWAYS)
    allow: list[str] = []
    not_granted: list[str] = []
    unsupported: list[str] = []
    for entry in access.case_tools:
        if entry.startswith("mcp__"):
            continue  # MCP tools: plan_mcp
        tool = base_tool(entry)
        if tool in READ_ONLY:
            available.extend(READ_ONLY[tool])
        elif tool == "Bash" or tool in WRITERS:
            forms = grants_for(entry, grants)
            if not forms:
                not_granted.append(entry)
            elif tool == "Bash":
                available.extend(SHELL_NAMES)
                allow.extend(shell_rule(form) for form in forms)
            elif any(base_tool(f) != f for f in forms):
                unsupported.append(entry)  # Copilot cannot hold a write to a path pattern
            else:
                available.extend(WRITERS[tool])
                allow.append("write")
        else:
            unsupported.append(entry)
    denied_tools = {base_tool(e) for e in access.disallowed}
    removed: set[str] = set()
    for tool in denied_tools:
        removed.update(READ_ONLY.get(tool, ()) if tool not in READERS_OF else (READERS_OF[tool],))
        removed.update(WRITERS.get(tool, ()))
        if tool == "Bash":
            removed.update(SHELL_NAMES)
    deny = ["shell"] if "Bash" in denied_tools else []
    if {"Write", "Edit"} <= denied_tools:
        deny.append("write")
    offered = [t for t in dict.fromkeys(available) if t not in removed]
    if not any(t in offered for t in ("create", "edit")):
        allow = [rule for rule in allow if rule != "write"]
    shell = "bash" in offered
    if not shell:
        allow = [rule for rule in allow if not rule.startswith("shell")]
    return CopilotTools(
        available=tuple(offered),
        allow=tuple(dict.fromkeys(allow)),
        deny=tuple(dict.fromkeys(deny)),
        shell=shell,
        not_granted=tuple(not_granted),
        unsupported=tuple(unsupported),
    )


@dataclass(frozen=True)
class CopilotMcp:
    """The MCP part of a Copilot run's command line."""

    #: ``--additional-mcp-config``'s document (``{"mcpServers": {}}``: no servers to give).
    config: Mapping[str, Any]
    #: Server names for ``--available-tools`` (each offers all its tools).
    available: tuple[str, ...] = ()
    #: ``--allow-tool`` rules: ``<server>`` or ``<server>(<tool>)``.
    allow: tuple[str, ...] = ()
    #: ``--deny-tool`` rules.
    deny: tuple[str, ...] = ()
    #: ``--disable-mcp-server`` names: plugin servers that must not start.
    disable: tuple[str, ...] = ()
    #: Case entries of a real server's tools not granted (add ``--eval-allow-tools``).
    not_granted: tuple[str, ...] = ()


def copilot_server(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """A Claude-format MCP server entry in Copilot's ``mcp-config.json`` form; None when it
    has neither a command nor a url."""
    command = config.get("command")
    if isinstance(command, str):
        entry: dict[str, Any] = {"type": "stdio", "command": command, "tools": ["*"]}
        for key in ("args", "env", "cwd"):
            if config.get(key):
                entry[key] = config[key]
        return entry
    url = config.get("url")
    if isinstance(url, str):
        kind = config.get("type")
        entry = {"type": kind if kind in ("http", "sse") else "http", "url": url, "tools": ["*"]}
        if config.get("headers"):
            entry["headers"] = config["headers"]
        return entry
    return None


def plan_mcp(plan: McpPlan, access: ToolAccess) -> CopilotMcp:
    """What Copilot gets for the run's MCP servers (see the module's docstring).

    A disallowed entry by Claude Code's name denies that tool (``<server>(<tool>)``: still
    offered, since Copilot cannot hide one tool of a server, but refused), or the whole server
    for ``mcp__<…>__*`` or the bare prefix (not offered at all)."""
    servers: dict[str, Any] = {}
    available: list[str] = []
    allow: list[str] = []
    deny: list[str] = []
    not_granted: list[str] = []
    for server in plan.servers:
        entry = copilot_server(server.config)
        if entry is None:
            continue
        servers[server.name] = entry
        blocked = access.denied(server)
        if "*" in blocked:
            deny.append(server.name)
            continue
        available.append(server.name)
        deny.extend(f"{server.name}({tool})" for tool in blocked)
        granted = access.granted(server)
        allow.extend(server.name if tool == "*" else f"{server.name}({tool})" for tool in granted)
        not_granted.extend(access.not_granted(server))
    disable = tuple(name for name in plan.suppressed if name not in servers)
    return CopilotMcp(
        config={"mcpServers": servers},
        available=tuple(available),
        allow=tuple(dict.fromkeys(allow)),
        deny=tuple(dict.fromkeys(deny)),
        disable=disable,
        not_granted=tuple(not_granted),
    )
