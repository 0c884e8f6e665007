"""95% intervals for scores, pass rates and their differences, and percentiles (pure).

Which interval, and why:

* A run's score is most often 0 or 1 (one grader, or every grader passed or none did). The mean
  of such scores is a pass rate, and at the sample sizes evals have (3-10 runs) and at rates of
  0 or 1 the usual mean ± t·s/√n interval collapses to a point (3 passes of 3: ``[1, 1]``). For
  these the **Wilson score** interval is used, and for a difference of two of them (Δ) the
  **Newcombe hybrid score** interval (Newcombe 1998, method 10), which is built from the two
  Wilson intervals. Both keep their nominal coverage at small n and never leave ``[0, 1]`` /
  ``[-1, 1]``.
* Scores in between (weighted graders, partial credit) use the **t** interval of the mean and,
  for a difference, **Welch's** t interval (unequal variances), clipped to the possible range.
  With fewer than two runs in an arm, or when every run scored the same partial score (no
  spread to estimate), there is no such interval (``None``).
* The suite's mean Δ treats cases as the unit: a t interval over the cases' Δ (runs of one case
  are not independent evidence about the plugin in general).

A difference is *significant* when its interval excludes 0. These are per-case 95% intervals,
not corrected for the number of cases compared: with 20 cases, about one unchanged case will
look significant by chance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

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


def wilson(successes: int, n: int, z: float = Z95) -> Interval | None:
    """Wilson score interval of a proportion ``successes / n``."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return _round(_clip((centre - half, centre + half), 0.0, 1.0))


def newcombe(s1: int, n1: int, s2: int, n2: int, z: float = Z95) -> Interval | None:
    """Newcombe's hybrid score interval of ``s1/n1 - s2/n2`` (from the two Wilson intervals)."""
    a, b = wilson(s1, n1, z), wilson(s2, n2, z)
    if a is None or b is None:
        return None
    p1, p2 = s1 / n1, s2 / n2
    d = p1 - p2
    low = d - math.sqrt((p1 - a[0]) ** 2 + (b[1] - p2) ** 2)
    high = d + math.sqrt((a[1] - p1) ** 2 + (p2 - b[0]) ** 2)
    return _round(_clip((low, high), -1.0, 1.0))


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


def t_interval(values: Sequence[float]) -> Interval | None:
    """The t interval of the mean of ``values`` (``None`` with fewer than two, or no spread)."""
    n = len(values)
    if n < 2:
        return None
    m, var = _mean_var(values)
    if var <= _EPS:
        return None  # every value the same: nothing to estimate the spread from
    half = t_quantile(0.975, n - 1) * math.sqrt(var / n)
    return _round((m - half, m + half))


def welch(a: Sequence[float], b: Sequence[float]) -> Interval | None:
    """Welch's t interval of ``mean(a) - mean(b)`` (``None`` when an arm has fewer than two,
    or neither has any spread)."""
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return None
    ma, va = _mean_var(a)
    mb, vb = _mean_var(b)
    d = ma - mb
    se2 = va / na + vb / nb
    if se2 <= _EPS:
        return None  # no spread in either arm: nothing to estimate it from
    df = se2 * se2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    half = t_quantile(0.975, df) * math.sqrt(se2)
    return _round((d - half, d + half))


# -- what the scores use ----------------------------------------------------------------------


def _binary(values: Sequence[float]) -> bool:
    return all(abs(v) < _EPS or abs(v - 1.0) < _EPS for v in values)


def _count(values: Sequence[float]) -> int:
    return sum(1 for v in values if v > 0.5)


def score_interval(scores: Sequence[float]) -> Interval | None:
    """The interval of a mean of run scores in ``[0, 1]``: Wilson when every score is 0 or 1,
    else t (clipped)."""
    if not scores:
        return None
    if _binary(scores):
        return wilson(_count(scores), len(scores))
    interval = t_interval(scores)
    return None if interval is None else _clip(interval, 0.0, 1.0)


def difference_interval(a: Sequence[float], b: Sequence[float]) -> Interval | None:
    """The interval of ``mean(a) - mean(b)`` for run scores in ``[0, 1]``: Newcombe when every
    score is 0 or 1, else Welch (clipped)."""
    if not a or not b:
        return None
    if _binary(a) and _binary(b):
        return newcombe(_count(a), len(a), _count(b), len(b))
    interval = welch(a, b)
    return None if interval is None else _clip(interval, -1.0, 1.0)


def mean_delta_interval(deltas: Sequence[float]) -> Interval | None:
    """The interval of the suite's mean Δ, cases as the unit (t, clipped to ``[-1, 1]``)."""
    interval = t_interval(deltas)
    return None if interval is None else _clip(interval, -1.0, 1.0)


def excludes_zero(interval: Interval | None) -> bool:
    """Whether a difference is significant: its interval lies wholly above or below 0."""
    return interval is not None and (interval[0] > _EPS or interval[1] < -_EPS)


def width(interval: Interval | None) -> float | None:
    return None if interval is None else interval[1] - interval[0]


def runs_for_width(
    a: Sequence[float], b: Sequence[float] | None, limit: float, most: int = 50
) -> int | None:
    """About how many runs per arm would bring the interval of ``mean(a)`` (or of
    ``mean(a) - mean(b)``) to ``limit`` wide, if the runs went on as they went: for 0/1 scores
    the counts are scaled and the interval recomputed for each n (Wilson and Newcombe do not
    narrow as 1/√n near 0 and 1), else the 1/√n rule. None when even ``most`` runs would not."""
    if not a or (b is not None and not b):
        return None
    now = max(len(a), len(b or ()))
    if _binary(a) and (b is None or _binary(b)):
        pa = _count(a) / len(a)
        pb = None if b is None else _count(b) / len(b)
        for n in range(now, most + 1):
            sa = round(pa * n)
            interval = wilson(sa, n) if pb is None else newcombe(sa, n, round(pb * n), n)
            span = width(interval)
            if span is not None and span <= limit + 1e-9:
                return n
        return None
    interval = score_interval(a) if b is None else difference_interval(a, b)
    span = width(interval)
    if span is None:
        return None
    needed = math.ceil(now * (span / limit) ** 2)
    return needed if needed <= most else None


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
