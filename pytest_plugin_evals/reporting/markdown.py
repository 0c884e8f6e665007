"""The session's verdict as Markdown (pure), for a pull request: a job's step summary
(``$GITHUB_STEP_SUMMARY``) or a comment. ``--eval-markdown`` writes it to a file.

Readable raw within 80 columns (a table row aside) and rendered: the outcome, the threshold,
the mean Δ with its interval and verdict, a table of cases, how many graders cannot tell the
arms apart, the cases below the threshold, what got worse since the compared session, the
judge graders whose agreement is low, cost and time, the runs not made, and a link to the
HTML report. An A/A session (``--eval-aa``) leads with its false-call rate and wiring faults
instead of the threshold and the mean Δ (:mod:`.markdown_checks`). Everything the agent or
the suite wrote goes through :func:`~pytest_plugin_evals.reporting.markdown_text.inline`.
The first line is :data:`MARKER`, an HTML comment a CI step finds its own comment by.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import quote

from pytest_plugin_evals.model import ExitStatus
from pytest_plugin_evals.reporting.efficiency import efficiency_line
from pytest_plugin_evals.reporting.markdown_checks import aa_block, agreement_block, blind_block
from pytest_plugin_evals.reporting.markdown_text import inline, table, wrap
from pytest_plugin_evals.reporting.result import CaseResult, SessionResult
from pytest_plugin_evals.reporting.terminal import (
    MISSING,
    agent_lines,
    partial_lines,
    spend,
    timing_line,
)
from pytest_plugin_evals.reporting.triggers import trigger_lines, trigger_results
from pytest_plugin_evals.stats import FDR, Interval, describe

#: The summary's first line: invisible once rendered, found by the step that updates a comment.
MARKER = "<!-- pytest-plugin-evals summary -->"
#: Longest case name (and note) shown, in characters before escaping.
NAME_LIMIT = 40
NOTE_LIMIT = 100
#: The most rows of the case table (and cases below the threshold listed).
ROWS = 100
#: What an A/A session's case table is (not findings about the plugin).
AA_CASES = (
    "The cases, both arms the plugin under test: a case called better or worse is a false "
    "call of the verdicts, not a change the plugin made."
)
#: The verdicts of a decided Δ, shown first when the table is cut.
DECIDED = ("better", "worse")
_OUTCOMES: dict[int, str] = {
    ExitStatus.OK: "passed",
    ExitStatus.FAILED: "failed",
    ExitStatus.PARTIAL: "partial",
}


@dataclass(frozen=True)
class ReportLink:
    """Where the HTML report is: ``href`` a link to it (a path relative to the Markdown file,
    or ``--eval-report-url``), else ``path``, shown as text (a step summary has no folder)."""

    href: str | None = None
    path: str | None = None


def render_markdown(
    result: SessionResult,
    *,
    exit_status: int | None = None,
    report: ReportLink | None = None,
) -> str:
    """The summary of ``result`` as Markdown. ``exit_status`` is the session's (its outcome in
    the heading)."""
    blocks = [
        [MARKER, _heading(result, exit_status)],
        aa_block(result),
        _suite(result),
        _cases(result),
        blind_block(result),
        _below_threshold(result),
        _triggers(result),
        _compared(result),
        agreement_block(result),
        _cost(result),
        _not_run(result),
        _report(report),
    ]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def _heading(result: SessionResult, exit_status: int | None) -> str:
    if exit_status is None:
        outcome = "partial" if result.partial else "done"
    else:
        outcome = _OUTCOMES.get(exit_status, f"failed (exit status {exit_status})")
    return f"## Plugin evals{' (A/A calibration)' if result.suite.aa else ''}: {outcome}"


def _signed(x: float | None, interval: Interval | None = None) -> str:
    if x is None:
        return MISSING
    shown = f"{x:+.2f}"
    return shown if interval is None else f"{shown} [{interval[0]:+.2f}, {interval[1]:+.2f}]"


def _num(x: float | None) -> str:
    return MISSING if x is None else f"{x:.2f}"


def _second(result: SessionResult) -> str:
    return "baseline" if result.baseline else "without"


def _gated(result: SessionResult) -> list[CaseResult]:
    return [c for c in result.cases if c.with_runs and not c.trigger_query]


def _suite(result: SessionResult) -> list[str]:
    """The threshold and the score; the mean Δ, its interval and its verdict (neither in an
    A/A session: its calibration says what they are worth); the agents."""
    aa = result.suite.aa
    lines = [] if aa else wrap(_threshold(result))
    if result.two_arm and not aa:
        agg = result.aggregates
        delta = _signed(agg.mean_delta, agg.mean_delta_interval)
        said = f"**Mean Δ** (with − {_second(result)}, 95%): {delta}"
        if agg.mean_delta_decision is not None:
            unit = "run(s) per arm in every case"
            said += ", " + describe(agg.mean_delta_decision, unit, "add cases")
        lines += ["", *wrap(said + ".")]
    for line in agent_lines(result):
        lines += ["", *wrap(inline(line, 200))]
    return lines[1:] if lines[:1] == [""] else lines


def _threshold(result: SessionResult) -> str:
    agg = result.aggregates
    gated = _gated(result)
    passed = sum(1 for c in gated if c.aggregates.passed)
    if result.ungated:
        return f"**No threshold:** {result.ungated}."
    if not gated:
        queries = any(c.trigger_query for c in result.cases)
        return "**No case** ran with the plugin" + (": trigger queries only." if queries else ".")
    return (
        f"**Threshold {result.threshold:.2f}:** {passed} of {len(gated)} case(s) meet it; "
        f"suite score {_num(agg.overall_score)}"
        + ("." if agg.reducer == "mean" else f" (reducer {agg.reducer}).")
    )


def _cases(result: SessionResult) -> list[str]:
    """A row per case: its scores, Δ with its interval and Δ's verdict (two arms), or its
    score with its interval and whether it passed (one arm)."""
    every = [c for c in result.cases if not c.trigger_query]
    cases = _shown(every)
    if not cases:
        return []
    more = [] if len(cases) == len(every) else ["", *_more(len(cases), len(every))]
    if result.two_arm:
        header = ["case", "with", _second(result), "Δ [95% interval]", "verdict"]
        rows = [
            [
                inline(c.label, NAME_LIMIT),
                _num(c.aggregates.score),
                _num(c.aggregates.score_without),
                _signed(c.aggregates.delta, c.aggregates.delta_interval),
                _verdict(c),
            ]
            for c in cases
        ]
        lines = table(header, rows, right=(1, 2))
        if result.suite.aa:
            lines = [*wrap(AA_CASES), "", *lines]
        return [*lines, *more, "", *wrap(_fdr_note(result, cases))]
    header, right = ["case", "score [95% interval]", "runs", "passed"], (2,)
    rows = [
        [inline(c.label, NAME_LIMIT), _score(c), str(len(c.with_runs)), _passed(c)] for c in cases
    ]
    return [*table(header, rows, right), *more]


def _fdr_note(result: SessionResult, cases: Sequence[CaseResult]) -> str:
    """How the verdicts were held together, and the cases that control withdrew."""
    note = (
        f"Verdicts on Δ held to a {FDR:.0%} false discovery rate over the cases "
        f"(Benjamini–Hochberg); equivalent: within ±{result.aggregates.margin:.2f}."
    )
    withdrawn = [
        f"{inline(c.label, NAME_LIMIT)} ({decision.unadjusted} alone)"
        for c in cases
        if (decision := c.aggregates.delta_decision) is not None and decision.fdr_withdrawn
    ]
    if withdrawn:
        note += " Withdrawn to inconclusive by that control: " + ", ".join(withdrawn) + "."
    return note


def _shown(cases: list[CaseResult]) -> list[CaseResult]:
    """Every case, or past :data:`ROWS` of them those a reviewer must see first: below the
    threshold, or a Δ decided (a comment holds 65,536 characters)."""
    if len(cases) <= ROWS:
        return cases
    wanted = [c for c in cases if c.aggregates.passed is False or _verdict(c) in DECIDED]
    rest = [c for c in cases if c not in wanted]
    kept = {id(c) for c in [*wanted, *rest][:ROWS]}
    return [c for c in cases if id(c) in kept]


def _more(shown: int, total: int) -> list[str]:
    return wrap(
        f"{shown} of {total} cases shown (those below the threshold or with a decided Δ "
        "first); every case is in the HTML report."
    )


def _verdict(case: CaseResult) -> str:
    decision = case.aggregates.delta_decision
    return MISSING if decision is None else decision.verdict


def _score(case: CaseResult) -> str:
    interval = case.aggregates.score_interval
    shown = _num(case.aggregates.score)
    return (
        shown
        if interval is None or case.aggregates.score is None
        else (f"{shown} [{interval[0]:.2f}, {interval[1]:.2f}]")
    )


def _passed(case: CaseResult) -> str:
    return {True: "yes", False: "no", None: MISSING}[case.aggregates.passed]


def _below_threshold(result: SessionResult) -> list[str]:
    """The cases below the threshold, each with what failed (its NOTES)."""
    below = [c for c in _gated(result) if c.aggregates.passed is False]
    if not below or result.ungated or result.suite.aa:
        return []
    lines = [f"### Below the threshold ({len(below)})", ""]
    for c in below[:ROWS]:
        note = f": {inline(c.notes, NOTE_LIMIT)}" if c.notes else ""
        text = f"{inline(c.label, NAME_LIMIT)} scored {_num(c.aggregates.score)}{note}"
        lines += wrap(text, "- ", "  ")
    return lines


def _triggers(result: SessionResult) -> list[str]:
    said = trigger_lines(trigger_results(result.cases))
    if not said:
        return []
    lines = ["### Trigger accuracy", ""]
    for line in said:
        lines += wrap(inline(line, 200), "- ", "  ")
    return lines


def _compared(result: SessionResult) -> list[str]:
    """What got worse since ``--eval-compare``'s session, and how the other cases read."""
    comparison = result.comparison
    if comparison is None:
        return []
    since = inline(comparison.against_started_at or comparison.against, 60)
    counts = ", ".join(f"{n} {verdict}" for verdict, n in comparison.counts.items() if n)
    lines = [f"### Since the compared session ({since})", ""]
    worse = comparison.regressions
    lines += wrap(f"{'Worse' if worse else 'Nothing got worse'}: {counts or 'no case'}.")
    if worse:
        lines.append("")
    for change in worse:
        text = (
            f"{inline(change.name, NAME_LIMIT)}: {_num(change.before)} → {_num(change.after)}, "
            f"change {_signed(change.change, change.change_interval)}"
        )
        lines += wrap(text, "- ", "  ")
    return lines


def _cost(result: SessionResult) -> list[str]:
    """What the session cost and how long its runs took: the pooled latency and tokens, and
    the plugin's effect on them (the efficiency line, when both arms ran)."""
    agg = result.aggregates
    known = "" if all(c.cost_known for c in result.cases) else " + unknown"
    made = f"{agg.runs_graded} of {agg.runs_total} run(s) graded"
    lines = ["### Cost and time", "", *wrap(f"{spend(result)}{known} · {made}.")]
    timing = timing_line(agg.timing)
    if timing is not None:
        lines += ["", *wrap(timing + ".")]
    effect = efficiency_line(result)
    if effect is not None:  # numbers and labels only: nothing of the agent's in it
        lines += ["", *wrap(inline(effect, 400) + ".")]
    return lines


def _not_run(result: SessionResult) -> list[str]:
    """Runs not made, runs never started, case files not loaded: why the result is partial."""
    said = list(partial_lines(result))
    for reason, n in result.skipped.items():
        said.append(f"{n} run(s) not started: {reason}")
    if result.load_errors:
        said.append(f"{len(result.load_errors)} case file(s) could not be loaded")
    if not said:
        return []
    title = "Partial result" if result.partial else "Runs not made"
    lines = [f"### {title}", ""]
    for line in said:
        lines += wrap(inline(line, 200), "- ", "  ")
    return lines


def _report(report: ReportLink | None) -> list[str]:
    if report is None:
        return []
    if report.href is not None:
        href = quote(report.href, safe=":/?#[]@!$&'*+,;=%-._~")
        return [f"[The full HTML report]({href})"]
    if report.path is not None:
        return wrap(f"The full HTML report: {inline(report.path, 200)}")
    return []
