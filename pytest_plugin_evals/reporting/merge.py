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

import os
import shutil
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from glob import escape
from pathlib import Path, PurePath, PurePosixPath
from typing import Any

from pytest_plugin_evals.model import ExitStatus, within_session_caps
from pytest_plugin_evals.records import Record, RunRecord
from pytest_plugin_evals.reporting.aa import calibrate, calibration_line
from pytest_plugin_evals.reporting.document import DocumentError, dumps_document, read_document
from pytest_plugin_evals.reporting.result import (
    NotStarted,
    SessionFacts,
    SessionResult,
    session_gate,
    summarize,
)
from pytest_plugin_evals.scoring import ScoringRules
from pytest_plugin_evals.shards import ShardCase, ShardPlan, ShardSource
from pytest_plugin_evals.util.capture import MAX_KEPT_FILE, capture_stream
from pytest_plugin_evals.util.inert import inert_path, is_inert, mark_inert
from pytest_plugin_evals.util.plainfiles import NotPlain, open_plain, plain_files, plain_folder

DOCUMENT = "aggregate-result.json"
REPORT = "report.html"
#: A recorded run's trace, in its folder (``runs/<case key>/<arm>-<run>/``).
TRACE = "trace.jsonl"

#: The most shards a split may have, as a merge reads it.
MAX_SHARDS = 10_000

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
    """A shard's results folder: its document (which must record the split), read only as
    written: a document that is a link, is not JSON, holds a number JSON cannot hold or a
    field of the wrong type, or records a split that cannot be, is one :class:`MergeError`."""
    path = folder / DOCUMENT
    if not folder.is_dir():
        raise MergeError(f"{folder}: no such folder (expected a shard's results folder)")
    try:
        with open_plain(path) as fh:
            data = fh.read()
    except NotPlain as exc:
        if exc.kind == "missing":
            raise MergeError(
                f"{folder}: no {DOCUMENT} there (expected a shard's results folder)"
            ) from None
        raise MergeError(f"{path}: {exc.detail}: refused") from None
    except OSError as exc:
        raise MergeError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MergeError(f"{path}: not UTF-8 text (at byte {exc.start})") from None
    try:
        result = read_document(text)
    except DocumentError as exc:
        raise MergeError(f"{path}: {exc}") from None
    except (ValueError, TypeError, AttributeError, KeyError, ArithmeticError, RecursionError):
        raise MergeError(f"{path}: not a result document this version can read") from None
    if result.shard is None:
        raise MergeError(
            f"{folder}: not the results of a shard (run each shard with --eval-shard K/N)"
        )
    _check_plan(path, result.shard)
    return ShardResults(folder, result, result.shard)


def _folder_name(key: str) -> bool:
    """Whether ``key`` names one folder (no separator, not ``.`` or ``..``)."""
    return (
        key not in ("", ".", "..")
        and not any(c in key for c in "/\\\0")
        and PurePath(key).name == key
    )


def _check_plan(path: Path, plan: ShardPlan) -> None:
    """Refuse a recorded split that no session makes (one line, with the field's path)."""

    def bad(problem: str, at: str) -> MergeError:
        return MergeError(f"{path}: {problem} (at $.shard{at})")

    if not 1 <= plan.total <= MAX_SHARDS:
        raise bad(f"a split into {plan.total} shards (1 to {MAX_SHARDS:,} are read)", ".total")
    if not 1 <= plan.index <= plan.total:
        raise bad(f"shard {plan.index} of {plan.total}: not one of them", ".index")
    nodeids: set[str] = set()
    keys: set[str] = set()
    for i, case in enumerate(plan.cases):
        at = f".suiteCases[{i}]"
        if not case.nodeid or case.nodeid in nodeids:
            raise bad(f"the case {case.nodeid!r} is listed twice or without a node id", at)
        if not _folder_name(case.key) or case.key in keys:
            raise bad(f"the case key {case.key!r} is not a folder name of its own", f"{at}.key")
        if not 1 <= case.shard <= plan.total:
            raise bad(f"the case {case.name!r} goes to shard {case.shard} of {plan.total}", at)
        nodeids.add(case.nodeid)
        keys.add(case.key)


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
    _check_cases(shards)


def case_of_run(nodeid: str) -> str:
    """The node id of the case a run item belongs to: the item's id without its run label
    (``evals/x::x[with-2]`` is ``evals/x::x``), as the split names the case."""
    head, bracket, _ = nodeid.rpartition("[")
    return head if bracket else nodeid


def _held(shard: ShardResults) -> dict[str, str]:
    """The cases a shard's document holds (runs made, or runs it never got to): node id ->
    name."""
    held: dict[str, str] = {}
    for case in shard.result.cases:
        for record in case.runs:
            held.setdefault(case_of_run(record.nodeid), case.case.name)
    for missing in shard.result.not_started:
        held.setdefault(missing.nodeid, missing.case)
    return held


def _check_cases(shards: Sequence[ShardResults]) -> None:
    """Every shard holds the cases its split gives its index, and no other: a document
    relabelled as another shard, or a case in two shards, is refused."""
    plan = shards[0].plan
    split = {c.nodeid: c for c in plan.cases}
    where: dict[str, ShardResults] = {}
    for shard in shards:
        held = _held(shard)
        for nodeid, name in held.items():
            seen = where.setdefault(nodeid, shard)
            if seen is not shard:
                raise MergeError(
                    f"cannot merge: the case {name!r} is in {seen.label} and in {shard.label}"
                )
        for nodeid, name in held.items():
            case = split.get(nodeid)
            if case is None:
                raise MergeError(
                    f"cannot merge: {shard.label} holds runs of {name!r}, which its split of "
                    "the suite does not list"
                )
            if case.shard != shard.plan.index:
                raise MergeError(
                    f"cannot merge: {shard.label} holds the case {name!r}, which its split "
                    f"gives to shard {case.shard}/{plan.total} (was the document relabelled?)"
                )
        own = plan.cases_of(shard.plan.index)
        lacking = [c for c in own if c.nodeid not in held]
        if sum(c.runs for c in lacking) > sum(shard.result.skipped.values()):
            raise MergeError(
                f"cannot merge: {shard.label} lacks {len(lacking)} of the {len(own)} case(s) "
                f"its split gives it ({_names(lacking, 3)}): it neither ran nor skipped them"
            )


def _moved_trace(trace: str, shard: ShardResults, runs_dir: Path) -> str:
    """A run's trace path in the merged folder: where the merge copies it from the shard's
    ``runs/<case key>/<run>/`` (a case of that shard), else "" (a document's path that leads
    anywhere else is never kept)."""
    parts = PurePath(trace).parts if trace else ()
    if len(parts) < 4 or parts[-4] != "runs" or parts[-1] != TRACE:
        return ""
    key, run = parts[-3], parts[-2]
    own = {c.key for c in shard.plan.cases_of(shard.plan.index)}
    if key not in own or not _folder_name(run):
        return ""
    try:
        st = os.lstat(shard.folder / "runs" / key / run / TRACE)
    except OSError:
        return ""
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        return ""
    return str(runs_dir / key / run / TRACE)


def _records(shard: ShardResults, runs_dir: Path | None) -> Iterable[RunRecord]:
    """The shard's runs as a session keeps them (its caps re-applied, see
    :func:`~pytest_plugin_evals.model.within_session_caps`), their traces where the merged
    folder keeps them."""
    for case in shard.result.cases:
        for record in case.runs:
            result = within_session_caps(record.result)
            if runs_dir is not None:
                result = replace(
                    result, trace_path=_moved_trace(result.trace_path, shard, runs_dir)
                )
            yield record if result == record.result else replace(record, result=result)


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
    facts = SessionFacts(
        started_at=started_at,
        duration_seconds=duration,
        ablation=next((a for a in two_arm if a != "none"), two_arm[0] if two_arm else "none"),
        concurrency=sum(s.result.suite.concurrency for s in shards),
        agent=suite.agent,
        agents=tuple((a.label, a.spec) for a in first.result.agents),
        root=roots.pop() if len(roots) == 1 else None,
        case_filter=suite.case_filter,
        tag_filters=suite.tag_filters,
        baseline_plugins=suite.baseline_plugins,
        aa=any(s.result.suite.aa for s in shards),
        # Each shard's own pause (its processes slow down together); the shards' add up.
        rate_limit_wait_seconds=sum(s.result.aggregates.rate_limit_wait_seconds for s in shards),
    )
    rules = ScoringRules(
        threshold=suite.threshold if threshold is None else threshold,
        reducer=reducer,
        case_reducers=tuple(case_reducers),
        margin=first.result.aggregates.margin,
    )
    result = summarize(
        records,
        facts,
        rules,
        partial_reason=_partial_reason(shards, bool(missing_shards)),
        not_started=not_started,
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


def exit_status(result: SessionResult) -> ExitStatus:
    """The merged gate's exit status, as a session's: 2 when the result is partial for want
    of runs (a missing shard, a cost ceiling, a rejected credential, an interruption), 1 when
    the threshold is not met or a case file did not load or a run could not be made, else 0."""
    reason = result.partial_reason
    if reason in (MISSING_SHARDS, "cost_ceiling", "auth_failed", "interrupted"):
        return ExitStatus.PARTIAL
    verdict, ungated = session_gate(result.cases, result.threshold)
    met = verdict.met or ungated is not None
    if (aa := calibrate(result)) is not None:  # an A/A gates on its wiring faults only
        met = not aa.faults
    failed = bool(result.load_errors) or bool(result.errors) or not met
    if reason == "maxfail":
        return ExitStatus.FAILED if failed else ExitStatus.PARTIAL
    return ExitStatus.FAILED if failed else ExitStatus.OK


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
            f"(exit status {int(ExitStatus.PARTIAL)})"
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
    if (aa := calibrate(result)) is not None:
        lines.append(calibration_line(aa))
        lines.extend(f"--eval-aa wiring fault: {f.message}" for f in aa.faults)
        return lines
    verdict, ungated = session_gate(result.cases, result.threshold)
    lines.append(ungated or verdict.message)
    return lines


@dataclass
class Written:
    """What :func:`write` made: the document's and the report's paths, and what it did not
    copy as it found it (one line each)."""

    paths: list[Path]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Copy:
    source: Path
    #: Where it goes, under the merged ``runs/``.
    target: PurePosixPath
    trace: bool


def _copies(shards: Sequence[ShardResults]) -> list[_Copy]:
    """The files of every shard's recorded runs that the merge copies: those of its own cases
    (``runs/<case key>/``), each one a regular file of one name, kept inert (a ``.git`` a
    shard's folder holds is copied as ``.git.inert``). A symbolic link, a hard link, a FIFO
    or a device anywhere there is refused (one line naming it)."""
    copies: list[_Copy] = []
    for shard in shards:
        runs = shard.folder / "runs"
        try:
            if not plain_folder(runs):
                continue
            for case in shard.plan.cases_of(shard.plan.index):
                folder = runs / case.key
                if not plain_folder(folder):
                    continue
                for rel in plain_files(folder):
                    is_trace = len(rel.parts) == 2 and rel.name == TRACE
                    target = PurePosixPath(case.key, inert_path(rel.as_posix()))
                    copies.append(_Copy(folder / rel, target, is_trace))
        except NotPlain as exc:
            raise MergeError(f"{exc.path}: {exc.detail}: refused") from None
    return copies


def _copy(copy: _Copy, runs: Path) -> str | None:
    """Copy one file as a session keeps it: a trace within the capture budget, any other file
    up to :data:`MAX_KEPT_FILE` (a larger one is not copied). Says what it cut or left."""
    target = runs.joinpath(*copy.target.parts)
    try:
        with open_plain(copy.source) as src:
            if copy.trace:
                target.parent.mkdir(parents=True, exist_ok=True)
                note = capture_stream(src, target, json_lines=True)
                return None if note is None else f"{copy.source}: {note}"
            data = src.read(MAX_KEPT_FILE + 1)
    except NotPlain as exc:
        raise MergeError(f"{exc.path}: {exc.detail}: refused") from None
    if len(data) > MAX_KEPT_FILE:
        return (
            f"{copy.source}: larger than a session keeps ({MAX_KEPT_FILE // 2**20} MB): not copied"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return None


def write(merged: Merged, shards: Sequence[ShardResults], out: Path) -> Written:
    """Make the merged results folder: the runs of every shard's own cases under ``runs/``
    (as a session keeps them), the document and the HTML report."""
    from pytest_plugin_evals.reporting.html import render_html

    for shard in shards:
        if out.resolve() == shard.folder.resolve():
            raise MergeError(f"--output-dir {out} is a shard's folder: name another folder")
    copies = _copies(shards)  # every refusal before anything is written
    out.mkdir(parents=True, exist_ok=True)
    runs = out / "runs"
    if runs.exists() or runs.is_symlink():
        if runs.is_symlink() or not is_inert(runs):
            raise MergeError(f"{runs} exists and holds no recorded runs: name another folder")
        shutil.rmtree(runs)
    mark_inert(runs)
    notes = [note for copy in copies if (note := _copy(copy, runs)) is not None]
    document = out / DOCUMENT
    report = out / REPORT
    document.write_text(dumps_document(merged.result), encoding="utf-8")
    report.write_text(render_html(merged.result), encoding="utf-8")
    return Written([document, report], notes)
