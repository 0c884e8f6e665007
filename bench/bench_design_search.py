"""The search that chose ``--eval-runs auto``'s default design: exact for one case, then the
suite benchmark for the designs that meet the target.

A design here is the budget (most runs per arm), the boundary constant ``C`` and the futility
rule's conditional-power threshold (``sequential.SEARCHED``), with the futility rule applied
as the session applies it. For each, by exact enumeration for
pass/fail runs (:mod:`pytest_plugin_evals.stats.operating`):

- the target: at every true Δ of 0, 0.1, 0.2 and 0.4 a chance of the correct verdict at least
  fixed 10 runs' (averaged over base rates 0.1 … 0.9, and at the worst base rate), expected
  runs per arm averaged over the four Δ at most 10, and false calls at most 5% at every pass
  rate 0.025 … 0.975;
- then, for the designs that meet it, what decides between them: power per run over the
  30-case suite of ``bench_decisions.py`` under the false discovery rate control (simulated,
  ``--reps`` sessions each; the same seed for every design).

    python bench/bench_design_search.py [--budgets 18,20] [--powers 0.5,0.55,0.6,0.65]
                                        [--constants 1.84,1.86,1.88,1.90,1.92] [--reps 300]
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import bench_decisions

from pytest_plugin_evals.stats import operating, sequential

GRID = [i / 40 for i in range(1, 40)]


def floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",")]


def single_case(most: int) -> tuple[bool, str]:
    """Whether the design in force meets the target, and its row of figures."""
    label, ref = f"auto:{most}", {e: operating.row("fixed:10", e) for e in operating.EFFECTS}
    rows = {e: operating.row(label, e) for e in operating.EFFECTS}
    runs = sum(r.mean_runs for r in rows.values()) / len(rows)
    gap = min(rows[e].mean_correct - ref[e].mean_correct for e in rows)
    worst = min(rows[e].worst_correct - ref[e].worst_correct for e in rows)
    ok = gap >= 0 and worst >= 0 and runs <= 10
    cells = " ".join(f"{rows[e].mean_correct:.4f}·{rows[e].mean_runs:.1f}" for e in rows)
    figures = f"{cells}  gap {gap:+.4f} worst {worst:+.4f} runs {runs:.2f}"
    if not ok:
        return False, figures
    false = max(operating.sequential_design(most, p, p).false_call for p in GRID)
    return false <= 0.05, f"{figures} false calls ≤ {false:.4f}"


def suite_power(most: int, reps: int) -> tuple[float, float, float]:
    """Power over the benchmark suite's cases with an effect, runs per session, and right
    verdicts per 100 runs."""
    cases, rng = bench_decisions.suite(), random.Random(1)
    right = runs = 0
    effects = sum(1 for c in cases if c[3] != 0)
    for _ in range(reps):
        found, made = bench_decisions.auto(cases, most, rng)
        runs += sum(made)
        for (*_, d), decision in zip(cases, found, strict=True):
            verdict = decision.verdict if decision is not None else "inconclusive"
            right += (d > 0 and verdict == "better") or (d < 0 and verdict == "worse")
    return right / reps / effects, runs / reps, 100 * right / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="18,20")
    parser.add_argument("--powers", default="0.5,0.55,0.6,0.65")
    parser.add_argument("--constants", default="1.84,1.86,1.88,1.90,1.92")
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args()
    kept = dict(sequential.SEARCHED)
    budgets = [int(b) for b in args.budgets.split(",")]
    for most, power, c in itertools.product(budgets, floats(args.powers), floats(args.constants)):
        sequential.SEARCHED[most] = (c, power)
        ok, figures = single_case(most)
        line = f"{'meets' if ok else '     '} auto:{most} power<{power} C={c:.2f}  {figures}"
        if ok:
            share, runs, per = suite_power(most, args.reps)
            line += f"  suite: power {share:.3f}, {runs:.0f} runs, {per:.3f} right per 100 runs"
        print(line, flush=True)
        sequential.SEARCHED.clear()
        sequential.SEARCHED.update(kept)


if __name__ == "__main__":
    main()
