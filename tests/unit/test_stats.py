"""The 95% intervals, checked against scipy and statsmodels (never against the code itself)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from pytest_plugin_evals import stats


@pytest.mark.parametrize("df", [1, 2, 3, 4.5, 9, 29.3, 100, 5000])
@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995])
def test_t_quantile_matches_scipy(df: float, p: float) -> None:
    assert stats.t_quantile(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), rel=1e-9)
    assert stats.t_quantile(1 - p, df) == pytest.approx(scipy_stats.t.ppf(1 - p, df), rel=1e-9)


@pytest.mark.parametrize(("successes", "n"), [(0, 1), (1, 1), (0, 3), (1, 3), (8, 10), (10, 10)])
def test_wilson_matches_statsmodels(successes: int, n: int) -> None:
    low, high = proportion_confint(successes, n, alpha=0.05, method="wilson")
    assert stats.wilson(successes, n) == pytest.approx((low, high), abs=1e-9)


@pytest.mark.parametrize(
    ("s1", "n1", "s2", "n2"),
    [(8, 10, 2, 10), (1, 3, 0, 3), (3, 3, 0, 3), (2, 2, 0, 2), (5, 5, 5, 5), (0, 4, 3, 4)],
)
def test_newcombe_matches_statsmodels(s1: int, n1: int, s2: int, n2: int) -> None:
    expected = confint_proportions_2indep(s1, n1, s2, n2, method="newcomb", compare="diff")
    assert stats.newcombe(s1, n1, s2, n2) == pytest.approx(tuple(expected), abs=1e-9)


def test_t_interval_matches_scipy() -> None:
    values = [0.5, 0.75, 1.0, 0.25, 0.6]
    expected = scipy_stats.t.interval(
        0.95, len(values) - 1, loc=np.mean(values), scale=scipy_stats.sem(values)
    )
    assert stats.t_interval(values) == pytest.approx(expected, abs=1e-9)
    assert stats.t_interval([0.5]) is None


def test_welch_matches_scipy() -> None:
    a, b = [0.5, 0.75, 1.0, 0.25], [0.0, 0.25, 0.5]
    ci = scipy_stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert stats.welch(a, b) == pytest.approx((ci.low, ci.high), abs=1e-9)
    assert stats.welch([0.5], b) is None
    # No spread in either arm: nothing to estimate it from (scipy says nan).
    assert stats.welch([0.5, 0.5], [0.25, 0.25]) is None
    assert stats.t_interval([0.5, 0.5, 0.5]) is None
    assert stats.score_interval([0.5, 0.5]) is None


def test_scores_of_zero_or_one_use_the_proportion_intervals() -> None:
    """Run scores that are all 0 or 1 are a pass rate: Wilson and Newcombe, which do not
    collapse to a point at 3 of 3 the way the t interval does."""
    with_runs = [1.0] * 8 + [0.0] * 2
    without_runs = [1.0] * 2 + [0.0] * 8
    expected = confint_proportions_2indep(8, 10, 2, 10, method="newcomb", compare="diff")
    interval = stats.difference_interval(with_runs, without_runs)
    assert interval == pytest.approx(tuple(expected), abs=1e-9)
    assert stats.excludes_zero(interval)
    one_of_three = stats.difference_interval([1.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert one_of_three is not None and one_of_three[0] < 0 < one_of_three[1]
    assert not stats.excludes_zero(one_of_three)
    low, high = proportion_confint(3, 3, method="wilson")
    assert stats.score_interval([1.0, 1.0, 1.0]) == pytest.approx((low, high), abs=1e-9)


def test_partial_scores_use_t_and_welch_clipped_to_the_range() -> None:
    scores = [1.0, 0.5, 1.0]
    low, high = scipy_stats.t.interval(0.95, 2, loc=np.mean(scores), scale=scipy_stats.sem(scores))
    assert high > 1  # the t interval leaves the range; ours stops at 1
    assert stats.score_interval(scores) == pytest.approx((low, 1.0), abs=1e-9)
    a, b = [0.5, 1.0, 0.75], [0.0, 0.25, 0.0]
    ci = scipy_stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert stats.difference_interval(a, b) == pytest.approx(
        (max(-1.0, ci.low), min(1.0, ci.high)), abs=1e-9
    )


def test_suite_mean_delta_treats_cases_as_the_unit() -> None:
    deltas = [0.5, 0.25, 0.75, 0.0, 0.5]
    expected = scipy_stats.t.interval(
        0.95, len(deltas) - 1, loc=np.mean(deltas), scale=scipy_stats.sem(deltas)
    )
    assert stats.mean_delta_interval(deltas) == pytest.approx(expected, abs=1e-9)
    assert stats.mean_delta_interval([0.5]) is None


def test_no_runs_no_interval() -> None:
    assert stats.score_interval([]) is None
    assert stats.difference_interval([], [1.0]) is None
    assert stats.wilson(0, 0) is None
    assert not stats.excludes_zero(None)


@pytest.mark.parametrize("q", [0, 50, 95, 100])
def test_percentile_matches_numpy(q: float) -> None:
    values = [3.2, 1.0, 8.5, 2.2, 4.0, 4.0, 10.0]
    assert stats.percentile(values, q) == pytest.approx(float(np.percentile(values, q)))
    assert stats.percentile([], q) is None


def test_t_quantile_refuses_impossible_probabilities() -> None:
    for p in (0.0, 1.0, math.nan):
        with pytest.raises(ValueError):
            stats.t_quantile(p, 3)


@pytest.mark.parametrize(("s1", "s2", "runs"), [(1, 0, 3), (0, 0, 2), (1, 1, 1), (2, 1, 3)])
def test_runs_for_width_is_the_fewest_runs_that_narrow_the_interval(
    s1: int, s2: int, runs: int
) -> None:
    """Scaled to n runs each, the Newcombe interval (statsmodels) is at most 1 wide at the
    suggested n and wider at n - 1."""
    a = [1.0] * s1 + [0.0] * (runs - s1)
    b = [1.0] * s2 + [0.0] * (runs - s2)
    n = stats.runs_for_width(a, b, 1.0)
    assert n is not None and n >= runs

    def span(k: int) -> float:
        low, high = confint_proportions_2indep(
            round(s1 / runs * k), k, round(s2 / runs * k), k, method="newcomb", compare="diff"
        )
        return float(high - low)

    assert span(n) <= 1.0 + 1e-9
    if n > runs:
        assert span(n - 1) > 1.0


def test_runs_for_width_of_partial_scores_follows_one_over_root_n() -> None:
    scores = [1.0, 0.5, 1.0]
    low, high = scipy_stats.t.interval(0.95, 2, loc=np.mean(scores), scale=scipy_stats.sem(scores))
    span = min(1.0, high) - max(0.0, low)
    assert stats.runs_for_width(scores, None, 0.5) == math.ceil(3 * (span / 0.5) ** 2)
    assert stats.runs_for_width([1.0, 0.0], [0.0, 1.0], 0.01) is None  # not even 50 would
