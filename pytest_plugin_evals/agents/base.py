"""The agent adapter interface: a run request in, a transcript out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..model import Arm, Case, Transcript
from ..sandbox import Sandbox

if TYPE_CHECKING:
    from ..mocks import MockSetup


@dataclass(frozen=True)
class RunRequest:
    """Everything an adapter needs to make one run."""

    case: Case
    arm: Arm
    run: int
    prompt: str
    sandbox: Sandbox
    #: The plugin to load, absolute; None in the without arm.
    plugin_dir: Path | None
    model: str | None
    max_turns: int
    timeout_seconds: float
    allowed_tools: tuple[str, ...]
    #: The environment the agent gets: the allowlisted operator variables, the sandbox's
    #: folders and the case's ``EVAL_*`` variables.
    env: dict[str, str] = field(default_factory=dict)
    #: The run's MCP stand-ins (see :mod:`pytest_plugin_evals.mocks`), if any apply.
    mocks: MockSetup | None = None

    @property
    def loads_plugin(self) -> bool:
        return self.plugin_dir is not None


class AgentError(Exception):
    """An agent that cannot be set up (bad ``--eval-agent`` value, missing module)."""


@runtime_checkable
class Agent(Protocol):
    """Runs one request and reports what happened. Never raises for a failed run: a run that
    could not be made comes back with ``Transcript.infra_error`` set."""

    @property
    def name(self) -> str: ...

    def run(self, request: RunRequest) -> Transcript: ...


AGENT_FORMS = '"claude", "cmd:<command line>", "py:<module>:<function>", "replay:<results folder>"'


def make_agent(
    spec: str,
    *,
    claude_bin: str | None = None,
    grants: tuple[str, ...] = (),
    disallow: tuple[str, ...] = (),
) -> Agent:
    """Build the adapter named by ``--eval-agent``."""
    spec = spec.strip()
    if spec.startswith("cmd:"):
        from .command import CommandAgent

        return CommandAgent.parse(spec[4:])
    if spec.startswith("py:"):
        from .python import PythonAgent

        return PythonAgent.parse(spec[3:])
    if spec.startswith("replay:"):
        from .replay import ReplayAgent

        return ReplayAgent.parse(spec[7:])
    if spec == "claude":
        from .claude import ClaudeAgent, find_binary

        return ClaudeAgent(find_binary(claude_bin), grants=grants, disallow=disallow)
    raise AgentError(f"--eval-agent must be one of {AGENT_FORMS} (got {spec!r})")
