"""Scoring: which graders count in which arm, run scores, case aggregates and the gate."""

from __future__ import annotations

import pytest

from pytest_plugin_evals.model import GraderSpec, RunResult, Verdict
from pytest_plugin_evals.scoring import (
    DELTA_NOT_COMPARABLE,
    case_aggregates,
    gate,
    plan_graders,
    run_score,
)

ANSWER = GraderSpec("answer", "regex", {"pattern": "paris", "target": "last_message"})
SKILL = GraderSpec("skill", "tool_used", {"tool": "Skill", "min": 1})
WITH_ONLY = GraderSpec("fired", "regex", {"pattern": "x"}, arm="with-only")
SKILL_BOTH = GraderSpec("no-skill", "tool_used", {"tool": "Skill", "min": 0, "max": 0}, arm="both")
GLOB = GraderSpec("glob", "tool_used", {"tool": "Glob"})
MOCKS = GraderSpec("calls", "regex", {"pattern": "create", "target": "mock_calls"})


def plan(graders, arm, two_arm=True, **kw):
    return [
        (spec.name, scored, with_only)
        for spec, scored, with_only in plan_graders(graders, arm, two_arm, **kw)
    ]


# --- plan_graders -------------------------------------------------------------------------


def test_single_arm_scores_everything():
    graders = [ANSWER, SKILL, WITH_ONLY, SKILL_BOTH]
    expected = [(g.name, True, False) for g in graders]
    assert plan(graders, "single", two_arm=False) == expected
    # "single" means one arm even if the caller says two_arm.
    assert plan(graders, "single", two_arm=True) == expected


def test_one_arm_run_of_the_with_arm_scores_everything():
    assert plan([ANSWER, SKILL], "with", two_arm=False) == [
        ("answer", True, False),
        ("skill", True, False),
    ]


def test_skill_tool_used_and_with_only_are_indicators_in_the_with_arm():
    assert plan([ANSWER, SKILL, WITH_ONLY], "with") == [
        ("answer", True, False),
        ("skill", False, True),
        ("fired", False, True),
    ]


def test_indicators_are_absent_from_the_without_arm():
    assert plan([SKILL, ANSWER, WITH_ONLY, GLOB], "without") == [
        ("answer", True, False),
        ("glob", True, False),
    ]


def test_arm_both_forces_scoring_in_both_arms():
    for arm in ("with", "without"):
        assert plan([ANSWER, SKILL_BOTH], arm) == [
            ("answer", True, False),
            ("no-skill", True, False),
        ]


def test_tool_used_of_another_tool_is_scored():
    assert plan([GLOB, SKILL], "with") == [("glob", True, False), ("skill", False, True)]


def test_all_indicators_are_scored_normally_in_both_arms():
    for arm in ("with", "without"):
        assert plan([SKILL, WITH_ONLY], arm) == [("skill", True, False), ("fired", True, False)]


def test_arm_both_leaves_something_scored_so_indicators_stay_indicators():
    assert plan([SKILL, SKILL_BOTH], "with") == [("skill", False, True), ("no-skill", True, False)]
    assert plan([SKILL, SKILL_BOTH], "without") == [("no-skill", True, False)]


def test_mock_calls_graders_are_indicators_only_when_every_mock_shadows_the_plugin():
    assert plan([ANSWER, MOCKS], "with") == [("answer", True, False), ("calls", True, False)]
    assert plan([ANSWER, MOCKS], "with", shadow_mocks_only=True) == [
        ("answer", True, False),
        ("calls", False, True),
    ]
    llm = GraderSpec("judge", "llm", {"focus": "mock_calls"}, criteria="good")
    assert plan([ANSWER, llm], "without", shadow_mocks_only=True) == [("answer", True, False)]


def test_no_graders_plans_nothing():
    assert plan([], "with") == []
    assert plan([], "single", two_arm=False) == []


# --- run_score ----------------------------------------------------------------------------


def v(name, passed, weight=1.0, *, scored=True, with_only=False, skipped=None):
    return Verdict(
        name,
        passed,
        f"{name} says so",
        weight=weight,
        scored=scored,
        with_only=with_only,
        skipped=skipped,
    )


def test_weighted_score_by_hand():
    verdicts = [v("a", True, 2), v("b", False, 1), v("c", True, 3), v("d", False, 0.5)]
    score, passed = run_score(verdicts)
    assert score == pytest.approx(5 / 6.5)
    assert passed is False


def test_all_passed_is_one_and_passes():
    assert run_score([v("a", True, 0.1), v("b", True, 0.2), v("c", True, 0.7)]) == (1.0, True)


def test_unscored_indicators_do_not_count():
    score, passed = run_score([v("a", True), v("skill", False, 5, scored=False, with_only=True)])
    assert (score, passed) == (1.0, True)
    score, _ = run_score([v("a", False), v("skill", True, scored=False, with_only=True)])
    assert score == 0.0


def test_skipped_verdicts_are_never_scored():
    skipped = v("judge", None, 4, skipped="cost ceiling")
    assert run_score([v("a", True, 1), skipped]) == (1.0, True)
    score, passed = run_score([v("a", True, 1), v("b", False, 1), skipped])
    assert score == pytest.approx(0.5)
    assert passed is False


def test_nothing_scored_follows_the_run():
    assert run_score([]) == (1.0, True)
    assert run_score([], run_ok=True) == (1.0, True)
    assert run_score([], run_ok=False) == (0.0, False)
    only_skipped = [v("judge", None, skipped="cost ceiling")]
    assert run_score(only_skipped, run_ok=False) == (0.0, False)
    only_indicators = [v("skill", False, scored=False, with_only=True)]
    assert run_score(only_indicators, run_ok=True) == (1.0, True)


def test_a_failing_indicator_does_not_fail_the_run_when_planned_from_specs():
    planned = plan_graders([ANSWER, SKILL], "with", True)
    outcome = {"answer": True, "skill": False}
    verdicts = [
        Verdict(s.name, outcome[s.name], "", weight=s.weight, scored=sc, with_only=wo)
        for s, sc, wo in planned
    ]
    assert run_score(verdicts) == (1.0, True)


# --- case aggregates ----------------------------------------------------------------------


def run(arm, n, score, *, error=None, infra=None, skipped_paid=False):
    return RunResult(
        arm=arm,
        run=n,
        score=score,
        passed=score >= 1.0,
        error=error,
        infra_error=infra,
        skipped_paid_graders=skipped_paid,
        verdicts=(
            Verdict(
                "rubric",
                None,
                "skipped: cost ceiling",
                type="llm",
                scored=False,
                skipped="cost ceiling",
            ),
        )
        if skipped_paid
        else (),
    )


def test_case_aggregates_by_hand():
    with_runs = [run("with", 1, 1.0), run("with", 2, 0.5), run("with", 3, 0.0, infra="rate_limit")]
    without_runs = [run("without", 1, 0.25), run("without", 2, 0.0)]
    agg = case_aggregates(with_runs, without_runs, threshold=0.7)
    assert agg.score == 0.75  # the infra-error run is not counted
    assert agg.pass_rate == 0.5
    assert agg.score_without == 0.125
    assert agg.pass_rate_without == 0.0
    assert agg.delta == 0.625
    assert agg.passed is True
    assert agg.runs_not_made == 1
    assert agg.runs_graded == 4
    assert case_aggregates(with_runs, without_runs, threshold=0.8).passed is False


def test_case_aggregates_single_arm_has_no_without_keys():
    agg = case_aggregates([run("single", 1, 1.0)], None, threshold=1.0)
    assert agg.score == 1.0
    assert agg.passed is True
    assert agg.score_without is None and agg.delta is None and agg.pass_rate_without is None


def test_case_without_graded_runs_has_no_score_and_does_not_pass():
    agg = case_aggregates([run("with", 1, 0.0, infra="agent_start")], [], threshold=0.0)
    assert agg.score is None and agg.pass_rate is None
    assert agg.passed is False
    assert agg.delta is None and agg.score_without is None


def test_delta_is_left_out_when_paid_graders_were_skipped():
    agg = case_aggregates(
        [run("with", 1, 1.0, skipped_paid=True)], [run("without", 1, 0.0)], threshold=1.0
    )
    assert agg.delta is None
    assert agg.delta_note == DELTA_NOT_COMPARABLE
    assert agg.score_without == 0.0


def test_errored_runs_are_graded_and_counted():
    agg = case_aggregates([run("with", 1, 0.5, error="timed out after 3s")], None, threshold=1.0)
    assert agg.score == 0.5
    assert agg.runs_errored == 1


def test_float_noise_is_stripped():
    agg = case_aggregates([run("with", 1, 0.1), run("with", 2, 0.2)], None, threshold=1.0)
    assert agg.score == 0.15


# --- gate ---------------------------------------------------------------------------------


def doc(*scores):
    return [(f"c{i}", s) for i, s in enumerate(scores)]


def test_gate_met_and_message():
    result = gate(doc(1.0, 0.9), 0.9)
    assert result.met is True
    assert result.below == []
    assert "all 2 case(s)" in result.message


def test_gate_lists_cases_below_the_given_threshold():
    document = doc(1.0, 0.5, 0.8999999999)
    result = gate(document, 0.9)
    assert result.met is False
    assert result.below == ["c1"]  # within float tolerance of 0.9 counts as meeting it
    assert "c1 (0.50)" in result.message
    assert gate(document, 0.5).met is True
    assert document == doc(1.0, 0.5, 0.8999999999)  # pure


def test_gate_is_not_met_by_a_case_without_a_graded_run():
    result = gate(doc(1.0, None), 0.5)
    assert result.met is False
    assert result.below == []
    assert result.ungraded == ["c1"]
    assert "no graded run" in result.message


def test_gate_on_an_empty_document():
    result = gate([], 1.0)
    assert result.met is True
    assert result.message == "no eval case ran"


def test_delta_stays_when_paid_graders_were_skipped_on_purpose_in_both_arms():
    on_purpose = [
        Verdict(
            "rubric",
            None,
            "skipped: --eval-no-judge",
            type="llm",
            scored=False,
            skipped="--eval-no-judge",
        )
    ]
    with_run = RunResult(
        arm="with",
        run=1,
        score=1.0,
        passed=True,
        skipped_paid_graders=True,
        verdicts=tuple(on_purpose),
    )
    without_run = RunResult(
        arm="without", run=1, score=0.0, skipped_paid_graders=True, verdicts=tuple(on_purpose)
    )
    agg = case_aggregates([with_run], [without_run], threshold=1.0)
    assert agg.delta == 1.0 and agg.delta_note is None
