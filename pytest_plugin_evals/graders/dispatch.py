"""``grade()``: one grader spec, one transcript, one verdict — never an exception.

A grader that fails to run gives a failing verdict (``grader threw: …``). A grader that could
not reach a verdict — a judge call that failed or a reply that could not be read, patterns
that ran past the time limit — gives a verdict with ``passed`` None and ``error`` set: the run
is then an infrastructure error, kept out of the scores, and the other graders' verdicts stay.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pytest_plugin_evals.graders import budgets, files, judge, text, tools
from pytest_plugin_evals.graders.base import (
    GradeContext,
    GraderError,
    GraderFn,
    GraderTimeout,
    Outcome,
    TargetUnavailable,
)
from pytest_plugin_evals.model import Case, GraderSpec, Judgement, Transcript, Verdict
from pytest_plugin_evals.util.jsregex import time_limit
from pytest_plugin_evals.util.regexbox import PatternTimeout

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
    # trigger_eval.json
    "skill_fired": tools.grade_skill_fired,
}

#: Every grader type ``grade()`` knows.
GRADER_TYPES: frozenset[str] = frozenset(GRADERS)


def _outcome(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    fn = GRADERS.get(spec.type)
    if fn is None:
        known = ", ".join(sorted(GRADER_TYPES))
        return Outcome(False, f'grader threw: unknown grader type "{spec.type}" (known: {known})')
    try:
        try:
            with time_limit(ctx.time_limit):
                return fn(spec, ctx)
        except PatternTimeout:
            shown = f"{ctx.time_limit:g}" if ctx.time_limit else "?"
            raise GraderTimeout(f"grader timed out after {shown}s", grader=spec.name) from None
    except TargetUnavailable as exc:
        return Outcome(False, str(exc))
    except GraderError as exc:
        cost = Judgement(cost_usd=exc.cost_usd) if exc.cost_usd else None
        return Outcome(None, exc.message, judgement=cost, error=exc.kind)
    except Exception as exc:  # noqa: BLE001 - a grader that throws fails its verdict, not the session
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
        error=outcome.error,
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
    a grader that cannot reach a verdict has ``passed`` None and ``error`` set.
    Patterns use ``case.regex_dialect`` (JavaScript without a case).
    """
    return grade_in(spec, GradeContext(transcript, case, judge))


def grade_all(
    specs: Iterable[GraderSpec],
    transcript: Transcript,
    *,
    case: Case | None = None,
    judge: AnyJudge | None = None,
    time_limit: float | None = None,
    second_judge: AnyJudge | None = None,
) -> list[Verdict]:
    """Grade one run with several graders, reading the trace and tool inputs once for all;
    each grader's patterns may take ``time_limit`` seconds (None: no limit). A
    ``second_judge`` is asked what ``judge`` is, its verdicts recorded beside."""
    ctx = GradeContext(transcript, case, judge, time_limit=time_limit, second_judge=second_judge)
    return [grade_in(spec, ctx) for spec in specs]
