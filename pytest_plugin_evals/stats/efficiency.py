"""What the plugin does to a run's cost, tokens, turns and time: ratios with/without (pure).

A run's cost or duration is heavy-tailed (most runs alike, a few several times longer), so each
measure is compared on a log scale: an arm's **geometric mean** ``exp(mean(log x))`` and the
**ratio** of the two arms' geometric means, with/without. The ratio's 95% interval is a
t-interval of the difference of the arms' mean logs, with Welch's standard error and the
conservative degrees of freedom ``min(n_with, n_without) − 1`` (Welch–Satterthwaite's
degrees of freedom under-cover with 3 runs a side when the arms' spreads differ:
``bench/bench_efficiency_interval.py`` measures both). The suite pools the cases with cases as
clusters and the arms paired by case: the mean over cases of each case's log ratio, with the
cluster-robust t-interval on ``C − 1`` degrees of freedom, each side widened to what the cases'
own intervals give (the MOVER rule, as the suite's mean Δ does), so one case gives back its
own interval.

Values come from agents and documents, so they are hostile: :func:`usable` keeps a finite
number in ``[0, CEILING]`` (not a bool, not a string) and drops anything else; a run without a
usable value is left out of that measure and counted. A zero has no logarithm: on the log scale
it is taken as the measure's :data:`FLOORS` value (a hundredth of a cent, one token, one turn,
a millisecond), far below any real run, so a zero says "next to nothing" without breaking the
mean. A measure of whole numbers (tokens, turns) adds the variance of rounding (Sheppard's
``1 / 12`` of a unit, on the log scale ``1 / (12 x̄²)``) to each arm, so that arms whose runs
all took the same number of turns still get an interval as wide as rounding allows.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_plugin_evals.stats.intervals import Interval, cluster_interval, t_quantile

#: The measures, in the order reports show them: (key, label, whole numbers).
MEASURES: tuple[tuple[str, str, bool], ...] = (
    ("cost", "cost", False),
    ("inputTokens", "input tokens", True),
    ("outputTokens", "output tokens", True),
    ("turns", "turns", True),
    ("duration", "time", False),
)

#: What a zero counts as on the log scale, per measure (USD, tokens, turns, seconds).
FLOORS: dict[str, float] = {
    "cost": 1e-4,
    "inputTokens": 1.0,
    "outputTokens": 1.0,
    "turns": 1.0,
    "duration": 1e-3,
}

#: A value above this is no run's (10¹⁵ dollars, tokens or seconds): left out, as unusable.
CEILING = 1e15

#: The confidence of every interval here.
LEVEL = 0.95


def usable(value: object) -> float | None:
    """``value`` as a number this module uses, or None: a finite int or float (not a bool)
    in ``[0, CEILING]``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    if not math.isfinite(number) or number < 0 or number > CEILING:
        return None
    return number


@dataclass(frozen=True)
class ArmFigures:
    """One arm's usable values of one measure: their count and mean, the mean and variance
    of their logs (variance None under two values), and how many runs had none."""

    runs: int
    left_out: int
    mean: float | None = None
    log_mean: float | None = None
    log_var: float | None = None

    @property
    def geo_mean(self) -> float | None:
        return None if self.log_mean is None else _exp(self.log_mean)


@dataclass(frozen=True)
class Ratio:
    """One measure with/without: both arms, the log of the ratio of their geometric means
    and its interval (None without a ratio, or without an interval)."""

    measure: str
    with_arm: ArmFigures
    without_arm: ArmFigures
    log_ratio: float | None = None
    log_interval: Interval | None = None

    @property
    def ratio(self) -> float | None:
        return None if self.log_ratio is None else _exp(self.log_ratio)

    @property
    def interval(self) -> Interval | None:
        logs = self.log_interval
        return None if logs is None else (_exp(logs[0]), _exp(logs[1]))


def arm_figures(values: Iterable[object], measure: str) -> ArmFigures:
    """The figures of one arm's runs' values of ``measure`` (hostile values left out)."""
    given = list(values)
    kept = [v for v in (usable(x) for x in given) if v is not None]
    if not kept:
        return ArmFigures(0, len(given))
    floor = FLOORS[measure]
    logs = [math.log(max(v, floor)) for v in kept]
    log_mean = sum(logs) / len(logs)
    log_var = None
    if len(logs) >= 2:
        log_var = sum((x - log_mean) ** 2 for x in logs) / (len(logs) - 1)
        if _whole(measure):
            log_var += 1.0 / (12.0 * math.exp(2 * log_mean))
    return ArmFigures(
        runs=len(kept),
        left_out=len(given) - len(kept),
        mean=_round(sum(kept) / len(kept)),
        log_mean=log_mean,
        log_var=log_var,
    )


def _whole(measure: str) -> bool:
    return any(key == measure and whole for key, _, whole in MEASURES)


def _round(x: float) -> float:
    return float(f"{x:.6g}")


@functools.cache
def _t(df: int) -> float:
    return t_quantile(1.0 - (1.0 - LEVEL) / 2.0, df)


def log_difference(with_arm: ArmFigures, without_arm: ArmFigures) -> Interval | None:
    """The 95% interval of ``log_mean(with) − log_mean(without)``: Welch's standard error, a
    t quantile on ``min(n) − 1`` degrees of freedom. None under two values in an arm."""
    a, b = with_arm, without_arm
    if a.log_mean is None or b.log_mean is None or a.log_var is None or b.log_var is None:
        return None
    centre = a.log_mean - b.log_mean
    half = _t(min(a.runs, b.runs) - 1) * math.sqrt(a.log_var / a.runs + b.log_var / b.runs)
    return centre - half, centre + half


def ratio(measure: str, with_values: Iterable[object], without_values: Iterable[object]) -> Ratio:
    """``measure`` with/without over one case's runs: both arms' figures, the ratio of their
    geometric means and its 95% interval."""
    a, b = arm_figures(with_values, measure), arm_figures(without_values, measure)
    if a.log_mean is None or b.log_mean is None:
        return Ratio(measure, a, b)
    return Ratio(measure, a, b, a.log_mean - b.log_mean, log_difference(a, b))


def _exp(x: float) -> float:
    return _round(math.exp(min(x, 700.0)))


def pooled_log_interval(
    log_ratios: Sequence[float], log_intervals: Sequence[Interval | None]
) -> Interval | None:
    """The 95% interval of the mean of the cases' log ratios, cases as clusters: the
    cluster-robust t-interval on ``C − 1`` degrees of freedom, each side widened to the
    cases' own intervals combined by the MOVER rule where wider (the suite's mean Δ's rule,
    :func:`~pytest_plugin_evals.stats.intervals.cluster_interval`; a case without one, for one
    run in an arm, adds no width, so cases whose ratios agree still get the others' width).
    One case gives its own interval; None without a case, or one case without an interval."""
    if all(i is None for i in log_intervals):
        return cluster_interval(log_ratios)
    own = [(d, d) if i is None else i for d, i in zip(log_ratios, log_intervals, strict=True)]
    return cluster_interval(log_ratios, own)


def pooled(measure: str, cases: Sequence[Ratio]) -> Ratio:
    """``measure`` with/without over a suite's cases: each arm's figures over all their runs;
    the ratio is the geometric mean of the cases' ratios (every case counts the same), its
    interval :func:`pooled_log_interval`'s."""
    rated = [c for c in cases if c.log_ratio is not None]
    with_arm = _sum_arms([c.with_arm for c in cases])
    without_arm = _sum_arms([c.without_arm for c in cases])
    if not rated:
        return Ratio(measure, with_arm, without_arm)
    logs = [c.log_ratio for c in rated if c.log_ratio is not None]
    interval = pooled_log_interval(logs, [c.log_interval for c in rated])
    return Ratio(measure, with_arm, without_arm, sum(logs) / len(logs), interval)


def _sum_arms(arms: Sequence[ArmFigures]) -> ArmFigures:
    """The suite's figures of one arm: run counts summed, the means over its cases' runs."""
    runs = sum(a.runs for a in arms)
    left_out = sum(a.left_out for a in arms)
    seen = [a for a in arms if a.runs and a.mean is not None and a.log_mean is not None]
    if not seen:
        return ArmFigures(runs, left_out)
    total = sum(a.runs for a in seen)
    mean = sum((a.mean or 0.0) * a.runs for a in seen) / total
    log_mean = sum((a.log_mean or 0.0) * a.runs for a in seen) / total
    return ArmFigures(runs, left_out, _round(mean), log_mean)


def above_with_evidence(measured: Ratio, most: float) -> bool:
    """Whether ``measured``'s ratio is above ``most`` with evidence: its 95% interval's lower
    bound is (a one-sided test at 2.5%)."""
    return measured.interval is not None and measured.interval[0] > most
