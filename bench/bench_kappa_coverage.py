"""How often the judge-agreement interval holds the true Cohen's κ, simulated.

    python bench/bench_kappa_coverage.py [--samples 2000] [--seed 1]

Two raters give pass/fail verdicts on ``n`` items, each passing with the same rate ``p``, their
agreement set so that the true κ is as given. For each ``(n, κ, p)`` it draws ``--samples``
samples and counts how often the 95% interval holds the true κ: the percentile bootstrap the
reports give (:func:`pytest_plugin_evals.stats.agreement.kappa_interval`: 2,000 resamples, an
undefined κ counted as 0, here drawn with numpy to be quick) and, for comparison, the normal
interval from the large-sample standard error of Fleiss, Cohen and Everitt (1969)
(:func:`~pytest_plugin_evals.stats.agreement.kappa_se`). Samples whose κ is undefined (one
verdict throughout) are left out, as the reports give no interval for them. Nothing is
asserted: this is a measurement (bench/README.md); docs/how-to/judges.md quotes its figures.
"""

from __future__ import annotations

import argparse

import numpy as np

from pytest_plugin_evals.stats.agreement import BOOTSTRAP, kappa_se

SETTINGS = [
    (n, k, p) for n in (10, 20, 40, 80) for k, p in ((0.4, 0.7), (0.6, 0.7), (0.8, 0.7), (0.6, 0.5))
]


def kappas(counts: np.ndarray) -> np.ndarray:
    """κ of each row of 2×2 counts (both pass, first only, second only, both fail); NaN where
    chance agreement is 1."""
    n = counts.sum(-1)
    a, b, c, d = (counts[..., i] for i in range(4))
    p1, p2 = (a + b) / n, (a + c) / n
    expected = p1 * p2 + (1 - p1) * (1 - p2)
    with np.errstate(all="ignore"):
        found = ((a + d) / n - expected) / (1 - expected)
    return np.where(expected >= 1, np.nan, found)


def cells(kappa: float, p: float) -> np.ndarray:
    both = p * p + kappa * p * (1 - p)
    return np.array([both, p - both, p - both, 1 - 2 * p + both])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print("n   κ    p    bootstrap  normal  samples")
    for n, kappa, p in SETTINGS:
        held_boot = held_normal = used = 0
        for _ in range(args.samples):
            counts = rng.multinomial(n, cells(kappa, p))
            found = float(kappas(counts.astype(float)))
            if np.isnan(found):
                continue
            used += 1
            again = rng.multinomial(n, counts / n, size=BOOTSTRAP).astype(float)
            low, high = np.percentile(np.nan_to_num(kappas(again), nan=0.0), [2.5, 97.5])
            held_boot += bool(low <= kappa <= high)
            se = kappa_se((int(counts[0]), int(counts[1]), int(counts[2]), int(counts[3])))
            assert se is not None
            held_normal += bool(found - 1.96 * se <= kappa <= found + 1.96 * se)
        print(
            f"{n:<3} {kappa:<4} {p:<4} {held_boot / used:9.3f}  {held_normal / used:6.3f}  {used}"
        )


if __name__ == "__main__":
    main()
