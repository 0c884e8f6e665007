"""The run planner's numbers, checked against statsmodels' power calculations."""

from __future__ import annotations

import math

import pytest
from statsmodels.stats.power import NormalIndPower

from pytest_plugin_evals.stats.planning import CaseHistory, plan_case, plan_suite


def test_runs_needed_match_a_two_sample_z_test_at_80_percent_power() -> None:
    scores = (1.0, 0.0, 1.0, 1.0, 0.0, 1.0)
    history = CaseHistory(with_scores=scores, without_scores=scores)
    plan = plan_case("c", 6, True, history, 0.2)
    sigma = math.sqrt(plan.var_with)
    expected = NormalIndPower().solve_power(effect_size=0.2 / sigma, alpha=0.05, power=0.8)
    assert plan.measured and plan.runs_needed == math.ceil(expected)


def test_without_history_the_worst_case_and_the_stated_defaults() -> None:
    plan = plan_case("c", 3, True, None, 0.2)
    assert (plan.var_with, plan.var_without, plan.measured) == (0.25, 0.25, False)
    expected = NormalIndPower().solve_power(effect_size=0.2 / 0.5, alpha=0.05, power=0.8)
    assert plan.runs_needed == math.ceil(expected)
    assert plan.cost == pytest.approx(plan.runs_needed * 2 * 0.05)


def test_runs_that_all_agreed_are_not_taken_for_no_spread() -> None:
    plan = plan_case("c", 4, True, CaseHistory((1.0,) * 4, (0.0,) * 4), 0.2)
    assert plan.var_with == pytest.approx(4 / 25) and plan.runs_needed > 20


def test_more_cases_help_more_than_more_runs() -> None:
    """The issue's figure: ten cases at three runs per arm, worst-case variance, detect a mean
    Δ of about 0.4; the cases needed for 0.2 fall with runs, but not below the spread between
    cases' share."""
    plans = [plan_case(f"c{i}", 3, True, None, 0.2) for i in range(10)]
    suite = plan_suite(plans, [], 0.2)
    assert suite.detectable_now == pytest.approx(
        (NormalIndPower().solve_power(nobs1=10 * 3, alpha=0.05, power=0.8) * 0.5), rel=1e-6
    )
    assert 0.3 < suite.detectable_now < 0.4
    needed = dict(suite.cases_needed)
    assert needed[3] is not None and needed[20] is not None and needed[3] > needed[20]
    spread = plan_suite(plans, [0.9, -0.5, 0.4, 0.0, -0.8], 0.2)
    assert spread.tau_measured and spread.tau2 > 0
    spread_20, needed_20 = dict(spread.cases_needed)[20], needed[20]
    assert spread_20 is not None and needed_20 is not None and spread_20 > needed_20
