"""The agent the settings name, made (``--eval-agent``, or one of ``--eval-agents``), and why
it cannot be made or started, found without starting anything. The agents are imported when
an agent is made, so a session without eval items never loads them."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_plugin_evals.util.tempdirs import write_whole

if TYPE_CHECKING:
    from pytest_plugin_evals.agents import Agent
    from pytest_plugin_evals.settings import EvalSettings


def make_agent(settings: EvalSettings, spec: str | None = None) -> Agent:
    """The agent ``spec`` names (the session's ``--eval-agent`` when None), with the settings'
    binaries and tool grants; :class:`~pytest_plugin_evals.agents.AgentError` when it cannot be
    made."""
    from pytest_plugin_evals.agents import make_agent as make

    return make(
        settings.agent if spec is None else spec,
        claude_bin=settings.claude_bin,
        binaries=dict(settings.agent_bins),
        grants=settings.allow_tools,
        disallow=settings.disallow_tools,
    )


def labelled_agent(settings: EvalSettings, made: dict[str, Agent], label: str) -> Agent:
    """The agent ``--eval-agents`` labels ``label``, made the first time it is asked for and
    kept in ``made``; :class:`~pytest_plugin_evals.agents.AgentError` naming the label when it
    cannot be made (the other agents' items still run)."""
    from pytest_plugin_evals.agents import AgentError

    if label not in made:
        try:
            made[label] = make_agent(settings, dict(settings.agents)[label])
        except AgentError as exc:
            raise AgentError(f"--eval-agents {label}: {exc}") from None
    return made[label]


def agent_problem(settings: EvalSettings, labels: Iterable[str | None] = ()) -> str | None:
    """Why the agent ``--eval-agent`` names (or an agent of ``--eval-agents`` among
    ``labels``, the selected items' in order) cannot be made or started, found without starting
    anything: the adapter is made (a ``py:`` module is imported, the ``claude`` binary looked
    up), and a ``cmd:`` program must exist and be executable (``PATH`` is searched for a bare
    name, as when it runs)."""
    if settings.agents:
        specs = dict(settings.agents)
        for label in dict.fromkeys(label for label in labels if label is not None):
            problem = _spec_problem(settings, specs[label])
            if problem is not None:
                return f"--eval-agents {label}: {problem}"
        return None
    return _spec_problem(settings, None)


def _spec_problem(settings: EvalSettings, spec: str | None) -> str | None:
    from pytest_plugin_evals.agents import AgentError
    from pytest_plugin_evals.agents.command import CommandAgent

    try:
        agent = make_agent(settings, spec)
    except AgentError as exc:
        return str(exc)
    if isinstance(agent, CommandAgent):
        program = agent.argv[0]
        reason = _not_startable(program)
        if reason is not None:
            return f"--eval-agent cmd: cannot start {program!r}: {reason}"
    return None


def _not_startable(program: str) -> str | None:
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program).resolve()
        if not path.exists():
            return "no such file"
        if path.is_dir():
            return "it is a folder"
        if not os.access(path, os.X_OK):
            return "it is not executable"
        return None
    return None if shutil.which(program) else "not found on PATH"


#: In the session's shared folder: why a worker could not make the agent (the controller
#: reports it as the session's one usage error).
AGENT_PROBLEM_FILE = "agent-problem.txt"


def share_problem(shared: Path, problem: str) -> None:
    """Leave ``problem`` in the session's ``shared`` folder for the controller, whole."""
    write_whole(shared / AGENT_PROBLEM_FILE, problem)


def shared_problem(shared: Path) -> str | None:
    """The problem a worker left in the session's ``shared`` folder, if one did."""
    try:
        return (shared / AGENT_PROBLEM_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
