"""The agent adapter interface: a run request in, a transcript out, and what the agent can do."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pytest_plugin_evals.agents import AgentError as AgentError
from pytest_plugin_evals.agents.confine.bounds import DEFAULT_BOUNDS, Bounds
from pytest_plugin_evals.agents.spec import DEFAULT_CAPABILITIES as DEFAULT_CAPABILITIES
from pytest_plugin_evals.agents.spec import AgentSpec
from pytest_plugin_evals.agents.spec import Capabilities as Capabilities
from pytest_plugin_evals.model import Arm, Case, InfraKind, Transcript
from pytest_plugin_evals.sandbox import Sandbox
from pytest_plugin_evals.util.environment import Passed

if TYPE_CHECKING:
    from pytest_plugin_evals.agents.confine.network import Endpoint
    from pytest_plugin_evals.mocks.config import MockSetup


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
    #: How many times the session makes a run again when the provider refuses it (a rate
    #: limit, an overload): while it does, the agent need not retry on its own.
    rate_limit_retries: int = 0
    #: The agent's label in a session of several agents (``--eval-agents``), else None.
    agent_label: str | None = None
    #: Run without the sandbox, on purpose (``--eval-unconfined``).
    unconfined: bool = False
    #: What a confined run may use (``--eval-max-memory`` and its siblings).
    bounds: Bounds = DEFAULT_BOUNDS
    #: Endpoints the run may reach besides its agent's own (``--eval-allow-network``).
    allow_network: tuple[Endpoint, ...] = ()
    #: Paths the run may read besides its own (``--eval-allow-read``).
    allow_read: tuple[Path, ...] = ()
    #: Folders of the session a run never sees, even inside the plugin (its results).
    private: tuple[Path, ...] = ()
    #: The run's folder is kept (``--eval-keep-temp``): a confined run also keeps the command
    #: line it was started with (``out/sandbox.json``).
    keep_temp: bool = False

    @property
    def loads_plugin(self) -> bool:
        return self.plugin_dir is not None


@runtime_checkable
class Agent(Protocol):
    """Runs one request and reports what happened. Never raises for a failed run: a run that
    could not be made comes back with ``Transcript.infra_error`` set."""

    @property
    def name(self) -> str: ...

    def run(self, request: RunRequest) -> Transcript: ...


def spec_of(agent: Agent) -> AgentSpec | None:
    """The declaration of an agent CLI's adapter (its ``spec``), None for any other agent."""
    found = getattr(agent, "spec", None)
    return found if isinstance(found, AgentSpec) else None


def passed_of(agent: Agent, model: str | None) -> Passed:
    """The operator variables ``agent`` reads (its endpoint and credentials): its
    ``passed_for(model)`` (an agent whose variables depend on the model), else its
    declaration's (``spec.passed``), else its ``passed``, else none (an adapter of your own)."""
    method = getattr(agent, "passed_for", None)
    if callable(method):
        found = method(model)
        if isinstance(found, Passed):
            return found
    spec = spec_of(agent)
    if spec is not None:
        return spec.passed
    declared = getattr(agent, "passed", None)
    return declared if isinstance(declared, Passed) else Passed()


def credentials_of(agent: Agent) -> tuple[str, ...]:
    """The credential variables ``agent`` declares (redacted whatever their names say)."""
    spec = spec_of(agent)
    return spec.credentials if spec is not None else ()


def capabilities_of(agent: Agent) -> Capabilities:
    """The agent's :class:`Capabilities`: its declaration's, else its own ``capabilities``
    (an adapter of your own may leave them out)."""
    spec = spec_of(agent)
    if spec is not None:
        return spec.capabilities
    found = getattr(agent, "capabilities", None)
    return found if isinstance(found, Capabilities) else DEFAULT_CAPABILITIES


def infra_kind(status: int | None, code: str | None = None) -> InfraKind:
    """The kind of an API error, from its HTTP status or Claude Code's name for it (a run that
    is not logged in has no status: ``authentication_failed``)."""
    if code == "authentication_failed":
        return "auth"
    if code == "rate_limit":
        return "rate_limit"
    if status == 429:
        return "rate_limit"
    if status in (529, 503):
        return "overloaded"
    if status in (401, 403):
        return "auth"
    return "api"
