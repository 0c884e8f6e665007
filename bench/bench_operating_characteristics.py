"""The operating characteristics of the fixed and sequential designs, computed exactly.

For pass/fail runs, at a true Δ of 0, 0.1, 0.2 and 0.4 and base (without-arm) pass rates
0.1, 0.3, 0.5, 0.7, 0.9 (those that fit under 1), each design's chance of the correct verdict
(``better`` for Δ > 0; not ``better`` or ``worse`` for Δ = 0) and its expected runs per arm,
by enumeration over the arms' pass counts (:mod:`pytest_plugin_evals.stats.operating`: the
session's own stopping rule at every look, for a session of one case). Nothing is simulated.

The target the sequential design was chosen for: at ``auto:20``, a correct-decision share at
least fixed 10's at every true Δ (averaged over the base rates, and at the worst base rate),
false calls at Δ = 0 at most 5% at every base rate, and expected runs per arm, averaged over
the four Δ, at most fixed 10's.

    python bench/bench_operating_characteristics.py [--table]   # --table: the data of
                                                                 # stats/planning.py's table
"""

from __future__ import annotations

import argparse

from pytest_plugin_evals.stats import operating

DESIGNS = ("fixed:3", "fixed:5", "fixed:10", "fixed:20", "auto:10", "auto:20", "auto:50")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="store_true", help="print planning.py's table data")
    args = parser.parse_args()
    rows = {(d, e): operating.row(d, e) for d in DESIGNS for e in operating.EFFECTS}
    if args.table:
        for d in DESIGNS:
            cells = ", ".join(
                f"({rows[d, e].mean_correct:.3f}, {rows[d, e].mean_runs:.1f})"
                for e in operating.EFFECTS
            )
            print(f'    "{d}": ({cells}),')
        return
    print("design    Δ    correct (mean / worst base rate)  false calls ≤  runs/arm")
    for d in DESIGNS:
        for e in operating.EFFECTS:
            r = rows[d, e]
            false = f"{r.worst_false_call:.3f}" if e == 0 else "     "
            print(
                f"{d:9} {e:.1f}  {r.mean_correct:.3f} / {r.worst_correct:.3f}"
                f"{'':19}{false}          {r.mean_runs:.1f}"
            )
    ref, auto = "fixed:10", "auto:20"
    gaps = [rows[auto, e].mean_correct - rows[ref, e].mean_correct for e in operating.EFFECTS]
    worst = [rows[auto, e].worst_correct - rows[ref, e].worst_correct for e in operating.EFFECTS]
    runs = sum(rows[auto, e].mean_runs for e in operating.EFFECTS) / len(operating.EFFECTS)
    print(
        f"target ({auto} against {ref}): correct share − {ref}'s, smallest over Δ: "
        f"{min(gaps):+.3f} (mean), {min(worst):+.3f} (worst base rate); false calls at most "
        f"{rows[auto, 0.0].worst_false_call:.3f}; runs per arm over the four Δ {runs:.2f} "
        f"(at Δ = 0: {rows[auto, 0.0].mean_runs:.1f}, at Δ = 0.4: {rows[auto, 0.4].mean_runs:.1f})"
    )


if __name__ == "__main__":
    main()
