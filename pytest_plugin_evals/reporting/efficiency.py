"""The plugin's effect on what a run costs: cost, tokens, turns and time with/without.

Per case and for the suite, from the graded runs of the cases with two arms (trigger queries
aside), through :mod:`pytest_plugin_evals.stats.efficiency`: each arm's mean and geometric
mean, the ratio with/without of the geometric means and its 95% interval. Computed from the
runs wherever a result is shown or written, so a merged or read-back result has it too.
:func:`suite_figures` is the suite's as plain data (for any report that shows it);
:func:`efficiency_json`, :func:`efficiency_line` and :func:`case_table` / :func:`suite_table`
are its JSON, its terminal line and the HTML report's tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_plugin_evals.model import RunResult
from pytest_plugin_evals.records import JSONObject, RunRecord
from pytest_plugin_evals.reporting.result import CaseResult, SessionResult
from pytest_plugin_evals.stats.efficiency import MEASURES, ArmFigures, Ratio, pooled, ratio


@dataclass(frozen=True)
class Efficiency:
    """The measures of a case or a suite, in :data:`MEASURES`' order, and its cases' count."""

    ratios: tuple[Ratio, ...]
    cases: int = 1

    def of(self, measure: str) -> Ratio:
        return next(r for r in self.ratios if r.measure == measure)


def run_value(run: RunResult, measure: str) -> object:
    """What ``run`` reports of ``measure``, as given (hostile: any value; None when not
    reported). Cost is the agent's own (and its mock players'), not the judge's, and only
    when the agent reported a price; 0 turns is how a run keeps turns it did not report."""
    if measure == "cost":
        return run.cost_usd - run.judge_cost_usd if run.cost_known else None
    if measure == "turns" and run.turns == 0:
        return None
    return {
        "inputTokens": run.input_tokens,
        "outputTokens": run.output_tokens,
        "turns": run.turns,
        "duration": run.duration_seconds,
    }[measure]


def _graded(runs: Sequence[RunRecord]) -> list[RunResult]:
    return [r.result for r in runs if r.result.graded]


def case_efficiency(case: CaseResult) -> Efficiency | None:
    """A case's efficiency with/without (None: one arm, or a trigger query)."""
    if not case.two_arm or case.trigger_query:
        return None
    with_runs, without_runs = _graded(case.with_runs), _graded(case.without_runs)
    return Efficiency(
        tuple(
            ratio(
                key,
                (run_value(r, key) for r in with_runs),
                (run_value(r, key) for r in without_runs),
            )
            for key, _, _ in MEASURES
        )
    )


def suite_efficiency(cases: Sequence[CaseResult]) -> Efficiency | None:
    """The suite's efficiency, its cases pooled as clusters (None without a two-arm case)."""
    each = [e for e in (case_efficiency(c) for c in cases) if e is not None]
    if not each:
        return None
    return Efficiency(
        tuple(pooled(key, [e.of(key) for e in each]) for key, _, _ in MEASURES), len(each)
    )


def suite_figures(result: SessionResult) -> JSONObject | None:
    """The suite's efficiency as plain data (the JSON document's ``aggregates.efficiency``),
    None when no case ran two arms."""
    found = suite_efficiency(result.cases)
    return None if found is None else {"cases": found.cases, **efficiency_json(found)}


def _arm_json(arm: ArmFigures) -> JSONObject:
    return {"mean": arm.mean, "geoMean": arm.geo_mean, "runs": arm.runs, "leftOut": arm.left_out}


def efficiency_json(found: Efficiency) -> JSONObject:
    """``{measure: {with, without, ratio, ratioInterval}}`` (and ``cases`` for a suite)."""
    doc: JSONObject = {
        r.measure: {
            "with": _arm_json(r.with_arm),
            "without": _arm_json(r.without_arm),
            "ratio": r.ratio,
            "ratioInterval": None if r.interval is None else [r.interval[0], r.interval[1]],
        }
        for r in found.ratios
    }
    return doc


def _times(x: float) -> str:
    return f"×{x:.3g}" if x < 1000 else f"×{x:.2e}"


def ratio_text(r: Ratio) -> str:
    """``×1.42 [1.10, 1.83]``, ``×1.42`` without an interval, ``—`` without a ratio."""
    if r.ratio is None:
        return "—"
    if r.interval is None:
        return _times(r.ratio)
    return f"{_times(r.ratio)} [{r.interval[0]:.3g}, {r.interval[1]:.3g}]"


def efficiency_line(result: SessionResult) -> str | None:
    """``Efficiency (with vs without): cost ×1.42 [1.10, 1.83], output tokens ×1.30 [...] …``
    over the measures both arms reported, and how many of their values were left out (None
    when there is nothing to compare)."""
    found = suite_efficiency(result.cases)
    if found is None:
        return None
    second = "baseline" if result.baseline else "without"
    shown = [(label, r) for key, label, _ in MEASURES if (r := found.of(key)).ratio is not None]
    if not shown:
        return None
    left = sum(r.with_arm.left_out + r.without_arm.left_out for _, r in shown)
    tail = f" ({left} value(s) unreported or unusable, left out)" if left else ""
    parts = [f"{label} {ratio_text(r)}" for label, r in shown]
    return f"Efficiency (with vs {second}): " + ", ".join(parts) + tail


def case_table(case: CaseResult) -> dict[str, Any] | None:
    """A case's efficiency table for the HTML report (None: one arm, or a trigger query)."""
    found = case_efficiency(case)
    return None if found is None else {"cases": 1, "rows": efficiency_rows(found)}


def suite_table(cases: Sequence[CaseResult]) -> dict[str, Any] | None:
    """The suite's efficiency table for the HTML report (None without a two-arm case)."""
    found = suite_efficiency(cases)
    return None if found is None else {"cases": found.cases, "rows": efficiency_rows(found)}


def efficiency_rows(found: Efficiency) -> list[dict[str, str]]:
    """The HTML table's rows: measure, each arm's mean and geometric mean and runs, ratio."""
    rows = []
    for key, label, _ in MEASURES:
        r = found.of(key)
        rows.append(
            {
                "measure": label,
                "with": _arm_text(r.with_arm, key),
                "without": _arm_text(r.without_arm, key),
                "ratio": ratio_text(r),
            }
        )
    return rows


def _arm_text(arm: ArmFigures, measure: str) -> str:
    if arm.mean is None or arm.geo_mean is None:
        return "—" + (f" ({arm.left_out} left out)" if arm.left_out else "")
    unit = {"cost": "$", "duration": "s"}.get(measure, "")
    value = f"{arm.geo_mean:.4g}"
    mean = f"{arm.mean:.4g}"
    shown = f"${value} (mean ${mean})" if unit == "$" else f"{value}{unit} (mean {mean}{unit})"
    left = f", {arm.left_out} left out" if arm.left_out else ""
    return f"{shown} · {arm.runs} run(s){left}"
