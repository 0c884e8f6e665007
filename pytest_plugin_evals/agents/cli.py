"""Running an agent CLI for one request: confined, bounded, its stdout kept as the run's trace.

The part every CLI adapter shares (copilot, codex, opencode, gemini): the command line wrapped
in bubblewrap unless the run is unconfined on purpose (:mod:`.confine`), run through
:func:`pytest_plugin_evals.util.process.run_process` with the request's timeout, and a run
that was stopped or could not start turned into its transcript at once.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from pytest_plugin_evals.agents import confine
from pytest_plugin_evals.agents.base import AgentError, RunRequest
from pytest_plugin_evals.agents.mcp import McpPlan
from pytest_plugin_evals.model import STOPPED, Transcript
from pytest_plugin_evals.util.process import ProcessResult, run_process


def run_cli(
    request: RunRequest,
    argv: Sequence[str],
    *,
    binary: str,
    env: dict[str, str],
    stdin_text: str,
    unconfined: bool,
    stop_on: Callable[[bytes], bool] | None = None,
    mcp: McpPlan | None = None,
) -> tuple[ProcessResult, Transcript | None]:
    """Run the CLI; returns the process result and, when the run was stopped or could not
    start, its transcript (else None: the stdout is then the run's trace file). ``mcp``: the
    run's MCP servers, whose stand-ins a confined CLI must be able to start."""
    box = request.sandbox
    if not unconfined:
        confinement = confine.for_run(
            request,
            binary,
            also_readable=mcp.readable if mcp else (),
            also_writable=mcp.writable if mcp else (),
            also_hidden=mcp.hidden if mcp else (),
        )
        argv = confine.confined_argv(argv, confinement)
    result = run_process(
        list(argv),
        stdin_text=stdin_text,
        cwd=box.cwd,
        env=env,
        timeout=request.timeout_seconds,
        out_dir=box.out,
        json_lines=True,
        stop_on=stop_on,
    )
    if result.stopped:
        return result, Transcript(
            error=STOPPED,
            infra_error="interrupted",
            cwd=box.cwd,
            duration_seconds=result.duration_seconds,
        )
    if result.start_error is not None:
        return result, Transcript(
            error=result.start_error,
            infra_error="agent_start",
            cwd=box.cwd,
            duration_seconds=result.duration_seconds,
        )
    result.stdout_path.replace(box.trace_file)
    return result, None


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


#: The note of a run made without bubblewrap, on purpose.
UNCONFINED_NOTE = (
    "run unconfined on purpose (--eval-unconfined-shell): its tools could reach the operator's "
    "files"
)


def finish(
    transcript: Transcript, request: RunRequest, result: ProcessResult, *, unconfined: bool
) -> Transcript:
    """What every CLI run's transcript gets from the run itself: its folder, duration, created
    files, stderr tail, the process's notes, and whether it ran unconfined."""
    box = request.sandbox
    transcript.cwd = box.cwd
    transcript.duration_seconds = result.duration_seconds
    transcript.files_created = box.created_files()
    transcript.stderr_tail = result.stderr_tail()
    transcript.notes.extend(result.notes)
    if unconfined:
        transcript.unconfined_shell = True
        transcript.notes.append(UNCONFINED_NOTE)
    return transcript


def with_stderr(text: str, transcript: Transcript) -> str:
    """``text``, then the last three lines of the run's stderr (when it has any), on one line."""
    tail = [line.strip() for line in transcript.stderr_tail.splitlines()[-3:]]
    return text + (": " + " ".join(tail) if tail else "")


def did_not_start(transcript: Transcript, text: str) -> None:
    """The CLI exited before its run was under way: an ``agent_start`` error, with its stderr."""
    transcript.infra_error = "agent_start"
    transcript.error = with_stderr(text, transcript)


def check_answered(transcript: Transcript) -> None:
    """No final message and no tool call: the model never answered (``no_answer``)."""
    if not transcript.final_message and not transcript.tool_calls:
        transcript.infra_error = "no_answer"
        transcript.error = "the model never answered"
