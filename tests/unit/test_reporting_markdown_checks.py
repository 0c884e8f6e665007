"""What the Markdown summary says of the measurement itself, rendered as GitHub would
(markdown-it-py): an A/A session's false-call rate and wiring faults in the lead, the judge
graders whose agreement is low, and how many graders cannot tell the arms apart — each within
80 columns, and the names the suite wrote shown as text."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from pytest_plugin_evals.reporting.agreement import judge_agreement
from pytest_plugin_evals.reporting.markdown import render_markdown
from pytest_plugin_evals.reporting.markdown_checks import LISTED
from pytest_plugin_evals.reporting.markdown_text import WIDTH, ZWSP
from pytest_plugin_evals.stats.intervals import clopper_pearson
from tests.helpers import run_record, summary
from tests.unit.test_aa_calibration import aa_result
from tests.unit.test_aa_calibration import runs as aa_runs
from tests.unit.test_kappa_and_labels import judged
from tests.unit.test_reporting_markdown import (
    GITHUB_LINKED,
    HOSTILE,
    SUMMARY_TAGS,
    case,
    rendered,
    runs,
    text_of,
)

#: A grader name that holds Markdown, HTML, a mention, a reference and an address.
HOSTILE_NAME = "<b>x</b> @octocat #12 www.evil.example [a](b) | `c`"


def body(text: str) -> str:
    return " ".join(" ".join(rendered(text).text).split())


def fits(text: str) -> None:
    """Every raw line but a table row within 80 columns; nothing linked, tagged or pinged."""
    assert [x for x in text.splitlines() if len(x) > WIDTH and not x.startswith("|")] == []
    page = rendered(text)
    assert [tag for tag, _ in page.tags if tag not in SUMMARY_TAGS | {"code"}] == []
    for pattern in GITHUB_LINKED:
        assert not pattern.search("".join(page.text)), pattern.pattern


def aa_session(name: str = "apart") -> Any:
    """An A/A session: ``name`` called better (a false call), ``alike`` not, and the skill
    never fired in ``alike``'s baseline arm (a wiring fault)."""
    return aa_result(
        aa_runs(name, "with", [1.0] * 6),
        aa_runs(name, "baseline", [0.0] * 6),
        aa_runs("alike", "with", [1.0, 0.0, 1.0]),
        aa_runs("alike", "baseline", [1.0, 0.0, 1.0], fired=[False] * 3),
    )


def test_an_aa_session_leads_with_its_false_call_rate_and_wiring_faults() -> None:
    text = render_markdown(aa_session(), exit_status=1)
    said = body(text)
    low, high = clopper_pearson(1, 2) or (0, 0)
    assert said.startswith("Plugin evals (A/A calibration): failed A/A calibration")
    rate = (
        f"False-call rate: 1 of 2 case(s) with a verdict, 50.0% (exact 95% interval "
        f"{low:.1%} to {high:.1%}) against the nominal 5%"
    )
    assert rate in said and "Called: apart (better)." in said
    assert "1 wiring fault(s):" in said
    assert "case alike: the plugin's skill never fired in the baseline arm" in said
    # not findings about the plugin: no threshold, no mean Δ, no cases "below" it, and the
    # table says what its verdicts are
    assert said.index("False-call rate") < said.index("case with baseline")
    for claim in ("Threshold", "Mean Δ", "Below the threshold", "meet it"):
        assert claim not in said, claim
    assert "a case called better or worse is a false call of the verdicts" in said
    fits(text)


def test_an_aa_session_without_faults_or_verdicts_says_so() -> None:
    result = aa_result(aa_runs("same", "with", [1.0] * 3), aa_runs("same", "baseline", [1.0] * 3))
    said = body(render_markdown(result, exit_status=0))
    assert "No wiring fault: the arms ran the plugin alike." in said
    assert "Called:" not in said
    ordinary = body(render_markdown(replace(result, suite=replace(result.suite, aa=False))))
    assert "A/A" not in ordinary and "False-call rate" not in ordinary


@pytest.mark.parametrize("hostile", HOSTILE)
def test_an_aa_sessions_case_names_stay_text(hostile: str) -> None:
    name = hostile.replace("\n", " ")[:40]
    text = render_markdown(aa_session(name), exit_status=1)
    fits(text)
    assert f"Called: {text_of(name)} (better)." in body(text).replace(ZWSP, "")


def judged_session(grader: str = "rubric", second: bool = True) -> Any:
    """A judge grader whose second judge disagrees with the first (κ −0.5 over 8 verdicts),
    with two split votes."""
    plan = [(["PASS", "FAIL", "PASS"], "FAIL"), (["FAIL"] * 3, "PASS"),
            (["PASS"] * 3, "FAIL"), (["PASS"] * 3, "PASS")]  # fmt: skip
    c = case("pick")
    records = [
        run_record(
            c, arm, n, [replace(judged(votes, [other] * 3 if second else None), name=grader)]
        )
        for arm in ("with", "without")
        for n, (votes, other) in enumerate(plan, 1)
    ]
    return summary(records)


def test_low_judge_agreement_names_the_grader_with_kappa_its_interval_and_n() -> None:
    result = judged_session()
    found = judge_agreement(result)
    assert found is not None
    row = found.flagged[-1]
    assert row.judges is not None and row.judges.interval is not None
    kappa, (low, high) = row.judges.kappa or 0, row.judges.interval
    text = render_markdown(result)
    said = body(text)
    assert "Judge agreement 2 of 8 judge verdicts were split votes (2-1)." in said
    assert "Low agreement (Cohen's κ under 0.6):" in said
    line = f"pick: rubric: with the second judge κ {kappa:.2f} [{low:.2f}, {high:.2f}], n 8"
    assert line in said
    assert len(rendered(text).named("li")) == 2 + 1  # pooled, the grader; below the threshold
    fits(text)


def test_split_votes_alone_are_counted_and_nothing_is_said_without_either() -> None:
    said = body(render_markdown(judged_session(second=False)))
    assert "Judge agreement 2 of 8 judge verdicts were split votes (2-1)." in said
    assert "Low agreement" not in said
    c = case("calm")
    calm = [
        run_record(c, arm, 1, [judged(["PASS"] * 3, ["PASS"] * 3)]) for arm in ("with", "without")
    ]
    assert "Judge agreement" not in render_markdown(summary(calm))


def test_a_hostile_grader_name_in_judge_agreement_stays_text() -> None:
    text = render_markdown(judged_session(HOSTILE_NAME))
    fits(text)
    assert f"pick: {HOSTILE_NAME}: with the second judge" in body(text).replace(ZWSP, "")


def blind_records(names: list[str], graders: int) -> list[Any]:
    """Cases whose every grader passes in both arms (``graders`` of them), but the score."""
    verdicts = [
        replace(judged(["PASS"] * 3, None), name=f"g{i}", judgement=None) for i in range(graders)
    ]
    return [
        run_record(case(name), arm, n, verdicts)
        for name in names
        for arm in ("with", "without")
        for n in (1, 2)
    ]


def test_graders_that_cannot_tell_the_arms_apart_are_counted_on_one_line() -> None:
    names = [f"case-{i:02d}" for i in range(LISTED + 5)]
    text = render_markdown(summary(blind_records(names, 2)))
    said = body(text)
    assert (
        f"{2 * len(names)} grader(s) in {len(names)} case(s) cannot tell the arms apart: they "
        "pass (or fail) in every run of both arms."
    ) in said
    assert "The HTML report names them, with their passes per arm" in said
    assert "g0" not in said  # counted, not listed
    fits(text)
    apart = summary(runs(case("apart"), [1, 1], [0, 0]))
    assert "cannot tell" not in render_markdown(apart)
