"""95% intervals for scores, pass rates and their differences, and percentiles (pure).

Which interval, and why (the explanation page says the same for users):

* A run's score lies in ``[0, 1]``. The mean of ``n`` such scores gets the **Wilson score
  interval** with the mean as the proportion (``n · mean`` "successes", a whole number when
  every score is 0 or 1, a fraction otherwise). For 0/1 scores this *is* Wilson's interval of a
  pass rate. For partial scores it is conservative: a variable in ``[0, 1]`` with mean ``μ``
  has a variance of at most ``μ(1 − μ)``, the Bernoulli variance that the Wilson interval
  assumes, so the interval is at least as wide as one built on the true variance. It never
  collapses: runs that all agree (3 of 3 passed, or every run scored 0.33) still get an
  interval as wide as ``n`` runs allow, where mean ± t·s/√n would be a point or nothing.
* A difference of two arms' means (Δ) gets **Newcombe's hybrid score interval** (Newcombe
  1998, method 10), built from the two Wilson intervals; it never leaves ``[-1, 1]``.
* The suite's mean Δ is the plain mean of the cases' Δ (every case counts the same). Its
  interval is **cluster-robust**: runs are clustered by case and the arms are paired within a
  case, so the per-case Δ is the unit, and the cluster-robust (CR1) variance of the mean of
  equally weighted cluster means is ``Σ (Δ_c − Δ̄)² / (C (C − 1))``, with a t quantile on
  ``C − 1`` degrees of freedom (the clustered standard errors of Miller 2024, "Adding error
  bars to evals"). Each side is widened when needed to what the cases' own intervals give,
  combined as Newcombe combines two (the MOVER rule: ``Δ̄ − √Σ(Δ_c − low_c)² / C`` below,
  likewise above), so that a suite whose cases all agree still has an honest interval and a
  suite of one case has that case's interval.

:func:`p_value` turns any of these intervals into the p-value of a claim about it (the
largest confidence level at which the claim still holds), which the verdicts use for their
false discovery rate control (:mod:`pytest_plugin_evals.stats.decisions`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

#: A closed interval ``(low, high)``.
Interval = tuple[float, float]

#: The normal quantile of 0.975: a two-sided 95% interval.
Z95 = 1.959963984540054
#: Confidence of every interval here.
LEVEL = 0.95
_EPS = 1e-12


def _clip(interval: Interval, low: float, high: float) -> Interval:
    return (min(high, max(low, interval[0])), min(high, max(low, interval[1])))


def _round(interval: Interval) -> Interval:
    return (round(interval[0], 10), round(interval[1], 10))


def wilson(successes: float, n: int, z: float = Z95) -> Interval | None:
    """Wilson score interval of a proportion ``successes / n`` (``successes`` may be a
    fraction: the sum of ``n`` scores in ``[0, 1]``)."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return _round(_clip((centre - half, centre + half), 0.0, 1.0))


def newcombe(s1: float, n1: int, s2: float, n2: int, z: float = Z95) -> Interval | None:
    """Newcombe's hybrid score interval of ``s1/n1 - s2/n2`` (from the two Wilson intervals)."""
    a, b = wilson(s1, n1, z), wilson(s2, n2, z)
    if a is None or b is None:
        return None
    p1, p2 = s1 / n1, s2 / n2
    d = p1 - p2
    low = d - math.sqrt((p1 - a[0]) ** 2 + (b[1] - p2) ** 2)
    high = d + math.sqrt((a[1] - p1) ** 2 + (p2 - b[0]) ** 2)
    return _round(_clip((low, high), -1.0, 1.0))


def f1_interval(tp: int, fp: int, fn: int, z: float = Z95) -> Interval | None:
    """F1's 95% interval. F1 = 2·TP / (2·TP + FP + FN) is a function of one proportion: the
    share π of TP among the items F1 counts (TP, FP and FN; a TN does not enter it), as
    F1 = 2π / (1 + π). The interval is π's Wilson interval mapped through that function; it
    never collapses to a point (a bootstrap over the items does when all of them are right)."""
    share = wilson(tp, tp + fp + fn, z)
    if share is None:
        return None
    return _round((2 * share[0] / (1 + share[0]), 2 * share[1] / (1 + share[1])))


def mover(
    p1: float, a: Interval, p2: float, b: Interval, r: float = 0.0, bound: float = 1.0
) -> Interval:
    """The MOVER interval of ``p1 - p2`` from each one's own interval ``a`` and ``b`` and the
    correlation ``r`` of the two estimates (Zou and Donner 2008; with Wilson intervals and
    ``r = 0`` it is :func:`newcombe`, with Newcombe's paired phi it is his paired method 10)."""
    d = p1 - p2
    below = (p1 - a[0]) ** 2 + (b[1] - p2) ** 2 - 2 * r * (p1 - a[0]) * (b[1] - p2)
    above = (a[1] - p1) ** 2 + (p2 - b[0]) ** 2 - 2 * r * (a[1] - p1) * (p2 - b[0])
    low, high = d - math.sqrt(max(below, 0.0)), d + math.sqrt(max(above, 0.0))
    return _round(_clip((low, high), -bound, bound))


def paired_phi(both: int, first: int, second: int, neither: int) -> float:
    """The correlation of two paired 0/1 outcomes for Newcombe's paired interval (1998,
    method 10): the phi coefficient of the 2×2 table, its numerator shrunk towards 0 by
    ``n/2`` (his continuity correction); 0 when a margin is empty."""
    n = both + first + second + neither
    margins = (both + first) * (second + neither) * (both + second) * (first + neither)
    if margins == 0:
        return 0.0
    cross: float = both * neither - first * second
    if cross > 0:
        cross = max(cross - n / 2, 0.0)
    return max(-1.0, min(1.0, cross / math.sqrt(margins)))


# -- Student's t ------------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def clopper_pearson(successes: int, n: int, level: float = LEVEL) -> Interval | None:
    """The exact (Clopper–Pearson) interval of a proportion ``successes / n``: each bound is
    where the binomial tail beyond the count is ``(1 − level) / 2``, found by bisection on
    the beta distribution's CDF (:func:`_betainc`). Never narrower than the level promises."""
    if n <= 0 or not 0 <= successes <= n:
        return None
    tail = (1.0 - level) / 2.0

    def quantile(q: float, a: float, b: float) -> float:
        low, high = 0.0, 1.0
        for _ in range(100):
            mid = (low + high) / 2.0
            low, high = (mid, high) if _betainc(a, b, mid) < q else (low, mid)
        return (low + high) / 2.0

    lower = 0.0 if successes == 0 else quantile(tail, successes, n - successes + 1)
    upper = 1.0 if successes == n else quantile(1.0 - tail, successes + 1, n - successes)
    return _round((lower, upper))


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with ``df`` degrees of freedom (``df`` need not be whole)."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (``0 < p < 1``), by bisection on :func:`t_cdf`."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise ValueError("t_quantile needs 0 < p < 1 and df > 0")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        high *= 2.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if t_cdf(mid, df) < p:
            low = mid
        else:
            high = mid
        if high - low < 1e-12 * max(1.0, high):
            break
    return (low + high) / 2.0


def _mean_var(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    m = sum(values) / n
    return m, sum((v - m) ** 2 for v in values) / (n - 1)


def normal_quantile(p: float) -> float:
    """The ``p`` quantile of the standard normal (``0 < p < 1``), by bisection on erf."""
    if not 0.0 < p < 1.0:
        raise ValueError("normal_quantile needs 0 < p < 1")
    low, high = -40.0, 40.0
    for _ in range(200):
        mid = (low + high) / 2.0
        if 0.5 * math.erfc(-mid / math.sqrt(2.0)) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0


def two_sided_p(z: float) -> float:
    """``P(|Z| > z)`` for a standard normal ``Z``."""
    return math.erfc(abs(z) / math.sqrt(2.0))


# -- what the scores use ----------------------------------------------------------------------


def _bounded(values: Sequence[float]) -> list[float]:
    return [min(1.0, max(0.0, float(v))) for v in values]


def score_interval(scores: Sequence[float], z: float = Z95) -> Interval | None:
    """The interval of a mean of run scores in ``[0, 1]``: Wilson, with the sum of the scores
    as the successes (exactly Wilson for 0/1 scores, conservative for partial ones)."""
    if not scores:
        return None
    kept = _bounded(scores)
    return wilson(sum(kept), len(kept), z)


def difference_interval(a: Sequence[float], b: Sequence[float], z: float = Z95) -> Interval | None:
    """The interval of ``mean(a) - mean(b)`` for run scores in ``[0, 1]``: Newcombe's hybrid
    score interval from the two arms' Wilson intervals."""
    if not a or not b:
        return None
    ka, kb = _bounded(a), _bounded(b)
    return newcombe(sum(ka), len(ka), sum(kb), len(kb), z)


def mean_delta_interval(
    deltas: Sequence[float], bounds: Sequence[Interval] = (), z: float = Z95
) -> Interval | None:
    """The cluster-robust interval of the suite's mean Δ (cases as clusters, arms paired by
    case), widened on each side to the cases' own sampling uncertainty when that is wider:
    ``bounds`` are the cases' 95% Δ intervals, combined as Newcombe combines two (the MOVER
    rule: the mean's low end is ``Δ̄ − √Σ(Δ_c − low_c)² / C``, its high end likewise), so that
    one case gives back its own interval. Scaled to ``z``; clipped to ``[-1, 1]``. None
    without a Δ, or with one Δ and nothing to say how sure it is."""
    found = cluster_interval(deltas, bounds, z)
    return None if found is None else _round(_clip(found, -1.0, 1.0))


def cluster_interval(
    values: Sequence[float], bounds: Sequence[Interval] = (), z: float = Z95
) -> Interval | None:
    """:func:`mean_delta_interval`'s interval of the mean of ``values`` (one per cluster),
    neither clipped nor rounded: for any measure of a case, a log ratio too."""
    deltas, count = values, len(values)
    if count == 0:
        return None
    centre = sum(deltas) / count
    below = above = 0.0
    if count >= 2:
        between = sum((d - centre) ** 2 for d in deltas) / (count * (count - 1))
        level = math.erfc(z / math.sqrt(2.0))  # the two-sided alpha of z
        below = above = t_quantile(1.0 - level / 2.0, count - 1) * math.sqrt(between)
    if len(bounds) == count:
        scale = z / Z95
        low = math.sqrt(sum((d - b[0]) ** 2 for d, b in zip(deltas, bounds, strict=True)))
        high = math.sqrt(sum((b[1] - d) ** 2 for d, b in zip(deltas, bounds, strict=True)))
        below, above = max(below, scale * low / count), max(above, scale * high / count)
    elif count < 2:
        return None
    return centre - below, centre + above


def new_case_interval(deltas: Sequence[float], z: float = Z95) -> Interval | None:
    """The prediction interval of one new case's Δ, drawn like these: ``Δ̄ ± t · s · √(1 + 1/C)``
    (``s`` the standard deviation of the cases' Δ, ``t`` on ``C − 1`` degrees of freedom at
    the level of ``z``); clipped to ``[-1, 1]``. None with fewer than two cases."""
    count = len(deltas)
    if count < 2:
        return None
    centre, var = _mean_var(deltas)
    level = math.erfc(z / math.sqrt(2.0))
    half = t_quantile(1.0 - level / 2.0, count - 1) * math.sqrt(var * (1 + 1 / count))
    return _round(_clip((centre - half, centre + half), -1.0, 1.0))


def p_value(
    claim: Callable[[Interval], bool], interval_at: Callable[[float], Interval | None]
) -> float:
    """The p-value of ``claim`` about an interval: ``2 (1 − Φ(z*))``, where ``z*`` is the
    largest ``z`` at which ``claim(interval_at(z))`` still holds (intervals nest as ``z``
    grows). A claim that holds at 95% has a p-value below 0.05; one that holds at no level
    has 1."""

    def holds(z: float) -> bool:
        interval = interval_at(z)
        return interval is not None and claim(interval)

    if not holds(1e-6):
        return 1.0
    low, high = 1e-6, 6.0  # p below 2e-9 is reported as 2e-9
    if holds(high):
        return two_sided_p(high)
    for _ in range(30):
        mid = (low + high) / 2.0
        if holds(mid):
            low = mid
        else:
            high = mid
    return two_sided_p(low)


def excludes_zero(interval: Interval | None) -> bool:
    """Whether a difference is significant: its interval lies wholly above or below 0."""
    return interval is not None and (interval[0] > _EPS or interval[1] < -_EPS)


def width(interval: Interval | None) -> float | None:
    return None if interval is None else interval[1] - interval[0]


def runs_for_width(
    a: Sequence[float], b: Sequence[float] | None, limit: float, most: int = 50
) -> int | None:
    """About how many runs per arm would bring the interval of ``mean(a)`` (or of
    ``mean(a) - mean(b)``) to ``limit`` wide, if the runs went on as they went: the means are
    kept and the interval recomputed for each n (Wilson and Newcombe do not narrow as 1/√n
    near 0 and 1). None when even ``most`` runs would not."""
    if not a or (b is not None and not b):
        return None
    now = max(len(a), len(b or ()))
    pa = sum(_bounded(a)) / len(a)
    pb = None if b is None else sum(_bounded(b)) / len(b)
    for n in range(now, most + 1):
        interval = wilson(pa * n, n) if pb is None else newcombe(pa * n, n, pb * n, n)
        span = width(interval)
        if span is not None and span <= limit + 1e-9:
            return n
    return None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) of ``values``, interpolating linearly between the two
    nearest ranks (numpy's default); ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    below = math.floor(rank)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (rank - below)
