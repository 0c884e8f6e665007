"""A run's opencode configuration (``OPENCODE_CONFIG_CONTENT``): the model provider and the
permissions. Pure: dictionaries in, dictionaries out.

Which tools a run may use is decided as for Claude Code (:func:`plan_tools`: the case's
``allowed_tools``, the operator's grants, the disallowed tools); the outcome becomes opencode
permission rules, every tool not named being denied (``"*": "deny"``), which also keeps it out
of the tools the model is offered:

=====================================  ==================================================
case entry (canonical)                 opencode permission
=====================================  ==================================================
Read, Glob, Grep, LS (always)          ``read``, ``glob``, ``grep``, ``list``
Skill, Task / Agent, TodoWrite         ``skill``, ``task``, ``todowrite``
Write, Edit, MultiEdit (granted)       ``edit`` (opencode's one permission for its file
                                       writers ``write``, ``edit``, ``apply_patch``)
Bash (granted)                         ``bash``; ``Bash(npm test *)`` → ``{"*": "deny",
                                       "npm test *": "allow"}``
WebFetch, WebSearch (granted)          ``webfetch``, ``websearch``
=====================================  ==================================================

``skill`` is always allowed, as Claude Code always offers its Skill tool, unless the case's
``disallowed_tools`` or ``--eval-disallow-tools`` name ``Skill``.

Every path outside the run's working directory is an ``external_directory`` opencode asks
about, and a headless run refuses: denied, except the plugin's copied skills and the case's
``add_dirs`` copies.

MCP servers (:func:`mcp_block`, from :mod:`pytest_plugin_evals.agents.mcp`'s plan) go in the
``mcp`` block, each under its name with every character outside ``[A-Za-z0-9_-]`` made ``_``
(as opencode does); opencode names their tools ``<server>_<tool>``, and a permission rule of
that name (or ``<server>_*``) allows them: every tool of a stand-in, the granted tools of a real
server.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.mcp import McpPlan, McpServer
from pytest_plugin_evals.agents.permissions import ToolAccess, base_tool
from pytest_plugin_evals.mocks.discover import normalize

#: Canonical tool → the opencode permission that governs it.
PERMISSIONS: dict[str, tuple[str, ...]] = {
    "Read": ("read",),
    "Glob": ("glob",),
    "Grep": ("grep",),
    "LS": ("list",),
    "Skill": ("skill",),
    "Task": ("task",),
    "Agent": ("task",),
    "TodoWrite": ("todowrite", "todoread"),
    "Write": ("edit",),
    "Edit": ("edit",),
    "MultiEdit": ("edit",),
    "NotebookEdit": ("edit",),
    "Bash": ("bash",),
    "WebFetch": ("webfetch",),
    "WebSearch": ("websearch",),
}

#: The model when neither the case nor ``--eval-model`` names one.
DEFAULT_MODEL = "anthropic/claude-sonnet-4-5"

#: Claude Code's model aliases, as opencode's catalog names the models.
ALIASES = {
    "sonnet": "claude-sonnet-4-5",
    "opus": "claude-opus-4-5",
    "haiku": "claude-haiku-4-5",
}


def model_id(model: str | None) -> str:
    """``provider/model`` as opencode wants it: a bare model id is an Anthropic one."""
    if not model:
        return DEFAULT_MODEL
    model = model.strip()
    if "/" in model:
        return model
    return f"anthropic/{ALIASES.get(model, model)}"


def _bash_pattern(spec: str) -> list[str]:
    """``git:*`` (Claude Code's prefix form) → ``git``, ``git *``; others as they are."""
    spec = spec.strip()
    if spec.endswith(":*"):
        prefix = spec[:-2].strip()
        return [prefix, f"{prefix} *"]
    return [spec]


def permission_rules(
    allowed: Iterable[str], *, external_allowed: Iterable[Path] = ()
) -> tuple[dict[str, Any], list[str]]:
    """opencode's ``permission`` block for a run's allowed tool entries (Claude Code's names,
    as :func:`plan_tools` left them), and the entries it has no permission for (notes)."""
    rules: dict[str, Any] = {"*": "deny"}
    bash: dict[str, str] = {}
    bash_whole = False
    unmapped: list[str] = []
    for entry in allowed:
        tool = base_tool(entry)
        keys = PERMISSIONS.get(tool)
        if keys is None:
            unmapped.append(entry)
            continue
        if tool == "Bash":
            spec = entry.strip()[len("Bash") :].strip()
            if spec.startswith("(") and spec.endswith(")") and spec[1:-1].strip() not in ("", "*"):
                bash.update(dict.fromkeys(_bash_pattern(spec[1:-1]), "allow"))
            else:
                bash_whole = True
            continue
        for key in keys:
            rules[key] = "allow"
    if bash_whole:
        rules["bash"] = "allow"
    elif bash:
        rules["bash"] = {"*": "deny", **bash}
    outside: dict[str, str] = {"*": "deny"}
    for folder in external_allowed:
        outside[f"{folder.as_posix().rstrip('/')}/*"] = "allow"
    rules["external_directory"] = outside
    return rules, list(dict.fromkeys(unmapped))


def run_config(
    *,
    model: str | None,
    permission: Mapping[str, Any],
    env: Mapping[str, str],
    max_turns: int | None = None,
    mcp: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The whole ``OPENCODE_CONFIG_CONTENT``: the model, Anthropic's endpoint from
    ``ANTHROPIC_BASE_URL`` when the operator set one, the permissions, the turn limit (the
    ``build`` agent's ``steps``: at the last one opencode asks the model for a final answer
    without tools), the MCP servers (:func:`mcp_block`), sharing and auto-update off."""
    chosen = model_id(model)
    config: dict[str, Any] = {
        "model": chosen,
        # Its own small model answers title requests: the run names its session itself
        # (``--title``), so none is made; it is pinned all the same.
        "small_model": chosen,
        "autoupdate": False,
        "share": "disabled",
        "permission": dict(permission),
    }
    if max_turns is not None and max_turns > 0:
        config["agent"] = {"build": {"steps": max_turns}}
    if mcp:
        config["mcp"] = dict(mcp)
    base_url = (env.get("ANTHROPIC_BASE_URL") or "").strip().rstrip("/")
    if base_url:
        # Claude Code's variable names the API's root; the AI SDK wants its ``/v1``.
        if not base_url.endswith("/v1"):
            base_url += "/v1"
        config["provider"] = {"anthropic": {"options": {"baseURL": base_url}}}
    return config


def server_key(name: str) -> str:
    """An MCP server's name as opencode puts it into tool names (``<key>_<tool>``)."""
    return normalize(name)


_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def env_refs(value: str) -> str:
    """Claude Code's ``${VAR}`` in an MCP server's configuration as opencode writes it,
    ``{env:VAR}`` (read from the run's environment when opencode starts the server)."""
    return _ENV_REF.sub(lambda m: "{env:" + m.group(1) + "}", value)


def mcp_entry(server: McpServer) -> dict[str, Any] | None:
    """opencode's form of one server (``local``: ``command`` with its arguments and
    ``environment``; ``remote``: ``url`` and ``headers``), None when it has neither.
    ``${VAR}`` references become opencode's ``{env:VAR}``."""
    if server.command is not None:
        entry: dict[str, Any] = {
            "type": "local",
            "command": [env_refs(a) for a in (server.command, *server.args)],
            "enabled": True,
        }
        if server.env:
            entry["environment"] = {k: env_refs(v) for k, v in server.env.items()}
        return entry
    if server.url is not None:
        entry = {"type": "remote", "url": env_refs(server.url), "enabled": True}
        if server.headers:
            entry["headers"] = {k: env_refs(v) for k, v in server.headers.items()}
        return entry
    return None


def mcp_block(
    plan: McpPlan, access: ToolAccess
) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """The run's ``mcp`` block, its permission rules (in order: add them after the built-in
    tools' rules) and its notes. The disallowed entries remove a server's tools even from a
    stand-in.

    Shorter server names come first, and a real server's rules start with ``<key>_*: deny``,
    so a stand-in's ``a_*`` never allows the tools of a real server ``a_b``."""
    block: dict[str, Any] = {}
    rules: dict[str, str] = {}
    notes: list[str] = []
    given: list[tuple[str, McpServer]] = []
    for server in plan.servers:
        entry = mcp_entry(server)
        if entry is None:
            notes.append(f"MCP server {server.name}: no command or url, left out")
            continue
        key = server_key(server.name)
        if server.config.get("cwd"):
            notes.append(f"MCP server {server.name}: opencode has no cwd for a server (ignored)")
        block[key] = entry
        given.append((key, server))
    for key, server in sorted(given, key=lambda item: len(item[0])):
        if server.stand_in:
            rules[f"{key}_*"] = "allow"
            continue
        rules[f"{key}_*"] = "deny"
        for tool in access.granted(server):
            rules[_rule_key(server, tool)] = "allow"
    _deny(rules, (server for _, server in given), access)
    return block, rules, notes


def _rule_key(server: McpServer, tool: str) -> str:
    """opencode's permission key of ``server``'s tool (``*``: all of its tools)."""
    return f"{server_key(server.name)}_{tool if tool == '*' else normalize(tool)}"


def _deny(rules: dict[str, Any], servers: Iterable[McpServer], access: ToolAccess) -> None:
    """Deny the MCP tools of ``servers`` that the run's disallowed entries take away, after
    every other rule (the last rule that matches wins: a whole server denied is denied even
    where a rule before allowed one of its tools)."""
    for key in [_rule_key(s, tool) for s in servers for tool in access.denied(s)]:
        rules.pop(key, None)
        rules[key] = "deny"


def mcp_tool_name(plan: McpPlan, name: str) -> str | None:
    """Claude Code's name of opencode's MCP tool ``name`` (``<key>_<tool>``) of a server the
    run has, else None."""
    found = plan.split(name, ("_",))
    return plan.canonical(*found) if found is not None else None


def _mcp_entry(entry: str, plan: McpPlan | None) -> tuple[str, str] | None:
    """``(key, tool)`` of a Claude Code MCP tool entry of a server the run has (``*``: all of
    its tools), else None."""
    for server in plan.servers if plan is not None else ():
        if entry.startswith(server.prefix):
            tool = entry[len(server.prefix) :] or "*"
        elif entry == server.prefix.rstrip("_"):
            tool = "*"
        else:
            continue
        return server_key(server.name), tool if tool == "*" else normalize(tool)
    return None


def agent_permission(
    run_permission: Mapping[str, Any],
    tools: Iterable[str] | None,
    plan: McpPlan | None = None,
    disallowed: Iterable[str] = (),
) -> dict[str, Any]:
    """A translated agent's ``permission``: never more than the run's. ``tools`` is the
    Claude agent's ``tools`` (Claude Code's names; None: all the run allows), ``disallowed``
    its ``disallowedTools``. Each tool the run allows and the agent may not use is denied;
    ``task`` always is (a Claude Code subagent starts no subagents). Nothing is allowed that
    the run does not allow (an agent's rules come after the run's, and the last that matches
    wins): an agent that lists some tools of a server the run allows whole gets those."""
    rules: dict[str, Any] = {}
    granted = {k: v for k, v in run_permission.items() if v != "deny"}
    granted.pop("*", None)
    granted.pop("external_directory", None)
    if tools is not None:
        listed = [t.strip() for t in tools if t.strip()]
        covered = {k for entry in listed for k in PERMISSIONS.get(base_tool(entry), ())}
        servers: dict[str, set[str]] = {}
        for entry in listed:
            if (found := _mcp_entry(entry, plan)) is not None:
                servers.setdefault(found[0], set()).add(found[1])
        for key in granted:
            if key in PERMISSION_KEYS:
                if key not in covered:
                    rules[key] = "deny"
                continue
            server, tool = _mcp_rule(key, servers)
            wanted = servers.get(server or "", set())
            if "*" in wanted or tool in wanted:
                continue
            rules[key] = "deny"
            if server is not None and tool == "*":
                rules.update({f"{server}_{t}": "allow" for t in sorted(wanted)})
    disallowed = [e.strip() for e in disallowed]
    _deny(rules, plan.servers if plan else (), ToolAccess(disallowed=disallowed))
    for entry in disallowed:
        for key in PERMISSIONS.get(base_tool(entry), ()):
            if key in granted:
                rules[key] = "deny"
    rules["task"] = "deny"
    return rules


#: Every opencode permission a built-in tool maps to.
PERMISSION_KEYS = frozenset(k for keys in PERMISSIONS.values() for k in keys)


def _mcp_rule(key: str, servers: Iterable[str]) -> tuple[str | None, str]:
    """``(server, tool)`` of a permission rule ``<server>_<tool>`` for one of ``servers``."""
    for server in sorted(servers, key=len, reverse=True):
        if key.startswith(f"{server}_"):
            return server, key[len(server) + 1 :]
    return None, key
