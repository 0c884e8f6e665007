"""Canonical tool names: one suite's graders mean the same thing for every agent.

Claude Code's names are the canonical ones (``Bash``, ``Read``, ``Write``, ``Edit``, ``Glob``,
``Grep``, ``WebFetch``, ``WebSearch``, ``Skill``, ``Task``, ``TodoWrite``, and
``mcp__<server>__<tool>`` for MCP tools). Each other agent declares how its own names map here
(``SPEC.tools``, :mod:`.registry`); a name with no mapping is kept as it is. The adapter keeps
the agent's own name in ``ToolCall.original_name`` when it differs, and the reports show both.
"""

from __future__ import annotations


def canonical(agent: str, name: str) -> str:
    """The canonical name of ``agent``'s tool ``name`` (``name`` itself when it has none)."""
    from pytest_plugin_evals.agents.registry import spec_for

    declared = spec_for(agent)
    return declared.tools.get(name, name) if declared is not None else name


def mcp_name(server: str, tool: str) -> str:
    """The canonical name of an MCP tool: ``mcp__<server>__<tool>``."""
    return f"mcp__{server}__{tool}"
