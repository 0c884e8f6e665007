"""The efficiency ratios (stats.efficiency) called directly: hostile values left out and
counted, the zero rule, the interval's width and its coverage on heavy tails, the suite's
pooling and the cost gate's evidence rule."""

from __future__ import annotations

import math
import random

import pytest
from scipy import stats as sps

from pytest_plugin_evals.model import RunResult
from pytest_plugin_evals.reporting.efficiency import run_value
from pytest_plugin_evals.stats.efficiency import (
    CEILING,
    FLOORS,
    above_with_evidence,
    arm_figures,
    pooled,
    pooled_log_interval,
    ratio,
    usable,
)

HOSTILE = [None, "0.5", "", True, False, math.nan, math.inf, -math.inf, -1, -0.01, 10**400,
           CEILING * 2, [1], {"usd": 1}]  # fmt: skip


@pytest.mark.parametrize("value", HOSTILE)
def test_a_value_that_is_no_usable_number_is_left_out(value: object) -> None:
    assert usable(value) is None


@pytest.mark.parametrize(("value", "kept"), [(0, 0.0), (3, 3.0), (0.25, 0.25), (CEILING, CEILING)])
def test_a_finite_number_in_range_is_kept(value: object, kept: float) -> None:
    assert usable(value) == kept


def test_an_arm_counts_what_it_left_out_and_never_crashes() -> None:
    arm = arm_figures([1.0, 4.0, *HOSTILE], "cost")
    assert (arm.runs, arm.left_out) == (2, len(HOSTILE))
    assert arm.mean == 2.5
    assert arm.geo_mean == pytest.approx(2.0)
    nothing = arm_figures(HOSTILE, "cost")
    assert (nothing.runs, nothing.mean, nothing.geo_mean) == (0, None, None)
    assert ratio("cost", HOSTILE, [1.0, 2.0]).ratio is None


def test_a_zero_counts_as_the_measures_floor_on_the_log_scale() -> None:
    arm = arm_figures([0, 0.01], "cost")
    assert arm.mean == 0.005  # the plain mean keeps the zero
    assert arm.geo_mean == pytest.approx(math.sqrt(FLOORS["cost"] * 0.01), rel=1e-5)
    assert ratio("turns", [0, 0], [1, 1]).ratio == 1.0  # zero turns count as one


def test_the_ratio_is_of_geometric_means_with_its_t_interval_on_min_n_minus_1_df() -> None:
    """The interval this module uses, computed independently: Welch's standard error of the
    difference of mean logs, t on min(n) − 1 degrees of freedom. A narrower interval (Welch–
    Satterthwaite's degrees of freedom, a normal quantile) fails here."""
    with_values, without_values = [0.03, 0.05, 0.2], [0.01, 0.02, 0.015, 0.04, 0.011]
    got = ratio("cost", with_values, without_values)
    a, b = [math.log(v) for v in with_values], [math.log(v) for v in without_values]
    centre = sum(a) / 3 - sum(b) / 5
    se = math.sqrt(sps.tvar(a) / 3 + sps.tvar(b) / 5)
    half = sps.t.ppf(0.975, 2) * se
    assert got.ratio == pytest.approx(math.exp(centre), rel=1e-5)
    assert got.interval is not None
    assert got.interval[0] == pytest.approx(math.exp(centre - half), rel=1e-5)
    assert got.interval[1] == pytest.approx(math.exp(centre + half), rel=1e-5)


def test_one_run_in_an_arm_gives_a_ratio_without_an_interval() -> None:
    got = ratio("duration", [10.0], [5.0, 6.0])
    assert got.ratio == pytest.approx(10.0 / math.sqrt(30.0), rel=1e-5)
    assert got.interval is None


def test_whole_numbers_that_all_agree_still_get_an_interval() -> None:
    """Three runs of 3 turns against three of 2: rounding's variance keeps it from a point."""
    got = ratio("turns", [3, 3, 3], [2, 2, 2])
    assert got.ratio == 1.5
    assert got.interval is not None and got.interval[0] < 1.5 < got.interval[1]


def _mixture(rng: random.Random, share: float, factor: float, shift: float) -> float:
    return math.exp(rng.gauss(shift, 0.5)) * (factor if rng.random() < share else 1.0)


@pytest.mark.parametrize(
    ("name", "runs"),
    [("log-normal σ 2 vs 0.5", (3, 3)), ("20% of runs ×10, with arm only", (3, 10))],
)
def test_the_interval_covers_on_heavy_tails(name: str, runs: tuple[int, int]) -> None:
    """A simulation with the module's own function (bench/bench_efficiency_interval.py
    measures 0.971 and 0.965 here with 20,000 replicates; Welch–Satterthwaite's degrees of
    freedom give 0.944 and 0.877): an interval made narrower than what covers fails."""
    rng = random.Random(2026)
    shift = math.log(1.5)
    if name.startswith("log-normal"):
        truth = shift

        def draw_with() -> float:
            return math.exp(rng.gauss(shift, 2.0))

        def draw_without() -> float:
            return math.exp(rng.gauss(0.0, 0.5))
    else:
        truth = shift + 0.2 * math.log(10.0)

        def draw_with() -> float:
            return _mixture(rng, 0.2, 10.0, shift)

        def draw_without() -> float:
            return math.exp(rng.gauss(0.0, 0.5))

    reps, hits = 3000, 0
    for _ in range(reps):
        got = ratio(
            "duration",
            [draw_with() for _ in range(runs[0])],
            [draw_without() for _ in range(runs[1])],
        )
        assert got.interval is not None
        hits += got.interval[0] <= math.exp(truth) <= got.interval[1]
    assert hits / reps >= 0.95


def test_the_suite_pools_cases_as_clusters() -> None:
    one = ratio("cost", [2.0, 2.2, 1.9], [1.0, 1.1, 0.9])
    alone = pooled("cost", [one])
    assert alone.ratio == one.ratio and alone.interval == one.interval  # one case: its own
    other = ratio("cost", [1.0, 1.2, 0.8], [1.0, 1.1, 0.9])
    both = pooled("cost", [one, other])
    assert one.log_ratio is not None and other.log_ratio is not None
    assert both.ratio == pytest.approx(math.exp((one.log_ratio + other.log_ratio) / 2), rel=1e-5)
    assert both.interval is not None
    d = [one.log_ratio, other.log_ratio]
    half = sps.t.ppf(0.975, 1) * sps.sem(d)  # cases as clusters, C − 1 df
    assert both.interval[0] <= math.exp(sum(d) / 2 - half) * (1 + 1e-5)
    assert both.with_arm.runs == 6 and both.without_arm.runs == 6
    assert pooled_log_interval([], []) is None
    assert pooled_log_interval([0.3], [None]) is None
    empty = pooled("cost", [ratio("cost", [None], [1.0])])
    assert empty.ratio is None and empty.interval is None


def test_the_gate_needs_the_lower_bound_above_its_ratio() -> None:
    costly = ratio("cost", [0.05, 0.051, 0.049], [0.01, 0.0101, 0.0099])
    assert costly.interval is not None and costly.interval[0] > 4
    assert above_with_evidence(costly, 1.2)
    noisy = ratio("cost", [0.05, 0.01, 0.2], [0.01, 0.03, 0.02])
    assert noisy.ratio is not None and noisy.ratio > 1.2
    assert not above_with_evidence(noisy, 1.2)  # the estimate alone is no evidence
    assert not above_with_evidence(ratio("cost", [0.05], [0.01]), 1.2)  # no interval


def test_a_run_value_is_the_agents_own_cost_when_it_has_a_price() -> None:
    run = RunResult(arm="with", run=1, cost_usd=0.5, judge_cost_usd=0.1)
    assert run_value(run, "cost") == pytest.approx(0.4)
    assert run_value(RunResult(arm="with", run=1, cost_known=False), "cost") is None
    assert run_value(RunResult(arm="with", run=1, turns=4), "turns") == 4
    assert run_value(RunResult(arm="with", run=1, turns=0), "turns") is None  # not reported
    assert run_value(RunResult(arm="with", run=1), "inputTokens") is None
