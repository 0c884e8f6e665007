"""The verdicts as the terminal says them (pure): the suite's mean Δ, the cases', each agent's,
and the false discovery rate control they were held to (the summary makes every line plain)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_plugin_evals.stats import (
    FDR,
    MOST_RUNS,
    VERDICTS,
    Decision,
    Interval,
    describe,
    new_case_interval,
)

if TYPE_CHECKING:
    from pytest_plugin_evals.reporting.compare import Comparison
    from pytest_plugin_evals.reporting.result import SessionResult

#: Names listed per verdict before "… (N more)".
SHOWN = 6


def _listed(entries: Sequence[str]) -> str:
    shown = ", ".join(entries[:SHOWN])
    more = len(entries) - SHOWN
    return shown + (f", … ({more} more)" if more > 0 else "")


def _case_entry(name: str, decision: Decision) -> str:
    if decision.fdr_withdrawn:
        return f"{name}: {decision.unadjusted} alone, not beyond the false discovery rate"
    if not decision.decided:
        more = decision.more_runs
        return f"{name}: " + (
            f"not within {MOST_RUNS} runs" if more is None else f"about {more} more run(s)"
        )
    return name


def family_line(named: Sequence[tuple[str, Decision]], what: str) -> str | None:
    """``cases: 1 better (clear-win), 1 inconclusive (coin-flip: about 12 more run(s)) — …``"""
    if not named:
        return None
    parts = []
    for verdict in VERDICTS:
        entries = [_case_entry(n, d) for n, d in named if d.verdict == verdict]
        if entries:
            parts.append(f"{len(entries)} {verdict} ({_listed(entries)})")
    withdrawn = sum(1 for _, d in named if d.fdr_withdrawn)
    held = (
        f"false discovery rate held at {FDR:.0%} over {len(named)} {what} (Benjamini–Hochberg"
        + (f"; {withdrawn} withdrawn to inconclusive)" if withdrawn else ")")
    )
    return f"{what}: " + ", ".join(parts) + " — " + held


def verdict_lines(result: SessionResult) -> list[str]:
    """What the session decided, on Δ (two arms only)."""
    if not result.two_arm:
        return []
    agg = result.aggregates
    lines = []
    named = [
        (c.label, c.aggregates.delta_decision)
        for c in result.cases
        if c.aggregates.delta_decision is not None
    ]
    decided = [(n, d) for n, d in named if d is not None]
    against = "BASE" if result.baseline else "W/OUT"
    head = f"verdicts (Δ = WITH − {against}, 95%, equivalent within ±{agg.margin:.2f})"
    if agg.mean_delta_decision is not None:
        suite = describe(agg.mean_delta_decision, "run(s) per arm in every case", "add cases")
        lines.append(f"{head}: suite mean Δ {suite}")
    elif decided:
        lines.append(f"{head}:")
    family = family_line(decided, "cases")
    if family:
        lines.append(family)
    new_case = new_case_delta(result)
    if new_case is not None:
        lines.append(
            f"a new case like these: Δ within [{new_case[0]:+.2f}, {new_case[1]:+.2f}] (95% "
            "prediction interval; the suite mean Δ's interval is of the mean, not of one case)"
        )
    agents = [
        f"{a.label} {describe(a.mean_delta_decision, 'run(s) per arm', 'add cases')}"
        for a in result.agents
        if a.mean_delta_decision is not None
    ]
    if agents:
        lines.append("agents' mean Δ: " + " · ".join(agents))
    return lines


def comparison_family(comparison: Comparison) -> str | None:
    """The comparison's inconclusive cases and the false discovery rate control, on one line."""
    named = [(c.name, c.decision) for c in comparison.cases if c.decision is not None]
    decided = [(n, d) for n, d in named if d is not None]
    return family_line(decided, "changes") if decided else None


def new_case_delta(result: SessionResult) -> Interval | None:
    """The 95% prediction interval of the Δ of one new case drawn like the session's cases
    (None with fewer than two cases with a Δ, or several agents: their cases are not one
    population)."""
    if result.agents:
        return None
    return new_case_interval(
        [c.aggregates.delta for c in result.cases if c.aggregates.delta is not None]
    )
