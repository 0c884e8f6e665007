"""Reading a result document back: from its checked shape (:mod:`.document_check`) to the
:class:`~pytest_plugin_evals.reporting.result.SessionResult` it describes (ours or the
reference's).

Every value has its type by then; what is decided here is what a missing field means, and
where a case's folder is.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    from pytest_plugin_evals.util.jsonlines import JSONFileError, load_strict

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


def _case_aggregates(doc: shape.CaseAggregates | None) -> CaseAggregates:
    doc = doc or _blank("CaseAggregates")
    return CaseAggregates(
        score=number(doc.score),
        pass_rate=number(doc.passRate),
        passed=doc.passed is True,
        score_without=number(doc.scoreWithout),
        pass_rate_without=number(doc.passRateWithout),
        delta=number(doc.delta),
        delta_note=doc.deltaNote or None,
        runs_graded=count(doc.runsGraded),
        runs_errored=count(doc.runsErrored),
        runs_not_made=count(doc.runsNotMade),
        score_interval=interval(doc.scoreInterval),
        pass_rate_interval=interval(doc.passRateInterval),
        score_without_interval=interval(doc.scoreWithoutInterval),
        pass_rate_without_interval=interval(doc.passRateWithoutInterval),
        delta_interval=interval(doc.deltaInterval),
        delta_significant=doc.deltaSignificant,
        delta_decision=decision_of(doc.deltaDecision),
        sequential=_sequential(doc.sequential),
        reducer=doc.reducer or "mean",
        unstable=tuple(present(doc.unstable)),
        timing=_timing(doc.latency, doc.tokens, count(doc.runsGraded)),
    )


# -- the suite's numbers ---------------------------------------------------------------------


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


def _margin(value: Any) -> float:
    margin = number(value)
    return DEFAULT_MARGIN if margin is None or not 0 <= margin <= 1 else margin


def _suite_aggregates(doc: shape.Aggregates | None) -> SuiteAggregates:
    if doc is None:
        return SuiteAggregates()
    graded = count(doc.runsGraded)
    return SuiteAggregates(
        cases_total=count(doc.casesTotal),
        cases_passed=count(doc.casesPassed),
        overall_score=number(doc.overallScore),
        overall_pass_rate=number(doc.overallPassRate),
        mean_delta=number(doc.meanDelta),
        overall_score_without=number(doc.overallScoreWithout),
        runs_total=count(doc.runsTotal),
        runs_graded=graded,
        runs_errored=count(doc.runsErrored),
        runs_not_made=count(doc.runsNotMade),
        runs_skipped=count(doc.runsSkipped),
        runs_not_started=count(doc.runsNotStarted),
        threshold_met=doc.thresholdMet is True,
        mean_delta_interval=interval(doc.meanDeltaInterval),
        mean_delta_significant=doc.meanDeltaSignificant,
        mean_delta_decision=decision_of(doc.meanDeltaDecision),
        margin=_margin(doc.margin),
        reducer=doc.reducer or "mean",
        cases_unstable=count(doc.casesUnstable),
        timing=_timing(doc.latency, doc.tokens, graded),
        rate_limit_retries=count(doc.rateLimitRetries),
        rate_limit_wait_seconds=real(doc.rateLimitWaitSeconds),
    )


def _agent(doc: shape.Agent) -> AgentSummary:
    graded = count(doc.runsGraded)
    return AgentSummary(
        label=doc.agent or "",
        spec=doc.spec or "",
        cases=count(doc.cases),
        cases_passed=count(doc.casesPassed),
        score=number(doc.overallScore),
        score_without=number(doc.overallScoreWithout),
        mean_delta=number(doc.meanDelta),
        mean_delta_interval=interval(doc.meanDeltaInterval),
        mean_delta_significant=doc.meanDeltaSignificant,
        mean_delta_decision=decision_of(doc.meanDeltaDecision),
        runs_total=count(doc.runsTotal),
        runs_graded=graded,
        errors={k: count(v) for k, v in (doc.errors or {}).items() if isinstance(v, int)},
        cost_usd=real(doc.costUsd),
        cost_unknown=doc.costUnknown is True,
        timing=_timing(doc.latency, doc.tokens, graded),
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


def _comparison(doc: shape.Comparison | None) -> Comparison | None:
    if doc is None:
        return None
    cases = []
    for c in present(doc.cases):
        verdict = OLD_VERDICTS.get(str(c.verdict), str(c.verdict))
        cases.append(
            CaseChange(
                name=c.name or "",
                dir=c.dir or "",
                before=number(c.before),
                after=number(c.after),
                change=number(c.change),
                change_interval=interval(c.changeInterval),
                delta_before=number(c.deltaBefore),
                delta_after=number(c.deltaAfter),
                verdict=verdict if verdict in VERDICTS else "inconclusive",
                decision=decision_of(c.decision),
            )
        )
    return Comparison(doc.against or "", doc.againstStartedAt or "", tuple(cases))


# -- shards ----------------------------------------------------------------------------------


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
                nodeid=c.nodeid or "",
                name=c.name or "",
                key=c.key or "",
                runs=count(c.runs),
                cost=count(c.cost),
                shard=count(c.shard),
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
