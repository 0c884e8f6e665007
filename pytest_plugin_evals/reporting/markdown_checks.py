"""What the Markdown summary says of the measurement itself (pure): an A/A session's false-call
rate and wiring faults (:mod:`.aa`), the judge graders whose agreement is low and the split
votes (:mod:`.agreement`), and how many graders cannot tell the arms apart
(:mod:`.grader_splits`). The numbers are those modules'; every name the suite or the agent
wrote goes through :func:`~pytest_plugin_evals.reporting.markdown_text.inline`.
"""

from __future__ import annotations

from pytest_plugin_evals.reporting.aa import Calibration, calibrate, suite_said
from pytest_plugin_evals.reporting.agreement import GraderAgreement, judge_agreement
from pytest_plugin_evals.reporting.grader_splits import blind_graders
from pytest_plugin_evals.reporting.markdown_text import inline, wrap
from pytest_plugin_evals.reporting.result import SessionResult
from pytest_plugin_evals.stats.agreement import LOW_KAPPA, Agreement

#: The most graders, false calls and wiring faults listed; the rest are counted.
LISTED = 10
#: Longest grader or case name shown, in characters before escaping.
NAME_LIMIT = 60


def aa_block(result: SessionResult) -> list[str]:
    """An A/A session's false-call rate against the nominal level, its exact interval, the
    cases called and the wiring faults (nothing when the session is not an A/A)."""
    found = calibrate(result)
    if found is None:
        return []
    lines = ["### A/A calibration (`--eval-aa`)", ""]
    lines += wrap(
        "Both arms loaded the plugin under test, so no case has a true difference: this "
        "session measures the verdicts, not the plugin, and every case called better or "
        "worse is a false call."
    )
    lines += ["", *wrap(_rate(found))]
    called = [f"{inline(case, NAME_LIMIT)} ({verdict})" for case, verdict in found.called]
    if called:
        lines += ["", *_listed("Called", called)]
    lines.append("")
    if not found.faults:
        return [*lines, *wrap("**No wiring fault:** the arms ran the plugin alike.")]
    lines += wrap(
        f"**{len(found.faults)} wiring fault(s):** the arms did not run the plugin alike, so "
        "the false-call rate does not measure the verdicts."
    )
    faults = [inline(f.message, 200) for f in found.faults]
    return [*lines, "", *_bullets(faults, "wiring fault(s)")]


def _rate(found: Calibration) -> str:
    suite = suite_said(found)
    if found.interval is None or found.rate is None:
        return f"**False-call rate:** none (no case has a verdict on its Δ); {suite}."
    low, high = found.interval
    above = ", above it beyond chance" if found.above_nominal else ""
    return (
        f"**False-call rate:** {len(found.called)} of {found.verdicts} case(s) with a verdict, "
        f"{found.rate:.1%} (exact 95% interval {low:.1%} to {high:.1%}) against the nominal "
        f"{found.nominal:.0%}{above}; {suite}."
    )


def agreement_block(result: SessionResult) -> list[str]:
    """The judge graders whose κ is under the low level (against a second judge or people),
    each with κ, its interval and n, and the split votes (nothing when there are neither)."""
    found = judge_agreement(result)
    if found is None:
        return []
    pooled = found.rows[0]
    flagged = [_flagged(row) for row in found.flagged]
    if not flagged and not pooled.split:
        return []
    lines = ["### Judge agreement"]
    if pooled.split:
        said = f"{pooled.split} of {pooled.verdicts} judge verdicts were split votes (2-1)."
        lines += ["", *wrap(said)]
    if flagged:
        lines += ["", *wrap(f"**Low agreement** (Cohen's κ under {LOW_KAPPA:g}):"), ""]
        lines += _bullets(flagged, "grader(s), in the HTML report")
    return lines


def _flagged(row: GraderAgreement) -> str:
    measures = (
        ("with the second judge", row.judges),
        ("first judge with people", row.first_people),
        ("second judge with people", row.second_people),
    )
    low = [f"{what} {_kappa(a)}" for what, a in measures if a is not None and a.low]
    return f"{inline(row.name, NAME_LIMIT)}: {'; '.join(low)}"


def _kappa(found: Agreement) -> str:
    if found.kappa is None:
        return f"κ undefined, n {found.n}"
    low, high = found.interval if found.interval is not None else (found.kappa, found.kappa)
    return f"κ {found.kappa:.2f} [{low:.2f}, {high:.2f}], n {found.n}"


def blind_block(result: SessionResult) -> list[str]:
    """One line: how many graders, in how many cases, pass (or fail) in every run of both arms
    (nothing when every grader tells the arms apart somewhere)."""
    found = blind_graders(result.cases)
    if not found:
        return []
    graders = sum(len(splits) for _, splits in found)
    return wrap(
        f"**{graders} grader(s) in {len(found)} case(s) cannot tell the arms apart:** they "
        "pass (or fail) in every run of both arms. The HTML report names them, with their "
        "passes per arm (Graders per arm)."
    )


def _listed(title: str, items: list[str]) -> list[str]:
    shown = ", ".join(items[:LISTED])
    more = f" and {len(items) - LISTED} more" if len(items) > LISTED else ""
    return wrap(f"{title}: {shown}{more}.")


def _bullets(items: list[str], rest: str) -> list[str]:
    lines = [line for item in items[:LISTED] for line in wrap(item, "- ", "  ")]
    if len(items) > LISTED:
        lines += wrap(f"and {len(items) - LISTED} more {rest}", "- ", "  ")
    return lines
