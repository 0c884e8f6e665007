"""The aggregate result document (``schemaVersion: 1``): written and read back.

:func:`document_json` is the one serializer of ``aggregate-result.json``: the reference's field
names are never renamed, ours are added (``loadErrors``, ``errors``, ``notes``,
``aggregates.thresholdMet`` …). :func:`load_document` (:mod:`.document_read`) reads such a
document back into the :class:`~pytest_plugin_evals.reporting.result.SessionResult` it
describes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from pytest_plugin_evals.model import BaselinePlugin
from pytest_plugin_evals.records import (
    JSONObject,
    RunRecord,
    case_to_json,
    dumps,
    plugin_to_json,
    run_to_json,
)
from pytest_plugin_evals.reporting.aa import calibrate, calibration_json
from pytest_plugin_evals.reporting.agreement import judge_agreement_json
from pytest_plugin_evals.reporting.compare import (
    comparison_json,
    decision_json,
)
from pytest_plugin_evals.reporting.document_error import DocumentError as DocumentError
from pytest_plugin_evals.reporting.document_read import SCHEMA_VERSION as SCHEMA_VERSION
from pytest_plugin_evals.reporting.document_read import load_document as load_document
from pytest_plugin_evals.reporting.document_read import read_document as read_document
from pytest_plugin_evals.reporting.efficiency import case_efficiency, efficiency_json, suite_figures
from pytest_plugin_evals.reporting.grader_splits import grader_splits, split_json
from pytest_plugin_evals.reporting.result import (
    AgentSummary,
    CaseResult,
    SessionResult,
    relative,
)
from pytest_plugin_evals.reporting.triggers import trigger_json, trigger_results
from pytest_plugin_evals.reporting.verdict_lines import new_case_delta
from pytest_plugin_evals.scoring import (
    CaseAggregates,
    Timing,
)
from pytest_plugin_evals.shards import (
    plan_to_json,
    source_to_json,
)
from pytest_plugin_evals.stats import Interval

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


def _run_json(record: RunRecord) -> JSONObject:
    return {**run_to_json(record.result), "nodeid": record.nodeid}


def reference_dir(case: CaseResult) -> str:
    """The case folder as the reference writes ``dir``: relative to the plugin under test's
    folder when the case lies in it (``evals/group/alpha``), else to the suite root."""
    plugin = next((r.plugin for r in case.runs if r.plugin is not None), None)
    if plugin is not None:
        try:
            return PurePath(case.case.dir).relative_to(str(plugin.path)).as_posix() or "."
        except ValueError:
            pass
    return case.dir


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
        "dir": reference_dir(case),
        "suiteDir": relative(info.dir, root),
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
        "aggregates": {
            **_aggregates_json(case.aggregates, case.two_arm),
            **({"efficiency": efficiency_json(found)} if (found := case_efficiency(case)) else {}),
        },
        **(
            {}
            if case.trigger_query
            else {"graderSplits": list(map(split_json, grader_splits(case)))}
        ),
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
                "newCaseDeltaInterval": interval_json(new_case_delta(result)),
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
        **({"efficiency": figures} if (figures := suite_figures(result)) else {}),
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
            **(
                {"notSelected": [{"name": n, "dir": d} for n, d in suite.not_selected]}
                if suite.not_selected
                else {}
            ),
            **({"aa": True} if suite.aa else {}),
        },
        **({"agents": [agent_json(a) for a in result.agents]} if result.agents else {}),
        "cases": [case_json(c) for c in result.cases],
        **(
            {"triggers": trigger_json(triggers)}
            if (triggers := trigger_results(result.cases))
            else {}
        ),
        "aggregates": aggregates,
        **({"aa": calibration_json(aa)} if (aa := calibrate(result)) is not None else {}),
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
        **judge_agreement_json(result),
        **({"shards": [source_to_json(s) for s in result.shards]} if result.shards else {}),
    }


def dumps_document(result: SessionResult | Mapping[str, Any]) -> str:
    """The document as the JSON file holds it (UTF-8 text, two-space indent, final newline)."""
    doc = document_json(result) if isinstance(result, SessionResult) else result
    return dumps(doc, indent=2) + "\n"
