"""From a checked shape (:mod:`pytest_plugin_evals.records.shape`) to the model's objects.

The shape has already refused every value of the wrong type; what is left to decide here is
what a missing field (None) means, and to bound what a number may be (finite; a count whole).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest_plugin_evals.records.shape as shape
from pytest_plugin_evals.model import (
    PLUGIN_LAYOUTS,
    Abort,
    Arm,
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
from pytest_plugin_evals.records.kinds import CaseInfo
from pytest_plugin_evals.util import jsonlines

T = TypeVar("T")


def present(items: Iterable[T | None] | None) -> list[T]:
    """The entries of a list field that are not null (a missing list is empty)."""
    return [item for item in items or () if item is not None]


def number(value: Any) -> float | None:
    """``value`` when it is a finite JSON number, else None (an integer too large for a float
    too). A whole number stays an int, as written, so a document read back writes the same."""
    as_float = jsonlines.number(value)
    if as_float is None or not math.isfinite(as_float):
        return None
    return value if isinstance(value, int) else as_float


def real(value: Any, default: float = 0.0) -> float:
    """A finite number, or ``default``."""
    found = number(value)
    return default if found is None else found


def count(value: Any, default: int = 0) -> int:
    """A whole number (a float is cut to one), or ``default``."""
    found = number(value)
    return default if found is None else int(found)


def opt_count(value: Any) -> int | None:
    found = number(value)
    return None if found is None else int(found)


def interval(value: list[Any] | None) -> tuple[float, float] | None:
    """A ``[low, high]`` interval as documents write them, else None."""
    if value is not None and len(value) == 2:
        low, high = number(value[0]), number(value[1])
        if low is not None and high is not None:
            return (low, high)
    return None


def grader(doc: shape.Grader) -> GraderSpec:
    return GraderSpec(
        name=doc.name or "",
        type=doc.type or "",
        config=dict(doc.config or {}),
        weight=real(doc.weight, 1.0),
        arm=doc.arm,
        criteria=doc.graderMarkdown,
    )


def plugin(doc: shape.Plugin | None) -> PluginInfo | None:
    if doc is None:
        return None
    layout = doc.layout if doc.layout in PLUGIN_LAYOUTS else "manifest"
    return PluginInfo(doc.name or "", doc.version, Path(doc.path), cast(Any, layout))


def case(doc: shape.CaseInfo) -> CaseInfo:
    return CaseInfo(
        name=doc.name or "",
        source=doc.source or "",
        path=doc.path or "",
        dir=doc.dir or "",
        suite_root=doc.suiteRoot or "",
        prompt=doc.promptMarkdown or "",
        runs_per_case=count(doc.runsPerCase, 1),
        max_turns=count(doc.maxTurns, 10),
        timeout_seconds=real(doc.timeoutSeconds, 300.0),
        graders=tuple(grader(g) for g in present(doc.graders)),
        description=doc.description,
        tags=tuple(t for t in present(doc.tags)),
        model=doc.model,
        expected_output=doc.expectedOutput,
    )


def second_judge(doc: shape.SecondJudge) -> Judgement:
    votes = tuple(JudgeVote(v.vote or "", v.reason or "") for v in present(doc.votes))
    return Judgement(votes, cost_usd=real(doc.costUsd), error=doc.error)


def verdict(doc: shape.Verdict) -> Verdict:
    judgement = None
    if {"judgeVotes", "judgeCostUsd"} & doc.model_fields_set:
        votes = tuple(JudgeVote(v.vote or "", v.reason or "") for v in present(doc.judgeVotes))
        second = None if doc.secondJudge is None else second_judge(doc.secondJudge)
        judgement = Judgement(votes, doc.evidence, real(doc.judgeCostUsd), second)
    settled = doc.skipped is None and doc.error is None
    return Verdict(
        name=doc.name or "",
        passed=bool(doc.passed) if settled else None,
        explanation=doc.explanation or "",
        weight=real(doc.weight, 1.0),
        type=doc.type or "",
        scored=doc.scored is not False,
        with_only=doc.withOnly is True,
        skipped=doc.skipped,
        judgement=judgement,
        error=doc.error,
    )


def mock_call(doc: shape.MockCall) -> MockCall:
    return MockCall(
        server=doc.server or "",
        tool=doc.tool or "",
        input=dict(doc.input or {}),
        output=doc.output or "",
        is_error=doc.isError is True,
    )


def tool_call(doc: shape.ToolCall) -> ToolCallBrief:
    return ToolCallBrief(
        name=doc.name or "",
        input=doc.input or "",
        is_error=doc.isError is True,
        original_name=doc.originalName,
        error=tool_error_text(doc.error),  # read back: bounded again
    )


def mocks(doc: shape.Mocks | None) -> MockSummary | None:
    if doc is None:
        return None
    servers = tuple(
        MockServerInfo(
            server=s.server or "",
            kind=s.kind or "",
            tools=tuple((t.tool or "", t.responder or "") for t in present(s.tools)),
            withheld=s.withheld is True,
        )
        for s in present(doc.servers)
    )
    calls = doc.calls or shape.MockCalls()
    replay = calls.replay or shape.Replay()
    totals = MockTotals(
        total=count(calls.total),
        errors=count(calls.errors),
        unmocked=tuple((u.tool or "", count(u.count)) for u in present(calls.unmocked)),
        cost_usd=real(calls.costUsd),
        replay_hits=count(replay.hits),
        replay_misses=count(replay.misses),
    )
    return MockSummary(servers, tuple(present(doc.warnings)), totals)


def run(doc: shape.Run) -> RunResult:
    aborted = doc.aborted
    return RunResult(
        arm=cast(Arm, doc.arm or "with"),
        run=count(doc.run, 1),
        score=real(doc.score),
        passed=doc.passed is True,
        verdicts=tuple(verdict(v) for v in present(doc.graders)),
        turns=count(doc.turns),
        cost_usd=real(doc.costUsd),
        cost_known=doc.costUnknown is not True,
        judge_cost_usd=real(doc.judgeCostUsd),
        duration_seconds=number(doc.durationSeconds),
        started_at=doc.startedAt,
        error=doc.error,
        infra_error=doc.infraError,
        trace_path=doc.tracePath or "",
        skipped_paid_graders=doc.skippedPaidGraders is True,
        answer=doc.answer or "",
        answer_truncated=doc.answerTruncated is True,
        input_tokens=opt_count(doc.inputTokens),
        output_tokens=opt_count(doc.outputTokens),
        tool_calls=count(doc.toolCalls),
        tool_call_list=tuple(tool_call(c) for c in present(doc.toolCallList)),
        files_created=tuple(present(doc.filesCreated)),
        notes=tuple(present(doc.notes)),
        aborted=(
            Abort(str(aborted.server), str(aborted.tool), str(aborted.reason))
            if aborted is not None and aborted.model_fields_set
            else None
        ),
        mocks=mocks(doc.mocks),
        mock_calls=(
            tuple(mock_call(c) for c in present(doc.mockCalls))
            if doc.mockCalls is not None
            else None
        ),
        unconfined=doc.unconfined is True or doc.unconfinedShell is True,
        retries=count(doc.retries),
        retry_wait_seconds=real(doc.retryWaitSeconds),
        reused_from=doc.reusedFrom,
    )
