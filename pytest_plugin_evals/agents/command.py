"""``--eval-agent "cmd:<command line>"``: any executable, run in the sandbox.

The protocol (documented in docs/reference/agents.md): the prompt arrives on stdin; the
environment carries ``EVAL_CASE``, ``EVAL_ARM``, ``EVAL_RUN``, ``EVAL_PLUGIN_DIR``,
``EVAL_MAX_TURNS``, ``EVAL_ALLOWED_TOOLS``, ``EVAL_MODEL`` and ``EVAL_TRACE_FILE``; stdout is the
final message; the agent may append JSON lines to ``EVAL_TRACE_FILE``::

    {"type": "tool_call", "name": "Read", "input": {...}, "output": "...", "is_error": false}
    {"type": "usage", "input_tokens": 1200, "output_tokens": 40, "cost_usd": 0.0056}
    {"type": "api_error", "status": 429, "retry_after": 2, "message": "rate limited"}

An ``api_error`` line says the model's API refused the run: it is an infrastructure error of the
kind its status names (429 ``rate_limit``, 529 ``overloaded`` ...), which the session may make
again after ``retry_after`` seconds (``--eval-rate-limit-retries``).
"""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import stat
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

from ..model import STOPPED, ToolCall, Transcript
from ..util.capture import capture_stream
from ..util.jsonlines import amount, count, load_events, number
from ..util.process import exit_text, format_timeout
from .base import AgentError, Capabilities, RunRequest, infra_kind
from .cli import (
    UNCONFINED_NOTE,
    bound_transcript,
    hidden_folders,
    reach_of,
    run_confined,
)
from .confine.programs import ProgramReach, program_reach, shown_anyway


@dataclass(frozen=True)
class CommandAgent:
    argv: tuple[str, ...]
    name: str = "cmd"
    capabilities: ClassVar[Capabilities] = Capabilities(separate_process=True)

    @classmethod
    def parse(cls, command_line: str) -> CommandAgent:
        try:
            argv = tuple(shlex.split(command_line))
        except ValueError as exc:
            raise AgentError(f"--eval-agent cmd: cannot split the command line: {exc}") from None
        if not argv:
            raise AgentError('--eval-agent cmd: needs a command line, e.g. "cmd:./my-agent --fast"')
        return cls(argv)

    def _resolved_argv(self) -> list[str]:
        first = self.argv[0]
        if os.sep in first or (os.altsep and os.altsep in first):
            first = str(Path(first).resolve())
        else:
            first = shutil.which(first) or first
        # The agent runs in the sandbox: an argument naming a file that exists relative to
        # where pytest started (``cmd:python3 agent.py rules.json``) is made absolute.
        rest = [
            str(Path(arg).resolve())
            if not arg.startswith("-") and not os.path.isabs(arg) and os.path.exists(arg)
            else arg
            for arg in self.argv[1:]
        ]
        return [first, *rest]

    def run(self, request: RunRequest) -> Transcript:
        box = request.sandbox
        box.outbox.mkdir(exist_ok=True)
        env = dict(request.env)
        env.update(protocol_env(request))
        argv = self._resolved_argv()
        box.snapshot()
        programs = [program_reach(a, hidden_folders(request)) for a in argv]
        also_read = [p for program in programs for p in program.read]
        if request.mocks is not None and request.mocks.mcp_config is not None:
            also_read.append(request.mocks.mcp_config)
        reach = reach_of(request, argv[0], env=env, also_read=also_read)
        reach = replace(reach, notes=(*reach.notes, *refused_notes(request, programs)))
        result, refused = run_confined(
            request, argv, reach=reach, env=env, stdin_text=request.prompt, out_dir=box.out,
            timeout=request.timeout_seconds,
        )  # fmt: skip
        transcript = Transcript(
            duration_seconds=result.duration_seconds, cwd=box.cwd, notes=list(result.notes)
        )
        if refused is not None:
            transcript.error, transcript.infra_error = refused, "sandbox"
            return transcript
        if result.start_error is not None:
            transcript.error = result.start_error
            transcript.infra_error = "agent_start"
            return transcript
        if result.stopped:
            transcript.error, transcript.infra_error = STOPPED, "interrupted"
            return transcript
        if result.bound is not None:
            return bound_transcript(request, result)
        if request.unconfined:
            transcript.unconfined = True
            transcript.notes.append(UNCONFINED_NOTE)
        transcript.final_message = result.stdout.strip()
        transcript.stderr_tail = result.stderr_tail()
        _keep_trace(box.outbox / TRACE_NAME, box.trace_file, transcript)
        transcript.files_created = box.created_files()
        transcript.turns = max(1, len(transcript.tool_calls) + 1)
        if result.timed_out:
            transcript.error = format_timeout(request.timeout_seconds)
        elif transcript.infra_error is not None:
            pass  # the agent said the API refused the run: that is the run's error
        elif result.returncode != 0:
            tail = transcript.stderr_tail.splitlines()[-5:]
            detail = (": " + " ".join(line.strip() for line in tail)) if tail else ""
            transcript.error = f"{exit_text(result.returncode)}{detail}"
        return transcript


def refused_notes(request: RunRequest, programs: list[ProgramReach]) -> list[str]:
    """One note for each folder around a program of the command line that the run does not
    see (a ``bin/`` folder's parent that is no runtime's) and the operator did not allow."""
    shown = [*request.allow_read, *([request.plugin_dir] if request.plugin_dir else [])]
    return [
        f"the agent's command line: {folder} (above its bin/ folder) not readable "
        f"(the operator can allow it with --eval-allow-read {folder})"
        for program in programs
        for folder in program.refused
        if not shown_anyway(folder, shown)
    ]


def protocol_env(request: RunRequest) -> dict[str, str]:
    """The ``EVAL_*`` variables of the command protocol."""
    mocks = request.mocks
    return {
        "EVAL_CASE": request.case.name,
        "EVAL_ARM": request.arm,
        "EVAL_RUN": str(request.run),
        "EVAL_PLUGIN_DIR": str(request.plugin_dir) if request.plugin_dir else "",
        "EVAL_MAX_TURNS": str(request.max_turns),
        "EVAL_ALLOWED_TOOLS": ",".join(request.allowed_tools),
        "EVAL_MODEL": request.model or "",
        "EVAL_TRACE_FILE": str(request.sandbox.outbox / TRACE_NAME),
        "EVAL_MCP_CONFIG": str(mocks.mcp_config) if mocks and mocks.active else "",
    }


#: The trace file's name in the run's outbox (``EVAL_TRACE_FILE``).
TRACE_NAME = "trace.jsonl"


def _keep_trace(written: Path, kept: Path, transcript: Transcript) -> None:
    """Keep the trace the command wrote (a regular file of its own, within the output budget,
    as its stdout) and read it. A link, or a file with other names (a hard link to a file the
    run did not write), is not read."""
    try:
        fd = os.open(written, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError as exc:
        if written.is_symlink():
            transcript.notes.append("trace: a symbolic link, not read")
        elif exc.errno != errno.ENOENT:
            transcript.notes.append(f"trace: not read ({exc.strerror})")
        return
    with os.fdopen(fd, "rb") as src:
        info = os.fstat(src.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            transcript.notes.append("trace: not a file of its own (a link or a device), not read")
            return
        note = capture_stream(src, kept, json_lines=True)
    if note is not None:
        transcript.notes.append(f"trace: {note}")
    transcript.trace_path = kept
    read_trace(kept, transcript)


def read_trace(path: Path, transcript: Transcript) -> None:
    """Fold the protocol's JSON lines into ``transcript`` (unknown lines are kept, not read)."""
    if not path.exists():
        return
    with path.open(encoding="utf-8", errors="replace") as fh:
        for event in load_events(fh):
            kind = event.get("type")
            if kind == "tool_call" and isinstance(event.get("name"), str):
                tool_input = event.get("input")
                output = event.get("output")
                transcript.tool_calls.append(
                    ToolCall(
                        name=event["name"],
                        input=tool_input if isinstance(tool_input, dict) else {},
                        output=output
                        if output is None or isinstance(output, str)
                        else json.dumps(output),
                        is_error=bool(event.get("is_error", False)),
                    )
                )
            elif kind == "usage":
                _add_usage(transcript, event)
            elif kind == "delivered":
                transcript.delivered = bool(event.get("value", True))
            elif kind == "api_error":
                _api_error(transcript, event)


def _add_usage(transcript: Transcript, event: dict[str, Any]) -> None:
    for key in ("input_tokens", "output_tokens"):
        value = count(event.get(key))
        if value is not None:
            setattr(transcript, key, (getattr(transcript, key) or 0) + value)
    cost = number(event.get("cost_usd"))
    if cost is not None:
        transcript.cost_usd += cost  # the runner refuses a cost that is not a price
    latency = amount(event.get("latency_ms"))
    if latency is not None:
        transcript.latency_ms = latency


#: An ``api_error`` line's message is kept up to this many characters.
API_ERROR_MESSAGE_LIMIT = 500


def _api_error(transcript: Transcript, event: dict[str, Any]) -> None:
    """The API refused the run: an infrastructure error of the kind its status names."""
    status = count(event.get("status"))
    status = status if status is not None and 100 <= status <= 599 else None
    message = event.get("message")
    text = message.strip()[:API_ERROR_MESSAGE_LIMIT] if isinstance(message, str) else ""
    transcript.infra_error = infra_kind(status)
    label = f"API error {status}" if status is not None else "API error"
    transcript.error = f"{label}: {text}" if text else label
    transcript.retry_after = amount(event.get("retry_after"))
