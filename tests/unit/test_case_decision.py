"""A case's verdict is decided once, in the core (``reporting.result.decide_case`` on
``scoring.case_verdict``): the sentence its last run's report says, its aggregates' ``passed``
and the session's gate agree, whatever the threshold and the reducer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.model import Case
from pytest_plugin_evals.reporting.result import decide_case, session_gate
from pytest_plugin_evals.scoring import ScoringRules, case_verdict
from tests.helpers import run_record, summary

ROOT = Path("/suite/evals")


def case(name: str) -> Case:
    return Case(name, "p", "prose", ROOT / name / "prompt.md", ROOT / name, ROOT)


def records(name: str, scores: Sequence[float], *, without: Sequence[float] = ()) -> list[Any]:
    c = case(name)
    made = [run_record(c, "with", n, score=s) for n, s in enumerate(scores, 1)]
    made += [run_record(c, "without", n, score=s) for n, s in enumerate(without, 1)]
    return made


@pytest.mark.parametrize(
    ("scores", "threshold", "reducer", "passes"),
    [
        ([0.5, 0.5], 0.5, "mean", True),
        ([0.5, 0.5], 0.8, "mean", False),
        ([1.0, 0.0], 0.8, "any", True),
        ([1.0, 0.0], 0.8, "all", False),
        ([1.0, 1.0, 0.0], 0.8, "at-least:2", True),
        ([1.0, 0.0, 0.0], 0.8, "at-least:2", False),
    ],
)
def test_the_report_the_aggregates_and_the_gate_read_one_decision(
    scores: list[float], threshold: float, reducer: str, passes: bool
) -> None:
    rules = ScoringRules(threshold=threshold, reducer=reducer)
    # The without arm's runs (all perfect) never decide the case.
    made = records("plants", scores, without=[1.0] * len(scores))
    verdict = decide_case(made, rules)
    result = summary(made, threshold=threshold, reducer=reducer)
    (only,) = result.cases
    gate, ungated = session_gate(result.cases, threshold)
    assert ungated is None
    assert verdict.passed is passes
    assert only.aggregates.passed is passes
    assert gate.met is passes and gate.below == ([] if passes else ["plants"])
    if passes:
        assert verdict.why == ""
        return
    shown = ", ".join(f"{s:.2f}" for s in scores)
    if reducer == "mean":
        why = f"mean score {sum(scores) / len(scores):.2f} is below the threshold {threshold:.2f}"
        rule = f"below the threshold {threshold:.2f}"
    else:
        why = rule = f"failed under the {reducer} reducer (threshold {threshold:.2f} per run)"
    assert verdict.why == f"case plants: {why} (runs: {shown}); this was its last run to finish"
    assert gate.message.startswith(f"1 of 1 case(s) {rule}: plants (")


def test_a_case_reducer_by_its_name_decides_that_case_only() -> None:
    rules = ScoringRules(threshold=0.8, case_reducers=(("smoke-*", "any"),))
    assert decide_case(records("smoke-a", [1.0, 0.0]), rules).passed is True
    assert decide_case(records("strict-b", [1.0, 0.0]), rules).passed is False


def test_the_runs_are_shown_in_order_and_the_agent_named() -> None:
    made = records("plants", [0.25, 0.75])
    verdict = decide_case(list(reversed(made)), ScoringRules(threshold=0.8), agent="codex")
    assert verdict.why == (
        "case plants on codex: mean score 0.50 is below the threshold 0.80 (runs: 0.25, 0.75); "
        "this was its last run to finish"
    )


def test_a_case_without_a_graded_with_arm_run_is_not_decided() -> None:
    c = case("plants")
    made = [run_record(c, "with", 1, score=0.0, infra="rate_limit"), run_record(c, "without", 1)]
    assert decide_case(made, ScoringRules(threshold=0.5)).passed is None
    assert case_verdict([], 0.5).passed is None
