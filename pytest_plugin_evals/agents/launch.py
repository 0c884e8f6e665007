"""The one runner of every agent CLI's run: an adapter prepares a :class:`Launch` (its command
line, environment, what it may reach, how to read its stream and judge its end), and
:func:`run_launch` does the rest, the same for every agent.

What the runner does, in order: the adapter's preparation (a :class:`Transcript` instead of a
launch is a run refused before it started); the snapshot of the run's folder (what the agent
creates is what changes after it); the CLI run confined and bounded (:func:`.cli.run_cli`: a
run stopped, over a bound, unconfinable or unstartable ends there); its stream read into the
transcript (the adapter's ``read``); what every run gets (:func:`finish`: folder,
duration, files, stderr tail, the sandbox's notes); the adapter's notes and the tools not
granted; the cost note of an agent that reports no price (its declaration's
``cost_note``); a run that timed out; and last the adapter's ``classify`` (API errors, a run
that never started, the plugin's trust check, a model that never answered).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from pytest_plugin_evals.agents.base import AgentError, RunRequest
from pytest_plugin_evals.agents.calls import StreamEnds
from pytest_plugin_evals.agents.cli import (
    UNCONFINED_NOTE,
    Reach,
    check_answered,
    did_not_start,
    failed_outside,
    reach_of,
    run_cli,
    with_stderr,
)
from pytest_plugin_evals.agents.mcp import McpPlan
from pytest_plugin_evals.agents.permissions import ToolAccess
from pytest_plugin_evals.agents.spec import AgentSpec
from pytest_plugin_evals.model import Transcript
from pytest_plugin_evals.util.process import ProcessResult, exit_text, format_timeout

#: The note of a tool the case lists that the operator did not grant.
NOT_GRANTED = "not granted (add --eval-allow-tools): {tool}"


@dataclass
class Launch:
    """One prepared run of an agent CLI."""

    argv: list[str]
    env: dict[str, str]
    #: Reads the run's trace: the transcript and the adapter's summary of the stream.
    read: Callable[[Path], tuple[Transcript, Any]]
    #: Judges how the run ended (an error, an infrastructure error, the trust check), once the
    #: transcript has everything else; it may add notes of its own. None: the adapter's
    #: ``classify(request, transcript, summary, result)``.
    classify: Callable[[Transcript, Any, ProcessResult], None] | None = None
    #: What the CLI reads on stdin; None: the prompt (an adapter that passes the prompt as an
    #: argument says ``""``).
    stdin: str | None = None
    #: Stops the run early when it returns true for a piece of stdout (a turn limit).
    stop_on: Callable[[bytes], bool] | None = None
    #: Notes of the preparation (MCP servers, translated parts, unsupported case keys).
    notes: list[str] = field(default_factory=list)
    #: Tools the case lists that the operator did not grant.
    not_granted: Sequence[str] = ()
    #: What the run may reach besides its program (``argv[0]``, :func:`.cli.reach_of`): the
    #: variables naming its model's endpoints (with their defaults), its MCP servers, whether
    #: it nests a sandbox of its own, more files it reads, whether it only reads.
    endpoints: Mapping[str, str | None] = field(default_factory=dict)
    mcp: McpPlan | None = None
    nests: bool = False
    also_read: Sequence[Path] = ()
    reads_only: bool = False

    def reach(self, request: RunRequest) -> Reach:
        return reach_of(
            request,
            self.argv[0],
            env=self.env,
            endpoint_variables=self.endpoints,
            mcp=self.mcp,
            nests=self.nests,
            also_read=self.also_read,
            reads_only=self.reads_only,
        )


def ended(returncode: int | None) -> str:
    """How an agent's process ended, as every run says it: ``exit 1``, ``killed by SIGKILL``
    (a signal), ``exit 137 (killed by SIGKILL)`` (its sandbox passing on the signal)."""
    return exit_text(returncode)


def exited(name: str, returncode: int | None) -> str:
    """The same, of the CLI ``name``: ``codex exited 1``, ``codex killed by SIGKILL``,
    ``codex exited 137 (killed by SIGKILL)``."""
    return f"{name} {ended(returncode).replace('exit', 'exited', 1)}"


class LaunchedAgent(Protocol):
    """An agent CLI's adapter as the runner sees it."""

    spec: ClassVar[AgentSpec]

    def launch(self, request: RunRequest) -> Launch | Transcript: ...

    def classify(
        self, request: RunRequest, transcript: Transcript, summary: Any, result: ProcessResult
    ) -> None: ...


def run_launch(agent: LaunchedAgent, request: RunRequest) -> Transcript:
    """Make one run of ``agent`` (see the module's docstring)."""
    prepared = agent.launch(request)
    if isinstance(prepared, Transcript):
        return prepared
    box = request.sandbox
    box.snapshot()
    result, failed = run_cli(
        request,
        prepared.argv,
        reach=prepared.reach(request),
        env=prepared.env,
        stdin_text=request.prompt if prepared.stdin is None else prepared.stdin,
        stop_on=prepared.stop_on,
    )
    if failed is not None:
        return failed
    transcript, summary = prepared.read(box.trace_file)
    finish(transcript, request, result)
    transcript.notes.extend(prepared.notes)
    transcript.notes.extend(NOT_GRANTED.format(tool=t) for t in prepared.not_granted)
    spec = agent.spec
    if not spec.capabilities.prices and spec.cost_note:
        transcript.cost_known = False
        transcript.notes.append(spec.cost_note)
    if result.timed_out:
        transcript.error = format_timeout(request.timeout_seconds)
        return transcript
    if prepared.classify is not None:
        prepared.classify(transcript, summary, result)
    else:
        agent.classify(request, transcript, summary, result)
    return transcript


_Agent = TypeVar("_Agent", bound="CliAgent")


@dataclass(frozen=True)
class CliAgent:
    """What an agent CLI's adapter shares: its binary and the operator's grants and
    disallowed tools; its declaration (``spec``: its name, capabilities and operator variables,
    read by :func:`~.base.capabilities_of` and :func:`~.base.passed_of`); its
    binary found by :func:`find_cli`; and its run made by :func:`run_launch`."""

    binary: str
    grants: tuple[str, ...] = ()
    disallow: tuple[str, ...] = ()
    spec: ClassVar[AgentSpec]

    @classmethod
    def find_binary(cls, configured: str | None) -> str:
        """``--eval-<name>-bin``, else the binary on PATH — or one clear line (AgentError)."""
        return find_cli(cls.spec.binary, configured, cls.spec.package)

    @classmethod
    def make(
        cls: type[_Agent],
        binary: str | None,
        *,
        grants: tuple[str, ...] = (),
        disallow: tuple[str, ...] = (),
    ) -> _Agent:
        """The ``--eval-agent <name>`` adapter (``binary``: ``--eval-<name>-bin``, else PATH)."""
        return cls(cls.find_binary(binary), grants=grants, disallow=disallow)

    @property
    def name(self) -> str:
        return self.spec.name

    def access(self, request: RunRequest) -> ToolAccess:
        """What ``request``'s run says of its tools, with the operator's grants and
        disallowed tools."""
        return ToolAccess.of(request, self.grants, self.disallow)

    def unfinished(self, transcript: Transcript, returncode: int | None, *events: object) -> bool:
        """When one of the stream's ``events`` (its start, its result) is missing, the CLI
        ended before its run did: an ``agent_start`` error (:func:`.cli.did_not_start`);
        whether so."""
        if all(event is not None for event in events):
            return False
        did_not_start(transcript, f"{exited(self.name, returncode)} without finishing the run")
        return True

    def launch(self, request: RunRequest) -> Launch | Transcript:
        raise NotImplementedError

    def classify(
        self, request: RunRequest, transcript: Transcript, summary: Any, result: ProcessResult
    ) -> None:
        """How a run whose stream opens with an ``init`` and closes with a ``result`` event
        (``summary``: its :class:`~.calls.StreamEnds`) ended, in order: an error outside the
        model (an API error: its kind, its message's first line), a stream cut short
        (:meth:`unfinished`), the plugin's trust check (:meth:`trust_problem`), any other
        error (the result's or a non-zero exit, with stderr's tail), a model that never
        answered. An adapter whose stream says it otherwise gives ``Launch.classify``."""
        ends: StreamEnds = summary
        returncode, message = result.returncode, ends.error_message
        outside = ends.outside(transcript.stderr_tail)
        if outside is not None and message:
            failed_outside(transcript, outside, f"{ended(returncode)}: {message.splitlines()[0]}")
            return
        if self.unfinished(transcript, returncode, ends.init, ends.result):
            return
        if failed_outside(transcript, "plugin_load", self.trust_problem(request, summary)):
            return
        if message is not None or returncode not in (0, None):
            said = message or f"{self.name} failed"
            transcript.error = with_stderr(f"{ended(returncode)}: {said}", transcript)
            return
        check_answered(transcript)

    def trust_problem(self, request: RunRequest, summary: Any) -> str | None:
        """Why the arm's run did not load the plugin as it must (the with arm all of it, the
        without arm none), read from its stream's ``summary``; None: it did, or it is not
        checked so."""
        return None

    def run(self, request: RunRequest) -> Transcript:
        return run_launch(self, request)


def find_cli(name: str, configured: str | None, package: str) -> str:
    """The agent CLI ``name``'s binary: ``--eval-<name>-bin`` when given (a path, or a command
    on PATH), else ``name`` on PATH — or one clear line (:class:`AgentError`) that says how to
    install it (``npm install -g <package>``)."""
    if configured:
        path = Path(configured).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path.resolve())
        found = shutil.which(configured)
        if found:
            return found
        raise AgentError(f"--eval-{name}-bin: {configured} is not an executable file")
    found = shutil.which(name)
    if found is None:
        raise AgentError(
            f"--eval-agent {name}: the {name} binary was not found on PATH "
            f"(npm install -g {package}, or pass --eval-{name}-bin)"
        )
    return found


def finish(transcript: Transcript, request: RunRequest, result: ProcessResult) -> Transcript:
    """What every CLI run's transcript gets from the run itself: its folder, duration, created
    files, stderr tail, the process's and the sandbox's notes, and whether it ran unconfined."""
    box = request.sandbox
    transcript.cwd = box.cwd
    transcript.duration_seconds = result.duration_seconds
    transcript.files_created = box.created_files()
    transcript.stderr_tail = result.stderr_tail()
    transcript.notes.extend(result.notes)
    if request.unconfined:
        transcript.unconfined = True
        transcript.notes.append(UNCONFINED_NOTE)
    return transcript
