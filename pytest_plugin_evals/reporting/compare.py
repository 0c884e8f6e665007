"""A session compared with an earlier one, case by case (pure).

Cases are matched by name and by their folder relative to the suite root. For each, the
*change* is the after score minus the before score (with-arm scores, the means of the graded
runs) with its 95% interval, from the two sessions' run scores (Newcombe's, see
:mod:`pytest_plugin_evals.stats`). The verdict (:mod:`pytest_plugin_evals.stats.decisions`), held
with the other cases' to a 5% false discovery rate:

* ``better`` / ``worse``: the change's interval lies wholly above / below 0 (beyond noise);
* ``equivalent``: it lies within ``±margin``;
* ``inconclusive``: none of these (or a side has no graded run, so there is nothing to compare);
* ``new``: only this session ran the case; ``gone``: only the earlier one did;
* ``not run``: the earlier one ran it and it is in the suite, but this session did not select
  it (``-k``, ``-m``, ``--eval-case`` …).

A case whose graders differ between the two sessions (a grader added, removed, or its type,
options, weight, arm or rubric changed) is marked ``graders_changed``: its change measures the
graders' change as well as the plugin's.

Documents written before the verdicts had three words for the first four: ``improved``,
``regressed`` and ``unchanged`` are read as ``better``, ``worse`` and ``inconclusive``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.records import JSONObject, opt_number
from pytest_plugin_evals.scoring import clean, mean
from pytest_plugin_evals.stats import Decision, Interval, decisions, difference_interval

if TYPE_CHECKING:  # the document module holds a Comparison: it imports this one
    from pytest_plugin_evals.reporting.result import CaseResult, SessionResult

#: Every verdict, in the order counts are given.
VERDICTS = ("better", "worse", "equivalent", "inconclusive", "new", "gone", "not run")
#: The verdicts of documents written before the three-way verdicts.
OLD_VERDICTS = {"improved": "better", "regressed": "worse", "unchanged": "inconclusive"}


@dataclass(frozen=True)
class CaseChange:
    """One case's score before and after, the change and its verdict."""

    name: str
    #: The case folder relative to its suite root (``.`` for a suite file's cases).
    dir: str
    before: float | None
    after: float | None
    change: float | None
    change_interval: Interval | None
    delta_before: float | None
    delta_after: float | None
    verdict: str
    #: The verdict's p-value and what would decide it (None for new, gone, nothing to compare).
    decision: Decision | None = None
    #: The case's graders are not the earlier session's (the change is partly theirs).
    graders_changed: bool = False


@dataclass(frozen=True)
class Comparison:
    """This session against an earlier one."""

    #: The earlier session's result document.
    against: str
    against_started_at: str
    cases: tuple[CaseChange, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(VERDICTS, 0)
        for case in self.cases:
            counts[case.verdict] += 1
        return counts

    @property
    def regressions(self) -> tuple[CaseChange, ...]:
        return tuple(c for c in self.cases if c.verdict == "worse")

    @property
    def graders_changed(self) -> tuple[CaseChange, ...]:
        """The compared cases whose graders are not the earlier session's."""
        return tuple(c for c in self.cases if c.graders_changed)

    @property
    def regressed(self) -> bool:
        return bool(self.regressions)


def _key(case: CaseResult) -> tuple[str, str, str]:
    """A case is the same case in both sessions by name and folder (and, under
    ``--eval-agents``, on the same agent)."""
    return case.name, case.dir, case.agent or ""


def _folder_key(case: CaseResult) -> tuple[str, str, str]:
    """The same case by name and absolute folder: how a reference document's case (whose
    ``dir`` is relative to the plugin's folder, not the suite root) meets this session's."""
    return case.name, "@" + str(PurePath(case.case.dir)), case.agent or ""


def run_scores(case: CaseResult) -> list[float]:
    """The with-arm scores of the case's graded runs, in run order (kept within ``[0, 1]``)."""
    return [min(1.0, max(0.0, r.result.score)) for r in case.with_runs if r.result.graded]


def _score(case: CaseResult, scores: Sequence[float]) -> float | None:
    return mean(scores) if scores else case.aggregates.score


def graders_of(case: CaseResult) -> list[tuple[str, ...]]:
    """What a case's graders measure, in a form two sessions' cases compare by (the JSON
    document's fields: name, type, options, weight, arm, rubric)."""
    return sorted(
        (
            g.name,
            g.type,
            json.dumps(g.config, sort_keys=True, default=str),
            repr(float(g.weight)),
            g.arm or "",
            g.criteria or "",
        )
        for g in case.case.graders
    )


def _changed(before: CaseResult, after: CaseResult, margin: float) -> CaseChange:
    old, new = run_scores(before), run_scores(after)
    score_before, score_after = _score(before, old), _score(after, new)
    change = interval = decision = None
    if score_before is not None and score_after is not None:
        change = clean(score_after - score_before)
        interval = difference_interval(new, old)
        decision = decisions.decide_difference(new, old, margin)
    return CaseChange(
        name=after.label,
        dir=after.dir,
        before=score_before,
        after=score_after,
        change=change,
        change_interval=interval,
        delta_before=before.aggregates.delta,
        delta_after=after.aggregates.delta,
        verdict="inconclusive" if decision is None else decision.verdict,
        decision=decision,
        graders_changed=graders_of(before) != graders_of(after),
    )


def _alone(case: CaseResult, verdict: str) -> CaseChange:
    score = _score(case, run_scores(case))
    is_new = verdict == "new"
    return CaseChange(
        name=case.label,
        dir=case.dir,
        before=None if is_new else score,
        after=score if is_new else None,
        change=None,
        change_interval=None,
        delta_before=None if is_new else case.aggregates.delta,
        delta_after=case.aggregates.delta if is_new else None,
        verdict=verdict,
    )


def compare(
    before: SessionResult,
    after: SessionResult,
    against: str,
    margin: float = decisions.DEFAULT_MARGIN,
    not_selected: frozenset[tuple[str, str]] = frozenset(),
) -> Comparison:
    """``after`` (this session) against ``before`` (the earlier one, read from ``against``):
    this session's cases in their order, then the cases only the earlier one ran (``not run``
    when this session collected but did not select them: ``not_selected`` holds their
    (name, dir), else ``gone``); the verdicts held together to the false discovery rate."""
    earlier: dict[tuple[str, str, str], list[CaseResult]] = {}
    for case in before.cases:
        earlier.setdefault(_key(case), []).append(case)
        earlier.setdefault(_folder_key(case), []).append(case)
    taken: set[int] = set()
    changes: list[CaseChange] = []
    for case in after.cases:
        matches = [
            c
            for key in (_key(case), _folder_key(case))
            for c in earlier.get(key, ())
            if id(c) not in taken
        ]
        if matches:
            taken.add(id(matches[0]))
            changes.append(_changed(matches[0], case, margin))
        else:
            changes.append(_alone(case, "new"))
    left = {id(c) for c in before.cases} - taken
    not_selected = not_selected | frozenset(after.suite.not_selected)
    changes.extend(
        _alone(c, "not run" if (c.name, c.dir) in not_selected else "gone")
        for c in before.cases
        if id(c) in left
    )
    adjusted = decisions.control_fdr([c.decision for c in changes])
    changes = [
        c if d is c.decision or d is None else replace(c, decision=d, verdict=d.verdict)
        for c, d in zip(changes, adjusted, strict=True)
    ]
    return Comparison(against=against, against_started_at=before.started_at, cases=tuple(changes))


# -- the document's ``comparison`` ---------------------------------------------------------


def _interval_json(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def comparison_json(comparison: Comparison) -> JSONObject:
    """The document's ``comparison`` (builtins only)."""
    return {
        "against": comparison.against,
        "againstStartedAt": comparison.against_started_at,
        "cases": [
            {
                "name": c.name,
                "dir": c.dir,
                "before": c.before,
                "after": c.after,
                "change": c.change,
                "changeInterval": _interval_json(c.change_interval),
                "deltaBefore": c.delta_before,
                "deltaAfter": c.delta_after,
                "verdict": c.verdict,
                "decision": decision_json(c.decision),
                **({"gradersChanged": True} if c.graders_changed else {}),
            }
            for c in comparison.cases
        ],
        "counts": comparison.counts,
        "regressed": comparison.regressed,
    }


def decision_json(decision: Decision | None) -> JSONObject | None:
    """A verdict as the document writes it (``null`` for none)."""
    if decision is None:
        return None
    doc: JSONObject = {
        "verdict": decision.verdict,
        "claim": decision.claim,
        "pValue": decision.p_value,
    }
    if decision.more_runs is not None:
        doc["moreRuns"] = decision.more_runs
    if decision.fdr_withdrawn:
        doc["fdrWithdrawn"] = True
        doc["unadjusted"] = decision.unadjusted
    return doc


def decision_from_json(doc: Any) -> Decision | None:
    """The verdict a document holds (read leniently: None when it holds none)."""
    if not isinstance(doc, Mapping):
        return None
    verdict, claim = str(doc.get("verdict")), str(doc.get("claim"))
    if verdict not in decisions.VERDICTS:
        return None
    more = doc.get("moreRuns")
    unadjusted = doc.get("unadjusted")
    return Decision(
        verdict=verdict,
        claim=claim if claim in decisions.CLAIMS else "better",
        p_value=min(1.0, max(0.0, opt_number(doc.get("pValue")) or 1.0)),
        more_runs=more
        if isinstance(more, int) and not isinstance(more, bool) and more > 0
        else None,
        fdr_withdrawn=doc.get("fdrWithdrawn") is True,
        unadjusted=unadjusted if unadjusted in decisions.CLAIMS else None,
    )


def compared(
    result: SessionResult, before: SessionResult | None, document: Path | None, margin: float
) -> SessionResult:
    """``result`` with its comparison with the earlier session ``before`` read from
    ``document`` (``result`` as it is when none was read)."""
    if before is None or document is None:
        return result
    not_selected = frozenset(result.suite.not_selected)
    return replace(result, comparison=compare(before, result, str(document), margin, not_selected))
