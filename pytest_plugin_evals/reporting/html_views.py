"""What the HTML report draws beyond the result's own fields (pure).

Each case's row of the overview (its charts, whether its Δ is significant, whether its runs
disagree), the spread of the runs' latency and cost, and the comparison with an earlier session.
The comparison is read from the result document's ``comparison`` (a dict), leniently, so the
page shows what a document holds, whichever version wrote it. Charts come from
:mod:`~pytest_plugin_evals.reporting.charts`, which escapes every text it draws: they are
handed to the template as markup.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from pytest_plugin_evals.records import interval_from_json, opt_number
from pytest_plugin_evals.reporting import charts
from pytest_plugin_evals.reporting.charts import Estimate, Interval, Series
from pytest_plugin_evals.reporting.compare import decision_from_json
from pytest_plugin_evals.reporting.result import CaseResult, SessionResult
from pytest_plugin_evals.scoring import Timing
from pytest_plugin_evals.stats import describe

#: Up to this many cases, their sections start unfolded; past it, folded (the overview
#: table, its charts and the filters are the way in).
OPEN_CASES = 20

#: The comparison's verdicts, in the order they are counted and listed.
VERDICTS = ("worse", "better", "equivalent", "new", "gone", "not run", "inconclusive")
#: The verdicts of documents written before the three-way verdicts.
OLD_VERDICTS = {"improved": "better", "regressed": "worse", "unchanged": "inconclusive"}


def _estimate(value: float | None, interval: Interval | None) -> Estimate | None:
    return None if value is None else Estimate(value, interval)


def interval_pts(interval: Interval | None) -> str:
    """A difference's interval in points, ``+3.1 to +20.5`` (empty without one)."""
    if interval is None:
        return ""
    low, high = (f"{v * 100:+.1f}" for v in interval)
    return f"{low} to {high}"


def interval_pct(interval: Interval | None) -> str:
    """A score's interval in percent, ``51% to 88%`` (empty without one)."""
    if interval is None:
        return ""
    return f"{interval[0] * 100:.0f}% to {interval[1] * 100:.0f}%"


def timing_text(t: Timing) -> str:
    """``latency p50 4.1s · p95 8.0s · tokens 12,300 in · 3,100 out · 3.2 turns per run``."""
    parts = []
    if t.latency_p50 is not None and t.latency_p95 is not None:
        parts.append(f"latency p50 {t.latency_p50:.1f}s · p95 {t.latency_p95:.1f}s")
    if t.input_tokens is not None or t.output_tokens is not None:
        parts.append(f"tokens {t.input_tokens or 0:,} in · {t.output_tokens or 0:,} out")
    if t.turns_mean is not None and t.runs:
        parts.append(f"{t.turns_mean:.1f} turns per run")
    return " · ".join(parts)


@dataclass(frozen=True)
class CaseView:
    """One case as the overview table and its section show it."""

    index: int
    case: CaseResult
    score_chart: Markup
    delta_chart: Markup | None
    #: ``up`` or ``down`` when Δ's interval excludes 0, else empty.
    significant: str
    #: The arms whose runs disagree.
    unstable: tuple[str, ...]
    #: Δ's interval in points (two arms), else the score's in percent.
    interval: str
    timing: str
    #: ``(label, chart)``: the case's runs on the suite's latency and cost scales.
    strips: tuple[tuple[str, Markup], ...]

    @property
    def anchor(self) -> str:
        return f"case-{self.index}"


@dataclass(frozen=True)
class Overview:
    """The overview table's cases, scales and foot, and the runs' distributions."""

    cases: tuple[CaseView, ...]
    score_axis: Markup
    delta_axis: Markup | None
    mean_row: Markup | None
    mean_interval: str
    mean_significant: str
    #: ``(caption, chart)``: how latency and cost spread over the runs.
    distributions: tuple[tuple[str, Markup], ...]
    timing: str
    significant_up: int
    significant_down: int
    open_cases: bool


def _arm_series(
    case_runs: Sequence[tuple[str, str, Sequence[Any]]], value: str
) -> tuple[Series, ...]:
    out = []
    for label, cls, records in case_runs:
        values = tuple(
            float(v)
            for r in records
            if r.result.graded and (v := getattr(r.result, value)) is not None
        )
        out.append(Series(label, cls, values))
    return tuple(out)


def _arms(result: SessionResult, cases: Sequence[CaseResult]) -> list[tuple[str, str, list[Any]]]:
    """``(label, class, runs)`` of each arm over ``cases``."""
    if not result.two_arm:
        return [("runs", "with", [r for c in cases for r in c.with_runs])]
    second = "baseline plugin" if result.baseline else "without plugin"
    return [
        ("with plugin", "with", [r for c in cases for r in c.with_runs]),
        (second, "without", [r for c in cases for r in c.without_runs]),
    ]


def _top(series: Sequence[Series]) -> float:
    return max((v for s in series for v in s.values if math.isfinite(v)), default=0.0)


def case_view(
    index: int,
    case: CaseResult,
    *,
    threshold: float,
    two_arm: bool,
    latency_top: float,
    cost_top: float,
    baseline: bool = False,
) -> CaseView:
    a = case.aggregates
    score_chart = charts.score_row(
        case.name,
        _estimate(a.score, a.score_interval),
        _estimate(a.score_without, a.score_without_interval),
        threshold=threshold,
        two_arm=two_arm,
        second="baseline plugin" if baseline else "without plugin",
    )
    delta_chart = None
    significant = ""
    if two_arm:
        delta = _estimate(a.delta, a.delta_interval)
        delta_chart = charts.delta_row(case.name, delta, a.delta_significant, note=a.delta_note)
        significant = charts.significance(a.delta_interval, a.delta_significant)
    arms: list[tuple[str, str, Sequence[Any]]] = [("runs", "with", case.with_runs)]
    if case.two_arm:
        arms = [
            ("with plugin", "with", case.with_runs),
            ("baseline plugin" if baseline else "without plugin", "without", case.without_runs),
        ]
    latency = _arm_series(arms, "duration_seconds")
    cost = _arm_series(arms, "cost_usd")
    strips: list[tuple[str, Markup]] = []
    if any(s.values for s in latency):
        chart = charts.strip(f"{case.name}: latency per run", latency, latency_top, charts.seconds)
        strips.append(("latency", Markup(chart)))
    if any(s.values for s in cost):
        chart = charts.strip(f"{case.name}: cost per run", cost, cost_top, charts.dollars)
        strips.append(("cost", Markup(chart)))
    return CaseView(
        index=index,
        case=case,
        score_chart=Markup(score_chart),
        delta_chart=None if delta_chart is None else Markup(delta_chart),
        significant=significant,
        unstable=a.unstable,
        interval=interval_pts(a.delta_interval) if two_arm else interval_pct(a.score_interval),
        timing=timing_text(a.timing),
        strips=tuple(strips),
    )


def _signed_points(value: float) -> str:
    return f"{value * 100:+.0f}" if value else "0"


def delta_axis(title: str) -> Markup:
    """The scale of a Δ column, -100 to +100 points."""
    ticks = (-1.0, -0.5, 0.0, 0.5, 1.0)
    return Markup(charts.axis(charts.DELTAS, ticks, _signed_points, title))


def overview(result: SessionResult) -> Overview:
    """Everything the page draws for the session's cases."""
    two_arm, agg = result.two_arm, result.aggregates
    arms = _arms(result, result.cases)
    latency = _arm_series(arms, "duration_seconds")
    cost = _arm_series(arms, "cost_usd")
    views = tuple(
        case_view(
            i,
            c,
            threshold=result.threshold,
            two_arm=two_arm,
            latency_top=_top(latency),
            cost_top=_top(cost),
            baseline=result.baseline,
        )
        for i, c in enumerate(result.cases)
    )
    distributions: list[tuple[str, Markup]] = []
    if any(s.values for s in latency):
        t = agg.timing
        markers = [
            (label, value)
            for label, value in (("p50", t.latency_p50), ("p95", t.latency_p95))
            if value is not None
        ]
        chart = charts.histogram("Latency per run", latency, charts.seconds, markers=markers)
        distributions.append(("Latency per run (seconds)", Markup(chart)))
    if any(s.values for s in cost):
        every = [v for s in cost for v in s.values]
        marker = ("mean", sum(every) / len(every))
        chart = charts.histogram("Cost per run", cost, charts.dollars, unit=0.01, markers=[marker])
        distributions.append(("Cost per run (USD, judges included)", Markup(chart)))
    mean_row = None
    if two_arm and agg.mean_delta is not None:
        mean_row = Markup(
            charts.mean_row(
                "Suite",
                Estimate(agg.mean_delta, agg.mean_delta_interval),
                agg.mean_delta_significant,
            )
        )
    return Overview(
        cases=views,
        score_axis=Markup(
            charts.axis(charts.SCORES, (0.0, 0.5, 1.0), charts.pct, "Score, 0% to 100%")
        ),
        delta_axis=delta_axis("Δ in points, -100 to +100") if two_arm else None,
        mean_row=mean_row,
        mean_interval=interval_pts(agg.mean_delta_interval),
        mean_significant=charts.significance(agg.mean_delta_interval, agg.mean_delta_significant),
        distributions=tuple(distributions),
        timing=timing_text(agg.timing),
        significant_up=sum(1 for v in views if v.significant == "up"),
        significant_down=sum(1 for v in views if v.significant == "down"),
        open_cases=len(views) <= OPEN_CASES,
    )


# -- the comparison with an earlier session ------------------------------------------------


@dataclass(frozen=True)
class ChangeView:
    name: str
    dir: str
    before: float | None
    after: float | None
    change: float | None
    interval: str
    delta_before: float | None
    delta_after: float | None
    verdict: str
    chart: Markup
    #: What the verdict says (its p-value, or the runs that would likely decide it).
    note: str = ""


@dataclass(frozen=True)
class ComparisonView:
    against: str
    against_started_at: str
    counts: tuple[tuple[str, int], ...]
    regressed: bool
    #: The cases that changed (regressed first), then those that did not.
    changed: tuple[ChangeView, ...]
    unchanged: tuple[ChangeView, ...]
    #: The scale of the change column.
    axis: Markup


def _note(doc: Any) -> str:
    decision = decision_from_json(doc)
    return "" if decision is None else describe(decision)


def comparison_view(document: Mapping[str, Any]) -> ComparisonView | None:
    """The document's ``comparison``, as the page shows it (None when it has none)."""
    doc = document.get("comparison")
    if not isinstance(doc, Mapping):
        return None
    changes = []
    for c in doc.get("cases") or ():
        if not isinstance(c, Mapping):
            continue
        verdict = OLD_VERDICTS.get(str(c.get("verdict")), str(c.get("verdict")))
        verdict = verdict if verdict in VERDICTS else "inconclusive"
        change, interval = opt_number(c.get("change")), interval_from_json(c.get("changeInterval"))
        name = str(c.get("name") or "")
        changes.append(
            ChangeView(
                name=name,
                dir=str(c.get("dir") or ""),
                before=opt_number(c.get("before")),
                after=opt_number(c.get("after")),
                change=change,
                interval=interval_pts(interval),
                delta_before=opt_number(c.get("deltaBefore")),
                delta_after=opt_number(c.get("deltaAfter")),
                verdict=verdict,
                note=_note(c.get("decision")),
                chart=Markup(
                    charts.delta_row(
                        name,
                        _estimate(change, interval),
                        verdict in ("better", "worse"),
                        label="change",
                    )
                ),
            )
        )
    counted = dict.fromkeys(VERDICTS, 0)
    for change_view in changes:
        counted[change_view.verdict] += 1
    raw = doc.get("counts")
    if isinstance(raw, Mapping):  # the document's own counts, where it gives them
        for verdict in VERDICTS:
            number = opt_number(raw.get(verdict))
            if number is not None:
                counted[verdict] = int(number)
    order = {v: i for i, v in enumerate(VERDICTS)}
    changes.sort(key=lambda c: order[c.verdict])  # stable: the document's order within a verdict
    regressed = doc.get("regressed")
    return ComparisonView(
        against=str(doc.get("against") or ""),
        against_started_at=str(doc.get("againstStartedAt") or ""),
        counts=tuple(counted.items()),
        regressed=regressed if isinstance(regressed, bool) else counted["worse"] > 0,
        changed=tuple(c for c in changes if c.verdict != "inconclusive"),
        unchanged=tuple(c for c in changes if c.verdict == "inconclusive"),
        axis=delta_axis("Change in points, -100 to +100"),
    )
