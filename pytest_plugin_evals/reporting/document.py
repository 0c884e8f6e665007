"""The aggregate result document (``schemaVersion: 1``), built from the items' plain records.

Compatible with the reference's document: its field names are never renamed, ours are added
(``loadErrors``, ``errors``, ``notes``, ``aggregates.thresholdMet`` ...). Built only from
builtins so the controller of an xdist run builds the same document as a plain run; cases and
runs are sorted, so the order the records arrived in does not matter.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import PurePath
from typing import Any

from ..scoring import case_aggregates, clean, gate, is_graded, mean

SCHEMA_VERSION = 1

#: ``partialReason`` when runs could not be made and no other reason was given.
INFRA_PARTIAL_REASON = "infra_errors"


def _relative(path: str | None, root: str | None) -> str:
    if not path:
        return ""
    if root:
        try:
            rel = PurePath(path).relative_to(root)
        except ValueError:
            return PurePath(path).as_posix()
        return rel.as_posix() or "."
    return PurePath(path).as_posix()


def _dedupe(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """One record per nodeid, the last one received winning (setup and call both report)."""
    by_id: dict[str, Mapping[str, Any]] = {}
    for index, record in enumerate(records):
        key = record.get("nodeid") or f"#{index}"
        by_id.pop(key, None)
        by_id[key] = record
    return list(by_id.values())


def _case_key(case: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (
        str(case.get("suiteRoot") or ""),
        _relative(case.get("dir"), case.get("suiteRoot")),
        str(case.get("name") or ""),
        str(case.get("path") or ""),
    )


def case_notes(with_runs: list[Mapping[str, Any]]) -> str | None:
    """The NOTES of a case: the first with-arm run error (runs in order), else the failing
    scored grader with the highest weight (the first one wins ties)."""
    for run in with_runs:
        if run.get("infraError"):
            message = run.get("error")
            return f"error: {run['infraError']}" + (f": {message}" if message else "")
        if run.get("error"):
            return str(run["error"])
        if run.get("aborted"):
            aborted = run["aborted"]
            return f"aborted by mock {aborted.get('server')}/{aborted.get('tool')}: " + str(
                aborted.get("reason", "")
            )
    worst: Mapping[str, Any] | None = None
    for run in with_runs:
        if not is_graded(run):
            continue
        for verdict in run.get("graders") or []:
            if verdict.get("passed") or not verdict.get("scored", True) or "skipped" in verdict:
                continue
            if worst is None or float(verdict.get("weight", 1)) > float(worst.get("weight", 1)):
                worst = verdict
    if worst is None:
        return None
    return f"{worst.get('name')}: {worst.get('explanation', '')}"


def _case_entry(
    case: Mapping[str, Any], runs: list[Mapping[str, Any]], two_arm: bool, threshold: float
) -> dict[str, Any]:
    root = case.get("suiteRoot")
    with_runs = sorted((r for r in runs if r.get("arm") != "without"), key=_run_order)
    without_runs = sorted((r for r in runs if r.get("arm") == "without"), key=_run_order)
    arms: dict[str, list[Mapping[str, Any]]] = {"with": with_runs}
    if two_arm:
        arms["without"] = without_runs
    entry: dict[str, Any] = {
        "name": case.get("name"),
        "dir": _relative(case.get("dir"), root),
        "source": case.get("source"),
        "promptMarkdown": case.get("promptMarkdown"),
        **({"model": case["model"]} if case.get("model") else {}),
        "runsPerCase": case.get("runsPerCase"),
        "timeoutSeconds": case.get("timeoutSeconds"),
        "maxTurns": case.get("maxTurns"),
        "tags": list(case.get("tags") or []),
        "description": case.get("description"),
        "path": _relative(case.get("path"), root),
        "suiteRoot": root,
        "graders": list(case.get("graders") or []),
        "arms": arms,
        "aggregates": case_aggregates(with_runs, without_runs if two_arm else None, threshold),
        "notes": case_notes(with_runs),
    }
    return entry


def _run_order(run: Mapping[str, Any]) -> tuple[int, str]:
    return int(run.get("run") or 0), str(run.get("nodeid") or "")


def build_document(
    records: Iterable[Mapping[str, Any]],
    *,
    started_at: str,
    duration_seconds: float,
    threshold: float,
    ablation: str,
    concurrency: int,
    agent: str,
    root: str | None = None,
    case_filter: str | None = None,
    tag_filters: list[str] | None = None,
    partial_reason: str | None = None,
) -> dict[str, Any]:
    """The aggregate document from the items' records (``kind: run`` / ``kind: load_error``)."""
    cases: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    load_errors: list[dict[str, Any]] = []
    plugins: dict[tuple[str, str], dict[str, Any]] = {}
    skipped: Counter[str] = Counter()
    for record in _dedupe(records):
        if record.get("kind") == "load_error":
            load_errors.append(
                {
                    "path": record.get("path"),
                    "line": record.get("line"),
                    "message": record.get("message"),
                    "suiteRoot": record.get("suiteRoot"),
                }
            )
            continue
        if record.get("kind") != "run":
            continue
        case = record.get("case") or {}
        slot = cases.setdefault(_case_key(case), {"case": case, "runs": [], "twoArm": False})
        slot["case"] = case
        slot["twoArm"] = slot["twoArm"] or bool(record.get("twoArm"))
        plugin = record.get("plugin")
        if plugin:
            plugins[(str(plugin.get("name")), str(plugin.get("path")))] = dict(plugin)
        result = dict(record.get("result") or {})
        if result.get("skipped"):
            skipped[str(result["skipped"])] += 1
            continue
        result["arm"] = record.get("arm", result.get("arm"))
        result["nodeid"] = record.get("nodeid")
        slot["runs"].append(result)
        slot["twoArm"] = slot["twoArm"] or result["arm"] == "without"

    entries = [
        _case_entry(slot["case"], slot["runs"], slot["twoArm"], threshold)
        for _, slot in sorted(cases.items(), key=lambda kv: kv[0])
        if slot["runs"]
    ]
    every_run = [r for e in entries for arm in e["arms"].values() for r in arm]
    errors = Counter(str(r["infraError"]) for r in every_run if r.get("infraError"))
    errors_sorted = dict(sorted(errors.items(), key=lambda kv: (-kv[1], kv[0])))
    partial = bool(partial_reason) or bool(errors)

    roots = {str(e["suiteRoot"]) for e in entries if e.get("suiteRoot")}
    suite: dict[str, Any] = {
        "root": root if root is not None else (roots.pop() if len(roots) == 1 else None),
        "ablation": ablation,
        "threshold": threshold,
        "concurrency": concurrency,
        "agent": agent,
        **({"caseFilter": case_filter} if case_filter else {}),
        **({"tagFilters": list(tag_filters)} if tag_filters else {}),
        "plugins": [plugins[k] for k in sorted(plugins)],
    }
    scored = [e["aggregates"] for e in entries if e["aggregates"]["score"] is not None]
    deltas = [a["delta"] for a in scored if a.get("delta") is not None]
    aggregates: dict[str, Any] = {
        "casesTotal": len(entries),
        "casesPassed": sum(1 for e in entries if e["aggregates"]["passed"]),
        "overallScore": mean([a["score"] for a in scored]),
        "overallPassRate": mean([a["passRate"] for a in scored]),
        **({"meanDelta": mean(deltas)} if deltas else {}),
        "overallScoreWithout": mean(
            [a["scoreWithout"] for a in scored if a.get("scoreWithout") is not None]
        ),
        "runsTotal": len(every_run),
        "runsGraded": sum(1 for r in every_run if is_graded(r)),
        "runsErrored": sum(1 for r in every_run if is_graded(r) and r.get("error")),
        "runsNotMade": sum(errors.values()),
        "runsSkipped": sum(skipped.values()),
    }
    load_errors.sort(key=lambda e: (str(e["path"]), e["line"] or 0, str(e["message"])))
    document: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "startedAt": started_at,
        "durationSeconds": clean(duration_seconds),
        "costUsd": clean(sum(float(r.get("costUsd") or 0.0) for r in every_run)),
        "partial": partial,
        **({"partialReason": partial_reason or INFRA_PARTIAL_REASON} if partial else {}),
        "suite": suite,
        "cases": entries,
        "aggregates": aggregates,
        "loadErrors": [{k: v for k, v in e.items() if k != "suiteRoot"} for e in load_errors],
        "errors": errors_sorted,
        "skipped": dict(sorted(skipped.items())),
    }
    aggregates["thresholdMet"] = gate(document, threshold).met
    return document


def dumps_document(document: Mapping[str, Any]) -> str:
    """The document as the JSON file holds it (UTF-8 text, two-space indent, final newline)."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
