"""Trigger accuracy (``trigger_eval.json``): does each skill fire when it should, and only then?

A query's trigger rate is the share of its runs in which the skill fired; skill-creator's
verdict: a should-trigger query triggered when the rate is at least 0.5, a should-not query
when it is at least 0.5 too (so it is right when the rate is below 0.5). Per skill, the queries
make a confusion matrix (TP, FP, FN, TN), and precision, recall, F1 and accuracy, each with a
95% interval (Wilson for the three proportions; for F1 Wilson's interval of the share of TP
among the queries it counts, mapped to F1: see :func:`stats.intervals.f1_interval`).
Runs that could not be made (the agent did not start, a rejected credential) are errors, kept
out of every count.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_plugin_evals.model import GraderSpec, fired_skill, names_skill
from pytest_plugin_evals.records import CaseInfo
from pytest_plugin_evals.reporting.trigger_change import changes
from pytest_plugin_evals.stats import Interval, f1_interval, wilson

#: skill-creator's cut: a query triggered when its rate is at least this.
TRIGGER_RATE = 0.5


def _spec(case: CaseInfo) -> GraderSpec | None:
    return next((g for g in case.graders if g.type == "skill_fired"), None)


def trigger_threshold(case: CaseInfo) -> float:
    """The case threshold that gives skill-creator's verdict on the mean of right runs: a
    should-not query passes only when its rate is below 0.5 (its score above 0.5)."""
    spec = _spec(case)
    should = bool(spec.config.get("should_trigger")) if spec is not None else True
    return TRIGGER_RATE if should else TRIGGER_RATE + 1e-6


@dataclass(frozen=True)
class QueryResult:
    query: str
    should_trigger: bool
    runs: int
    fired: int
    errors: int
    #: Other skills that fired in its runs, by name, with how many runs.
    instead: dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> float | None:
        return self.fired / self.runs if self.runs else None

    @property
    def triggered(self) -> bool | None:
        rate = self.rate
        return None if rate is None else rate >= TRIGGER_RATE

    @property
    def right(self) -> bool | None:
        t = self.triggered
        return None if t is None else t == self.should_trigger


@dataclass(frozen=True)
class SkillTriggers:
    skill: str
    queries: tuple[QueryResult, ...]
    #: In an A/B: the same queries in the baseline arm (the plugin at ``git:REF``), in order.
    baseline: SkillTriggers | None = None

    def counts(self) -> dict[str, int]:
        c = Counter[str]()
        for q in self.queries:
            if q.triggered is None:
                continue
            key = (
                ("tp" if q.triggered else "fn")
                if q.should_trigger
                else ("fp" if q.triggered else "tn")
            )
            c[key] += 1
        return {k: c[k] for k in ("tp", "fp", "fn", "tn")}

    def metrics(self) -> dict[str, tuple[float | None, Interval | None]]:
        m = self.counts()
        tp, fp, fn, tn = m["tp"], m["fp"], m["fn"], m["tn"]
        return {
            "precision": (_ratio(tp, tp + fp), wilson(tp, tp + fp)),
            "recall": (_ratio(tp, tp + fn), wilson(tp, tp + fn)),
            "f1": (_f1(tp, fp, fn), f1_interval(tp, fp, fn)),
            "accuracy": (_ratio(tp + tn, tp + fp + fn + tn), wilson(tp + tn, tp + fp + fn + tn)),
        }

    def instead(self) -> dict[str, int]:
        """Sibling skills that fired, and in how many runs, over every query."""
        total = Counter[str]()
        for q in self.queries:
            total.update(q.instead)
        return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))

    @property
    def errors(self) -> int:
        return sum(q.errors for q in self.queries)


def _ratio(a: int, b: int) -> float | None:
    return a / b if b else None


def _f1(tp: int, fp: int, fn: int) -> float | None:
    return 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else None


def _input(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def cases_counted(cases: Sequence[Any], agents: int) -> str:
    """``5 case(s) + 20 trigger queries`` of a session's cases (:class:`CaseResult`): a
    trigger query is trigger accuracy, its own table, never a case; under several agents a
    case on each agent is a row: ``5 case(s) × 2 agent(s)``."""
    own = [c for c in cases if not c.trigger_query]
    counted = f"{len(own)} case(s)"
    if agents:
        rows = len({(c.case.suite_root, c.case.path, c.name) for c in own})
        counted = f"{rows} case(s) × {agents} agent(s)"
    if queries := len(cases) - len(own):
        counted += f" + {queries} trigger quer{'y' if queries == 1 else 'ies'}"
    return counted


def trigger_results(cases: Sequence[Any]) -> tuple[SkillTriggers, ...]:
    """The trigger results of a session's cases (:class:`CaseResult`), skill by skill; in an
    A/B (``--eval-baseline-plugin``) each skill also has the baseline arm's (``baseline``)."""
    by_skill: dict[str, list[tuple[QueryResult, QueryResult | None]]] = {}
    for case in cases:
        spec = _spec(case.case)
        if case.case.source != "trigger_eval" or spec is None:
            continue
        skill = str(spec.config.get("skill") or "")
        before = _query(case, spec, case.without_runs) if case.baseline else None
        by_skill.setdefault(skill, []).append((_query(case, spec, case.with_runs), before))
    found = []
    for skill, pairs in sorted(by_skill.items()):
        baseline = None
        if any(b is not None for _, b in pairs):  # a query without baseline runs: not counted
            empty = [QueryResult(a.query, a.should_trigger, 0, 0, 0) for a, _ in pairs]
            baseline = SkillTriggers(
                skill, tuple(b or e for (_, b), e in zip(pairs, empty, strict=True))
            )
        found.append(SkillTriggers(skill, tuple(a for a, _ in pairs), baseline))
    return tuple(found)


def _query(case: Any, spec: GraderSpec, records: Sequence[Any]) -> QueryResult:
    """One query's result over the runs of one arm."""
    skill = str(spec.config.get("skill") or "")
    folder = str(spec.config.get("folder") or skill)
    runs = fired = errors = 0
    instead = Counter[str]()
    for record in records:
        result = record.result
        if result.infra_error or not result.graded:
            errors += 1
            continue
        runs += 1
        found = [
            f
            for c in result.tool_call_list
            if (f := fired_skill(c.name, _input(c.input), c.is_error)) is not None
        ]
        fired += any(names_skill(f, skill, folder) for f in found)
        instead.update({f[:80] for f in found if not names_skill(f, skill, folder)})
    return QueryResult(
        case.case.prompt, bool(spec.config.get("should_trigger")), runs, fired, errors,
        dict(instead),
    )  # fmt: skip


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _interval(interval: Interval | None) -> str:
    return "" if interval is None else f" [{interval[0]:.2f}, {interval[1]:.2f}]"


def _shown(value: float | None, interval: Interval | None) -> str:
    return f"{_num(value)}{_interval(interval)}".ljust(17)


def _signed(value: float | None, interval: Interval | None) -> str:
    if value is None:
        return "—"
    shown = "" if interval is None else f" [{interval[0]:+.2f}, {interval[1]:+.2f}]"
    return f"{value:+.2f}{shown}"


def _matrix(skill: SkillTriggers) -> str:
    m = skill.counts()
    return f"TP {m['tp']} FP {m['fp']} FN {m['fn']} TN {m['tn']}" + (
        f" · {skill.errors} run(s) not made (errors, not counted)" if skill.errors else ""
    )


def trigger_lines(results: Sequence[SkillTriggers], before: str = "the baseline") -> list[str]:
    """The terminal's trigger section: one block per skill; in an A/B each number before
    (``before`` names the baseline) → after, and the difference with its interval."""
    lines: list[str] = []
    for skill in results:
        lines.append(f"TRIGGERS {skill.skill}: {len(skill.queries)} queries · {_matrix(skill)}")
        changed = changes(skill, skill.baseline)
        if changed is None or skill.baseline is None:
            lines.append(
                "  "
                + " · ".join(
                    f"{name} {_num(value)}{_interval(interval)}"
                    for name, (value, interval) in skill.metrics().items()
                )
            )
        else:  # each line under 80 columns
            lines.append(f"  before ({before}): {_matrix(skill.baseline)}")
            lines.append("  before → after, Δ = after − before (95% intervals)")
            for name, c in changed.items():
                lines.append(
                    f"  {name:<9} {_shown(c.before, c.before_interval)} → "
                    f"{_shown(c.after, c.after_interval)} Δ {_signed(c.difference, c.interval)}"
                )
        instead = skill.instead()
        if instead:
            lines.append(
                "  fired instead: " + ", ".join(f"{k} ({v} run(s))" for k, v in instead.items())
            )
        wrong = [q for q in skill.queries if q.right is False]
        for q in wrong[:10]:
            what = "should trigger" if q.should_trigger else "should not trigger"
            lines.append(f"  ✗ {what}, rate {q.fired}/{q.runs}: {q.query[:80]}")
    return lines


def trigger_json(results: Sequence[SkillTriggers]) -> list[dict[str, Any]]:
    """The JSON document's ``triggers`` section; in an A/B each skill's ``baseline`` holds the
    same numbers for the baseline arm and the ``difference`` (after − before) of each."""
    out = []
    for skill in results:
        entry = {"skill": skill.skill, **_numbers(skill)}
        changed = changes(skill, skill.baseline)
        if changed is not None and skill.baseline is not None:
            entry["baseline"] = {
                **_numbers(skill.baseline),
                "difference": {
                    name: {
                        "value": c.difference,
                        "interval": list(c.interval) if c.interval else None,
                    }
                    for name, c in changed.items()
                },
            }
        out.append(entry)
    return out


def _numbers(skill: SkillTriggers) -> dict[str, Any]:
    """One arm's numbers, as the document holds them."""
    metrics = {
        name: {"value": value, "interval": list(interval) if interval else None}
        for name, (value, interval) in skill.metrics().items()
    }
    return {
        "matrix": skill.counts(),
        **metrics,
        "errors": skill.errors,
        "firedInstead": skill.instead(),
        "queries": [
            {
                "query": q.query,
                "shouldTrigger": q.should_trigger,
                "runs": q.runs,
                "fired": q.fired,
                "rate": q.rate,
                "triggered": q.triggered,
                "errors": q.errors,
                "firedInstead": q.instead,
            }
            for q in skill.queries
        ],
    }
