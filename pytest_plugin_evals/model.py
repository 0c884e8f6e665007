"""Plain data shared by every room: cases, graders, transcripts, verdicts, run results.

Nothing here imports pytest or starts a process. Everything that crosses a process boundary
(xdist workers, the JSON document) goes through ``to_dict`` and holds builtins only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

#: The arm a run belongs to. ``single`` is the one arm of ``--eval-ablation none``.
Arm = Literal["with", "without", "single"]

#: Where a suite came from, as the JSON document's ``source`` names it.
SourceKind = Literal["prose", "case_yaml", "mixed", "evals_json", "sy", "package_json"]

#: Which regular-expression dialect a case's patterns are written in.
RegexDialect = Literal["js", "python"]


class LoadError(Exception):
    """A suite file that cannot be loaded: one sentence, with the file and the line where known."""

    def __init__(self, path: Path | str, message: str, line: int | None = None) -> None:
        self.path = Path(path)
        self.message = message
        self.line = line
        super().__init__(self.render())

    def render(self, root: Path | None = None) -> str:
        shown: Path | str = self.path
        if root is not None:
            try:
                shown = self.path.resolve().relative_to(root.resolve())
            except ValueError:
                shown = self.path
        where = f"{shown}:{self.line}" if self.line else f"{shown}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class GraderSpec:
    """One grader as written in a suite file.

    ``type`` is the grader type (``regex``, ``tool_used``, ``contains``, ``callsTool`` ...).
    ``config`` holds the type's own options with defaults filled in (as the JSON document shows
    them); ``arm`` is ``with-only``, ``both`` or None; ``criteria`` is the rubric of a judge grader.
    """

    name: str
    type: str
    config: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    arm: str | None = None
    criteria: str | None = None
    path: str | None = None
    line: int | None = None

    @property
    def paid(self) -> bool:
        """Whether grading calls a judge model."""
        return self.type in PAID_GRADER_TYPES


PAID_GRADER_TYPES = frozenset({"llm", "baseline", "meetsCriteria"})


@dataclass(frozen=True)
class Case:
    """One eval case, whatever format it was written in."""

    name: str
    prompt: str
    source: SourceKind
    #: The file the case was read from (prompt.md, case.yaml, evals.json, package.json ...).
    path: Path
    #: The case's own folder: relative paths (scaffold, history, add_dirs, baseline) resolve here.
    dir: Path
    #: The evals folder the case belongs to (the suite root).
    suite_root: Path
    graders: tuple[GraderSpec, ...] = ()
    description: str | None = None
    tags: tuple[str, ...] = ()
    runs: int = 3
    model: str | None = None
    max_turns: int = 10
    timeout_seconds: float = 300
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    #: ``plugins:`` as written (paths relative to the case folder).
    plugins: tuple[str, ...] = ()
    scaffold_script: str | None = None
    history_file: str | None = None
    add_dirs: tuple[str, ...] = ()
    append_system_prompt: str | None = None
    #: Tool name -> canned result (package.json ``mocks``).
    mocks: dict[str, Any] = field(default_factory=dict)
    requires_secret: tuple[str, ...] = ()
    regex_dialect: RegexDialect = "js"
    #: The line of the case in its file, where the format has one.
    line: int | None = None
    #: The ``expected_outcome`` / format-specific leftovers kept for reports.
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Builtins only: travels to the controller under xdist."""
        return {
            "name": self.name,
            "source": self.source,
            "path": str(self.path),
            "dir": str(self.dir),
            "suiteRoot": str(self.suite_root),
            "promptMarkdown": self.prompt,
            "description": self.description,
            "tags": list(self.tags),
            "runsPerCase": self.runs,
            "model": self.model,
            "maxTurns": self.max_turns,
            "timeoutSeconds": self.timeout_seconds,
            "graders": [
                {
                    "name": g.name,
                    "type": g.type,
                    "weight": g.weight,
                    **({"arm": g.arm} if g.arm else {}),
                    **({"graderMarkdown": g.criteria} if g.criteria is not None else {}),
                    "config": g.config,
                }
                for g in self.graders
            ],
        }


@dataclass(frozen=True)
class ToolCall:
    """One tool call the agent made, in order."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    is_error: bool = False
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "input": self.input,
            "output": self.output,
            "isError": self.is_error,
        }


@dataclass(frozen=True)
class MockCall:
    """One call answered by an MCP stand-in (or a package.json mock)."""

    server: str
    tool: str
    input: dict[str, Any] = field(default_factory=dict)
    output: str = ""
    is_error: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "tool": self.tool,
            "input": self.input,
            "output": self.output,
            "isError": self.is_error,
        }

    def to_json_line(self) -> str:
        import json

        doc: dict[str, Any] = {"tool": self.tool, "input": self.input, "output": self.output}
        if self.is_error:
            doc["isError"] = True
        doc["verdict"] = "ok"
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


#: Kinds of infrastructure failure: the run could not be made, so it is an error, not a score.
InfraKind = Literal[
    "agent_start",
    "rate_limit",
    "overloaded",
    "auth",
    "judge",
    "api",
    "harness",
    "plugin_load",
    "no_answer",
]


@dataclass
class Transcript:
    """What an agent run produced, in the same shape whatever the agent."""

    final_message: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    turns: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float = 0.0
    duration_seconds: float = 0.0
    #: The run error, graded on what the run produced (timeout, max turns, non-zero exit).
    error: str | None = None
    #: Set when the run could not be made at all: it is a pytest error and kept out of scores.
    infra_error: InfraKind | None = None
    #: The raw trace, one JSON event per line (stream-json for claude, the agent's own for cmd).
    trace_path: Path | None = None
    #: Files created during the run: paths relative to the cwd, ``/``-separated, sorted.
    files_created: list[str] = field(default_factory=list)
    #: The run's working directory (file targets resolve here).
    cwd: Path | None = None
    mock_calls: list[MockCall] | None = None
    #: Channel delivery flag reported by the agent (sy's ``expect_delivered``).
    delivered: bool | None = None
    #: Time to the answer in milliseconds; defaults to the duration.
    latency_ms: float | None = None
    stderr_tail: str = ""
    #: The run never reached the agent (a failed scaffold): it is not graded and scores 0.
    skip_grading: bool = False
    #: Notes about how the run was set up (tools not granted, mocks served …).
    notes: list[str] = field(default_factory=list)
    #: Set when a mock's ``expect:`` stopped the run: ``{server, tool, reason}``.
    aborted: dict[str, str] | None = None

    @property
    def total_tokens(self) -> int | None:
        if self.input_tokens is None and self.output_tokens is None:
            return None
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    def trace_lines(self) -> list[str]:
        """The trace as compact JSON lines (empty when the agent kept none)."""
        if self.trace_path is None or not self.trace_path.exists():
            return []
        with self.trace_path.open(encoding="utf-8", errors="replace") as fh:
            return [line.rstrip("\n") for line in fh if line.strip()]


@dataclass(frozen=True)
class Verdict:
    """One grader's verdict on one run.

    ``passed`` is None when the grader did not judge (``skipped``): such a verdict is never
    scored and never counts as a pass.
    """

    name: str
    passed: bool | None
    explanation: str
    weight: float = 1.0
    type: str = ""
    scored: bool = True
    with_only: bool = False
    skipped: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.passed)

    def __repr__(self) -> str:
        mark = "PASS" if self.passed else ("SKIP" if self.passed is None else "FAIL")
        return f"<Verdict {self.name} {mark}: {self.explanation}>"

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "passed": bool(self.passed),
            "weight": self.weight,
            "explanation": self.explanation,
            "withOnly": self.with_only,
            "scored": self.scored and self.passed is not None,
        }
        if self.skipped is not None:
            doc["skipped"] = self.skipped
        doc.update(self.details)
        return doc


#: The answer as reports show it is cut at this many characters.
ANSWER_LIMIT = 4000


@dataclass
class RunResult:
    """One graded run: what the JSON document calls a run, plus where it belongs."""

    case: str
    arm: Arm
    run: int
    score: float = 0.0
    passed: bool = False
    verdicts: list[Verdict] = field(default_factory=list)
    turns: int = 0
    cost_usd: float = 0.0
    judge_cost_usd: float = 0.0
    duration_seconds: float | None = None
    started_at: str | None = None
    error: str | None = None
    infra_error: str | None = None
    trace_path: str = ""
    skipped_paid_graders: bool = False
    final_message: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    tool_calls: int = 0
    files_created: list[str] = field(default_factory=list)
    #: Set when the run was not made (cost ceiling, missing secret): the reason.
    skipped: str | None = None
    notes: list[str] = field(default_factory=list)
    #: A mock's ``expect:`` stopped the run: ``{server, tool, reason}`` (score 0, not graded).
    aborted: dict[str, str] | None = None
    #: The run's mock stand-ins, their warnings and the calls they answered.
    mocks: dict[str, Any] | None = None
    #: Every call a stand-in answered, in order (None when no stand-in was active).
    mock_calls: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "score": self.score,
            "passed": self.passed,
            "turns": self.turns,
            "costUsd": self.cost_usd,
            "judgeCostUsd": self.judge_cost_usd,
            "durationSeconds": self.duration_seconds,
            "startedAt": self.started_at,
            "error": self.error,
            "tracePath": self.trace_path,
            "skippedPaidGraders": self.skipped_paid_graders,
            "graders": [v.to_dict() for v in self.verdicts],
            "arm": self.arm,
            "run": self.run,
            "infraError": self.infra_error,
            "answer": self.final_message[:ANSWER_LIMIT],
            "answerTruncated": len(self.final_message) > ANSWER_LIMIT,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "toolCalls": self.tool_calls,
            "filesCreated": self.files_created,
        }
        if self.skipped is not None:
            doc["skipped"] = self.skipped
        if self.notes:
            doc["notes"] = self.notes
        if self.aborted is not None:
            doc["aborted"] = self.aborted
        if self.mocks is not None:
            doc["mocks"] = self.mocks
        if self.mock_calls is not None:
            doc["mockCalls"] = self.mock_calls
        return doc
