"""skill-creator's ``benchmark.json`` of a session (``references/schemas.md``): each graded run
of each eval, the mean, standard deviation, least and most of each configuration's pass rate,
time and tokens (as ``scripts/aggregate_benchmark.py`` computes them), the delta between the
two configurations, and notes: each eval's Δ with its 95% interval and verdict, and the runs
that could not be made, which no number counts."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pytest_plugin_evals.records import RunRecord
from pytest_plugin_evals.reporting.result import CaseResult, SessionResult
from pytest_plugin_evals.reporting.skill_creator import (
    configs,
    eval_cases,
    eval_ids,
    expectations,
    grading,
    tokens,
)

#: What wrote the notes (skill-creator's analyzer is a model; ours are computed).
ANALYZER = "pytest-plugin-evals (computed, no model)"


def stats(values: Sequence[float]) -> dict[str, float]:
    """Mean, sample standard deviation, least and most, rounded as skill-creator rounds."""
    if not values:
        return {"mean": 0.0, "stddev": 0.0, "min": 0.0, "max": 0.0}
    mean = sum(values) / len(values)
    var = sum((x - mean) ** 2 for x in values) / (len(values) - 1) if len(values) > 1 else 0.0
    return {
        "mean": round(mean, 4),
        "stddev": round(math.sqrt(var), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
    }


def benchmark_run(record: RunRecord, eval_id: int, name: str, config: str) -> dict[str, Any]:
    """One graded run as ``benchmark.json``'s ``runs[]`` holds it."""
    graded = grading(record)
    summary, metrics = graded["summary"], graded["execution_metrics"]
    return {
        "eval_id": eval_id,
        "eval_name": name,
        "configuration": config,
        "run_number": record.run,
        "result": {
            **summary,
            "time_seconds": round(record.result.duration_seconds or 0.0, 3),
            "tokens": tokens(record),
            "tool_calls": metrics["total_tool_calls"],
            "errors": metrics["errors_encountered"],
        },
        "expectations": expectations(record),
        "notes": graded["user_notes_summary"]["needs_review"],
    }


def run_summary(runs: Sequence[dict[str, Any]], order: Sequence[str]) -> dict[str, Any]:
    """Per configuration (in ``order``), the pass rate's, time's and tokens' numbers (tokens
    of the runs that report them); and the delta of the first two configurations' means."""
    summary: dict[str, Any] = {}
    for config in order:
        mine = [r["result"] for r in runs if r["configuration"] == config]
        summary[config] = {
            "pass_rate": stats([r["pass_rate"] for r in mine]),
            "time_seconds": stats([r["time_seconds"] for r in mine]),
            "tokens": stats([r["tokens"] for r in mine if r["tokens"] is not None]),
        }
    if len(order) >= 2:
        first, second = summary[order[0]], summary[order[1]]

        def delta(key: str) -> float:
            return float(first[key]["mean"] - second[key]["mean"])

        summary["delta"] = {
            "pass_rate": f"{delta('pass_rate'):+.2f}",
            "time_seconds": f"{delta('time_seconds'):+.1f}",
            "tokens": f"{delta('tokens'):+.0f}",
        }
    return summary


def case_note(case: CaseResult, eval_id: int) -> str | None:
    """An eval's Δ, its 95% interval and its verdict, as the session decided them."""
    agg = case.aggregates
    if agg.delta is None:
        return None
    shown = f"Eval {eval_id} ({case.label}): Δ {agg.delta:+.2f}"
    if agg.delta_interval is not None:
        low, high = agg.delta_interval
        shown += f" [{low:+.2f}, {high:+.2f}] (95%)"
    decision = agg.delta_decision
    if decision is not None:
        shown += f", {decision.verdict}"
        if decision.fdr_withdrawn and decision.unadjusted:
            shown += f" ({decision.unadjusted} alone, not beyond the false discovery rate)"
    return shown


def error_note(cases: Sequence[CaseResult]) -> str | None:
    """How many runs could not be made, by kind: none is a run of this benchmark."""
    kinds = Counter(str(r.result.infra_error) for c in cases for r in c.runs if not r.result.graded)
    if not kinds:
        return None
    listed = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
    return (
        f"{sum(kinds.values())} run(s) could not be made ({listed}): infrastructure errors, "
        "left out of the runs and of every number here"
    )


def benchmark(result: SessionResult) -> dict[str, Any]:
    """The session's ``benchmark.json``."""
    cases = eval_cases(result)
    ids = eval_ids(cases)
    runs: list[dict[str, Any]] = []
    order: list[str] = []
    for case, eval_id in zip(cases, ids, strict=True):
        for config, arm in zip(configs(case), (case.with_runs, case.without_runs), strict=True):
            graded = [r for r in arm if r.result.graded]
            if graded and config not in order:
                order.append(config)
            runs.extend(benchmark_run(r, eval_id, case.label, config) for r in graded)
    order.sort(key=lambda c: c not in ("with_skill", "new_skill"))
    notes = [n for c, i in zip(cases, ids, strict=True) if (n := case_note(c, i))]
    if (errors := error_note(cases)) is not None:
        notes.append(errors)
    if result.agents:
        notes.append("the runs of every agent of the session are pooled in run_summary")
    per_config = Counter((r["eval_id"], r["configuration"]) for r in runs)
    return {
        "metadata": {
            "skill_name": ", ".join(p.name for p in result.suite.plugins) or "",
            "skill_path": ", ".join(str(p.path) for p in result.suite.plugins),
            "executor_model": _models(cases) or result.suite.agent,
            "analyzer_model": ANALYZER,
            "timestamp": result.started_at,
            "evals_run": sorted(set(ids)),
            "runs_per_configuration": max(per_config.values(), default=0),
        },
        "runs": runs,
        "run_summary": run_summary(runs, order),
        "notes": notes,
    }


def _models(cases: Sequence[CaseResult]) -> str:
    return ", ".join(sorted({c.case.model for c in cases if c.case.model}))
