"""The aggregate result document (``schemaVersion: 1``): written and read back.

:func:`document_json` is the one serializer of ``aggregate-result.json``: the reference's field
names are never renamed, ours are added (``loadErrors``, ``errors``, ``notes``,
``aggregates.thresholdMet`` …). :func:`load_document` reads such a document back into the
:class:`~pytest_plugin_evals.reporting.result.SessionResult` it describes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from pytest_plugin_evals.decisions import DEFAULT_MARGIN
from pytest_plugin_evals.model import BaselinePlugin
from pytest_plugin_evals.records import (
    JSONObject,
    LoadErrorRecord,
    RunRecord,
    as_map,
    case_from_json,
    case_to_json,
    dumps,
    interval_from_json,
    opt_number,
    plugin_from_json,
    plugin_to_json,
    run_from_json,
    run_to_json,
)
from pytest_plugin_evals.reporting.compare import (
    comparison_from_json,
    comparison_json,
    decision_from_json,
    decision_json,
)
from pytest_plugin_evals.reporting.document_check import DocumentError as DocumentError
from pytest_plugin_evals.reporting.document_check import check_document
from pytest_plugin_evals.reporting.result import (
    AgentSummary,
    CaseResult,
    NotStarted,
    SessionResult,
    SuiteAggregates,
    SuiteInfo,
    relative,
)
from pytest_plugin_evals.reporting.triggers import trigger_json, trigger_results
from pytest_plugin_evals.scoring import (
    CaseAggregates,
    Timing,
)
from pytest_plugin_evals.sequential import CaseStop
from pytest_plugin_evals.shards import (
    plan_from_json,
    plan_to_json,
    source_from_json,
    source_to_json,
)
from pytest_plugin_evals.stats import Interval

SCHEMA_VERSION = 1

# -- the document ----------------------------------------------------------------------------


def interval_json(interval: Interval | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def timing_json(t: Timing) -> tuple[JSONObject, JSONObject]:
    """``latency`` and ``tokens`` of a set of runs, as the document writes them."""
    latency: JSONObject = {
        "meanSeconds": t.latency_mean,
        "p50Seconds": t.latency_p50,
        "p95Seconds": t.latency_p95,
    }
    tokens: JSONObject = {
        "input": t.input_tokens,
        "output": t.output_tokens,
        "turnsMean": t.turns_mean,
    }
    return latency, tokens


def _aggregates_json(agg: CaseAggregates, two_arm: bool) -> JSONObject:
    doc: JSONObject = {
        "score": agg.score,
        "passRate": agg.pass_rate,
        "scoreInterval": interval_json(agg.score_interval),
        "passRateInterval": interval_json(agg.pass_rate_interval),
    }
    if two_arm and agg.score_without is not None:
        doc["scoreWithout"] = agg.score_without
        doc["passRateWithout"] = agg.pass_rate_without
        doc["scoreWithoutInterval"] = interval_json(agg.score_without_interval)
        doc["passRateWithoutInterval"] = interval_json(agg.pass_rate_without_interval)
        if agg.delta_note is not None:
            doc["deltaNote"] = agg.delta_note
        elif agg.delta is not None:
            doc["delta"] = agg.delta
            doc["deltaInterval"] = interval_json(agg.delta_interval)
            doc["deltaSignificant"] = agg.delta_significant
            doc["deltaDecision"] = decision_json(agg.delta_decision)
    latency, tokens = timing_json(agg.timing)
    doc.update(
        {
            "passed": agg.passed,
            "reducer": agg.reducer,
            "unstable": list(agg.unstable),
            "latency": latency,
            "tokens": tokens,
            "runsGraded": agg.runs_graded,
            "runsErrored": agg.runs_errored,
            "runsNotMade": agg.runs_not_made,
        }
    )
    if agg.sequential is not None:  # --eval-runs auto: the rounds it took, why it stopped
        doc["sequential"] = {
            "runs": agg.sequential.rounds,
            "maxRuns": agg.sequential.most,
            "stopped": agg.sequential.stopped,
            "reason": agg.sequential.reason,
        }
    return doc


def _sequential_from(value: Any) -> CaseStop | None:
    """A case's ``sequential`` read back (``--eval-runs auto``), or None."""
    from pytest_plugin_evals.sequential import Stop

    if not isinstance(value, Mapping):
        return None
    rounds = opt_number(value.get("runs"))
    most = opt_number(value.get("maxRuns"))
    if rounds is None or most is None:
        return None
    why = value.get("stopped")
    reason = str(value.get("reason") or "")
    verdict = reason.rpartition(": ")[2] if why == "decided" else None
    stop = Stop(why, int(rounds), verdict) if isinstance(why, str) else None
    return CaseStop(int(rounds), int(most), stop)


def _run_json(record: RunRecord) -> JSONObject:
    return {**run_to_json(record.result), "nodeid": record.nodeid}


def case_json(case: CaseResult) -> JSONObject:
    info = case.case
    root = info.suite_root
    arms: JSONObject = {"with": [_run_json(r) for r in case.with_runs]}
    if case.two_arm:
        arms[case.second_arm] = [_run_json(r) for r in case.without_runs]
    described = case_to_json(info)
    return {
        "name": info.name,
        **({"agent": case.agent} if case.agent is not None else {}),
        "dir": relative(info.dir, root),
        "source": info.source,
        "promptMarkdown": info.prompt,
        **({"model": info.model} if info.model else {}),
        "runsPerCase": info.runs_per_case,
        "timeoutSeconds": info.timeout_seconds,
        "maxTurns": info.max_turns,
        "tags": list(info.tags),
        "description": info.description,
        **({"expectedOutput": info.expected_output} if info.expected_output else {}),
        "path": relative(info.path, root),
        "suiteRoot": root,
        "graders": described["graders"],
        "arms": arms,
        "aggregates": _aggregates_json(case.aggregates, case.two_arm),
        "notes": case.notes,
    }


def _baseline_plugin_json(plugin: BaselinePlugin) -> JSONObject:
    return {
        "spec": plugin.spec,
        "name": plugin.name,
        "version": plugin.version,
        "path": plugin.path,
        **({"commit": plugin.commit} if plugin.commit else {}),
    }


def baseline_json(plugins: Sequence[BaselinePlugin]) -> JSONObject:
    """``suite.baselinePlugin``: the first baseline's fields, and every one under ``plugins``
    when the session's cases evaluate more than one plugin."""
    doc = _baseline_plugin_json(plugins[0])
    if len(plugins) > 1:
        doc["plugins"] = [_baseline_plugin_json(p) for p in plugins]
    return doc


def baseline_from_json(doc: Any) -> tuple[BaselinePlugin, ...]:
    if not isinstance(doc, Mapping):
        return ()
    listed = doc.get("plugins")
    entries: list[Any] = listed if isinstance(listed, list) else [doc]
    return tuple(
        BaselinePlugin(
            spec=str(e.get("spec") or ""),
            name=str(e.get("name") or ""),
            version=str(e["version"]) if e.get("version") else None,
            path=str(e.get("path") or ""),
            commit=str(e["commit"]) if e.get("commit") else None,
        )
        for e in entries
        if isinstance(e, Mapping)
    )


def agent_json(agent: AgentSummary) -> JSONObject:
    """One agent of ``agents`` (a session of several agents)."""
    latency, tokens = timing_json(agent.timing)
    return {
        "agent": agent.label,
        "spec": agent.spec,
        "cases": agent.cases,
        "casesPassed": agent.cases_passed,
        "overallScore": agent.score,
        "overallScoreWithout": agent.score_without,
        "meanDelta": agent.mean_delta,
        "meanDeltaInterval": interval_json(agent.mean_delta_interval),
        "meanDeltaSignificant": agent.mean_delta_significant,
        "meanDeltaDecision": decision_json(agent.mean_delta_decision),
        "runsTotal": agent.runs_total,
        "runsGraded": agent.runs_graded,
        "errors": dict(agent.errors),
        "costUsd": agent.cost_usd,
        **({"costUnknown": True} if agent.cost_unknown else {}),
        "latency": latency,
        "tokens": tokens,
    }


def _margin(raw: Any) -> float:
    value = opt_number(raw)
    return DEFAULT_MARGIN if value is None or not 0 <= value <= 1 else value


def agent_from_json(doc: Mapping[str, Any]) -> AgentSummary:
    errors = as_map(doc.get("errors"))
    return AgentSummary(
        label=str(doc.get("agent") or ""),
        spec=str(doc.get("spec") or ""),
        cases=int(doc.get("cases") or 0),
        cases_passed=int(doc.get("casesPassed") or 0),
        score=opt_number(doc.get("overallScore")),
        score_without=opt_number(doc.get("overallScoreWithout")),
        mean_delta=opt_number(doc.get("meanDelta")),
        mean_delta_interval=interval_from_json(doc.get("meanDeltaInterval")),
        mean_delta_significant=_significant(doc.get("meanDeltaSignificant")),
        mean_delta_decision=decision_from_json(doc.get("meanDeltaDecision")),
        runs_total=int(doc.get("runsTotal") or 0),
        runs_graded=int(doc.get("runsGraded") or 0),
        errors={str(k): int(v) for k, v in errors.items() if isinstance(v, int)},
        cost_usd=opt_number(doc.get("costUsd")) or 0.0,
        cost_unknown=doc.get("costUnknown") is True,
        timing=_timing(doc, int(doc.get("runsGraded") or 0)),
    )


def document_json(result: SessionResult) -> JSONObject:
    """The aggregate result document of a session (builtins only)."""
    suite = result.suite
    agg = result.aggregates
    latency, tokens = timing_json(agg.timing)
    aggregates: JSONObject = {
        "casesTotal": agg.cases_total,
        "casesPassed": agg.cases_passed,
        "overallScore": agg.overall_score,
        "overallPassRate": agg.overall_pass_rate,
        **({"meanDelta": agg.mean_delta} if agg.mean_delta is not None else {}),
        **(
            {
                "meanDeltaInterval": interval_json(agg.mean_delta_interval),
                "meanDeltaSignificant": agg.mean_delta_significant,
                "meanDeltaDecision": decision_json(agg.mean_delta_decision),
            }
            if agg.mean_delta is not None
            else {}
        ),
        "margin": agg.margin,
        "overallScoreWithout": agg.overall_score_without,
        "runsTotal": agg.runs_total,
        "runsGraded": agg.runs_graded,
        "runsErrored": agg.runs_errored,
        "runsNotMade": agg.runs_not_made,
        "runsSkipped": agg.runs_skipped,
        "runsNotStarted": agg.runs_not_started,
        "thresholdMet": agg.threshold_met,
        "reducer": agg.reducer,
        "casesUnstable": agg.cases_unstable,
        "latency": latency,
        "tokens": tokens,
        "rateLimitRetries": agg.rate_limit_retries,
        "rateLimitWaitSeconds": agg.rate_limit_wait_seconds,
    }
    return {
        "schemaVersion": SCHEMA_VERSION,
        "startedAt": result.started_at,
        "durationSeconds": result.duration_seconds,
        "costUsd": result.cost_usd,
        **({} if all(c.cost_known for c in result.cases) else {"costUnknown": True}),
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
            **(
                {"baselinePlugin": baseline_json(suite.baseline_plugins)}
                if suite.baseline_plugins
                else {}
            ),
        },
        **({"agents": [agent_json(a) for a in result.agents]} if result.agents else {}),
        "cases": [case_json(c) for c in result.cases],
        **(
            {"triggers": trigger_json(triggers)}
            if (triggers := trigger_results(result.cases))
            else {}
        ),
        "aggregates": aggregates,
        "loadErrors": [
            {"path": e.path, "line": e.line, "message": e.message} for e in result.load_errors
        ],
        "errors": dict(result.errors),
        "skipped": dict(result.skipped),
        "notStarted": [
            {
                "case": n.case,
                **({"agent": n.agent} if n.agent is not None else {}),
                "nodeid": n.nodeid,
                "runs": n.runs,
            }
            for n in result.not_started
        ],
        **({"ungated": result.ungated} if result.ungated else {}),
        **(
            {"comparison": comparison_json(result.comparison)}
            if result.comparison is not None
            else {}
        ),
        **({"shard": plan_to_json(result.shard)} if result.shard is not None else {}),
        **({"shards": [source_to_json(s) for s in result.shards]} if result.shards else {}),
    }


def dumps_document(result: SessionResult | Mapping[str, Any]) -> str:
    """The document as the JSON file holds it (UTF-8 text, two-space indent, final newline)."""
    doc = document_json(result) if isinstance(result, SessionResult) else result
    return dumps(doc, indent=2) + "\n"


# -- reading a document back -----------------------------------------------------------------


def _int(value: Any) -> int | None:
    number = opt_number(value)
    return None if number is None else int(number)


def _timing(agg: Mapping[str, Any], runs: int) -> Timing:
    latency, tokens = as_map(agg.get("latency")), as_map(agg.get("tokens"))
    return Timing(
        runs=runs,
        latency_mean=opt_number(latency.get("meanSeconds")),
        latency_p50=opt_number(latency.get("p50Seconds")),
        latency_p95=opt_number(latency.get("p95Seconds")),
        input_tokens=_int(tokens.get("input")),
        output_tokens=_int(tokens.get("output")),
        turns_mean=opt_number(tokens.get("turnsMean")),
    )


def _significant(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _case_from_json(doc: Mapping[str, Any]) -> CaseResult:
    root = str(doc.get("suiteRoot") or "")
    described = {
        **doc,
        "dir": _joined(root, doc.get("dir")),
        "path": _joined(root, doc.get("path")),
    }
    info = case_from_json(described)
    arms = as_map(doc.get("arms"))
    baseline = "baseline" in arms
    two_arm = baseline or "without" in arms

    agent = str(doc["agent"]) if doc.get("agent") else None

    def runs(arm: str) -> tuple[RunRecord, ...]:
        return tuple(
            RunRecord(str(r.get("nodeid") or ""), info, None, two_arm, run_from_json(r), agent)
            for r in arms.get(arm) or []
            if isinstance(r, Mapping)
        )

    agg = as_map(doc.get("aggregates"))
    aggregates = CaseAggregates(
        score=opt_number(agg.get("score")),
        pass_rate=opt_number(agg.get("passRate")),
        passed=bool(agg.get("passed")),
        score_without=opt_number(agg.get("scoreWithout")),
        pass_rate_without=opt_number(agg.get("passRateWithout")),
        delta=opt_number(agg.get("delta")),
        delta_note=str(agg["deltaNote"]) if agg.get("deltaNote") else None,
        runs_graded=int(agg.get("runsGraded") or 0),
        runs_errored=int(agg.get("runsErrored") or 0),
        runs_not_made=int(agg.get("runsNotMade") or 0),
        score_interval=interval_from_json(agg.get("scoreInterval")),
        pass_rate_interval=interval_from_json(agg.get("passRateInterval")),
        score_without_interval=interval_from_json(agg.get("scoreWithoutInterval")),
        pass_rate_without_interval=interval_from_json(agg.get("passRateWithoutInterval")),
        delta_interval=interval_from_json(agg.get("deltaInterval")),
        delta_significant=_significant(agg.get("deltaSignificant")),
        delta_decision=decision_from_json(agg.get("deltaDecision")),
        sequential=_sequential_from(agg.get("sequential")),
        reducer=str(agg.get("reducer") or "mean"),
        unstable=tuple(str(a) for a in agg.get("unstable") or () if isinstance(a, str)),
        timing=_timing(agg, int(agg.get("runsGraded") or 0)),
    )
    notes = doc.get("notes")
    return CaseResult(
        case=info,
        two_arm=two_arm,
        with_runs=runs("with"),
        without_runs=runs("baseline" if baseline else "without"),
        aggregates=aggregates,
        notes=str(notes) if notes else None,
        baseline=baseline,
        agent=agent,
    )


def _joined(root: str, rel: Any) -> str:
    if not rel:
        return root
    if not root or PurePath(str(rel)).is_absolute():
        return str(rel)
    return str(PurePath(root, str(rel))) if rel != "." else root


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


def load_document(doc: Mapping[str, Any]) -> SessionResult:
    """The :class:`SessionResult` a result document describes (ours or the reference's);
    :class:`DocumentError` when it is not one (see :func:`read_document`)."""
    check_document(doc, SCHEMA_VERSION)
    suite = as_map(doc.get("suite"))
    agg = as_map(doc.get("aggregates"))
    plugins = tuple(p for p in map(plugin_from_json, suite.get("plugins") or []) if p is not None)
    cases = tuple(_case_from_json(c) for c in doc.get("cases") or [] if isinstance(c, Mapping))
    root = str(suite.get("root") or "")
    return SessionResult(
        started_at=str(doc.get("startedAt") or ""),
        duration_seconds=opt_number(doc.get("durationSeconds")) or 0.0,
        cost_usd=opt_number(doc.get("costUsd")) or 0.0,
        partial=bool(doc.get("partial")),
        partial_reason=str(doc["partialReason"]) if doc.get("partialReason") else None,
        suite=SuiteInfo(
            root=suite.get("root"),
            ablation=str(suite.get("ablation") or "none"),
            threshold=opt_number(suite.get("threshold")) or 0.0,
            concurrency=int(suite.get("concurrency") or 1),
            agent=str(suite.get("agent") or ""),
            case_filter=suite.get("caseFilter"),
            tag_filters=tuple(suite.get("tagFilters") or ()),
            plugins=plugins,
            baseline_plugins=baseline_from_json(suite.get("baselinePlugin")),
        ),
        cases=cases,
        aggregates=SuiteAggregates(
            cases_total=int(agg.get("casesTotal") or 0),
            cases_passed=int(agg.get("casesPassed") or 0),
            overall_score=opt_number(agg.get("overallScore")),
            overall_pass_rate=opt_number(agg.get("overallPassRate")),
            mean_delta=opt_number(agg.get("meanDelta")),
            overall_score_without=opt_number(agg.get("overallScoreWithout")),
            runs_total=int(agg.get("runsTotal") or 0),
            runs_graded=int(agg.get("runsGraded") or 0),
            runs_errored=int(agg.get("runsErrored") or 0),
            runs_not_made=int(agg.get("runsNotMade") or 0),
            runs_skipped=int(agg.get("runsSkipped") or 0),
            runs_not_started=int(agg.get("runsNotStarted") or 0),
            threshold_met=bool(agg.get("thresholdMet")),
            mean_delta_interval=interval_from_json(agg.get("meanDeltaInterval")),
            mean_delta_significant=_significant(agg.get("meanDeltaSignificant")),
            mean_delta_decision=decision_from_json(agg.get("meanDeltaDecision")),
            margin=_margin(agg.get("margin")),
            reducer=str(agg.get("reducer") or "mean"),
            cases_unstable=int(agg.get("casesUnstable") or 0),
            timing=_timing(agg, int(agg.get("runsGraded") or 0)),
            rate_limit_retries=int(agg.get("rateLimitRetries") or 0),
            rate_limit_wait_seconds=opt_number(agg.get("rateLimitWaitSeconds")) or 0.0,
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
            NotStarted(
                str(n.get("nodeid", "")),
                str(n.get("case", "")),
                int(n.get("runs") or 0),
                str(n["agent"]) if n.get("agent") else None,
            )
            for n in doc.get("notStarted") or []
            if isinstance(n, Mapping)
        ),
        ungated=str(doc["ungated"]) if doc.get("ungated") else None,
        comparison=comparison_from_json(doc.get("comparison")),
        shard=plan_from_json(doc.get("shard")),
        shards=tuple(s for s in map(source_from_json, doc.get("shards") or ()) if s is not None),
        agents=tuple(agent_from_json(a) for a in doc.get("agents") or () if isinstance(a, Mapping)),
    )
