"""The 95% intervals, checked against scipy and statsmodels (never against the code itself)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from pytest_plugin_evals.stats import intervals as stats


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


def test_normal_quantile_matches_scipy() -> None:
    for p in (0.6, 0.975, 0.995, 0.025):
        assert stats.normal_quantile(p) == pytest.approx(scipy_stats.norm.ppf(p), abs=1e-9)
    assert stats.two_sided_p(1.959963984540054) == pytest.approx(0.05, abs=1e-12)


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


def test_partial_scores_use_wilson_with_the_sum_of_scores_as_successes() -> None:
    """Partial scores: Wilson (and Newcombe) with n · mean as the count, as statsmodels
    computes them for a fractional count."""
    scores = [1.0, 0.5, 1.0]
    low, high = proportion_confint(2.5, 3, alpha=0.05, method="wilson")
    assert stats.score_interval(scores) == pytest.approx((low, high), abs=1e-9)
    a, b = [0.5, 1.0, 0.75], [0.0, 0.25, 0.0]
    expected = confint_proportions_2indep(2.25, 3, 0.25, 3, method="newcomb", compare="diff")
    assert stats.difference_interval(a, b) == pytest.approx(tuple(expected), abs=1e-9)


def test_runs_that_all_agree_have_an_interval() -> None:
    """Constant partial scores, all passed, all failed: every arm and every Δ has an interval
    of positive width (no spread observed is not no spread possible)."""
    for scores in ([1 / 3] * 3, [1.0] * 3, [0.0] * 3, [0.5, 0.5]):
        interval = stats.score_interval(scores)
        assert interval is not None and interval[0] < sum(scores) / len(scores) + 1e-9
        assert interval[1] - interval[0] > 0.2
    same = stats.difference_interval([1 / 3] * 3, [1 / 3] * 3)
    assert same is not None and same[0] < 0 < same[1]
    # The regression of a constant partial score: 1.00 → 0.33 is beyond noise from 4 runs on.
    drop3 = stats.difference_interval([1 / 3] * 3, [1.0] * 3)
    drop4 = stats.difference_interval([1 / 3] * 4, [1.0] * 4)
    assert drop3 is not None and drop3[1] > 0
    assert drop4 is not None and drop4[1] < 0


def _coverage(support: list[float], weights: list[int], n: int, rng: np.random.Generator) -> float:
    probs = np.array(weights) / sum(weights)
    mu = float(np.dot(support, probs))
    draws = rng.choice(support, size=(1500, n), p=probs)
    hits = 0
    for row in draws:
        interval = stats.score_interval(list(row))
        assert interval is not None
        hits += interval[0] - 1e-9 <= mu <= interval[1] + 1e-9
    return hits / len(draws)


@pytest.mark.parametrize("n", [3, 5, 10])
def test_partial_score_interval_keeps_its_coverage_at_small_n(n: int) -> None:
    """A simulation over scores in [0, 1] that are not 0/1: the interval covers the true mean
    at least 95% of the time (less 1.5 points of simulation noise), where the t interval
    does not (it is a point when the runs agree)."""
    rng = np.random.default_rng(21)
    grids = [
        ([0.0, 1 / 3, 2 / 3, 1.0], [5, 1, 1, 1]),
        ([0.0, 1 / 3, 2 / 3, 1.0], [1, 1, 1, 5]),
        ([1 / 3, 1.0], [1, 5]),
        ([0.0, 0.5], [5, 1]),
        ([0.2, 0.9], [1, 5]),
    ]
    for support, weights in grids:
        assert _coverage(support, weights, n, rng) >= 0.935


def test_suite_mean_delta_is_cluster_robust_by_case() -> None:
    """The suite's mean Δ: the CR1 cluster-robust interval (clusters = cases, Δ paired within
    a case), which for equally weighted cases is the t interval over the cases' Δ."""
    deltas = [0.5, 0.25, 0.75, 0.0, 0.5]
    expected = scipy_stats.t.interval(
        0.95, len(deltas) - 1, loc=np.mean(deltas), scale=scipy_stats.sem(deltas)
    )
    small = [(d - 0.01, d + 0.01) for d in deltas]
    assert stats.mean_delta_interval(deltas, small) == pytest.approx(expected, abs=1e-9)
    assert stats.mean_delta_interval([0.5]) is None
    assert stats.mean_delta_interval([]) is None


def test_suite_whose_cases_agree_keeps_the_cases_own_uncertainty() -> None:
    """Two cases with the same Δ have no spread between them; the interval then comes from
    the cases' own intervals, combined side by side as Newcombe combines two
    (Δ̄ − √Σ(Δ_c − low_c)² / C, Δ̄ + √Σ(high_c − Δ_c)² / C), and does not collapse to a
    point; one case gives back its own interval."""
    interval = stats.mean_delta_interval([0.5, 0.5], [(0.1, 0.7), (0.3, 0.9)])
    low = 0.5 - math.sqrt(0.4**2 + 0.2**2) / 2
    high = 0.5 + math.sqrt(0.2**2 + 0.4**2) / 2
    assert interval == pytest.approx((low, high), abs=1e-9)
    own = stats.difference_interval([1.0, 0.0], [0.0, 0.0])
    assert own is not None
    assert stats.mean_delta_interval([0.5], [own]) == pytest.approx(own, abs=1e-9)


def test_p_value_inverts_the_interval() -> None:
    """The p-value of "Δ > 0" is the alpha at which the Newcombe interval's low end touches 0,
    found here independently by statsmodels at that alpha."""
    a, b = [1.0] * 8 + [0.0] * 2, [1.0] * 2 + [0.0] * 8
    p = stats.p_value(lambda i: i[0] > 0, lambda z: stats.difference_interval(a, b, z))
    assert 0 < p < 0.05
    low, _ = confint_proportions_2indep(8, 10, 2, 10, method="newcomb", compare="diff", alpha=p)
    assert low == pytest.approx(0.0, abs=1e-6)
    assert stats.p_value(lambda i: i[0] > 0, lambda z: stats.difference_interval(b, a, z)) == 1.0


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


def test_runs_for_width_of_partial_scores_keeps_the_means() -> None:
    scores = [1.0, 0.5, 1.0]
    n = stats.runs_for_width(scores, None, 0.5)
    assert n is not None

    def span(k: int) -> float:
        low, high = proportion_confint(2.5 / 3 * k, k, method="wilson")
        return float(high - low)

    assert span(n) <= 0.5 + 1e-9 and (n == 3 or span(n - 1) > 0.5)
    assert stats.runs_for_width([1.0, 0.0], [0.0, 1.0], 0.01) is None  # not even 50 would


def test_the_new_case_interval_is_a_t_prediction_interval() -> None:
    """A new case's Δ, drawn like these: mean ± t(C − 1) · s · √(1 + 1/C), from scipy; it is
    wider than the mean's own interval."""
    deltas = [0.1, 0.3, 0.5, 0.2, -0.1, 0.25]
    m, s = float(np.mean(deltas)), float(np.std(deltas, ddof=1))
    half = scipy_stats.t.ppf(0.975, len(deltas) - 1) * s * math.sqrt(1 + 1 / len(deltas))
    assert stats.new_case_interval(deltas) == pytest.approx((m - half, m + half), abs=1e-9)
    mean = stats.mean_delta_interval(deltas)
    new = stats.new_case_interval(deltas)
    assert mean is not None and new is not None and new[0] < mean[0] and new[1] > mean[1]
    assert stats.new_case_interval([0.2]) is None


def test_the_new_case_interval_covers_new_draws() -> None:
    """Of 2,000 simulated suites of six cases, the interval holds a seventh case's Δ about
    95% of the time."""
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(2000):
        draws = rng.normal(0.1, 0.2, size=7)
        found = stats.new_case_interval(list(draws[:6]))
        assert found is not None
        hits += found[0] <= draws[6] <= found[1]
    assert abs(hits / 2000 - 0.95) < 0.015
