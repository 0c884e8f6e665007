"""The trace diff of a two-arm case as the HTML report shows it (:mod:`.trace_diff` aligns).

The most typical run of each arm side by side, and the other pairs the reader can pick: every
pair when a case has at most :data:`ALL_PAIRS` of them, else those that keep one run of the
typical pair. Every text is cut here, with how long it was, and the template shows it as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pytest_plugin_evals.model import RunResult, Verdict
from pytest_plugin_evals.reporting.result import CaseResult
from pytest_plugin_evals.reporting.trace_diff import (
    FILES_ALIGNED,
    ArmSummary,
    Row,
    Step,
    align,
    arm_summary,
    first_divergence,
    steps,
    typical,
)

#: Every pair of runs is in the page up to this many pairs (3 runs per arm) ...
ALL_PAIRS = 9
#: ... and a step's text at most this many characters (an answer: :data:`ANSWER_SHOWN`),
ANSWER_SHOWN = 1000
TEXT_SHOWN = 300
#: a name this many, a grader's explanation this many,
NAME_SHOWN = 120
EXPLANATION_SHOWN = 300
#: and the summary lists this many tools and this many files.
SUMMARY_ROWS = 20


@dataclass(frozen=True)
class Shown:
    """A text as the page shows it: its first characters, and how long it was when cut."""

    text: str
    cut_from: int | None = None


def shown(text: str, limit: int) -> Shown:
    return Shown(text) if len(text) <= limit else Shown(text[:limit], len(text))


@dataclass(frozen=True)
class StepView:
    kind: str
    name: Shown
    text: Shown
    failed: bool
    error: Shown | None


@dataclass(frozen=True)
class RowView:
    status: str
    left: StepView | None
    right: StepView | None
    first: bool


@dataclass(frozen=True)
class VerdictView:
    #: ``ok``, ``bad``, ``skip`` or ``error``.
    mark: str
    name: Shown
    explanation: Shown
    votes: str


@dataclass(frozen=True)
class SideView:
    run: RunResult
    verdicts: tuple[VerdictView, ...]
    #: Calls the run made beyond those its record keeps, files beyond those aligned.
    unlisted: int
    files_unlisted: int


@dataclass(frozen=True)
class PairView:
    left: SideView
    right: SideView
    rows: tuple[RowView, ...]
    divergence: int | None
    typical: bool

    @property
    def key(self) -> str:
        """``2-1``: the left run's number, then the right's (how the page picks a pair)."""
        return f"{self.left.run.run}-{self.right.run.run}"


@dataclass(frozen=True)
class SummaryRow:
    label: Shown
    left: str
    right: str

    @property
    def differs(self) -> bool:
        return self.left != self.right


@dataclass(frozen=True)
class DiffView:
    """A case's trace diff: its pairs (the first shown), the runs to pick from, the summary."""

    pairs: tuple[PairView, ...]
    left_runs: tuple[int, ...]
    right_runs: tuple[int, ...]
    summary: tuple[SummaryRow, ...]
    tools: tuple[SummaryRow, ...]
    files: tuple[SummaryRow, ...]
    calls_cut: bool
    #: The tools and the files the summary does not list (beyond :data:`SUMMARY_ROWS`).
    tools_more: int
    files_more: int


def _step(step: Step | None) -> StepView | None:
    if step is None:
        return None
    limit = ANSWER_SHOWN if step.kind in ("answer", "error") else TEXT_SHOWN
    error = shown(step.error, TEXT_SHOWN) if step.error else None
    return StepView(
        step.kind, shown(step.name, NAME_SHOWN), shown(step.text, limit), step.failed, error
    )


def _verdict(v: Verdict) -> VerdictView:
    mark = "error" if v.error else "skip" if v.skipped is not None else "ok" if v.passed else "bad"
    votes = v.judgement.votes if v.judgement else ()
    return VerdictView(
        mark,
        shown(v.name, NAME_SHOWN),
        shown(v.explanation, EXPLANATION_SHOWN),
        " ".join("✓" if vote.vote == "PASS" else "✗" for vote in votes),
    )


def _side(run: RunResult) -> SideView:
    unlisted = max(0, run.tool_calls - len(run.tool_call_list))
    files = max(0, len(run.files_created) - FILES_ALIGNED)
    return SideView(run, tuple(_verdict(v) for v in run.verdicts), unlisted, files)


def pair_view(left: RunResult, right: RunResult, *, is_typical: bool = False) -> PairView:
    """Two runs' steps aligned, the first divergence marked, each run's verdicts beside."""
    rows: tuple[Row, ...] = align(steps(left), steps(right))
    first = first_divergence(rows)
    views = tuple(
        RowView(r.status, _step(r.left), _step(r.right), i == first) for i, r in enumerate(rows)
    )
    return PairView(_side(left), _side(right), views, first, is_typical)


def _pairs(
    lefts: Sequence[RunResult], rights: Sequence[RunResult], a: RunResult, b: RunResult
) -> list[tuple[RunResult, RunResult]]:
    every = [(x, y) for x in lefts for y in rights]
    if len(every) <= ALL_PAIRS:
        return [(x, y) for x, y in every if not (x is a and y is b)]
    return [p for p in every if (p[0] is a) != (p[1] is b)]


def _share(n: int, runs: int) -> str:
    return "—" if not runs else f"{n} of {runs} ({n / runs:.0%})"


def _number(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}"


def _row(label: str, left: str, right: str) -> SummaryRow:
    return SummaryRow(shown(label, NAME_SHOWN), left, right)


def _summary(a: ArmSummary, b: ArmSummary) -> tuple[SummaryRow, ...]:
    def skills(s: ArmSummary) -> str:
        said = _share(s.skill_runs, s.runs)
        names = ", ".join(k[:NAME_SHOWN] for k in list(s.skills)[:3])
        more = f" and {len(s.skills) - 3} more" if len(s.skills) > 3 else ""
        return f"{said}: {names}{more}" if names else said

    return (
        _row("runs graded", str(a.runs), str(b.runs)),
        _row("mean score", _number(a.mean_score), _number(b.mean_score)),
        _row("a skill loaded", skills(a), skills(b)),
        _row("files written per run", _number(a.files_mean), _number(b.files_mean)),
    )


def _tools(a: ArmSummary, b: ArmSummary) -> tuple[SummaryRow, ...]:
    names = sorted(
        set(a.calls) | set(b.calls), key=lambda t: (-(a.calls.get(t, 0) + b.calls.get(t, 0)), t)
    )
    return tuple(
        _row(t, _number(a.calls.get(t, 0.0)), _number(b.calls.get(t, 0.0)))
        for t in names[:SUMMARY_ROWS]
    )


def _files(a: ArmSummary, b: ArmSummary) -> tuple[SummaryRow, ...]:
    names = sorted(
        set(a.files) | set(b.files), key=lambda f: (-(a.files.get(f, 0) + b.files.get(f, 0)), f)
    )
    return tuple(
        _row(f, _share(a.files.get(f, 0), a.runs), _share(b.files.get(f, 0), b.runs))
        for f in names[:SUMMARY_ROWS]
    )


def diff_view(case: CaseResult) -> DiffView | None:
    """A two-arm case's trace diff; None for one arm, or an arm with no graded run."""
    if not case.two_arm:
        return None
    lefts = [r.result for r in case.with_runs if r.result.graded]
    rights = [r.result for r in case.without_runs if r.result.graded]
    a, b = typical(lefts), typical(rights)
    if a is None or b is None:
        return None
    pairs = [pair_view(a, b, is_typical=True)]
    pairs.extend(pair_view(x, y) for x, y in _pairs(lefts, rights, a, b))
    left, right = arm_summary(lefts), arm_summary(rights)
    return DiffView(
        pairs=tuple(pairs),
        left_runs=tuple(r.run for r in lefts),
        right_runs=tuple(r.run for r in rights),
        summary=_summary(left, right),
        tools=_tools(left, right),
        files=_files(left, right),
        calls_cut=left.calls_cut or right.calls_cut,
        tools_more=max(0, len(set(left.calls) | set(right.calls)) - SUMMARY_ROWS),
        files_more=max(0, len(set(left.files) | set(right.files)) - SUMMARY_ROWS),
    )


def diff_views(cases: Sequence[CaseResult]) -> tuple[DiffView | None, ...]:
    """Each case's trace diff, in order."""
    return tuple(diff_view(c) for c in cases)
