"""The session's result, typed, and the aggregate result document (``schemaVersion: 1``).

:func:`summarize` turns the items' records into a :class:`SessionResult`: cases with their runs
and aggregates, sorted, so the order the records arrived in does not matter.
:func:`document_json` is the one serializer of ``aggregate-result.json``: the reference's field
names are never renamed, ours are added (``loadErrors``, ``errors``, ``notes``,
``aggregates.thresholdMet`` …). :func:`load_document` reads such a document back.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from pytest_plugin_evals.model import PluginInfo
from pytest_plugin_evals.records import (
    CaseInfo,
    JSONObject,
    LoadErrorRecord,
    Record,
    RunRecord,
    SkippedRun,
    as_map,
    case_from_json,
    case_to_json,
    dumps,
    plugin_from_json,
    plugin_to_json,
    run_from_json,
    run_to_json,
)
from pytest_plugin_evals.scoring import CaseAggregates, Gate, case_aggregates, clean, gate, mean

SCHEMA_VERSION = 1

#: ``partialReason`` when runs could not be made and no other reason was given.
INFRA_PARTIAL_REASON = "infra_errors"


@dataclass(frozen=True)
class CaseResult:
    """One case of the session: its runs by arm, its numbers and its NOTES."""

    case: CaseInfo
    two_arm: bool
    with_runs: tuple[RunRecord, ...]
    without_runs: tuple[RunRecord, ...]
    aggregates: CaseAggregates
    notes: str | None = None

    @property
    def name(self) -> str:
        return self.case.name

    @property
    def dir(self) -> str:
        """The case folder, relative to its suite root (``.`` for a suite file's cases)."""
        return relative(self.case.dir, self.case.suite_root)

    @property
    def runs(self) -> tuple[RunRecord, ...]:
        return (*self.with_runs, *self.without_runs)

    @property
    def cost_usd(self) -> float:
        return sum(r.result.cost_usd for r in self.runs)


@dataclass(frozen=True)
class SuiteInfo:
    root: str | None
    ablation: str
    threshold: float
    concurrency: int
    agent: str
    case_filter: str | None = None
    tag_filters: tuple[str, ...] = ()
    plugins: tuple[PluginInfo, ...] = ()


@dataclass(frozen=True)
class NotStarted:
    """Selected runs of one case that were never started (an interruption, ``-x``)."""

    #: The node id every run item of the case shares (its id without the ``[run]`` label).
    nodeid: str
    case: str
    runs: int


@dataclass(frozen=True)
class SuiteAggregates:
    cases_total: int = 0
    cases_passed: int = 0
    overall_score: float | None = None
    overall_pass_rate: float | None = None
    mean_delta: float | None = None
    overall_score_without: float | None = None
    runs_total: int = 0
    runs_graded: int = 0
    runs_errored: int = 0
    runs_not_made: int = 0
    runs_skipped: int = 0
    runs_not_started: int = 0
    threshold_met: bool = False


@dataclass(frozen=True)
class SessionResult:
    """Everything a session's reports show."""

    started_at: str
    duration_seconds: float
    cost_usd: float
    partial: bool
    partial_reason: str | None
    suite: SuiteInfo
    cases: tuple[CaseResult, ...] = ()
    aggregates: SuiteAggregates = SuiteAggregates()
    load_errors: tuple[LoadErrorRecord, ...] = ()
    #: Runs that could not be made, by infrastructure kind (most first).
    errors: dict[str, int] = field(default_factory=dict)
    #: Runs never started, by reason.
    skipped: dict[str, int] = field(default_factory=dict)
    #: Selected runs the session never got to, by case.
    not_started: tuple[NotStarted, ...] = ()
    #: Why no gate was applied (no with-arm run was selected), if none was.
    ungated: str | None = None

    @property
    def two_arm(self) -> bool:
        if self.cases:
            return any(c.two_arm for c in self.cases)
        return self.suite.ablation == "with-without"

    @property
    def threshold(self) -> float:
        return self.suite.threshold


def relative(path: str | None, root: str | None) -> str:
    if not path:
        return ""
    if root:
        try:
            rel = PurePath(path).relative_to(root)
        except ValueError:
            return PurePath(path).as_posix()
        return rel.as_posix() or "."
    return PurePath(path).as_posix()


def _dedupe(records: Iterable[Record]) -> list[Record]:
    """One record per nodeid, the last one received winning (setup and call both report)."""
    by_id: dict[str, Record] = {}
    for index, record in enumerate(records):
        key = record.nodeid or f"#{index}"
        by_id.pop(key, None)
        by_id[key] = record
    return list(by_id.values())


def _case_key(case: CaseInfo) -> tuple[str, str, str, str]:
    return (case.suite_root, relative(case.dir, case.suite_root), case.name, case.path)


def case_notes(with_runs: Sequence[RunRecord]) -> str | None:
    """The NOTES of a case: the first with-arm run error (runs in order), else the failing
    scored grader with the highest weight (the first one wins ties)."""
    for record in with_runs:
        run = record.result
        if run.infra_error:
            return f"error: {run.infra_error}" + (f": {run.error}" if run.error else "")
        if run.error:
            return run.error
        if run.aborted is not None:
            return run.aborted.message
    worst = None
    for record in with_runs:
        if not record.result.graded:
            continue
        for verdict in record.result.verdicts:
            if verdict.passed or not verdict.counts:
                continue
            if worst is None or verdict.weight > worst.weight:
                worst = verdict
    return None if worst is None else f"{worst.name}: {worst.explanation}"


def _run_order(record: RunRecord) -> tuple[int, str]:
    return record.run, record.nodeid


@dataclass
class _Slot:
    case: CaseInfo
    runs: list[RunRecord] = field(default_factory=list)
    two_arm: bool = False


def summarize(
    records: Iterable[Record],
    *,
    started_at: str,
    duration_seconds: float,
    threshold: float,
    ablation: str,
    concurrency: int,
    agent: str,
    root: str | None = None,
    case_filter: str | None = None,
    tag_filters: Sequence[str] = (),
    partial_reason: str | None = None,
    not_started: Sequence[NotStarted] = (),
) -> SessionResult:
    """The session's result from the items' records, whatever order they arrived in.

    ``not_started`` are selected runs the session never got to: the result is then partial
    (``partial_reason`` says why) and the threshold is not met.
    """
    slots: dict[tuple[str, str, str, str], _Slot] = {}
    load_errors: list[LoadErrorRecord] = []
    plugins: dict[tuple[str, str], PluginInfo] = {}
    skipped: Counter[str] = Counter()
    for record in _dedupe(records):
        if isinstance(record, LoadErrorRecord):
            load_errors.append(record)
            continue
        slot = slots.setdefault(_case_key(record.case), _Slot(record.case))
        slot.case = record.case
        slot.two_arm = slot.two_arm or record.two_arm
        if record.plugin is not None:
            plugins[(record.plugin.name, str(record.plugin.path))] = record.plugin
        if isinstance(record, SkippedRun):
            skipped[record.reason] += 1
            continue
        slot.runs.append(record)
        slot.two_arm = slot.two_arm or record.arm == "without"

    cases = tuple(_case_result(slot, threshold) for _, slot in sorted(slots.items()) if slot.runs)
    every_run = [r.result for c in cases for r in c.runs]
    errors = Counter(str(r.infra_error) for r in every_run if r.infra_error)
    partial = bool(partial_reason) or bool(errors) or bool(not_started)
    roots = {c.case.suite_root for c in cases if c.case.suite_root}
    scored = [c.aggregates for c in cases if c.aggregates.score is not None]
    deltas = [a.delta for a in scored if a.delta is not None]
    result_gate, ungated = session_gate(cases, threshold)
    started = {r.nodeid for c in cases for r in c.runs}
    unseen = [
        n for n in not_started if not any(nodeid.startswith(n.nodeid + "[") for nodeid in started)
    ]
    aggregates = SuiteAggregates(
        cases_total=len(cases) + len(unseen),
        cases_passed=sum(1 for c in cases if c.aggregates.passed),
        overall_score=mean([a.score for a in scored if a.score is not None]),
        overall_pass_rate=mean([a.pass_rate for a in scored if a.pass_rate is not None]),
        mean_delta=mean(deltas) if deltas else None,
        overall_score_without=mean(
            [a.score_without for a in scored if a.score_without is not None]
        ),
        runs_total=len(every_run),
        runs_graded=sum(1 for r in every_run if r.graded),
        runs_errored=sum(1 for r in every_run if r.graded and r.error),
        runs_not_made=sum(errors.values()),
        runs_skipped=sum(skipped.values()),
        runs_not_started=sum(n.runs for n in not_started),
        threshold_met=result_gate.met and not not_started,
    )
    load_errors.sort(key=lambda e: (e.path, e.line or 0, e.message))
    return SessionResult(
        started_at=started_at,
        duration_seconds=clean(duration_seconds) or 0.0,
        cost_usd=clean(sum(r.cost_usd for r in every_run)) or 0.0,
        partial=partial,
        partial_reason=(partial_reason or INFRA_PARTIAL_REASON) if partial else None,
        suite=SuiteInfo(
            root=root if root is not None else (roots.pop() if len(roots) == 1 else None),
            ablation=ablation,
            threshold=threshold,
            concurrency=concurrency,
            agent=agent,
            case_filter=case_filter,
            tag_filters=tuple(tag_filters),
            plugins=tuple(plugins[k] for k in sorted(plugins)),
        ),
        cases=cases,
        aggregates=aggregates,
        load_errors=tuple(load_errors),
        errors=dict(sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))),
        skipped=dict(sorted(skipped.items())),
        not_started=tuple(sorted(not_started, key=lambda n: n.nodeid)),
        ungated=ungated,
    )


#: Said when a session selected no with-arm run (``-m "evals(arm='without')"``).
UNGATED = "no with-arm run was selected: no threshold applies (the runs are measurements)"


def session_gate(cases: Sequence[CaseResult], threshold: float) -> tuple[Gate, str | None]:
    """The threshold applied to the cases with a with-arm run (without-arm runs alone are
    measurements); the second value says why no gate applies, when none does."""
    gated = [c for c in cases if c.with_runs]
    if cases and not gated:
        return Gate(met=True, message=UNGATED), UNGATED
    return gate([(c.name, c.aggregates.score) for c in gated], threshold), None


def _case_result(slot: _Slot, threshold: float) -> CaseResult:
    with_runs = tuple(sorted((r for r in slot.runs if r.arm != "without"), key=_run_order))
    without_runs = tuple(sorted((r for r in slot.runs if r.arm == "without"), key=_run_order))
    aggregates = case_aggregates(
        [r.result for r in with_runs],
        [r.result for r in without_runs] if slot.two_arm else None,
        threshold,
    )
    return CaseResult(
        case=slot.case,
        two_arm=slot.two_arm,
        with_runs=with_runs,
        without_runs=without_runs,
        aggregates=aggregates,
        notes=case_notes(with_runs),
    )


# -- the document ----------------------------------------------------------------------------


def _aggregates_json(agg: CaseAggregates, two_arm: bool) -> JSONObject:
    doc: JSONObject = {"score": agg.score, "passRate": agg.pass_rate}
    if two_arm and agg.score_without is not None:
        doc["scoreWithout"] = agg.score_without
        doc["passRateWithout"] = agg.pass_rate_without
        if agg.delta_note is not None:
            doc["deltaNote"] = agg.delta_note
        elif agg.delta is not None:
            doc["delta"] = agg.delta
    doc.update(
        {
            "passed": agg.passed,
            "runsGraded": agg.runs_graded,
            "runsErrored": agg.runs_errored,
            "runsNotMade": agg.runs_not_made,
        }
    )
    return doc


def _run_json(record: RunRecord) -> JSONObject:
    return {**run_to_json(record.result), "nodeid": record.nodeid}


def case_json(case: CaseResult) -> JSONObject:
    info = case.case
    root = info.suite_root
    arms: JSONObject = {"with": [_run_json(r) for r in case.with_runs]}
    if case.two_arm:
        arms["without"] = [_run_json(r) for r in case.without_runs]
    described = case_to_json(info)
    return {
        "name": info.name,
        "dir": relative(info.dir, root),
        "source": info.source,
        "promptMarkdown": info.prompt,
        **({"model": info.model} if info.model else {}),
        "runsPerCase": info.runs_per_case,
        "timeoutSeconds": info.timeout_seconds,
        "maxTurns": info.max_turns,
        "tags": list(info.tags),
        "description": info.description,
        "path": relative(info.path, root),
        "suiteRoot": root,
        "graders": described["graders"],
        "arms": arms,
        "aggregates": _aggregates_json(case.aggregates, case.two_arm),
        "notes": case.notes,
    }


def document_json(result: SessionResult) -> JSONObject:
    """The aggregate result document of a session (builtins only)."""
    suite = result.suite
    agg = result.aggregates
    aggregates: JSONObject = {
        "casesTotal": agg.cases_total,
        "casesPassed": agg.cases_passed,
        "overallScore": agg.overall_score,
        "overallPassRate": agg.overall_pass_rate,
        **({"meanDelta": agg.mean_delta} if agg.mean_delta is not None else {}),
        "overallScoreWithout": agg.overall_score_without,
        "runsTotal": agg.runs_total,
        "runsGraded": agg.runs_graded,
        "runsErrored": agg.runs_errored,
        "runsNotMade": agg.runs_not_made,
        "runsSkipped": agg.runs_skipped,
        "runsNotStarted": agg.runs_not_started,
        "thresholdMet": agg.threshold_met,
    }
    return {
        "schemaVersion": SCHEMA_VERSION,
        "startedAt": result.started_at,
        "durationSeconds": result.duration_seconds,
        "costUsd": result.cost_usd,
        "partial": result.partial,
        **({"partialReason": result.partial_reason} if result.partial else {}),
        "suite": {
            "root": suite.root,
            "ablation": suite.ablation,
            "threshold": suite.threshold,
            "concurrency": suite.concurrency,
            "agent": suite.agent,
            **({"caseFilter": suite.case_filter} if suite.case_filter else {}),
            **({"tagFilters": list(suite.tag_filters)} if suite.tag_filters else {}),
            "plugins": [plugin_to_json(p) for p in suite.plugins],
        },
        "cases": [case_json(c) for c in result.cases],
        "aggregates": aggregates,
        "loadErrors": [
            {"path": e.path, "line": e.line, "message": e.message} for e in result.load_errors
        ],
        "errors": dict(result.errors),
        "skipped": dict(result.skipped),
        "notStarted": [
            {"case": n.case, "nodeid": n.nodeid, "runs": n.runs} for n in result.not_started
        ],
        **({"ungated": result.ungated} if result.ungated else {}),
    }


def dumps_document(result: SessionResult | Mapping[str, Any]) -> str:
    """The document as the JSON file holds it (UTF-8 text, two-space indent, final newline)."""
    doc = document_json(result) if isinstance(result, SessionResult) else result
    return dumps(doc, indent=2) + "\n"


# -- reading a document back -----------------------------------------------------------------


class DocumentError(ValueError):
    """A file that is not a result document this version can read."""


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _case_from_json(doc: Mapping[str, Any]) -> CaseResult:
    root = str(doc.get("suiteRoot") or "")
    described = {
        **doc,
        "dir": _joined(root, doc.get("dir")),
        "path": _joined(root, doc.get("path")),
    }
    info = case_from_json(described)
    arms = as_map(doc.get("arms"))
    two_arm = "without" in arms

    def runs(arm: str) -> tuple[RunRecord, ...]:
        return tuple(
            RunRecord(str(r.get("nodeid") or ""), info, None, two_arm, run_from_json(r))
            for r in arms.get(arm) or []
            if isinstance(r, Mapping)
        )

    agg = as_map(doc.get("aggregates"))
    aggregates = CaseAggregates(
        score=_num(agg.get("score")),
        pass_rate=_num(agg.get("passRate")),
        passed=bool(agg.get("passed")),
        score_without=_num(agg.get("scoreWithout")),
        pass_rate_without=_num(agg.get("passRateWithout")),
        delta=_num(agg.get("delta")),
        delta_note=str(agg["deltaNote"]) if agg.get("deltaNote") else None,
        runs_graded=int(agg.get("runsGraded") or 0),
        runs_errored=int(agg.get("runsErrored") or 0),
        runs_not_made=int(agg.get("runsNotMade") or 0),
    )
    notes = doc.get("notes")
    return CaseResult(
        case=info,
        two_arm=two_arm,
        with_runs=runs("with"),
        without_runs=runs("without"),
        aggregates=aggregates,
        notes=str(notes) if notes else None,
    )


def _joined(root: str, rel: Any) -> str:
    if not rel:
        return root
    if not root or PurePath(str(rel)).is_absolute():
        return str(rel)
    return str(PurePath(root, str(rel))) if rel != "." else root


def load_document(doc: Mapping[str, Any]) -> SessionResult:
    """The :class:`SessionResult` a result document describes (ours or the reference's)."""
    if not isinstance(doc, Mapping) or doc.get("schemaVersion") != SCHEMA_VERSION:
        raise DocumentError(f"not a schemaVersion {SCHEMA_VERSION} result document")
    suite = as_map(doc.get("suite"))
    agg = as_map(doc.get("aggregates"))
    plugins = tuple(p for p in map(plugin_from_json, suite.get("plugins") or []) if p is not None)
    cases = tuple(_case_from_json(c) for c in doc.get("cases") or [] if isinstance(c, Mapping))
    root = str(suite.get("root") or "")
    return SessionResult(
        started_at=str(doc.get("startedAt") or ""),
        duration_seconds=_num(doc.get("durationSeconds")) or 0.0,
        cost_usd=_num(doc.get("costUsd")) or 0.0,
        partial=bool(doc.get("partial")),
        partial_reason=str(doc["partialReason"]) if doc.get("partialReason") else None,
        suite=SuiteInfo(
            root=suite.get("root"),
            ablation=str(suite.get("ablation") or "none"),
            threshold=_num(suite.get("threshold")) or 0.0,
            concurrency=int(suite.get("concurrency") or 1),
            agent=str(suite.get("agent") or ""),
            case_filter=suite.get("caseFilter"),
            tag_filters=tuple(suite.get("tagFilters") or ()),
            plugins=plugins,
        ),
        cases=cases,
        aggregates=SuiteAggregates(
            cases_total=int(agg.get("casesTotal") or 0),
            cases_passed=int(agg.get("casesPassed") or 0),
            overall_score=_num(agg.get("overallScore")),
            overall_pass_rate=_num(agg.get("overallPassRate")),
            mean_delta=_num(agg.get("meanDelta")),
            overall_score_without=_num(agg.get("overallScoreWithout")),
            runs_total=int(agg.get("runsTotal") or 0),
            runs_graded=int(agg.get("runsGraded") or 0),
            runs_errored=int(agg.get("runsErrored") or 0),
            runs_not_made=int(agg.get("runsNotMade") or 0),
            runs_skipped=int(agg.get("runsSkipped") or 0),
            runs_not_started=int(agg.get("runsNotStarted") or 0),
            threshold_met=bool(agg.get("thresholdMet")),
        ),
        load_errors=tuple(
            LoadErrorRecord(
                "", str(e.get("path", "")), e.get("line"), str(e.get("message", "")), root
            )
            for e in doc.get("loadErrors") or []
            if isinstance(e, Mapping)
        ),
        errors={str(k): int(v) for k, v in (doc.get("errors") or {}).items()},
        skipped={str(k): int(v) for k, v in (doc.get("skipped") or {}).items()},
        not_started=tuple(
            NotStarted(str(n.get("nodeid", "")), str(n.get("case", "")), int(n.get("runs") or 0))
            for n in doc.get("notStarted") or []
            if isinstance(n, Mapping)
        ),
        ungated=str(doc["ungated"]) if doc.get("ungated") else None,
    )
