"""Plain data shared by every room: cases, graders, transcripts, verdicts, run results.

Nothing here imports pytest, starts a process or knows a file format: the wire format between
xdist workers and the controller is :mod:`pytest_plugin_evals.records`, the result document is
:mod:`pytest_plugin_evals.reporting.document`.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

#: The arm a run belongs to. ``single`` is the one arm of ``--eval-ablation none``;
#: ``baseline`` replaces ``without`` under ``--eval-baseline-plugin`` (an A/B of two plugins).
Arm = Literal["with", "without", "baseline", "single"]

#: The arms the with arm is compared with (Δ = with − it): measurements, never gated.
SECOND_ARMS: frozenset[str] = frozenset({"without", "baseline"})

#: Where a suite came from, as the JSON document's ``source`` names it.
SourceKind = Literal[
    "prose",
    "case_yaml",
    "mixed",
    "evals_json",
    "skill_creator",
    "trigger_eval",
    "sy",
    "package_json",
]

#: Which regular-expression dialect a case's patterns are written in.
RegexDialect = Literal["js", "python"]

#: Grader types that call the judge (and cost money): skipped under a spent cost ceiling.
PAID_GRADER_TYPES = frozenset({"llm", "baseline", "meetsCriteria"})

#: The operators of package.json ``callsTool`` argument matchers.
MATCHER_OPERATORS = frozenset({"eq", "includes", "matches", "and", "or", "not"})

#: The answer as records and reports keep it is cut at this many characters.
ANSWER_LIMIT = 4000


class ExitStatus(enum.IntEnum):
    """The exit statuses an eval session (and ``merge``) decides, as ``claude plugin eval``
    does; pytest's own (a failed item is 1, a usage error 4, nothing collected 5) stand."""

    #: Every case meets the threshold and nothing failed.
    OK = 0
    #: A case is below the threshold, a case file did not load, or a run could not be made.
    FAILED = 1
    #: The result is partial for want of runs: the cost ceiling or a rejected credential
    #: stopped runs from starting, the session was interrupted, a shard is missing. (The
    #: value of pytest's ``INTERRUPTED``, which this includes.)
    PARTIAL = 2


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
    #: Files copied into the run's working folder before it starts: (source, relative path).
    input_files: tuple[tuple[Path, str], ...] = ()
    #: What a good answer looks like, in words (skill-creator's ``expected_output``): shown.
    expected_output: str | None = None


#: How a plugin under test was resolved (:attr:`PluginInfo.layout`).
PLUGIN_LAYOUTS = ("manifest", "skill", "skills", "claude-skills", "collection")
#: How each bare skill layout (no manifest) is told in the summary.
LAYOUT_TOLD = {
    "skill": "a skill folder (SKILL.md, no plugin manifest)",
    "skills": "a folder of skills (skills/*/SKILL.md, no plugin manifest)",
    "claude-skills": "a project's skills (.claude/skills/*/SKILL.md), loaded as the plugin "
    '".claude"',
    "collection": "a skill collection (<skill>/SKILL.md folders, no plugin manifest), loaded as "
    "a plugin of those skills",
}


@dataclass(frozen=True)
class PluginInfo:
    """A plugin under test: its name and version from the manifest, and its folder.

    ``layout`` says how it was resolved: ``manifest`` (``.claude-plugin/plugin.json``), or
    a bare skill layout with no manifest: ``skill`` (a ``SKILL.md`` folder), ``skills`` (a
    folder of ``skills/*/SKILL.md``), ``claude-skills`` (a project's ``.claude/skills/``,
    whose ``.claude`` folder is then the plugin's), ``collection`` (a repository of
    ``<skill>/SKILL.md`` folders, staged for the runs as a plugin of those skills).
    """

    name: str
    version: str | None
    path: Path
    layout: str = "manifest"


@dataclass(frozen=True)
class BaselinePlugin:
    """The plugin the baseline arm loads (``--eval-baseline-plugin``), as it was resolved.

    ``spec`` is the option's value (``git:HEAD~1``, or the folder, absolute); ``path`` is the
    plugin's folder: for ``git:REF`` the plugin's subfolder in its repository (``.`` at the
    top), whose tree at ``commit`` was checked out for the session.
    """

    spec: str
    name: str
    version: str | None
    path: str
    commit: str | None = None


@dataclass(frozen=True)
class ToolCall:
    """One tool call the agent made, in order."""

    #: The canonical name (``Bash``, ``Read``, ``Skill``, ``mcp__<server>__<tool>`` …): what
    #: graders match, the same for every agent (see :mod:`pytest_plugin_evals.agents.canonical`).
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    is_error: bool = False
    id: str | None = None
    #: The agent's own name for the tool, when it differs from ``name`` (``run_shell_command``).
    original_name: str | None = None


@dataclass(frozen=True)
class MockCall:
    """One call answered by an MCP stand-in (or a package.json mock)."""

    server: str
    tool: str
    input: dict[str, Any] = field(default_factory=dict)
    output: str = ""
    is_error: bool = False

    def to_json(self) -> dict[str, Any]:
        """The call as ``meta.json`` and the result document write it."""
        return {("isError" if k == "is_error" else k): v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Abort:
    """A mock's ``expect:`` (or the model playing a server) stopped the run."""

    server: str
    tool: str
    reason: str

    @property
    def message(self) -> str:
        """How reports say it: ``aborted by mock tracker/create_issue: …``."""
        return f"aborted by mock {self.server}/{self.tool}: {self.reason}"


@dataclass(frozen=True)
class MockServerInfo:
    """One server of a run's mock setup, as the reference's ``mocks.servers`` lists it."""

    server: str
    kind: str
    #: ``(tool, responder)`` pairs (``fixed`` or ``agent``).
    tools: tuple[tuple[str, str], ...] = ()
    withheld: bool = False


@dataclass(frozen=True)
class MockTotals:
    """The run's mocked calls, counted (the reference's ``mocks.calls``)."""

    total: int = 0
    errors: int = 0
    #: ``(tool, count)`` of calls to tools that no stand-in answered.
    unmocked: tuple[tuple[str, int], ...] = ()
    #: What the models playing ``type: agent`` servers cost.
    cost_usd: float = 0.0
    replay_hits: int = 0
    replay_misses: int = 0


@dataclass(frozen=True)
class MockSummary:
    """A run's stand-ins, their warnings and their calls (the reference's ``mocks``)."""

    servers: tuple[MockServerInfo, ...] = ()
    warnings: tuple[str, ...] = ()
    calls: MockTotals = MockTotals()


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
    "interrupted",
    "sandbox",
    "grader",
    "invalid_cost",
    "bound",
    "mock_host",
]

#: The run error of a run the session stopped (Ctrl-C, SIGTERM, ``-x``): not the agent's doing.
STOPPED = "stopped: the session ended before the run did"


@dataclass
class Transcript:
    """What an agent run produced, in the same shape whatever the agent."""

    final_message: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    turns: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float = 0.0
    #: False when the agent reports no price for what it spent (``cost_usd`` is then 0, not
    #: what the run cost: the spend is unknown).
    cost_known: bool = True
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
    #: Set when a mock's ``expect:`` stopped the run.
    aborted: Abort | None = None
    #: A granted shell ran without Claude Code's sandbox, on purpose.
    unconfined: bool = False
    #: Seconds the provider asked to wait before trying again (its ``retry-after``), when the
    #: run was refused (``rate_limit``, ``overloaded``) and the agent reported it.
    retry_after: float | None = None

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
class JudgeVote:
    """One judge call's vote (``PASS`` or ``FAIL``) and its reply."""

    vote: str
    reason: str = ""


@dataclass(frozen=True)
class Judgement:
    """What a judge grader asked and answered: the votes, what the judge was shown, the cost;
    the second judge's reading (``--eval-judge-second``: never scored), and why a judge reached
    no verdict (``error``)."""

    votes: tuple[JudgeVote, ...] = ()
    evidence: str | None = None
    cost_usd: float = 0.0
    second: Judgement | None = None
    error: str | None = None

    @property
    def passed(self) -> bool | None:
        """Whether most votes are PASS (None: no verdict); ``split``: the votes disagreed."""
        if self.error is not None or not self.votes:
            return None
        return sum(v.vote == "PASS" for v in self.votes) * 2 > len(self.votes)

    @property
    def split(self) -> bool:
        return len({v.vote for v in self.votes}) > 1


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
    judgement: Judgement | None = None
    #: Set when the grader could not reach a verdict (``judge``: a judge call failed or its
    #: reply could not be read; ``grader_timeout``: it ran past its time limit): ``passed`` is
    #: None, the explanation says why, and the run is an error kept out of the scores.
    error: str | None = None

    @property
    def counts(self) -> bool:
        """Whether the verdict counts in the run's score (scored and judged)."""
        return self.scored and self.passed is not None

    def __bool__(self) -> bool:
        return bool(self.passed)

    def __repr__(self) -> str:
        mark = "PASS" if self.passed else ("SKIP" if self.passed is None else "FAIL")
        mark = "ERROR" if self.error else mark
        return f"<Verdict {self.name} {mark}: {self.explanation}>"


#: A run keeps this many of its tool calls for its reports (``RunResult.tool_call_list``) ...
TOOL_CALLS_KEPT = 50
#: ... each call's input as compact JSON cut at this many characters ...
TOOL_INPUT_LIMIT = 300
#: ... and a failed call's error text at this many.
TOOL_ERROR_LIMIT = 300
#: How a ``tool_used`` explanation says a ``Skill`` call was made and the skill did not load.
SKILL_NOT_LOADED = "the skill did not load"
_ERROR_TAG = re.compile(r"</?tool_use_error>")


def tool_error_text(output: str | None) -> str | None:
    """A failed call's error text as reports show it: Claude Code's ``<tool_use_error>`` tags
    dropped, whitespace runs made one space, cut at :data:`TOOL_ERROR_LIMIT` (``…`` when cut)."""
    return _cut(" ".join(_ERROR_TAG.sub("", output or "").split()), TOOL_ERROR_LIMIT) or None


def _cut(text: str, limit: int) -> str:
    """``text`` cut at ``limit`` characters, ending in ``…`` when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class ToolCallBrief:
    """A tool call as a run's reports show it: its name, its input as compact JSON (cut at
    :data:`TOOL_INPUT_LIMIT` characters, ending in ``…`` when cut), and whether it failed."""

    name: str
    input: str = "{}"
    is_error: bool = False
    #: The agent's own name for the tool, when it differs from ``name``.
    original_name: str | None = None
    #: A failed call's error text (its output, cut at :data:`TOOL_ERROR_LIMIT` characters).
    error: str | None = None


def brief_tool_calls(calls: Sequence[ToolCall]) -> tuple[ToolCallBrief, ...]:
    """The first :data:`TOOL_CALLS_KEPT` of ``calls``, as reports show them."""
    kept = []
    for call in calls[:TOOL_CALLS_KEPT]:
        text = json.dumps(call.input, ensure_ascii=False, separators=(",", ":"), default=str)
        text = _cut(text, TOOL_INPUT_LIMIT)
        error = tool_error_text(call.output) if call.is_error else None
        kept.append(ToolCallBrief(call.name, text, call.is_error, call.original_name, error))
    return tuple(kept)


@dataclass(frozen=True)
class RunResult:
    """One run as it was made and graded: what the JSON document calls a run."""

    arm: Arm
    run: int
    score: float = 0.0
    passed: bool = False
    verdicts: tuple[Verdict, ...] = ()
    turns: int = 0
    #: Everything the run cost: the agent, its mock players and its judge calls.
    cost_usd: float = 0.0
    judge_cost_usd: float = 0.0
    duration_seconds: float | None = None
    started_at: str | None = None
    error: str | None = None
    infra_error: str | None = None
    trace_path: str = ""
    skipped_paid_graders: bool = False
    #: The final answer, cut at :data:`ANSWER_LIMIT` characters (``answer_truncated`` says so).
    answer: str = ""
    answer_truncated: bool = False
    input_tokens: int | None = None
    output_tokens: int | None = None
    #: How many tool calls the run made; the first of them are in ``tool_call_list``.
    tool_calls: int = 0
    files_created: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    aborted: Abort | None = None
    #: The run's mock stand-ins, their warnings and the calls they answered (None: none).
    mocks: MockSummary | None = None
    #: Every call a stand-in answered, in order (None when no stand-in was active).
    mock_calls: tuple[MockCall, ...] | None = None
    #: The run ran without its sandbox, on purpose (``--eval-unconfined``).
    unconfined: bool = False
    #: The first :data:`TOOL_CALLS_KEPT` tool calls, in order (``tool_calls`` counts them all).
    tool_call_list: tuple[ToolCallBrief, ...] = ()
    #: False when the agent's own spend is unknown (``cost_usd`` holds the judge's only).
    cost_known: bool = True
    #: How many times the run was made again after a rate limit (or an overloaded provider)
    #: refused it, and the seconds it waited for that (see ``--eval-rate-limit-retries``).
    retries: int = 0
    retry_wait_seconds: float = 0.0
    #: The earlier session's results folder this run was taken from (``--eval-reuse``): its
    #: agent's cost was spent then; only its judge calls were made in this session.
    reused_from: str | None = None

    @property
    def graded(self) -> bool:
        """Whether the run was made and graded (an infrastructure failure is not)."""
        return self.infra_error is None


def cut_answer(text: str) -> tuple[str, bool]:
    """The answer as records keep it, and whether it was cut."""
    return text[:ANSWER_LIMIT], len(text) > ANSWER_LIMIT


def within_session_caps(result: RunResult) -> RunResult:
    """``result`` as a session keeps a run it made: the answer cut at :data:`ANSWER_LIMIT`
    characters, the first :data:`TOOL_CALLS_KEPT` tool calls, each one's input cut at
    :data:`TOOL_INPUT_LIMIT` (a run read from a document written elsewhere may hold more)."""
    answer, cut = cut_answer(result.answer)
    kept = result.tool_call_list[:TOOL_CALLS_KEPT]
    calls = tuple(replace(call, input=_cut(call.input, TOOL_INPUT_LIMIT)) for call in kept)
    if not cut and calls == result.tool_call_list:
        return result
    return replace(
        result,
        answer=answer,
        answer_truncated=result.answer_truncated or cut,
        tool_call_list=calls,
    )


def fired_skill(name: str, tool_input: Any, is_error: bool) -> str | None:
    """The skill a tool call loaded, as written (``plugin:skill`` or ``skill``; a ``SKILL.md``
    read gives its folder's name), or None: a call that failed loaded nothing."""
    if is_error or not isinstance(tool_input, dict):
        return None
    if name == "Skill" and isinstance(tool_input.get("skill"), str):
        return tool_input["skill"].strip() or None
    path = tool_input.get("file_path")
    if name == "Read" and isinstance(path, str) and path.replace("\\", "/").endswith("/SKILL.md"):
        parts = path.replace("\\", "/").split("/")
        return parts[-2] if len(parts) >= 2 and parts[-2] else None
    return None


def names_skill(fired: str, skill: str, folder: str) -> bool:
    """Whether ``fired`` (from :func:`fired_skill`) is the skill named ``skill`` in ``folder``,
    plugin-namespaced or not."""
    bare = fired.rpartition(":")[2]
    return bare in (skill, folder)
