"""Graders: what decides whether a run did what its case asks.

``grade(spec, transcript, case=...)`` turns one grader of a suite into a verdict; the same
checks are assertion helpers for ordinary Python tests (``regex``, ``tool_used``, ``expect``,
``SoftChecks`` ...).
"""

from __future__ import annotations

from pytest_plugin_evals.graders.assertions import (
    GradeFailure,
    SoftChecks,
    calls_tool,
    contains,
    expect,
    file_exists,
    includes,
    matches,
    max_latency_ms,
    max_tokens,
    min_chars,
    not_contains,
    regex,
    tool_order,
    tool_succeeded,
    tool_used,
)
from pytest_plugin_evals.graders.base import GradeContext
from pytest_plugin_evals.graders.dispatch import GRADER_TYPES, grade, grade_all
from pytest_plugin_evals.graders.judge import JudgeFailure, judge_cost
from pytest_plugin_evals.judges.base import Judge
from pytest_plugin_evals.model import PAID_GRADER_TYPES

__all__ = [
    "GRADER_TYPES",
    "PAID_GRADER_TYPES",
    "GradeContext",
    "GradeFailure",
    "Judge",
    "JudgeFailure",
    "SoftChecks",
    "calls_tool",
    "contains",
    "expect",
    "file_exists",
    "grade",
    "grade_all",
    "includes",
    "judge_cost",
    "matches",
    "max_latency_ms",
    "max_tokens",
    "min_chars",
    "not_contains",
    "regex",
    "tool_order",
    "tool_succeeded",
    "tool_used",
]
