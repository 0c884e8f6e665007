"""Canonical tool names: one suite's graders mean the same thing for every agent.

Claude Code's names are the canonical ones (``Bash``, ``Read``, ``Write``, ``Edit``, ``Glob``,
``Grep``, ``WebFetch``, ``WebSearch``, ``Skill``, ``Task``, ``TodoWrite``, and
``mcp__<server>__<tool>`` for MCP tools). Each other agent's adapter maps its own names here,
in :data:`NAMES`; a name with no mapping is kept as it is. The adapter keeps the agent's own
name in ``ToolCall.original_name`` when it differs, and the reports show both.
"""

from __future__ import annotations

from collections.abc import Mapping

#: agent kind -> {the agent's tool name -> the canonical name}.
NAMES: dict[str, Mapping[str, str]] = {}

#: GitHub Copilot CLI (MCP tools: ``mcp__<server>__<tool>`` from the events' server and tool).
NAMES["copilot"] = {
    "bash": "Bash",
    "read_bash": "BashOutput",
    "stop_bash": "KillShell",
    "view": "Read",
    "create": "Write",
    "edit": "Edit",
    "str_replace_editor": "Edit",
    "apply_patch": "Edit",
    "grep": "Grep",
    "glob": "Glob",
    "skill": "Skill",
    "task": "Task",
    "web_fetch": "WebFetch",
    "web_search": "WebSearch",
}


#: Gemini CLI (MCP tools: ``mcp_<server>_<tool>`` of a known server, mapped by the adapter).
NAMES["gemini"] = {
    "run_shell_command": "Bash",
    "read_file": "Read",
    "read_many_files": "Read",
    "write_file": "Write",
    "replace": "Edit",
    "glob": "Glob",
    "grep_search": "Grep",
    "search_file_content": "Grep",
    "list_directory": "LS",
    "activate_skill": "Skill",
    "write_todos": "TodoWrite",
    "web_fetch": "WebFetch",
    "google_web_search": "WebSearch",
}

#: OpenAI Codex CLI (its stream names items, not tools: the adapter records each item under its
#: tool's name; a shell command that reads a plugin skill's SKILL.md is a ``Skill`` call).
NAMES["codex"] = {
    "exec_command": "Bash",
    "shell": "Bash",
    "local_shell": "Bash",
    "write_stdin": "BashOutput",
    "apply_patch": "Edit",
    "view_image": "Read",
    "web_search": "WebSearch",
    "update_plan": "TodoWrite",
}

#: opencode (``run --format json``: ``part.tool``).
NAMES["opencode"] = {
    "bash": "Bash",
    "read": "Read",
    "write": "Write",
    "edit": "Edit",
    "apply_patch": "Edit",
    "patch": "Edit",
    "multiedit": "MultiEdit",
    "glob": "Glob",
    "grep": "Grep",
    "list": "LS",
    "skill": "Skill",
    "task": "Task",
    "todowrite": "TodoWrite",
    "todoread": "TodoRead",
    "webfetch": "WebFetch",
    "websearch": "WebSearch",
    "question": "AskUserQuestion",
}


def canonical(agent: str, name: str) -> str:
    """The canonical name of ``agent``'s tool ``name`` (``name`` itself when it has none)."""
    return NAMES.get(agent, {}).get(name, name)


def mcp_name(server: str, tool: str) -> str:
    """The canonical name of an MCP tool: ``mcp__<server>__<tool>``."""
    return f"mcp__{server}__{tool}"
