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


def test_what_three_runs_cannot_decide() -> None:
    """3 of 3 against 0 of 3: Newcombe's low end reaches 0 where Wilson's low end of 3 of 3 is
    1 − 1/√2, i.e. at z² = 3 (1/(1 − 1/√2) − 1); its p-value passes Benjamini–Hochberg's
    first rank 0.05 / cases for 7 cases, not 8."""
    from scipy.stats import norm

    from pytest_plugin_evals.stats.planning import cannot_decide, clearest_p, lone_limit

    z = math.sqrt(3 * (1 / (1 - 1 / math.sqrt(2)) - 1))
    expected = 2 * norm.sf(z)
    assert clearest_p(3) == pytest.approx(expected, rel=1e-6)
    assert lone_limit(clearest_p(3), 0.05) == 7
    assert cannot_decide(3, 7, clearest_p(3), 0.05) is None
    why = cannot_decide(3, 8, clearest_p(3), 0.05)
    assert why is not None and "with at least 2 cases as clear" in why
    assert "at all" in (cannot_decide(1, 2, clearest_p(1), 0.05) or "")
    assert cannot_decide(5, 97, clearest_p(5), 0.05) is None


def test_equivalence_needs_35_runs_at_the_default_margin() -> None:
    from pytest_plugin_evals.stats.intervals import newcombe
    from pytest_plugin_evals.stats.planning import equivalent_from

    assert equivalent_from(0.1) == 35
    high = newcombe(34, 34, 34, 34)
    assert high is not None and high[1] > 0.1  # 34 of 34 in both arms is still too wide


def test_the_plan_table_shows_the_design_beside_fixed_ten() -> None:
    from pytest_plugin_evals.stats.planning import OPERATING, operating_lines

    lines = operating_lines("fixed:3")
    assert [line.split()[0] for line in lines] == ["DESIGN", "fixed:3", "fixed:10", "auto:20"]
    correct, runs = OPERATING["auto:20"][3]
    assert f"{correct:.1%} ({runs:.1f})" in lines[3]
