"""Agent adapters: the agent CLIs the registry declares (``claude``, the default, ``copilot``,
``codex`` …: :func:`cli_agents`, :mod:`.registry`), ``cmd:<command line>``,
``py:<module>:<function>`` and ``replay:<results folder>``, each turning a
:class:`RunRequest` into a ``Transcript``.

:func:`check_spec` validates an ``--eval-agent`` value (the form, and what can be checked
without starting anything); :func:`make_agent` builds the adapter. Both read the value the same
way, through :func:`split_spec`. An adapter's module is imported only when it is chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from pytest_plugin_evals.util.lazy import lazy_exports

if TYPE_CHECKING:  # the same names, typed, for type checkers
    from pytest_plugin_evals.agents.base import DEFAULT_CAPABILITIES as DEFAULT_CAPABILITIES
    from pytest_plugin_evals.agents.base import Agent as Agent
    from pytest_plugin_evals.agents.base import Capabilities as Capabilities
    from pytest_plugin_evals.agents.base import RunRequest as RunRequest
    from pytest_plugin_evals.agents.base import capabilities_of as capabilities_of


class AgentError(Exception):
    """An agent that cannot be set up (bad ``--eval-agent`` value, missing module)."""


#: The kinds whose value carries an argument (``cmd:<command line>`` …).
OPEN_KINDS = ("cmd", "py", "replay")


#: The agent CLIs the registry declares (``agents/<name>/spec.yaml``), in its order, each with
#: its binary: what the options need at start-up (the names, ``--eval-<name>-bin``) without
#: importing every spec module. tests/unit/test_agent_registry.py checks it against the
#: registry: an agent added there is added here too.
CLI_AGENTS: tuple[tuple[str, str], ...] = (
    ("claude", "claude"),
    ("copilot", "copilot"),
    ("codex", "codex"),
    ("opencode", "opencode"),
    ("gemini", "gemini"),
    ("qwen", "qwen"),
)


def cli_agents() -> tuple[str, ...]:
    """The agent CLIs (:mod:`.registry`), the default first: ``claude``, ``copilot`` …"""
    return tuple(name for name, _ in CLI_AGENTS)


def agent_forms() -> str:
    """What ``--eval-agent`` accepts, as the one line of a wrong value says it."""
    return ", ".join(
        [
            *(f'"{name}"' for name in cli_agents()),
            '"cmd:<command line>"',
            '"py:<module>:<function>"',
            '"replay:<results folder>"',
        ]
    )


def split_spec(spec: str) -> tuple[str, str]:
    """``(kind, argument)`` of an ``--eval-agent`` value; AgentError when it names no agent."""
    spec = spec.strip()
    if spec in cli_agents():
        return spec, ""
    kind, sep, argument = spec.partition(":")
    if sep and kind in OPEN_KINDS:
        return kind, argument
    raise AgentError(f"--eval-agent must be one of {agent_forms()} (got {spec!r})")


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
    elif kind == "replay" and argument.strip() != "last":  # last: picked after collection
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
    if kind == "cmd":
        from pytest_plugin_evals.agents.command import CommandAgent

        return CommandAgent.parse(argument)
    if kind == "py":
        from pytest_plugin_evals.agents.python import PythonAgent

        return PythonAgent.parse(argument)
    if kind == "replay":
        from pytest_plugin_evals.agents.replay import ReplayAgent

        return ReplayAgent.parse(argument)
    from pytest_plugin_evals.agents.registry import spec_for

    declared = spec_for(kind)
    assert declared is not None  # split_spec accepted it
    binary = claude_bin if kind == "claude" else (binaries or {}).get(kind)
    agent: Agent = declared.make(binary, grants=grants, disallow=disallow)
    return agent


#: Imported from :mod:`.base` on first use (it loads the model): checking ``--eval-agent`` at
#: start-up does not.
_FROM_BASE = ("DEFAULT_CAPABILITIES", "Agent", "Capabilities", "RunRequest", "capabilities_of")

__all__ = [
    "AgentError",
    "agent_forms",
    "cli_agents",
    "check_spec",
    "make_agent",
    "split_spec",
    *_FROM_BASE,
]


__getattr__ = lazy_exports(__name__, dict.fromkeys(_FROM_BASE, "base"))
