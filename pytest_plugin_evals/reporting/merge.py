"""One result from the results folders of a suite's shards (``--eval-shard K/N``).

:func:`read_shard` reads a shard's folder, :func:`check` refuses shards that do not belong
together (one line saying why), :func:`merge` re-summarizes every shard's runs into one
:class:`SessionResult` — case aggregates, intervals and the gate are computed afresh from the
runs, never averaged from the shards' numbers — and :func:`write` makes the merged results
folder: ``aggregate-result.json``, ``report.html`` and the recorded runs under ``runs/``, so
``--eval-agent replay:<folder>`` replays it. :func:`exit_status` is the gate's status, as a
session's.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from glob import escape
from pathlib import Path, PurePath
from typing import Any

from pytest_plugin_evals.records import Record, RunRecord
from pytest_plugin_evals.reporting.document import DocumentError, dumps_document, load_document
from pytest_plugin_evals.reporting.result import NotStarted, SessionResult, session_gate, summarize
from pytest_plugin_evals.shards import ShardCase, ShardPlan, ShardSource
from pytest_plugin_evals.util.inert import is_inert, mark_inert

DOCUMENT = "aggregate-result.json"
REPORT = "report.html"

#: ``partialReason`` of a merge that lacks some shards' results.
MISSING_SHARDS = "missing_shards"

#: A shard's reasons for a partial result, the first found wins (as in a session).
_PARTIAL_ORDER = ("cost_ceiling", "auth_failed", "maxfail", "interrupted")

#: How the merge names the settings it compares.
_SETTING_NAMES = {
    "threshold": "--eval-threshold",
    "ablation": "--eval-ablation",
    "agent": "--eval-agent",
    "runs": "--eval-runs",
    "model": "--eval-model",
    "judge": "--eval-judge",
    "judgeModel": "--eval-judge-model",
    "noJudge": "--eval-no-judge",
    "mocks": "--eval-mocks",
    "caseFilter": "--eval-case",
    "tagFilters": "--eval-tag",
    "reducer": "--eval-reducer",
    "caseReducers": "eval_case_reducers",
    "baselinePlugin": "--eval-baseline-plugin",
}


class MergeError(ValueError):
    """Shards that cannot be merged, and why (one line)."""


@dataclass(frozen=True)
class ShardResults:
    """One shard's results folder, read."""

    folder: Path
    result: SessionResult
    plan: ShardPlan

    @property
    def label(self) -> str:
        return f"shard {self.plan.index}/{self.plan.total} ({self.folder})"


@dataclass(frozen=True)
class Merged:
    """The merged result, and what it lacks."""

    result: SessionResult
    #: The shards whose results were not given (their numbers, from 1).
    missing_shards: tuple[int, ...]
    #: The cases of those shards.
    missing_cases: tuple[ShardCase, ...]
    total: int


def read_shard(folder: Path) -> ShardResults:
    """A shard's results folder: its document (which must record the split)."""
    path = folder / DOCUMENT
    if not folder.is_dir():
        raise MergeError(f"{folder}: no such folder (expected a shard's results folder)")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MergeError(
            f"{folder}: no {DOCUMENT} there (expected a shard's results folder)"
        ) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MergeError(f"{path}: cannot be read: {exc}") from None
    try:
        result = load_document(doc)
    except DocumentError as exc:
        raise MergeError(f"{path}: {exc}") from None
    if result.shard is None:
        raise MergeError(
            f"{folder}: not the results of a shard (run each shard with --eval-shard K/N)"
        )
    return ShardResults(folder, result, result.shard)


def _show(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return " ".join(_show(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value) if isinstance(value, str) else str(value)


def _one(shards: Sequence[ShardResults], what: str, value: Any, show: Any = _show) -> None:
    """Refuse shards that differ in ``value(shard)``: ``what`` names it in the line."""
    first = shards[0]
    for other in shards[1:]:
        if value(other) != value(first):
            raise MergeError(
                f"cannot merge shards with different {what}: {show(value(first))} in "
                f"{first.label}, {show(value(other))} in {other.label}"
            )


def _identity(shard: ShardResults) -> list[tuple[str, str, str, int]]:
    return [(c.nodeid, c.name, c.key, c.runs) for c in shard.plan.cases]


def _plugins(shard: ShardResults) -> list[tuple[str, str | None]]:
    return sorted({(p.name, p.version) for p in shard.result.suite.plugins})


def check(shards: Sequence[ShardResults], *, threshold_given: bool = False) -> None:
    """Refuse shards that are not parts of one split of one suite under the same settings."""
    if not shards:
        raise MergeError("no shard to merge")
    by_index: dict[int, ShardResults] = {}
    _one(shards, "splits", lambda s: s.plan.total, show=lambda n: f"{n} shards")
    for shard in shards:
        seen = by_index.get(shard.plan.index)
        if seen is not None:
            raise MergeError(
                f"cannot merge: shard {shard.plan.index}/{shard.plan.total} is given twice "
                f"({seen.folder} and {shard.folder})"
            )
        by_index[shard.plan.index] = shard
    _one(shards, "versions of pytest-plugin-evals", lambda s: s.plan.version)
    _one(
        shards,
        "suites or selections of cases",
        _identity,
        show=lambda cases: f"{len(cases)} selected case(s)",
    )
    _one(
        shards,
        "plugins under test",
        _plugins,
        show=lambda ps: ", ".join(f"{n} {v or '(no version)'}" for n, v in ps) or "none",
    )
    settings = sorted({key for s in shards for key in s.plan.settings})
    for key in settings:
        if key == "threshold" and threshold_given:
            continue  # the merge applies its own
        _one(shards, _SETTING_NAMES.get(key, key), lambda s, k=key: s.plan.settings.get(k))
    _one(
        shards,
        "splits of the suite (give every shard the same --eval-shard-durations)",
        lambda s: [c.shard for c in s.plan.cases],
        show=lambda _: "",
    )


def _moved_trace(trace: str, shard: Path, runs_dir: Path) -> str:
    """A run's trace path in the merged folder (it was in the shard's ``runs/`` folder)."""
    if not trace:
        return ""
    parts = PurePath(trace).parts
    if len(parts) < 4 or parts[-4] != "runs":
        return trace
    rel = Path(*parts[-3:])
    if not (shard / "runs" / rel).is_file():
        return trace
    return str(runs_dir / rel)


def _records(shard: ShardResults, runs_dir: Path | None) -> Iterable[RunRecord]:
    for case in shard.result.cases:
        for record in case.runs:
            if runs_dir is not None:
                moved = _moved_trace(record.result.trace_path, shard.folder, runs_dir)
                if moved != record.result.trace_path:
                    record = replace(record, result=replace(record.result, trace_path=moved))
            yield record


def _instant(iso: str) -> float | None:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _iso(moment: float) -> str:
    when = datetime.fromtimestamp(moment, tz=timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _span(shards: Sequence[ShardResults]) -> tuple[str, float]:
    """When the first shard started, and the wall time until the last one finished."""
    spans = [
        (start, start + s.result.duration_seconds)
        for s in shards
        if (start := _instant(s.result.started_at)) is not None
    ]
    if not spans:
        return shards[0].result.started_at, max(s.result.duration_seconds for s in shards)
    first = min(start for start, _ in spans)
    return _iso(first), round(max(end for _, end in spans) - first, 3)


def _partial_reason(shards: Sequence[ShardResults], missing: bool) -> str | None:
    if missing:
        return MISSING_SHARDS
    reasons = {s.result.partial_reason for s in shards if s.result.partial}
    return next((r for r in _PARTIAL_ORDER if r in reasons), None)


def merge(
    shards: Sequence[ShardResults],
    *,
    threshold: float | None = None,
    runs_dir: Path | None = None,
) -> Merged:
    """The shards' runs summarized as one session (``check`` them first).

    ``threshold`` replaces the shards' own; ``runs_dir`` is where the merged folder keeps the
    runs (the runs' ``tracePath`` then points there).
    """
    shards = sorted(shards, key=lambda s: s.plan.index)
    first = shards[0]
    total = first.plan.total
    present = {s.plan.index for s in shards}
    missing_shards = tuple(i for i in range(1, total + 1) if i not in present)
    missing_cases = tuple(c for c in first.plan.cases if c.shard in missing_shards)
    records: list[Record] = [r for s in shards for r in _records(s, runs_dir)]
    seen_errors: set[tuple[str, int | None, str]] = set()
    for shard in shards:  # every shard reports a case file that cannot be loaded: once here
        for error in shard.result.load_errors:
            key = (error.path, error.line, error.message)
            if key not in seen_errors:
                seen_errors.add(key)
                records.append(error)
    not_started = [n for s in shards for n in s.result.not_started]
    not_started += [NotStarted(c.nodeid, c.name, c.runs) for c in missing_cases]
    suite = first.result.suite
    reducer = first.result.aggregates.reducer
    case_reducers = sorted(
        {
            (escape(c.name), c.aggregates.reducer)
            for s in shards
            for c in s.result.cases
            if c.aggregates.reducer != reducer
        }
    )
    roots = {s.result.suite.root for s in shards if s.result.cases}
    started_at, duration = _span(shards)
    two_arm = [s.result.suite.ablation for s in shards if s.result.cases]
    result = summarize(
        records,
        started_at=started_at,
        duration_seconds=duration,
        threshold=suite.threshold if threshold is None else threshold,
        ablation=next((a for a in two_arm if a != "none"), two_arm[0] if two_arm else "none"),
        concurrency=sum(s.result.suite.concurrency for s in shards),
        agent=suite.agent,
        root=roots.pop() if len(roots) == 1 else None,
        case_filter=suite.case_filter,
        tag_filters=suite.tag_filters,
        partial_reason=_partial_reason(shards, bool(missing_shards)),
        not_started=not_started,
        reducer=reducer,
        case_reducers=case_reducers,
        baseline_plugins=suite.baseline_plugins,
        # Each shard's own pause (its processes slow down together); the shards' add up.
        rate_limit_wait_seconds=sum(s.result.aggregates.rate_limit_wait_seconds for s in shards),
        agents=[(a.label, a.spec) for a in first.result.agents],
    )
    skipped: dict[str, int] = {}
    for shard in shards:
        for reason, count in shard.result.skipped.items():
            skipped[reason] = skipped.get(reason, 0) + count
    plugins = {(p.name, str(p.path)): p for s in shards for p in s.result.suite.plugins}
    result = replace(
        result,
        suite=replace(result.suite, plugins=tuple(plugins[k] for k in sorted(plugins))),
        skipped=dict(sorted(skipped.items())),
        aggregates=replace(result.aggregates, runs_skipped=sum(skipped.values())),
        shards=tuple(
            ShardSource(
                path=str(s.folder),
                index=s.plan.index,
                total=s.plan.total,
                started_at=s.result.started_at,
                duration_seconds=s.result.duration_seconds,
                cases=tuple(c.name for c in s.plan.cases_of(s.plan.index)),
            )
            for s in shards
        ),
    )
    return Merged(result, missing_shards, missing_cases, total)


def exit_status(result: SessionResult) -> int:
    """The merged gate's exit status, as a session's: 2 when the result is partial for want
    of runs (a missing shard, a cost ceiling, a rejected credential, an interruption), 1 when
    the threshold is not met or a case file did not load or a run could not be made, else 0."""
    reason = result.partial_reason
    if reason in (MISSING_SHARDS, "cost_ceiling", "auth_failed", "interrupted"):
        return 2
    verdict, ungated = session_gate(result.cases, result.threshold)
    failed = (
        bool(result.load_errors) or bool(result.errors) or (ungated is None and not verdict.met)
    )
    if reason == "maxfail":
        return 1 if failed else 2
    return 1 if failed else 0


def _names(cases: Sequence[ShardCase], limit: int = 10) -> str:
    names = [c.name for c in cases]
    shown = ", ".join(names[:limit])
    return shown + (f", … ({len(names) - limit} more)" if len(names) > limit else "")


def gate_lines(merged: Merged) -> list[str]:
    """What the merge says under its table: where the runs came from, and the gate."""
    result = merged.result
    lines = [
        f"merged {len(result.shards)} of {merged.total} shard(s): "
        + ", ".join(f"{s.index}/{s.total} ({len(s.cases)} case(s))" for s in result.shards)
    ]
    if merged.missing_shards:
        which = ", ".join(f"{i}/{merged.total}" for i in merged.missing_shards)
        lines.append(
            f"missing shard(s) {which}: {len(merged.missing_cases)} case(s) not run: "
            f"{_names(merged.missing_cases)}; the result is partial and no threshold is met "
            "(exit status 2)"
        )
        return lines
    reason = result.partial_reason
    if reason in _PARTIAL_ORDER:
        why = {
            "cost_ceiling": "a shard's cost ceiling stopped runs from starting",
            "auth_failed": "a run could not authenticate and a shard started no more runs",
            "maxfail": "a shard stopped at -x/--maxfail",
            "interrupted": "a shard was interrupted",
        }[reason]
        lines.append(f"{why}: the result is partial and no threshold is met")
        return lines
    verdict, ungated = session_gate(result.cases, result.threshold)
    lines.append(ungated or verdict.message)
    return lines


def write(merged: Merged, shards: Sequence[ShardResults], out: Path) -> list[Path]:
    """Make the merged results folder: the runs of every shard under ``runs/``, the document
    and the HTML report. Returns the document's and the report's paths."""
    from pytest_plugin_evals.reporting.html import render_html

    for shard in shards:
        if out.resolve() == shard.folder.resolve():
            raise MergeError(f"--output-dir {out} is a shard's folder: name another folder")
    runs = out / "runs"
    if runs.exists():
        if not is_inert(runs):
            raise MergeError(f"{runs} exists and holds no recorded runs: name another folder")
        shutil.rmtree(runs)
    mark_inert(runs)
    for shard in shards:
        source = shard.folder / "runs"
        if not source.is_dir():
            continue
        for case in sorted(source.iterdir()):
            if case.is_dir() and not case.is_symlink():
                shutil.copytree(case, runs / case.name, symlinks=True, dirs_exist_ok=True)
    document = out / DOCUMENT
    report = out / REPORT
    document.write_text(dumps_document(merged.result), encoding="utf-8")
    report.write_text(render_html(merged.result), encoding="utf-8")
    return [document, report]
