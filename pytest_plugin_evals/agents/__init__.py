"""Agent adapters: ``claude`` (the default), the other agent CLIs (``copilot``, ``codex``,
``opencode``, ``gemini``: :data:`CLI_AGENTS`), ``cmd:<command line>``, ``py:<module>:<function>``
and ``replay:<results folder>``, each turning a :class:`RunRequest` into a ``Transcript``.

:func:`check_spec` validates an ``--eval-agent`` value (the form, and what can be checked
without starting anything); :func:`make_agent` builds the adapter. Both read the value the same
way, through :func:`split_spec`. An adapter's module is imported only when it is chosen.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, typed, for type checkers
    from pytest_plugin_evals.agents.base import DEFAULT_CAPABILITIES as DEFAULT_CAPABILITIES
    from pytest_plugin_evals.agents.base import Agent as Agent
    from pytest_plugin_evals.agents.base import Capabilities as Capabilities
    from pytest_plugin_evals.agents.base import RunRequest as RunRequest
    from pytest_plugin_evals.agents.base import capabilities_of as capabilities_of


class AgentError(Exception):
    """An agent that cannot be set up (bad ``--eval-agent`` value, missing module)."""


#: Agent CLIs other than Claude Code, each an adapter in ``agents/<name>/`` whose module has
#: ``make_agent(binary, *, grants, disallow) -> Agent``.
CLI_AGENTS = ("copilot", "codex", "opencode", "gemini")

AGENT_FORMS = (
    '"claude", "copilot", "codex", "opencode", "gemini", "cmd:<command line>", '
    '"py:<module>:<function>", "replay:<results folder>"'
)

KINDS = ("claude", *CLI_AGENTS, "cmd", "py", "replay")


def split_spec(spec: str) -> tuple[str, str]:
    """``(kind, argument)`` of an ``--eval-agent`` value; AgentError when it names no agent."""
    spec = spec.strip()
    if spec == "claude" or spec in CLI_AGENTS:
        return spec, ""
    kind, sep, argument = spec.partition(":")
    if sep and kind in ("cmd", "py", "replay"):
        return kind, argument
    raise AgentError(f"--eval-agent must be one of {AGENT_FORMS} (got {spec!r})")


def check_spec(spec: str) -> str:
    """Validate an ``--eval-agent`` value now (one line, nothing runs) and return it stripped:
    the form of each kind, and a replay folder's recorded runs. The adapter itself (an import,
    a binary) is made when the first eval item runs."""
    kind, argument = split_spec(spec)
    if kind == "cmd":
        from pytest_plugin_evals.agents.command import CommandAgent

        CommandAgent.parse(argument)
    elif kind == "py":
        from pytest_plugin_evals.agents.python import PythonAgent

        PythonAgent.split(argument)
    elif kind == "replay":
        from pytest_plugin_evals.agents.replay import ReplayAgent

        ReplayAgent.parse(argument)
    return spec.strip()


def make_agent(
    spec: str,
    *,
    claude_bin: str | None = None,
    grants: tuple[str, ...] = (),
    disallow: tuple[str, ...] = (),
    binaries: Mapping[str, str | None] | None = None,
) -> Agent:
    """Build the adapter named by ``--eval-agent`` (``binaries``: an agent CLI's binary by
    agent name, from ``--eval-<agent>-bin``; else the CLI is looked up on ``PATH``)."""
    kind, argument = split_spec(spec)
    if kind in CLI_AGENTS:
        try:
            module = importlib.import_module(f"{__name__}.{kind}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{kind}":
                raise
            raise AgentError(f"--eval-agent {kind}: this version has no {kind} adapter") from None
        agent: Agent = module.make_agent(
            (binaries or {}).get(kind),
            grants=grants,
            disallow=disallow,
        )
        return agent
    if kind == "cmd":
        from pytest_plugin_evals.agents.command import CommandAgent

        return CommandAgent.parse(argument)
    if kind == "py":
        from pytest_plugin_evals.agents.python import PythonAgent

        return PythonAgent.parse(argument)
    if kind == "replay":
        from pytest_plugin_evals.agents.replay import ReplayAgent

        return ReplayAgent.parse(argument)
    from pytest_plugin_evals.agents.claude import ClaudeAgent, find_binary

    return ClaudeAgent(
        find_binary(claude_bin),
        grants=grants,
        disallow=disallow,
    )


#: Imported from :mod:`.base` on first use (it loads the model): checking ``--eval-agent`` at
#: start-up does not.
_FROM_BASE = ("DEFAULT_CAPABILITIES", "Agent", "Capabilities", "RunRequest", "capabilities_of")

__all__ = [
    "AGENT_FORMS",
    "CLI_AGENTS",
    "AgentError",
    "check_spec",
    "make_agent",
    "split_spec",
    *_FROM_BASE,
]


def __getattr__(name: str) -> Any:
    if name not in _FROM_BASE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.base"), name)
