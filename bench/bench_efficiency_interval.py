"""How often the efficiency ratio's 95% interval covers the true ratio, on heavy tails.

Simulates a case's runs of both arms and counts the intervals (ratio of geometric means,
with/without; :mod:`pytest_plugin_evals.stats.efficiency`) that hold the true ratio
``exp(E log X_with − E log X_without)``:

* **log-normal** costs or durations, σ of the log from 0.5 to 2 (2: the slowest of 20 runs
  is about 27 times the median), the same σ in both arms or a different one;
* **a mixture with rare long runs**: a share (5–20%) of runs takes 10 or 30 times as long, in
  one arm only or in both;
* **few runs per arm**: 3, 5, 10, and 3 against 10.

For each it compares the interval the module uses (Welch's standard error, t on
``min(n) − 1`` degrees of freedom) with Welch–Satterthwaite's degrees of freedom, and prints
the share below the interval too (a gate that fails when the lower bound is above its ratio
fails a suite whose true ratio is that ratio this often), and how often the estimate alone is
above the truth (a gate on the estimate). Then the suite: C cases (3, 10),
each of its own true ratio, pooled with cases as clusters; the target is the mean of these
cases' log ratios.

    python bench/bench_efficiency_interval.py [--reps 20000] [--seed 1] [--json]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import numpy as np
from scipy import stats as sps

from pytest_plugin_evals.stats.efficiency import pooled_log_interval

#: A sampler of log values: (rng, reps, n) -> array (reps, n) of log x, and its mean.
Sampler = tuple[Callable[[np.random.Generator, int, int], np.ndarray], float]


def lognormal(sigma: float, shift: float = 0.0) -> Sampler:
    return (lambda rng, reps, n: rng.normal(shift, sigma, (reps, n))), shift


def mixture(share: float, factor: float, sigma: float = 0.5, shift: float = 0.0) -> Sampler:
    def draw(rng: np.random.Generator, reps: int, n: int) -> np.ndarray:
        long = rng.random((reps, n)) < share
        return rng.normal(shift, sigma, (reps, n)) + long * np.log(factor)

    return draw, shift + share * float(np.log(factor))


SHIFT = float(np.log(1.5))  # the with arm costs 1.5 times as much

SCENARIOS: dict[str, tuple[Sampler, Sampler]] = {
    "log-normal σ 0.5": (lognormal(0.5, SHIFT), lognormal(0.5)),
    "log-normal σ 1": (lognormal(1.0, SHIFT), lognormal(1.0)),
    "log-normal σ 2": (lognormal(2.0, SHIFT), lognormal(2.0)),
    "log-normal σ 2 vs 0.5": (lognormal(2.0, SHIFT), lognormal(0.5)),
    "log-normal σ 0.25 vs 2": (lognormal(0.25, SHIFT), lognormal(2.0)),
    "5% runs ×30, with arm only": (mixture(0.05, 30.0, shift=SHIFT), lognormal(0.5)),
    "10% runs ×10, both arms": (mixture(0.10, 10.0, shift=SHIFT), mixture(0.10, 10.0)),
    "20% runs ×10, with arm only": (mixture(0.20, 10.0, shift=SHIFT), lognormal(0.5)),
    "20% runs ×30, without arm only": (lognormal(0.5, SHIFT), mixture(0.20, 30.0)),
}

DESIGNS = ((3, 3), (5, 5), (10, 10), (3, 10))


def intervals(a: np.ndarray, b: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each rule's interval of the difference of mean logs, per replicate."""
    na, nb = a.shape[1], b.shape[1]
    va, vb = a.var(axis=1, ddof=1) / na, b.var(axis=1, ddof=1) / nb
    se = np.sqrt(va + vb)
    centre = a.mean(axis=1) - b.mean(axis=1)
    satterthwaite = (va + vb) ** 2 / (va**2 / (na - 1) + vb**2 / (nb - 1))
    half_min = sps.t.ppf(0.975, min(na, nb) - 1) * se
    half_welch = sps.t.ppf(0.975, satterthwaite) * se
    return {
        "t, min(n)-1 df (used)": (centre - half_min, centre + half_min),
        "Welch-Satterthwaite df": (centre - half_welch, centre + half_welch),
    }


def case_coverage(reps: int, seed: int) -> list[dict[str, object]]:
    rng = np.random.default_rng(seed)
    rows = []
    for name, ((draw_a, mean_a), (draw_b, mean_b)) in SCENARIOS.items():
        truth = mean_a - mean_b
        for na, nb in DESIGNS:
            a, b = draw_a(rng, reps, na), draw_b(rng, reps, nb)
            above = float(np.mean(a.mean(axis=1) - b.mean(axis=1) > truth))
            for rule, (low, high) in intervals(a, b).items():
                rows.append(
                    {
                        "scenario": name,
                        "runs": f"{na}/{nb}",
                        "rule": rule,
                        "coverage": float(np.mean((low <= truth) & (truth <= high))),
                        "below": float(np.mean(low > truth)),
                        "estimate above": above,
                    }
                )
    return rows


def suite_coverage(reps: int, seed: int) -> list[dict[str, object]]:
    """The suite's pooled interval (the module's own function) over C cases of their own
    ratios; the target is the mean of these cases' true log ratios."""
    rng = np.random.default_rng(seed)
    rows = []
    worst = (
        "20% runs ×30, without arm only",
        "20% runs ×10, with arm only",
        "log-normal σ 2 vs 0.5",
    )
    for name in worst:
        (draw_a, mean_a), (draw_b, mean_b) = SCENARIOS[name]
        for cases in (3, 10):
            for n in (3, 5):
                effects = rng.normal(0.0, 0.3, cases)  # each case its own true log ratio
                truth = mean_a - mean_b + float(effects.mean())
                hits = below = 0
                count = max(1, reps // 10)  # the module's pure Python is slower
                for _ in range(count):
                    a = draw_a(rng, cases, n) + effects[:, None]
                    b = draw_b(rng, cases, n)
                    low_c, high_c = intervals(a, b)["t, min(n)-1 df (used)"]
                    d = a.mean(axis=1) - b.mean(axis=1)
                    own = list(zip(low_c.tolist(), high_c.tolist(), strict=True))
                    pooled = pooled_log_interval(d.tolist(), own)
                    assert pooled is not None
                    hits += pooled[0] <= truth <= pooled[1]
                    below += pooled[0] > truth
                rows.append(
                    {
                        "scenario": name,
                        "cases": cases,
                        "runs": n,
                        "coverage": hits / count,
                        "below": below / count,
                    }
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cases = case_coverage(args.reps, args.seed)
    suites = suite_coverage(args.reps, args.seed + 1)
    if args.json:
        print(json.dumps({"cases": cases, "suites": suites}, indent=2, ensure_ascii=False))
        return
    print(f"One case, {args.reps} replicates each (coverage, share below the interval):")
    for row in cases:
        print(
            f"  {row['scenario']:<32} {row['runs']:>5}  {row['rule']:<24} "
            f"{row['coverage']:.3f}  {row['below']:.3f}"
        )
    for rule in ("t, min(n)-1 df (used)", "Welch-Satterthwaite df"):
        own = [r for r in cases if r["rule"] == rule]
        worst = min(own, key=lambda r: float(str(r["coverage"])))
        most_below = max(float(str(r["below"])) for r in own)
        print(
            f"worst coverage, {rule}: {worst['coverage']:.3f} ({worst['scenario']}, "
            f"{worst['runs']} runs); most below: {most_below:.3f}"
        )
    above = [float(str(r["estimate above"])) for r in cases]
    print(f"the estimate above the truth (a gate on it): {min(above):.3f} to {max(above):.3f}")
    print("Suite, cases as clusters:")
    for row in suites:
        print(
            f"  {row['scenario']:<32} C={row['cases']:<3} n={row['runs']:<3} "
            f"{row['coverage']:.3f}  {row['below']:.3f}"
        )
    worst_suite = min(float(str(r["coverage"])) for r in suites)
    print(f"worst suite coverage: {worst_suite:.3f}")


if __name__ == "__main__":
    main()
