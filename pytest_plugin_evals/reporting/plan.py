"""``--eval-plan``'s lines, from plain data: the selected cases (name, folder, runs, arms), the
earlier session if one was found, and the options the plan depends on. The statistics are
:mod:`pytest_plugin_evals.stats.planning`'s; ``plugin.plan`` deselects the items and prints this.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_plugin_evals.reporting.result import SessionResult
from pytest_plugin_evals.reporting.terminal import _duration
from pytest_plugin_evals.stats import (
    DEFAULT_COST_USD,
    DEFAULT_SECONDS,
    WORST_VARIANCE,
    CaseHistory,
    decisions,
    plan_case,
    plan_suite,
    planning,
)
from pytest_plugin_evals.stats.planning import CasePlan, SuitePlan


def _histories(before: SessionResult) -> dict[tuple[str, str], CaseHistory]:
    out = {}
    for case in before.cases:
        graded = [r.result for r in case.runs if r.result.graded]
        out[(case.name, case.dir)] = CaseHistory(
            with_scores=tuple(r.result.score for r in case.with_runs if r.result.graded),
            without_scores=tuple(r.result.score for r in case.without_runs if r.result.graded),
            costs=tuple(r.cost_usd for r in graded if r.cost_known),
            seconds=tuple(r.duration_seconds for r in graded if r.duration_seconds is not None),
        )
    return out


def plan_lines(
    items: Iterable[tuple[str, str, int, bool]],
    before: SessionResult | None,
    effect: float,
    runs_auto: int | None,
    margin: float,
) -> list[str]:
    """The plan of the eval items ``(case name, case folder, run, two arms)``, from the earlier
    session ``before`` (None: stated defaults), to detect a Δ of ``effect``; ``runs_auto`` and
    ``margin``: ``--eval-runs auto``'s most runs (None: fixed runs) and ``--eval-margin``."""
    cases: dict[tuple[str, str], tuple[int, bool]] = {}
    for name, folder, run, two in items:
        runs, two_before = cases.get((name, folder), (0, False))
        cases[(name, folder)] = (max(runs, run), two_before or two)
    histories = _histories(before) if before is not None else {}
    plans = [
        plan_case(name, runs, two, histories.get((name, folder)), effect)
        for (name, folder), (runs, two) in cases.items()
    ]
    deltas = [c.aggregates.delta for c in before.cases] if before is not None else []
    suite = plan_suite(plans, [d for d in deltas if d is not None], effect)
    source = f"the session of {before.started_at}" if before is not None else "no earlier session"
    return _lines(plans, suite, effect, source) + _design_lines(plans, runs_auto, margin)


def _lines(plans: list[CasePlan], suite: SuitePlan, effect: float, source: str) -> list[str]:
    """A row per case (its variances, runs now and needed, cost and time), the cost of every
    case at its runs needed, and the cases the suite needs."""
    assumed = sum(1 for p in plans if not p.measured)
    lines = [
        f"eval plan (no agent started): runs per arm to detect a Δ of {effect:.2f} at 80% "
        f"power (95%, two-sided), from {source}"
        + (
            f"; {assumed} case(s) assume the worst-case variance {WORST_VARIANCE}"
            if assumed
            else ""
        )
    ]
    width = max(len("CASE"), *(len(p.name) for p in plans))
    lines.append(
        f"{'CASE'.ljust(width)}  VAR WITH  VAR W/OUT  RUNS NOW  RUNS NEEDED  COST      TIME"
    )
    for p in plans:
        lines.append(
            f"{p.name.ljust(width)}  {p.var_with:<8.3f}  {p.var_without:<9.3f}  "
            f"{p.runs_now:<8}  {p.runs_needed:<11}  ${p.cost:<8.2f}  {_duration(p.seconds)}"
        )
    total_cost = sum(p.cost for p in plans)
    total_time = sum(p.seconds for p in plans)
    tau = "between-case spread τ² " + (
        f"{suite.tau2:.3f} (measured)" if suite.tau_measured else "0 (assumed: no earlier Δ)"
    )
    needed = ", ".join(
        f"{'never' if c is None else c} case(s) at {r} runs/arm" for r, c in suite.cases_needed
    )
    lines += [
        f"every case at its runs needed: {sum(p.runs_needed * p.arms for p in plans)} run(s), "
        f"${total_cost:.2f}, {_duration(total_time)} in one process (divide by -n)",
        f"suite: {suite.cases} case(s) at {suite.runs_now} run(s)/arm detect a mean Δ of "
        f"{suite.detectable_now:.2f}; to detect {effect:.2f}: {needed} ({tau})",
    ]
    if any(not p.measured for p in plans) and source == "no earlier session":
        lines.append(
            f"assumed per run (no earlier session): ${DEFAULT_COST_USD:.2f}, {DEFAULT_SECONDS:.0f}s"
        )
    return lines


def _design_lines(plans: list[CasePlan], runs_auto: int | None, margin: float) -> list[str]:
    """What the session's design can decide at all, and its operating characteristics."""
    two_arm = [p for p in plans if p.arms == 2]
    if not two_arm:
        return []
    runs = runs_auto if runs_auto is not None else min(p.runs_now for p in two_arm)
    design = f"{'auto' if runs_auto is not None else 'fixed'}:{runs}"
    lines = [
        "operating characteristics (pass/fail runs, one case, computed exactly): the "
        "chance of the correct verdict and the expected runs per arm"
    ]
    lines += planning.operating_lines(design)
    if design not in planning.OPERATING:
        lines.append(
            f"({design}, the fewest runs of a case, is not in the table: "
            "bench/bench_operating_characteristics.py computes any design)"
        )
    smallest = planning.clearest_p(runs, auto=runs_auto is not None)
    why = planning.cannot_decide(runs, len(two_arm), smallest, decisions.FDR)
    if why is not None:
        lines.append(f"cannot decide: {why}")
    fewest = planning.equivalent_from(margin)
    if fewest is None or runs < fewest:
        lines.append(
            f"cannot decide: no case can be called equivalent within ±{margin:g} with fewer "
            f"than {fewest or decisions.MOST_RUNS} runs per arm"
        )
    return lines
