"""Which Gemini CLI tools a run may use: pure rules, no process.

Gemini CLI is given an allowlist of its built-in tools (``tools.core`` in its settings): a tool
not in it is not offered to the model at all, and ``--approval-mode yolo`` approves only what is
offered. The list is made from the case's ``allowed_tools`` (Claude Code's names) as the claude
adapter makes its own:

* the file readers (``read_file``, ``read_many_files``, ``glob``, ``grep_search``,
  ``list_directory``) always; Gemini CLI confines them to its workspace (the run's working
  directory and its ``add_dirs`` copies);
* ``activate_skill`` always, as Claude Code offers its ``Skill`` tool whatever a case lists;
* ``write_todos`` when the case lists ``TodoWrite``;
* a tool that is not read-only (``write_file``, ``replace``, ``run_shell_command``,
  ``web_fetch``, ``google_web_search``) only when the case lists it **and** the operator grants
  it (``--eval-allow-tools``); ``write_file`` and ``replace`` are confined to the workspace by
  Gemini CLI itself, a path pattern in the entry cannot be kept (noted);
* a shell grant ``Bash(git status *)`` becomes ``run_shell_command(git status)`` (Gemini CLI's
  command-prefix form);
* the case's and the operator's disallowed tools are removed, and listed in ``tools.exclude``.

MCP tools come with their servers (:func:`..mcp_settings.mcp_servers`): every tool of a
stand-in, a real server's only when the case lists it and the operator grants it
(``includeTools``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pytest_plugin_evals.agents.permissions import ToolAccess, base_tool, grants_for

#: Claude Code's name → Gemini CLI's built-in tools.
GEMINI_TOOLS: dict[str, tuple[str, ...]] = {
    "Read": ("read_file", "read_many_files"),
    "Glob": ("glob",),
    "Grep": ("grep_search",),
    "LS": ("list_directory",),
    "Skill": ("activate_skill",),
    "TodoWrite": ("write_todos",),
    "Write": ("write_file",),
    "Edit": ("replace",),
    "MultiEdit": ("replace",),
    "Bash": ("run_shell_command", "list_background_processes", "read_background_output"),
    "WebFetch": ("web_fetch",),
    "WebSearch": ("google_web_search",),
}

#: Always offered: they only read, inside Gemini CLI's workspace (``Skill``: as Claude Code
#: offers it whatever the case lists).
READERS = ("Read", "Glob", "Grep", "LS", "Skill")
#: Offered when the case lists them (they only keep notes).
LISTED = frozenset({"TodoWrite"})
#: The shell tools (see :func:`shell_granted`).
SHELLS = frozenset({"Bash"})

_SPEC = re.compile(r"^[A-Za-z0-9_.*-]+\((?P<spec>.*)\)$")


def _spec(entry: str) -> str | None:
    match = _SPEC.match(entry.strip())
    return match.group("spec") if match else None


def _shell_prefix(spec: str) -> str:
    """``npm test *`` / ``npm test:*`` → ``npm test`` (Gemini CLI matches command prefixes)."""
    return re.sub(r"\s*:?\*$", "", spec.strip()).strip()


@dataclass(frozen=True)
class GeminiTools:
    #: ``tools.core``: the built-in tools offered.
    core: tuple[str, ...]
    #: ``tools.exclude``: removed even when something else would offer them.
    exclude: tuple[str, ...]
    #: The canonical tools the run may use (Bash among them when a shell was granted).
    canonical: tuple[str, ...]
    #: Case entries dropped for want of a grant (or with no Gemini CLI tool).
    not_granted: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def plan_tools(access: ToolAccess) -> GeminiTools:
    grants = access.grants
    core: list[str] = [t for tool in READERS for t in GEMINI_TOOLS[tool]]
    canonical: list[str] = list(READERS)
    not_granted: list[str] = []
    notes: list[str] = []
    for entry in access.case_tools:
        tool = base_tool(entry)
        if tool in READERS:
            continue
        if tool.startswith("mcp__"):
            continue  # MCP tools come with their servers (the extension's, or the stand-ins)
        names = GEMINI_TOOLS.get(tool)
        if names is None:
            not_granted.append(entry)
            notes.append(f"gemini has no tool for {entry}")
            continue
        if tool in LISTED:
            core.extend(names)
            canonical.append(tool)
            continue
        forms = grants_for(entry, grants)
        if not forms:
            not_granted.append(entry)
            continue
        canonical.append(tool)
        specs = [_spec(f) for f in forms]
        if tool in SHELLS and all(s is not None for s in specs):
            core.extend(f"run_shell_command({_shell_prefix(s or '')})" for s in specs)
        else:
            if any(s is not None for s in specs):
                notes.append(
                    f"{entry}: gemini cannot scope {tool} by pattern; it runs in its workspace"
                )
            core.extend(names)
    exclude: list[str] = []
    for entry in access.disallowed:
        tool = base_tool(entry)
        if tool.startswith("mcp__"):
            continue  # an MCP tool is left out by its server (``excludeTools``)
        for name in GEMINI_TOOLS.get(tool, (tool,)):
            exclude.append(name)
            core = [c for c in core if c != name and not c.startswith(f"{name}(")]
        canonical = [c for c in canonical if c != tool]
    return GeminiTools(
        core=tuple(dict.fromkeys(core)),
        exclude=tuple(dict.fromkeys(exclude)),
        canonical=tuple(dict.fromkeys(canonical)),
        not_granted=tuple(not_granted),
        notes=tuple(notes),
    )


def shell_granted(plan: GeminiTools) -> bool:
    return any(c == "run_shell_command" or c.startswith("run_shell_command(") for c in plan.core)
