"""Reading a result document back: from its checked shape (:mod:`.document_check`) to the
:class:`~pytest_plugin_evals.reporting.result.SessionResult` it describes (ours or the
reference's).

Every value has its type by then; what is decided here is what a missing field means, and
where a case's folder is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.model import BaselinePlugin, PluginInfo
from pytest_plugin_evals.records import LoadErrorRecord, RunRecord
from pytest_plugin_evals.records.read import (
    case as case_info,
)
from pytest_plugin_evals.records.read import (
    count,
    interval,
    number,
    present,
    real,
)
from pytest_plugin_evals.records.read import (
    plugin as plugin_info,
)
from pytest_plugin_evals.records.read import (
    run as run_result,
)
from pytest_plugin_evals.reporting.compare import OLD_VERDICTS, VERDICTS, CaseChange, Comparison
from pytest_plugin_evals.reporting.document_error import DocumentError
from pytest_plugin_evals.reporting.result import (
    AgentSummary,
    CaseResult,
    NotStarted,
    SessionResult,
    SuiteAggregates,
    SuiteInfo,
)
from pytest_plugin_evals.scoring import CaseAggregates, Timing
from pytest_plugin_evals.shards import ShardCase, ShardPlan, ShardSource
from pytest_plugin_evals.stats import DEFAULT_MARGIN, CaseStop, Stop, decisions
from pytest_plugin_evals.util.jsonlines import JSONFileError, camel, load_strict

if TYPE_CHECKING:
    from pytest_plugin_evals.records import shape as records_shape
    from pytest_plugin_evals.reporting import document_check as shape

#: The version of the result document this package writes and reads.
SCHEMA_VERSION = 1


def read_document(text: str) -> SessionResult:
    """The :class:`SessionResult` a result document's text describes; a
    :class:`DocumentError` of one line (what is wrong, and where) when the text is not JSON,
    holds a number JSON cannot hold (NaN, Infinity, ``1e400``), or is not a result document
    of this schema whose fields have the types the writer gives them."""
    try:
        doc = load_strict(text)
    except JSONFileError as exc:
        raise DocumentError(exc.problem, exc.at) from None
    return load_document(doc)


def load_document(doc: Any) -> SessionResult:
    """The :class:`SessionResult` a parsed result document describes;
    :class:`DocumentError` when it is not one (see :func:`read_document`)."""
    # Deferred for speed: the shape's pydantic models cost a session that only writes.
    from pytest_plugin_evals.reporting.document_check import check_document

    return session_of(check_document(doc, SCHEMA_VERSION))


def session_of(doc: shape.Document) -> SessionResult:
    """The session a checked document describes."""
    suite: shape.Suite = doc.suite or _blank("Suite")
    plugins = tuple(p for p in map(plugin_info, present(suite.plugins)) if p is not None)
    root = suite.root or ""
    return SessionResult(
        started_at=doc.startedAt or "",
        duration_seconds=real(doc.durationSeconds),
        cost_usd=real(doc.costUsd),
        partial=doc.partial is True,
        partial_reason=doc.partialReason or None,
        suite=SuiteInfo(
            root=suite.root,
            ablation=suite.ablation or "none",
            threshold=real(suite.threshold),
            concurrency=count(suite.concurrency, 1) or 1,
            agent=suite.agent or "",
            case_filter=suite.caseFilter,
            tag_filters=tuple(present(suite.tagFilters)),
            plugins=plugins,
            baseline_plugins=_baseline(suite.baselinePlugin),
            not_selected=tuple((n.name or "", n.dir or "") for n in present(suite.notSelected)),
            aa=bool(suite.aa),
        ),
        cases=tuple(_case(c, root, plugins) for c in present(doc.cases)),
        aggregates=_suite_aggregates(doc.aggregates),
        load_errors=tuple(
            LoadErrorRecord("", e.path or "", _line(e.line), e.message or "", root)
            for e in present(doc.loadErrors)
        ),
        errors={k: count(v) for k, v in (doc.errors or {}).items()},
        skipped={k: count(v) for k, v in (doc.skipped or {}).items()},
        not_started=tuple(
            NotStarted(n.nodeid or "", n.case or "", count(n.runs), n.agent or None)
            for n in present(doc.notStarted)
        ),
        ungated=doc.ungated or None,
        comparison=_comparison(doc.comparison),
        shard=plan_of(doc.shard),
        shards=tuple(_shard_source(s) for s in present(doc.shards)),
        agents=tuple(_agent(a) for a in present(doc.agents)),
    )


def _blank(model: str) -> Any:
    """An empty :mod:`.document_check` model (imported on first use: it loads pydantic)."""
    from pytest_plugin_evals.reporting import document_check

    return getattr(document_check, model)()


def _line(value: Any) -> int | None:
    line = number(value)
    return None if line is None else int(line)


# -- a case ----------------------------------------------------------------------------------


def _plugin_of(folder: str, plugins: Sequence[PluginInfo]) -> PluginInfo | None:
    """The plugin whose folder holds the case folder (the innermost), if one does."""
    holding = [p for p in plugins if PurePath(folder).is_relative_to(str(p.path))]
    return max(holding, key=lambda p: len(PurePath(p.path).parts), default=None)


def _joined(root: str, rel: str | None) -> str:
    if not rel:
        return root
    if not root or PurePath(rel).is_absolute():
        return rel
    return str(PurePath(root, rel)) if rel != "." else root


def _case(doc: shape.Case, suite_root: str, plugins: Sequence[PluginInfo]) -> CaseResult:
    """A case of the document: its folder is ``suiteDir`` under ``suiteRoot`` (this version),
    ``dir`` under ``suiteRoot`` (earlier versions), or ``dir`` under the suite's ``root`` (the
    reference's, whose ``root`` is the plugin's folder)."""
    root = doc.suiteRoot or ""
    folder = _joined(root, doc.suiteDir) if doc.suiteDir else _joined(root or suite_root, doc.dir)
    info = case_info(doc.model_copy(update={"dir": folder, "path": _joined(root, doc.path)}))
    arms = doc.arms
    baseline = arms is not None and "baseline" in arms.model_fields_set
    two_arm = baseline or (arms is not None and "without" in arms.model_fields_set)
    agent = doc.agent or None
    plugin = _plugin_of(folder, plugins)

    def runs(listed: list[records_shape.Run | None] | None) -> tuple[RunRecord, ...]:
        return tuple(
            RunRecord(r.nodeid or "", info, plugin, two_arm, run_result(r), agent)
            for r in present(listed)
        )

    with_runs = runs(arms.with_) if arms is not None else ()
    if arms is None:
        without_runs: tuple[RunRecord, ...] = ()
    else:
        without_runs = runs(arms.baseline if baseline else arms.without)
    return CaseResult(
        case=info,
        two_arm=two_arm,
        with_runs=with_runs,
        without_runs=without_runs,
        aggregates=_case_aggregates(doc.aggregates),
        notes=doc.notes or None,
        baseline=baseline,
        agent=agent,
    )


def _timing(latency: shape.Latency | None, tokens: shape.Tokens | None, runs: int) -> Timing:
    return Timing(
        runs=runs,
        latency_mean=number(latency.meanSeconds) if latency else None,
        latency_p50=number(latency.p50Seconds) if latency else None,
        latency_p95=number(latency.p95Seconds) if latency else None,
        input_tokens=_line(tokens.input) if tokens else None,
        output_tokens=_line(tokens.output) if tokens else None,
        turns_mean=number(tokens.turnsMean) if tokens else None,
    )


def _sequential(doc: shape.Sequential | None) -> CaseStop | None:
    """A case's ``sequential`` read back (``--eval-runs auto``), or None."""
    if doc is None:
        return None
    rounds, most = number(doc.runs), number(doc.maxRuns)
    if rounds is None or most is None:
        return None
    verdict = (doc.reason or "").rpartition(": ")[2] if doc.stopped == "decided" else None
    stop = Stop(doc.stopped, int(rounds), verdict) if doc.stopped is not None else None
    return CaseStop(int(rounds), int(most), stop)


def decision_of(doc: shape.Decision | None) -> decisions.Decision | None:
    """The verdict on a difference a document holds (None when it holds none we know)."""
    if doc is None or doc.verdict not in decisions.VERDICTS:
        return None
    more = doc.moreRuns
    return decisions.Decision(
        verdict=doc.verdict,
        claim=doc.claim if doc.claim in decisions.CLAIMS else "better",
        p_value=min(1.0, max(0.0, real(doc.pValue, 1.0))),
        more_runs=more if isinstance(more, int) and more > 0 else None,
        fdr_withdrawn=doc.fdrWithdrawn is True,
        unadjusted=doc.unadjusted if doc.unadjusted in decisions.CLAIMS else None,
    )


#: Fields of a dataclass, each with what reads its value from the document's.
Readers = Mapping[str, Callable[[Any], Any]]


def _fields(doc: Any, readers: Readers) -> dict[str, Any]:
    """The fields ``readers`` name, each read by its reader from the document's field of the
    same name in camelCase (``pass_rate`` from ``passRate``)."""
    return {name: read(getattr(doc, camel(name))) for name, read in readers.items()}


def _as_is(value: Any) -> Any:
    return value  # the check typed it (``true``, ``false`` or null)


def _flag(value: Any) -> bool:
    return value is True


#: The numbers of a case's arms, each with its interval.
_ARM_NUMBERS = ("score", "pass_rate", "score_without", "pass_rate_without", "delta")
#: A difference's interval, whether it excludes 0, and its verdict (``<name>_…``).
_DIFFERENCE: Readers = {"interval": interval, "significant": _as_is, "decision": decision_of}
#: What a case's numbers read back by.
_CASE: Readers = {
    **dict.fromkeys(_ARM_NUMBERS, number),
    **{f"{name}_interval": interval for name in _ARM_NUMBERS},
    **{f"delta_{part}": read for part, read in _DIFFERENCE.items()},
    **dict.fromkeys(("runs_graded", "runs_errored", "runs_not_made"), count),
    "passed": _flag,
}
#: What the suite's and each agent's numbers read back by.
_TOTALS: Readers = {
    "cases_passed": count,
    "mean_delta": number,
    **{f"mean_delta_{part}": read for part, read in _DIFFERENCE.items()},
    "runs_total": count,
    "runs_graded": count,
}
_SUITE: Readers = {
    **_TOTALS,
    **dict.fromkeys(("overall_score", "overall_pass_rate", "overall_score_without"), number),
    **dict.fromkeys(("cases_total", "cases_unstable", "rate_limit_retries"), count),
    **dict.fromkeys(("runs_errored", "runs_not_made", "runs_skipped", "runs_not_started"), count),
    "threshold_met": _flag,
    "rate_limit_wait_seconds": real,
}
_AGENT: Readers = {**_TOTALS, "cases": count, "cost_usd": real, "cost_unknown": _flag}


def _case_aggregates(doc: shape.CaseAggregates | None) -> CaseAggregates:
    doc = doc or _blank("CaseAggregates")
    return CaseAggregates(
        **_fields(doc, _CASE),
        delta_note=doc.deltaNote or None,
        sequential=_sequential(doc.sequential),
        reducer=doc.reducer or "mean",
        unstable=tuple(present(doc.unstable)),
        timing=_timing(doc.latency, doc.tokens, count(doc.runsGraded)),
    )


# -- the suite's numbers ---------------------------------------------------------------------


def _margin(value: Any) -> float:
    margin = number(value)
    return DEFAULT_MARGIN if margin is None or not 0 <= margin <= 1 else margin


def _suite_aggregates(doc: shape.Aggregates | None) -> SuiteAggregates:
    if doc is None:
        return SuiteAggregates()
    return SuiteAggregates(
        **_fields(doc, _SUITE),
        margin=_margin(doc.margin),
        reducer=doc.reducer or "mean",
        timing=_timing(doc.latency, doc.tokens, count(doc.runsGraded)),
    )


def _agent(doc: shape.Agent) -> AgentSummary:
    return AgentSummary(
        **_fields(doc, _AGENT),
        label=doc.agent or "",
        spec=doc.spec or "",
        score=number(doc.overallScore),
        score_without=number(doc.overallScoreWithout),
        errors={k: count(v) for k, v in (doc.errors or {}).items() if isinstance(v, int)},
        timing=_timing(doc.latency, doc.tokens, count(doc.runsGraded)),
    )


def _baseline(doc: shape.BaselinePlugin | None) -> tuple[BaselinePlugin, ...]:
    if doc is None:
        return ()
    entries = present(doc.plugins) if doc.plugins is not None else [doc]
    return tuple(
        BaselinePlugin(
            spec=e.spec or "",
            name=e.name or "",
            version=e.version or None,
            path=e.path or "",
            commit=e.commit or None,
        )
        for e in entries
    )


#: What a case's change since an earlier session reads back by.
_CHANGE: Readers = dict(
    dict.fromkeys(("before", "after", "change", "delta_before", "delta_after"), number),
    change_interval=interval, decision=decision_of, graders_changed=_flag,
)  # fmt: skip


def _comparison(doc: shape.Comparison | None) -> Comparison | None:
    if doc is None:
        return None
    cases = []
    for c in present(doc.cases):
        verdict = OLD_VERDICTS.get(str(c.verdict), str(c.verdict))
        verdict = verdict if verdict in VERDICTS else "inconclusive"
        fields = _fields(c, _CHANGE)
        cases.append(CaseChange(name=c.name or "", dir=c.dir or "", verdict=verdict, **fields))
    return Comparison(doc.against or "", doc.againstStartedAt or "", tuple(cases))


# -- shards ----------------------------------------------------------------------------------


#: A shard's case's runs, cost and shard number.
_SHARD_CASE: Readers = dict.fromkeys(("runs", "cost", "shard"), count)


def plan_of(doc: shape.Shard | None) -> ShardPlan | None:
    """The plan a document's ``shard`` field (or a shard plan file) holds."""
    if doc is None:
        return None
    return ShardPlan(
        index=count(doc.index),
        total=count(doc.total),
        weights=doc.weights or "runs",
        cases=tuple(
            ShardCase(
                nodeid=c.nodeid or "", name=c.name or "", key=c.key or "", **_fields(c, _SHARD_CASE)
            )
            for c in present(doc.suiteCases)
        ),
        version=doc.version or "",
        settings=dict(doc.settings or {}),
        root=doc.suiteRoot or "",
    )


def read_plan(text: str) -> ShardPlan | None:
    """The plan a shard plan file's text holds (None when it holds none)."""
    from pydantic import ValidationError

    from pytest_plugin_evals.reporting.document_check import Shard

    try:
        return plan_of(Shard.model_validate_json(text))
    except ValidationError:
        return None


def _shard_source(doc: shape.ShardSource) -> ShardSource:
    return ShardSource(
        path=doc.path or "",
        index=count(doc.index),
        total=count(doc.total),
        started_at=doc.startedAt or "",
        duration_seconds=real(doc.durationSeconds),
        cases=tuple(present(doc.cases)),
    )
