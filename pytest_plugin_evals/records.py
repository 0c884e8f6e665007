"""The wire format between xdist workers and the controller, and nothing else.

Every eval item reports one record on its test report, under one ``user_properties`` key (the
pytest shell's ``RECORD_PROPERTY``), as one JSON string (builtins only, so execnet ships it,
JUnit shows valid JSON, and the controller reads the same thing with and without ``-n``):

- :class:`RunRecord`: a run that was made (graded, or an infrastructure error);
- :class:`SkippedRun`: a run that was never started (cost ceiling, missing secret …);
- :class:`LoadErrorRecord`: a case file that could not be loaded.

:func:`encode` and :func:`decode` are the one pair that writes and reads them. The JSON form of
a run (:func:`run_to_json` / :func:`run_from_json`) is also the form of a run in the result
document, so a run reads the same on the wire and in ``aggregate-result.json``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from pytest_plugin_evals.model import (
    PLUGIN_LAYOUTS,
    Abort,
    Arm,
    Case,
    GraderSpec,
    Judgement,
    JudgeVote,
    MockCall,
    MockServerInfo,
    MockSummary,
    MockTotals,
    PluginInfo,
    RunResult,
    ToolCallBrief,
    Verdict,
    tool_error_text,
)
from pytest_plugin_evals.util.jsonlines import dumps as dumps

#: The version of the wire format; a record of another version is refused, not misread.
RECORD_SCHEMA = 1

JSONObject = dict[str, Any]


class RecordError(ValueError):
    """A record that cannot be read: another schema version, or not a record at all."""


@dataclass(frozen=True)
class CaseInfo:
    """What the controller knows of a case: enough to report it, nothing to run it."""

    name: str
    source: str
    path: str
    dir: str
    suite_root: str
    prompt: str
    runs_per_case: int
    max_turns: int
    timeout_seconds: float
    graders: tuple[GraderSpec, ...] = ()
    description: str | None = None
    tags: tuple[str, ...] = ()
    model: str | None = None
    expected_output: str | None = None

    @classmethod
    def of(cls, case: Case, runs_per_case: int | None = None) -> CaseInfo:
        return cls(
            name=case.name,
            source=case.source,
            path=str(case.path),
            dir=str(case.dir),
            suite_root=str(case.suite_root),
            prompt=case.prompt,
            runs_per_case=runs_per_case or case.runs,
            max_turns=case.max_turns,
            timeout_seconds=case.timeout_seconds,
            graders=case.graders,
            description=case.description,
            tags=case.tags,
            model=case.model,
            expected_output=case.expected_output,
        )


@dataclass(frozen=True)
class RunRecord:
    """A run that was made: its case, its plugin, and the graded result."""

    nodeid: str
    case: CaseInfo
    plugin: PluginInfo | None
    two_arm: bool
    result: RunResult
    #: The agent's label in a session of several agents (``--eval-agents``), else None.
    agent: str | None = None

    @property
    def arm(self) -> Arm:
        return self.result.arm

    @property
    def run(self) -> int:
        return self.result.run


@dataclass(frozen=True)
class SkippedRun:
    """A run that was never started, and why (``cost_ceiling``, ``missing_secret`` …)."""

    nodeid: str
    case: CaseInfo
    plugin: PluginInfo | None
    two_arm: bool
    arm: Arm
    run: int
    reason: str
    #: The agent's label in a session of several agents (``--eval-agents``), else None.
    agent: str | None = None


@dataclass(frozen=True)
class LoadErrorRecord:
    """A case file that could not be loaded."""

    nodeid: str
    path: str
    line: int | None
    message: str
    suite_root: str


Record = RunRecord | SkippedRun | LoadErrorRecord


# -- pieces ----------------------------------------------------------------------------------


def grader_to_json(spec: GraderSpec) -> JSONObject:
    doc: JSONObject = {"name": spec.name, "type": spec.type, "weight": spec.weight}
    if spec.arm:
        doc["arm"] = spec.arm
    if spec.criteria is not None:
        doc["graderMarkdown"] = spec.criteria
    doc["config"] = spec.config
    return doc


def grader_from_json(doc: Mapping[str, Any]) -> GraderSpec:
    return GraderSpec(
        name=str(doc.get("name", "")),
        type=str(doc.get("type", "")),
        config=dict(doc.get("config") or {}),
        weight=_float(doc.get("weight"), 1.0),
        arm=_opt_str(doc.get("arm")),
        criteria=_opt_str(doc.get("graderMarkdown")),
    )


def plugin_to_json(plugin: PluginInfo) -> JSONObject:
    doc: JSONObject = {"name": plugin.name}
    if plugin.version is not None:
        doc["version"] = plugin.version
    doc["path"] = str(plugin.path)
    if plugin.layout != "manifest":
        doc["layout"] = plugin.layout
    return doc


def plugin_from_json(doc: Any) -> PluginInfo | None:
    if not isinstance(doc, Mapping):
        return None
    layout = str(doc.get("layout")) if doc.get("layout") in PLUGIN_LAYOUTS else "manifest"
    return PluginInfo(
        str(doc.get("name", "")), _opt_str(doc.get("version")), Path(doc["path"]), layout
    )


def case_to_json(case: CaseInfo) -> JSONObject:
    return {
        "name": case.name,
        "source": case.source,
        "path": case.path,
        "dir": case.dir,
        "suiteRoot": case.suite_root,
        "promptMarkdown": case.prompt,
        "description": case.description,
        "tags": list(case.tags),
        "runsPerCase": case.runs_per_case,
        "model": case.model,
        "maxTurns": case.max_turns,
        "timeoutSeconds": case.timeout_seconds,
        "graders": [grader_to_json(g) for g in case.graders],
        "expectedOutput": case.expected_output,
    }


def case_from_json(doc: Mapping[str, Any]) -> CaseInfo:
    return CaseInfo(
        name=str(doc.get("name", "")),
        source=str(doc.get("source", "")),
        path=str(doc.get("path") or ""),
        dir=str(doc.get("dir") or ""),
        suite_root=str(doc.get("suiteRoot") or ""),
        prompt=str(doc.get("promptMarkdown") or ""),
        runs_per_case=_int(doc.get("runsPerCase"), 1),
        max_turns=_int(doc.get("maxTurns"), 10),
        timeout_seconds=_float(doc.get("timeoutSeconds"), 300.0),
        graders=tuple(grader_from_json(g) for g in doc.get("graders") or [] if _is_map(g)),
        description=_opt_str(doc.get("description")),
        tags=tuple(str(t) for t in doc.get("tags") or []),
        model=_opt_str(doc.get("model")),
        expected_output=_opt_str(doc.get("expectedOutput")),
    )


def verdict_to_json(verdict: Verdict) -> JSONObject:
    doc: JSONObject = {
        "name": verdict.name,
        "type": verdict.type,
        "passed": None if verdict.error else bool(verdict.passed),
        "weight": verdict.weight,
        "explanation": verdict.explanation,
        "withOnly": verdict.with_only,
        "scored": verdict.counts,
    }
    if verdict.skipped is not None:
        doc["skipped"] = verdict.skipped
    if verdict.error is not None:
        doc["error"] = verdict.error
    judged = verdict.judgement
    if judged is not None:
        doc["judgeVotes"] = [{"vote": v.vote, "reason": v.reason} for v in judged.votes]
        if judged.evidence is not None:
            doc["evidence"] = judged.evidence
        doc["judgeCostUsd"] = judged.cost_usd
    return doc


def verdict_from_json(doc: Mapping[str, Any]) -> Verdict:
    skipped = _opt_str(doc.get("skipped"))
    judgement = None
    if "judgeVotes" in doc or "judgeCostUsd" in doc:
        votes = tuple(
            JudgeVote(str(v.get("vote", "")), str(v.get("reason", "")))
            for v in doc.get("judgeVotes") or []
            if _is_map(v)
        )
        evidence = doc.get("evidence")
        judgement = Judgement(
            votes, str(evidence) if evidence is not None else None, _float(doc.get("judgeCostUsd"))
        )
    error = _opt_str(doc.get("error"))
    return Verdict(
        name=str(doc.get("name", "")),
        passed=None if skipped is not None or error is not None else bool(doc.get("passed")),
        explanation=str(doc.get("explanation", "")),
        weight=_float(doc.get("weight"), 1.0),
        type=str(doc.get("type", "")),
        scored=bool(doc.get("scored", True)),
        with_only=bool(doc.get("withOnly", False)),
        skipped=skipped,
        judgement=judgement,
        error=error,
    )


def mock_call_to_json(call: MockCall) -> JSONObject:
    return {
        "server": call.server,
        "tool": call.tool,
        "input": call.input,
        "output": call.output,
        "isError": call.is_error,
    }


def mock_call_from_json(doc: Mapping[str, Any]) -> MockCall:
    tool_input = doc.get("input")
    return MockCall(
        server=str(doc.get("server", "")),
        tool=str(doc.get("tool", "")),
        input=dict(as_map(tool_input)),
        output=str(doc.get("output") or ""),
        is_error=bool(doc.get("isError")),
    )


def tool_call_to_json(call: ToolCallBrief) -> JSONObject:
    doc: JSONObject = {"name": call.name, "input": call.input, "isError": call.is_error}
    if call.original_name:
        doc["originalName"] = call.original_name
    if call.error:
        doc["error"] = call.error
    return doc


def tool_call_from_json(doc: Mapping[str, Any]) -> ToolCallBrief:
    return ToolCallBrief(
        name=str(doc.get("name", "")),
        input=str(doc.get("input", "")),
        is_error=bool(doc.get("isError")),
        original_name=_opt_str(doc.get("originalName")),
        error=tool_error_text(_opt_str(doc.get("error"))),  # read back: bounded again
    )


def mocks_to_json(mocks: MockSummary) -> JSONObject:
    servers: list[JSONObject] = []
    for server in mocks.servers:
        entry: JSONObject = {"server": server.server, "kind": server.kind}
        if server.withheld:
            entry["withheld"] = True
        entry["tools"] = [{"tool": t, "responder": r} for t, r in server.tools]
        servers.append(entry)
    calls = mocks.calls
    return {
        "servers": servers,
        "warnings": list(mocks.warnings),
        "calls": {
            "total": calls.total,
            "errors": calls.errors,
            "unmocked": [{"tool": t, "count": n} for t, n in calls.unmocked],
            "costUsd": calls.cost_usd,
            "replay": {"hits": calls.replay_hits, "misses": calls.replay_misses},
        },
    }


def mocks_from_json(doc: Any) -> MockSummary | None:
    if not _is_map(doc):
        return None
    servers = tuple(
        MockServerInfo(
            server=str(s.get("server", "")),
            kind=str(s.get("kind", "")),
            tools=tuple(
                (str(t.get("tool", "")), str(t.get("responder", "")))
                for t in s.get("tools") or []
                if _is_map(t)
            ),
            withheld=bool(s.get("withheld")),
        )
        for s in doc.get("servers") or []
        if _is_map(s)
    )
    calls = as_map(doc.get("calls"))
    replay = as_map(calls.get("replay"))
    totals = MockTotals(
        total=_int(calls.get("total")),
        errors=_int(calls.get("errors")),
        unmocked=tuple(
            (str(u.get("tool", "")), _int(u.get("count")))
            for u in calls.get("unmocked") or []
            if _is_map(u)
        ),
        cost_usd=_float(calls.get("costUsd")),
        replay_hits=_int(replay.get("hits")),
        replay_misses=_int(replay.get("misses")),
    )
    return MockSummary(servers, tuple(str(w) for w in doc.get("warnings") or []), totals)


def run_to_json(result: RunResult) -> JSONObject:
    """A run as the result document lists it (the reference's field names, then ours)."""
    doc: JSONObject = {
        "score": result.score,
        "passed": result.passed,
        "turns": result.turns,
        "costUsd": result.cost_usd,
        "judgeCostUsd": result.judge_cost_usd,
        "durationSeconds": result.duration_seconds,
        "startedAt": result.started_at,
        "error": result.error,
        "tracePath": result.trace_path,
        "skippedPaidGraders": result.skipped_paid_graders,
        "graders": [verdict_to_json(v) for v in result.verdicts],
        "arm": result.arm,
        "run": result.run,
        "infraError": result.infra_error,
        "answer": result.answer,
        "answerTruncated": result.answer_truncated,
        "inputTokens": result.input_tokens,
        "outputTokens": result.output_tokens,
        "toolCalls": result.tool_calls,
        "toolCallList": [tool_call_to_json(c) for c in result.tool_call_list],
        **({} if result.cost_known else {"costUnknown": True}),
        "filesCreated": list(result.files_created),
    }
    if result.notes:
        doc["notes"] = list(result.notes)
    if result.aborted is not None:
        aborted = result.aborted
        doc["aborted"] = {"server": aborted.server, "tool": aborted.tool, "reason": aborted.reason}
    if result.mocks is not None:
        doc["mocks"] = mocks_to_json(result.mocks)
    if result.mock_calls is not None:
        doc["mockCalls"] = [mock_call_to_json(c) for c in result.mock_calls]
    if result.unconfined:
        doc["unconfined"] = True
    doc["retries"] = result.retries
    if result.retry_wait_seconds:
        doc["retryWaitSeconds"] = result.retry_wait_seconds
    if result.reused_from is not None:
        doc["reusedFrom"] = result.reused_from
    return doc


def run_from_json(doc: Mapping[str, Any]) -> RunResult:
    aborted = as_map(doc.get("aborted"))
    calls = doc.get("mockCalls")
    duration = doc.get("durationSeconds")
    return RunResult(
        arm=cast(Arm, str(doc.get("arm") or "with")),
        run=_int(doc.get("run"), 1),
        score=_float(doc.get("score")),
        passed=bool(doc.get("passed")),
        verdicts=tuple(verdict_from_json(v) for v in doc.get("graders") or [] if _is_map(v)),
        turns=_int(doc.get("turns")),
        cost_usd=_float(doc.get("costUsd")),
        cost_known=doc.get("costUnknown") is not True,
        judge_cost_usd=_float(doc.get("judgeCostUsd")),
        duration_seconds=_float(duration) if duration is not None else None,
        started_at=_opt_str(doc.get("startedAt")),
        error=_opt_str(doc.get("error")),
        infra_error=_opt_str(doc.get("infraError")),
        trace_path=str(doc.get("tracePath") or ""),
        skipped_paid_graders=bool(doc.get("skippedPaidGraders")),
        answer=str(doc.get("answer") or ""),
        answer_truncated=bool(doc.get("answerTruncated")),
        input_tokens=_opt_int(doc.get("inputTokens")),
        output_tokens=_opt_int(doc.get("outputTokens")),
        tool_calls=_int(doc.get("toolCalls")),
        tool_call_list=(
            tuple(tool_call_from_json(c) for c in listed if _is_map(c))
            if isinstance(listed := doc.get("toolCallList"), list)
            else ()
        ),
        files_created=tuple(str(f) for f in doc.get("filesCreated") or []),
        notes=tuple(str(n) for n in doc.get("notes") or []),
        aborted=(
            Abort(str(aborted.get("server")), str(aborted.get("tool")), str(aborted.get("reason")))
            if aborted
            else None
        ),
        mocks=mocks_from_json(doc.get("mocks")),
        mock_calls=(
            tuple(mock_call_from_json(c) for c in calls if _is_map(c))
            if isinstance(calls, list)
            else None
        ),
        unconfined=bool(doc.get("unconfined") or doc.get("unconfinedShell")),
        retries=_int(doc.get("retries")),
        retry_wait_seconds=_float(doc.get("retryWaitSeconds")),
        reused_from=_opt_str(doc.get("reusedFrom")),
    )


# -- the records -----------------------------------------------------------------------------


def to_json(record: Record) -> JSONObject:
    """A record as a JSON object (see :func:`encode`)."""
    if isinstance(record, LoadErrorRecord):
        return {
            "schema": RECORD_SCHEMA,
            "kind": "load_error",
            "nodeid": record.nodeid,
            "path": record.path,
            "line": record.line,
            "message": record.message,
            "suiteRoot": record.suite_root,
        }
    doc: JSONObject = {
        "schema": RECORD_SCHEMA,
        "kind": "run" if isinstance(record, RunRecord) else "skipped",
        "nodeid": record.nodeid,
        "case": case_to_json(record.case),
        "plugin": plugin_to_json(record.plugin) if record.plugin else None,
        "twoArm": record.two_arm,
        "arm": record.arm,
        "run": record.run,
    }
    if record.agent is not None:
        doc["agent"] = record.agent
    if isinstance(record, RunRecord):
        doc["result"] = run_to_json(record.result)
    else:
        doc["reason"] = record.reason
    return doc


def from_json(doc: Any) -> Record:
    """The record a JSON object holds; :class:`RecordError` when it is not one."""
    if not _is_map(doc):
        raise RecordError("a record must be a JSON object")
    if doc.get("schema") != RECORD_SCHEMA:
        raise RecordError(
            f"record schema {doc.get('schema')!r} is not {RECORD_SCHEMA}: the workers and the "
            "controller run different versions of pytest-plugin-evals"
        )
    kind = doc.get("kind")
    nodeid = str(doc.get("nodeid", ""))
    if kind == "load_error":
        return LoadErrorRecord(
            nodeid=nodeid,
            path=str(doc.get("path", "")),
            line=_opt_int(doc.get("line")),
            message=str(doc.get("message", "")),
            suite_root=str(doc.get("suiteRoot", "")),
        )
    if kind not in ("run", "skipped") or not _is_map(doc.get("case")):
        raise RecordError(f"unknown record kind {kind!r}")
    case = case_from_json(doc["case"])
    plugin = plugin_from_json(doc.get("plugin"))
    two_arm = bool(doc.get("twoArm"))
    agent = _opt_str(doc.get("agent"))
    if kind == "run":
        if not _is_map(doc.get("result")):
            raise RecordError("a run record needs its result")
        return RunRecord(nodeid, case, plugin, two_arm, run_from_json(doc["result"]), agent)
    return SkippedRun(
        nodeid=nodeid,
        case=case,
        plugin=plugin,
        two_arm=two_arm,
        arm=cast(Arm, str(doc.get("arm") or "with")),
        run=_int(doc.get("run"), 1),
        reason=str(doc.get("reason", "")),
        agent=agent,
    )


def encode(record: Record) -> str:
    """The record as the JSON string an item reports (valid UTF-8, finite numbers only)."""
    return dumps(to_json(record))


def decode(text: str) -> Record:
    """The record an item reported; :class:`RecordError` when it cannot be read."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise RecordError(f"a record is not JSON: {exc}") from None
    return from_json(doc)


# -- lenient readers -------------------------------------------------------------------------


def _is_map(value: Any) -> bool:
    return isinstance(value, Mapping)


def as_map(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a JSON object, else an empty one (for lenient reading)."""
    return value if isinstance(value, Mapping) else {}


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _int(value: Any, default: int = 0) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return default


def _opt_int(value: Any) -> int | None:
    return _int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def opt_number(value: Any) -> float | None:
    """``value`` when it is a finite JSON number, else None (an integer too large for a float
    too). A whole number stays an int, as written, so a document read back writes the same."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    if not math.isfinite(number):
        return None
    return value if isinstance(value, int) else number


def interval_from_json(value: Any) -> tuple[float, float] | None:
    """A ``[low, high]`` interval as documents write them, else None."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        low, high = opt_number(value[0]), opt_number(value[1])
        if low is not None and high is not None:
            return (low, high)
    return None


def _float(value: Any, default: float = 0.0) -> float:
    number = opt_number(value)
    return default if number is None else number
