"""Budgets and flags the agent reports: tokens, latency, channel delivery (sy suites)."""

from __future__ import annotations

from pytest_plugin_evals.graders.base import (
    GradeContext,
    GraderConfigError,
    Outcome,
    number,
    skip,
)
from pytest_plugin_evals.model import GraderSpec
from pytest_plugin_evals.util.jsvalues import js_number

NO_USAGE = "agent reported no token usage"


def _budget(spec: GraderSpec) -> float:
    most = number(spec.config, "max", spec.type, None)
    if most is None:
        raise GraderConfigError(f'a {spec.type} grader needs a number "max"')
    return most


def grade_max_tokens(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """The reply's token count (output tokens, else all tokens) is within ``max``.

    When the agent reported no token usage at all the check is *skipped* (``passed`` None,
    ``skipped`` "agent reported no token usage"): a missing count is not evidence of a budget
    overrun, and a skipped verdict is never scored, so it neither passes nor fails the run.
    """
    most = _budget(spec)
    t = ctx.transcript
    used = t.output_tokens if t.output_tokens is not None else t.total_tokens
    if used is None:
        return skip(NO_USAGE)
    if used <= most:
        return Outcome(True, f"used {used} tokens (budget {js_number(most)})")
    return Outcome(False, f"used {used} tokens, over the budget of {js_number(most)}")


def grade_max_latency_ms(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """The time to the answer (``latency_ms``, else the run's duration) is within ``max`` ms."""
    most = _budget(spec)
    t = ctx.transcript
    latency = t.latency_ms if t.latency_ms is not None else t.duration_seconds * 1000
    shown = js_number(round(latency))
    if latency <= most:
        return Outcome(True, f"answered in {shown} ms (budget {js_number(most)} ms)")
    return Outcome(False, f"answered in {shown} ms, over the budget of {js_number(most)} ms")


def grade_expect_delivered(spec: GraderSpec, ctx: GradeContext) -> Outcome:
    """The channel-delivery flag the agent reported equals ``value`` (true by default)."""
    wanted = spec.config.get("value", True)
    if wanted is None:
        wanted = True
    if not isinstance(wanted, bool):
        raise GraderConfigError(f"expect_delivered must be true or false (got {wanted!r})")
    got = ctx.transcript.delivered
    want = "delivered" if wanted else "not delivered"
    if got is None:
        return Outcome(False, f"the agent reported no delivery flag (expected {want})")
    if got == wanted:
        return Outcome(True, f"{want}, as expected")
    return Outcome(False, f"{'delivered' if got else 'not delivered'} (expected {want})")
