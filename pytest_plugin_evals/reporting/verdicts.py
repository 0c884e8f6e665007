"""The session's verdicts: each case's Δ under false discovery rate control, the suite's mean
Δ and each agent's (pure; the rules are :mod:`pytest_plugin_evals.stats.decisions`')."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from statistics import median
from typing import TYPE_CHECKING

from pytest_plugin_evals.scoring import CaseAggregates
from pytest_plugin_evals.stats import Decision, decisions

if TYPE_CHECKING:
    from pytest_plugin_evals.reporting.result import CaseResult, SessionResult


def with_case_verdicts(cases: Sequence[CaseResult], q: float = decisions.FDR) -> list[CaseResult]:
    """``cases`` with their Δ verdicts held together to the false discovery rate ``q``
    (Benjamini–Hochberg over the cases that have a Δ)."""
    adjusted = decisions.control_fdr([c.aggregates.delta_decision for c in cases], q)
    return [
        c
        if decision is c.aggregates.delta_decision
        else replace(c, aggregates=replace(c.aggregates, delta_decision=decision))
        for c, decision in zip(cases, adjusted, strict=True)
    ]


def _runs_per_arm(cases: Sequence[CaseResult]) -> int:
    counts = [
        min(
            sum(1 for r in c.with_runs if r.result.graded),
            sum(1 for r in c.without_runs if r.result.graded),
        )
        for c in cases
        if c.aggregates.delta is not None
    ]
    return round(median(counts)) if counts else 0


def mean_delta_decision(cases: Sequence[CaseResult], margin: float) -> Decision | None:
    """The verdict on the mean Δ of ``cases`` (its cluster-robust interval)."""
    scored: list[CaseAggregates] = [c.aggregates for c in cases if c.aggregates.delta is not None]
    deltas = [a.delta for a in scored if a.delta is not None]
    bounds = [a.delta_interval for a in scored if a.delta_interval is not None]
    means = [
        (a.score, a.score_without)
        for a in scored
        if a.score is not None and a.score_without is not None
    ]
    return decisions.decide_mean(deltas, bounds, margin, _runs_per_arm(cases), means)


def verdict_gate(result: SessionResult, gate: str) -> str | None:
    """Why ``--eval-gate`` fails ``result`` (one line), or None when it passes.

    ``not-worse``: no case's Δ, not the suite's mean Δ and no change since the compared
    session is ``worse``. ``better``: the suite's mean Δ is ``better``."""
    agg = result.aggregates
    second = "the baseline arm" if result.baseline else "the without arm"
    if gate == "better":
        decision = agg.mean_delta_decision
        if decision is not None and decision.verdict == "better":
            return None
        said = "has no Δ (one arm)" if decision is None else f"is {decision.verdict}"
        return f"--eval-gate better: the suite's mean Δ {said}, not better than {second}"
    problems = []
    worse = [c.label for c in result.cases if _worse(c.aggregates.delta_decision)]
    if worse:
        problems.append(f"{len(worse)} case(s) worse than {second}: " + ", ".join(worse))
    if _worse(agg.mean_delta_decision):
        problems.append(f"the suite's mean Δ is worse than {second}")
    comparison = result.comparison
    if comparison is not None and comparison.regressions:
        since = comparison.against_started_at or comparison.against
        names = ", ".join(c.name for c in comparison.regressions)
        problems.append(f"{len(comparison.regressions)} case(s) worse since {since}: {names}")
    return "--eval-gate not-worse: " + "; ".join(problems) if problems else None


def _worse(decision: Decision | None) -> bool:
    return decision is not None and decision.verdict == "worse"
