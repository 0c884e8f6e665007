"""The gates as data and the one function that decides the exit status (``engine.gates``):
each gate and the precedence, called directly, no pytest session."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.engine.gates import (
    NO_TESTS_COLLECTED,
    Gate,
    exit_status,
    partial_gate,
    plan_gate,
    regression_gate,
    shard_gate,
    threshold_gate,
    trigger_gate,
    verdicts_gate,
)
from pytest_plugin_evals.model import Case, ExitStatus
from pytest_plugin_evals.reporting.compare import CaseChange, Comparison
from pytest_plugin_evals.reporting.result import NotStarted
from pytest_plugin_evals.shards import ShardCase, ShardPlan
from tests.helpers import run_record, summary
from tests.unit.test_triggers import _record as trigger_record
from tests.unit.test_triggers import load as load_triggers

OK, FAILED, PARTIAL = int(ExitStatus.OK), int(ExitStatus.FAILED), int(ExitStatus.PARTIAL)
USAGE_ERROR = 4
ROOT = Path("/suite/evals")


def case(name: str) -> Case:
    return Case(
        name=name, prompt="p", source="prose", path=ROOT / name / "prompt.md",
        dir=ROOT / name, suite_root=ROOT,
    )  # fmt: skip


def result(*scores: float, threshold: float = 1.0, **kw: Any) -> Any:
    """A session result: one single-arm case per score."""
    records = [
        run_record(case(f"c{i}"), "single", 1, score=s, two_arm=False, nodeid=f"c{i}[single-1]")
        for i, s in enumerate(scores)
    ]
    return summary(records, threshold=threshold, ablation="none", **kw)


# -- the one combining function: the precedence ----------------------------------------------


def test_no_gate_keeps_pytests_status() -> None:
    assert exit_status(OK, []) == OK
    assert exit_status(FAILED, [None, None]) == FAILED


def test_a_failed_gate_only_turns_ok_into_failed() -> None:
    failed = Gate(FAILED, "below")
    assert exit_status(OK, [failed]) == FAILED
    assert exit_status(PARTIAL, [failed]) == PARTIAL
    assert exit_status(USAGE_ERROR, [failed]) == USAGE_ERROR
    assert exit_status(NO_TESTS_COLLECTED, [failed]) == NO_TESTS_COLLECTED


def test_a_gate_that_passed_changes_nothing() -> None:
    passed = Gate(OK, "every case's mean score meets the threshold 0.8")
    assert [exit_status(s, [passed]) for s in (OK, FAILED, PARTIAL)] == [OK, FAILED, PARTIAL]


def test_the_ceiling_and_a_rejected_credential_are_partial_whatever_else_happened() -> None:
    forced = Gate(PARTIAL, "cost ceiling", None)
    assert [exit_status(s, [forced]) for s in (OK, FAILED, PARTIAL)] == [PARTIAL] * 3


def test_partial_first_then_a_failed_gate_stays_partial() -> None:
    interrupted = Gate(PARTIAL, "interrupted")
    assert exit_status(OK, [interrupted, Gate(FAILED, "regressed")]) == PARTIAL
    assert exit_status(FAILED, [interrupted]) == FAILED  # -x: the failure that stopped it


def test_a_shard_or_a_plan_turns_only_no_tests_into_ok() -> None:
    for gate in (Gate(OK, "shard", frozenset({NO_TESTS_COLLECTED})), plan_gate(True)):
        assert exit_status(NO_TESTS_COLLECTED, [gate]) == OK
        assert exit_status(FAILED, [gate]) == FAILED
    assert plan_gate(False) is None


# -- each gate ---------------------------------------------------------------------------------


def test_threshold_gate() -> None:
    below = threshold_gate(result(1.0, 0.5), 1.0)
    assert below is not None and below.status == FAILED and "c1" in below.reason
    assert threshold_gate(result(1.0, 1.0), 1.0) is None
    met = threshold_gate(result(0.9, threshold=0.8), 0.8)
    assert met == Gate(OK, "every case's mean score meets the threshold 0.8")


def test_partial_gate_for_each_reason() -> None:
    done = result(1.0)
    assert partial_gate(done, 5.0) is None
    ceiling = partial_gate(replace(done, partial_reason="cost_ceiling"), 5.0)
    assert ceiling == Gate(
        PARTIAL,
        "cost ceiling $5 reached: the remaining runs were not started; the result is partial "
        "(exit status 2)",
        None,
    )
    auth = partial_gate(replace(done, partial_reason="auth_failed"), None)
    assert auth is not None and auth.replaces is None
    assert auth.reason.startswith("a run could not authenticate: the remaining runs were not")
    cut = result(1.0, not_started=[NotStarted("c9", "c9", 3)], partial_reason="interrupted")
    assert partial_gate(cut, None) == Gate(
        PARTIAL,
        "the session was interrupted: 3 selected run(s) of 1 case(s) were not started; the "
        "result is partial and no threshold is met",
    )
    timed = partial_gate(cut, None, timed_out=60.0)
    assert timed is not None and timed.reason.startswith("--eval-session-timeout 60s reached: 3")
    maxfail = partial_gate(replace(cut, partial_reason="maxfail"), None)
    assert maxfail is not None and maxfail.reason.startswith("-x/--maxfail: 3 selected run(s)")


def test_shard_gate() -> None:
    elsewhere = (ShardCase("evals/a::a", "a", "a-0", 2, 2000, 1),)
    plan = ShardPlan(index=2, total=2, weights="runs", cases=elsewhere)
    empty = shard_gate(replace(result(), shard=plan))
    assert empty is not None and empty.replaces == frozenset({NO_TESTS_COLLECTED})
    assert empty.status == OK
    assert shard_gate(result(1.0)) is None
    assert shard_gate(replace(result(1.0), shard=replace(plan, index=1))) is None


def test_regression_gate() -> None:
    worse = CaseChange("c0", "c0", 1.0, 0.0, -1.0, None, None, None, "worse")
    compared = replace(result(0.0), comparison=Comparison("before.json", "2026-01-01", (worse,)))
    assert regression_gate(compared, True) == Gate(
        FAILED, "--eval-fail-on-regression: 1 case(s) worse since 2026-01-01: c0"
    )
    assert regression_gate(compared, False) is None
    assert regression_gate(result(0.0), True) is None


def test_verdicts_gate() -> None:
    one_arm = result(1.0)
    failed = verdicts_gate(one_arm, "better")
    assert failed is not None and failed.status == FAILED
    assert failed.reason.startswith("--eval-gate better: the suite's mean Δ has no Δ (one arm)")
    assert verdicts_gate(one_arm, None) is None
    assert verdicts_gate(one_arm, "not-worse") is None


@pytest.fixture
def triggers(tmp_path: Path) -> Any:
    """A trigger suite whose skill fired on neither should-trigger query: F1 0."""
    queries = [{"query": "a", "should_trigger": True}, {"query": "b", "should_trigger": True}]
    cases = [c for c in load_triggers(tmp_path, queries) if isinstance(c, Case)]
    records = [trigger_record(c, run, False) for c in cases for run in (1, 2, 3)]
    return summary(records, threshold=1.0, ablation="none")


def test_trigger_gate(triggers: Any) -> None:
    below = trigger_gate(triggers, 0.5)
    assert below is not None and below.status == FAILED
    assert below.reason.startswith("--eval-trigger-threshold 0.5: the trigger F1 of 1 skill(s)")
    assert trigger_gate(triggers, None) is None
    assert trigger_gate(triggers, 0.0) is None  # an F1 at the threshold meets it
    assert trigger_gate(replace(triggers, partial=True), 0.5) is None
