"""How honest the fixed designs' intervals and verdicts are, computed exactly.

Every figure is a sum over the outcome space, nothing is simulated:

* **pass/fail runs** (each run passes with ``p``): a case's Δ interval (Newcombe's, the one
  every fixed-runs case gets) over the ``(n + 1)²`` count pairs of its two arms;
* **partial scores** (each run scores 0, ½ or 1): the sum of ``n`` such scores takes ``2n + 1``
  values, whose chances are the ``n``-fold convolution of the run's three chances;
* **a single arm's rate** (trigger accuracy, precision, recall): Wilson's interval over the
  ``n + 1`` counts;
* **a family of cases with no effect** after Benjamini–Hochberg: each case's p-value takes
  one of finitely many values; the chance that the procedure keeps at least one is computed
  by a recursion over the thresholds ``k · q / m``;
* **a top-up** (3 runs, then more runs added to the same case and the verdict read again):
  :func:`pytest_plugin_evals.stats.operating.looks_false_call` follows the counts look by look.

    python bench/bench_calibration.py [--json]
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence

import numpy as np

from pytest_plugin_evals.stats import intervals, operating
from pytest_plugin_evals.stats.decisions import DEFAULT_MARGIN, FDR, decide_difference

Z = intervals.Z95
RUNS = (3, 5, 10, 20)
GRID = np.round(np.arange(0.01, 1.0, 0.01), 2)


def wilson(s: np.ndarray, n: int, z: float = Z) -> tuple[np.ndarray, np.ndarray]:
    p = s / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


def newcombe(s1: np.ndarray, s2: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's interval for every pair ``(s1[i], s2[j])`` (a matrix)."""
    a, b = s1[:, None] / n, s2[None, :] / n
    la, ha = (x[:, None] for x in wilson(s1, n))
    lb, hb = (x[None, :] for x in wilson(s2, n))
    low = a - b - np.sqrt((a - la) ** 2 + (hb - b) ** 2)
    high = a - b + np.sqrt((ha - a) ** 2 + (b - lb) ** 2)
    return np.clip(low, -1, 1), np.clip(high, -1, 1)


def binomial(n: int, p: np.ndarray) -> np.ndarray:
    """``P(K = k)`` for each ``p`` (rows) and ``k`` (columns)."""
    k = np.arange(n + 1)
    comb = np.array([math.comb(n, i) for i in k], dtype=float)
    return comb[None, :] * p[:, None] ** k[None, :] * (1 - p[:, None]) ** (n - k)[None, :]


def pass_fail(n: int) -> dict[str, float]:
    """Worst coverage of Δ over the grid of pass rates, where it is, and the worst false-call
    chance at Δ = 0."""
    counts = np.arange(n + 1, dtype=float)
    low, high = newcombe(counts, counts, n)
    w = binomial(n, GRID)
    called = (low > 1e-12) | (high < -1e-12)
    equivalent = (low >= -DEFAULT_MARGIN) & (high <= DEFAULT_MARGIN)
    false_call = np.einsum("pi,ij,pj->p", w, called & ~equivalent, w)
    worst, where = 1.0, (0.0, 0.0)
    for i, p1 in enumerate(GRID):
        delta = p1 - GRID
        covers = (low[None, :, :] <= delta[:, None, None] + 1e-12) & (
            high[None, :, :] >= delta[:, None, None] - 1e-12
        )
        cov = np.einsum("i,qij,qj->q", w[i], covers, w)
        j = int(np.argmin(cov))
        if cov[j] < worst:
            worst, where = float(cov[j]), (float(p1), float(GRID[j]))
    k = int(np.argmax(false_call))
    return {
        "coverage_worst": worst,
        "coverage_worst_at": list(where),
        "false_call_worst": float(false_call[k]),
        "false_call_worst_at": float(GRID[k]),
    }


def simplex(step: float) -> list[tuple[float, float, float]]:
    """Chances of a run scoring 0, ½, 1 on a grid of the given step."""
    m = round(1 / step)
    return [(i / m, j / m, (m - i - j) / m) for i in range(m + 1) for j in range(m + 1 - i)]


def sums(n: int, chances: tuple[float, float, float]) -> np.ndarray:
    """The chances of a sum of ``n`` scores in half-steps ``0 … 2n``."""
    out = np.array([1.0])
    for _ in range(n):
        out = np.convolve(out, np.array(chances))
    return out


def partial(n: int, step: float = 0.1) -> dict[str, float]:
    """Worst coverage of Δ for runs scoring 0, ½ or 1, over a grid of the runs' chances: over
    all of them, over those scoring ½ at most a tenth of the time (nearly pass/fail), and over
    those scoring ½ at least half the time (truly partial)."""
    half = np.arange(2 * n + 1, dtype=float) / 2
    low, high = newcombe(half, half, n)
    grid = simplex(step)
    dist = np.array([sums(n, c) for c in grid])
    means = np.array([c[1] / 2 + c[2] for c in grid])
    worst = {"all": 1.0, "nearly_pass_fail": 1.0, "partial": 1.0}
    for i, c in enumerate(grid):
        delta = means[i] - means
        covers = (low[None, :, :] <= delta[:, None, None] + 1e-12) & (
            high[None, :, :] >= delta[:, None, None] - 1e-12
        )
        cov = np.einsum("i,qij,qj->q", dist[i], covers, dist)
        halves = np.array([min(c[1], g[1]) for g in grid])
        worst["all"] = min(worst["all"], float(cov.min()))
        near = cov[np.array([max(c[1], g[1]) <= 0.1 + 1e-9 for g in grid])]
        if near.size and c[1] <= 0.1 + 1e-9:
            worst["nearly_pass_fail"] = min(worst["nearly_pass_fail"], float(near.min()))
        worst["partial"] = min(worst["partial"], float(cov[halves >= 0.5 - 1e-9].min(initial=1)))
    return worst


def single_arm(n: int) -> dict[str, float]:
    """Wilson's coverage of a rate from ``n`` items: worst over the grid, and at 0.99."""
    grid = np.round(np.arange(0.005, 1.0, 0.005), 3)
    low, high = wilson(np.arange(n + 1, dtype=float), n)
    w = binomial(n, grid)
    covers = (low[None, :] <= grid[:, None] + 1e-12) & (high[None, :] >= grid[:, None] - 1e-12)
    cov = (w * covers).sum(axis=1)
    k = int(np.argmin(cov))
    at99 = float((binomial(n, np.array([0.99])) * covers[grid == 0.99]).sum())
    return {"worst": float(cov[k]), "worst_at": float(grid[k]), "at_0.99": at99}


def single_arm_partial(n: int, step: float = 0.05) -> dict[str, float]:
    """Wilson's coverage of an arm's mean score for runs scoring 0, ½ or 1 (the sum of the
    scores as the successes): worst over a grid of the runs' chances, and worst where runs
    score ½ at least half the time."""
    lo, hi = wilson(np.arange(2 * n + 1, dtype=float) / 2, n)
    worst = {"all": 1.0, "partial": 1.0}
    for c in simplex(step):
        mu = c[1] / 2 + c[2]
        cov = float((sums(n, c) * ((lo <= mu + 1e-12) & (hi >= mu - 1e-12))).sum())
        worst["all"] = min(worst["all"], cov)
        if c[1] >= 0.5 - 1e-9:
            worst["partial"] = min(worst["partial"], cov)
    return worst


def p_values(n: int, p: float) -> list[tuple[float, float]]:
    """A no-effect case's p-value (of its verdict's claim, or the nearest claim) and its
    chance, for each count pair (its verdict counts as a call only when better or worse)."""
    w = binomial(n, np.array([p]))[0]
    out = []
    for a in range(n + 1):
        for b in range(n + 1):
            d = decide_difference([1.0] * a + [0.0] * (n - a), [1.0] * b + [0.0] * (n - b), 0.1)
            called = d is not None and d.verdict in ("better", "worse")
            out.append((d.p_value if called and d is not None else 1.0, float(w[a] * w[b])))
    return out


def family_any_call(n: int, p: float, m: int, q: float = FDR) -> float:
    """The exact chance that Benjamini–Hochberg at ``q`` keeps at least one better/worse call
    among ``m`` independent cases with no effect: none is kept exactly when, for every
    ``k``, fewer than ``k`` p-values are at or below ``k · q / m``."""
    values = p_values(n, p)
    # chance of a p-value in (t_{k-1}, t_k], k = 1..m; the rest above t_m
    bins = [0.0] * (m + 1)
    for value, w in values:
        k = max(1, math.ceil(value * m / q - 1e-9))
        bins[min(k, m + 1) - 1 if k <= m else m] += w
    # states: how many p-values fell at or below t_k so far (must stay below k + 1 … )
    state = {0: 1.0}
    for k in range(1, m + 1):
        grown: dict[int, float] = {}
        for below, w in state.items():
            left = m - below
            rest = sum(bins[k - 1 :])
            share = bins[k - 1] / rest if rest > 0 else 0.0
            for extra in range(left + 1):
                if below + extra >= k:
                    break
                c = math.comb(left, extra) * share**extra * (1 - share) ** (left - extra)
                grown[below + extra] = grown.get(below + extra, 0.0) + w * c
        state = grown
    return 1.0 - sum(state.values())


def top_up(schedule: Sequence[int]) -> float:
    grid = [i / 20 for i in range(1, 20)]
    return max(operating.looks_false_call(tuple(schedule), p) for p in grid)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    found = {
        "pass_fail": {n: pass_fail(n) for n in RUNS},
        "partial": {n: partial(n) for n in RUNS},
        "single_arm": {n: single_arm(n) for n in (3, 5, 10, 20, 50)},
        "single_arm_partial": {n: single_arm_partial(n) for n in RUNS},
        "family_30_cases": {n: family_any_call(n, 0.5, 30) for n in (5, 10)},
        "top_up": {
            "3,6": top_up((3, 6)),
            "3,6,10,20": top_up((3, 6, 10, 20)),
            "5,10": top_up((5, 10)),
        },
    }
    if args.json:
        print(json.dumps(found, indent=2))
        return
    for section, rows in found.items():
        print(section)
        for key, value in rows.items():
            print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
