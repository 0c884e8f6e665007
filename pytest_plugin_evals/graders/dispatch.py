"""``grade()``: one grader spec, one transcript, one verdict.

A grader that fails to run gives a failing verdict (``grader threw: …``), never an exception —
except a judge that could not reach a verdict: :class:`JudgeFailure` goes through, so the run
becomes an infrastructure error instead of a score.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pytest_plugin_evals.graders import budgets, files, judge, text, tools
from pytest_plugin_evals.graders.base import GradeContext, GraderFn, Outcome, TargetUnavailable
from pytest_plugin_evals.graders.judge import JudgeFailure, judge_cost
from pytest_plugin_evals.model import Case, GraderSpec, Transcript, Verdict

if TYPE_CHECKING:
    from pytest_plugin_evals.graders.judge import AnyJudge

#: Grader type name -> grader function.
GRADERS: dict[str, GraderFn] = {
    # directory format
    "regex": text.grade_regex,
    "tool_used": tools.grade_tool_used,
    "tool_order": tools.grade_tool_order,
    "file_exists": files.grade_file_exists,
    "llm": judge.grade_llm,
    "baseline": judge.grade_baseline,
    # evals.json
    "contains": text.grade_contains,
    "not_contains": text.grade_not_contains,
    "min_chars": text.grade_min_chars,
    # sy
    "expected_contains": text.grade_expected_contains,
    "expected_not_contains": text.grade_expected_not_contains,
    "expected_regex": text.grade_expected_regex,
    "expected_not_regex": text.grade_expected_not_regex,
    "max_tokens": budgets.grade_max_tokens,
    "max_latency_ms": budgets.grade_max_latency_ms,
    "expect_tool_success": tools.grade_expect_tool_success,
    "expect_delivered": budgets.grade_expect_delivered,
    # package.json
    "includes": text.grade_includes,
    "matches": text.grade_matches,
    "callsTool": tools.grade_calls_tool,
    "meetsCriteria": judge.grade_meets_criteria,
}

#: Every grader type ``grade()`` knows.
GRADER_TYPES: frozenset[str] = frozenset(GRADERS)


def _outcome(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    fn = GRADERS.get(spec.type)
    if fn is None:
        known = ", ".join(sorted(GRADER_TYPES))
        return Outcome(False, f'grader threw: unknown grader type "{spec.type}" (known: {known})')
    try:
        return fn(spec, ctx)
    except TargetUnavailable as exc:
        return Outcome(False, str(exc))
    except JudgeFailure:
        raise
    except Exception as exc:
        message = str(exc).strip() or type(exc).__name__
        return Outcome(False, f"grader threw: {message}")


def grade_in(spec: GraderSpec, ctx: GradeContext) -> Verdict:
    """Grade with an existing context (shared by graders of the same run)."""
    return _verdict(spec, _outcome(spec, ctx))


def _verdict(spec: GraderSpec, outcome: Outcome) -> Verdict:
    return Verdict(
        name=spec.name,
        passed=outcome.passed,
        explanation=outcome.explanation,
        weight=spec.weight,
        type=spec.type,
        skipped=outcome.skipped,
        judgement=outcome.judgement,
    )


def grade(
    spec: GraderSpec,
    transcript: Transcript,
    *,
    case: Case | None = None,
    judge: AnyJudge | None = None,
) -> Verdict:
    """Grade one run with one grader.

    A grader that fails to run gives ``passed=False`` and the explanation
    ``grader threw: <message>``. Judge graders without a ``judge`` are skipped (``passed`` None);
    a judge that cannot reach a verdict raises :class:`JudgeFailure`.
    Patterns use ``case.regex_dialect`` (JavaScript without a case).
    """
    return grade_in(spec, GradeContext(transcript, case, judge))


def grade_all(
    specs: Iterable[GraderSpec],
    transcript: Transcript,
    *,
    case: Case | None = None,
    judge: AnyJudge | None = None,
) -> list[Verdict]:
    """Grade one run with several graders, reading the trace and tool inputs once for all.

    A :class:`JudgeFailure` stops grading; its ``cost_usd`` then counts every judge call the
    run made, those of the graders graded before it included.
    """
    ctx = GradeContext(transcript, case, judge)
    verdicts: list[Verdict] = []
    for spec in specs:
        try:
            verdicts.append(grade_in(spec, ctx))
        except JudgeFailure as exc:
            exc.cost_usd = round(exc.cost_usd + judge_cost(verdicts), 10)
            raise
    return verdicts
