"""The judges' agreement as a person reads it in the report: the "Judge agreement" table with
its flagged grader, the banner, a split vote's badge and the second judge's votes beside each
verdict, a hostile judge reply shown as text."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_plugin_evals.model import Judgement, JudgeVote, Verdict
from pytest_plugin_evals.reporting.agreement import judge_agreement
from tests.browser import synthetic
from tests.browser.test_report_charts import write_report
from tests.browser.test_report_escaping import ALERT, IMG, assert_inert, open_page
from tests.helpers import run_record, summary

if TYPE_CHECKING:
    from playwright.sync_api import Browser

HOSTILE = f"PASS {IMG} {ALERT}"


def judged(first: str, split: bool, second: str) -> Verdict:
    other = "FAIL" if first == "PASS" else "PASS"
    votes = (JudgeVote(first, HOSTILE), JudgeVote(other if split else first), JudgeVote(first))
    seconds = Judgement(tuple(JudgeVote(second) for _ in range(3)), cost_usd=0.001)
    return Verdict(
        "rubric", first == "PASS", "judge votes: " + " ".join(v.vote for v in votes),
        type="llm", judgement=Judgement(votes, "The next version is 1.4.1.", 0.002, seconds),
    )  # fmt: skip


def test_agreement_table_banner_and_badges(browser: Browser, tmp_path: Path) -> None:
    case = synthetic.make_case("pick-version")
    # First judge P P F F (one split), second judge P P P P: κ 0, flagged.
    plan = [("PASS", True), ("PASS", False), ("FAIL", False), ("FAIL", False)]
    records = [
        run_record(case, "single", n, [judged(first, split, "PASS")])
        for n, (first, split) in enumerate(plan, start=1)
    ]
    result = dataclasses.replace(summary(records), second_judge="openai:second-judge")
    found = judge_agreement(result)
    assert found is not None and [r.name for r in found.flagged] == [
        "all judge graders",
        "pick-version: rubric",
    ]
    page, active = open_page(browser, write_report(tmp_path, result).as_uri(), "#judge-agreement")
    assert_inert(active)

    section = page.locator("#judge-agreement")
    assert "1 of 4 judge verdicts were split votes (2-1)" in section.inner_text()
    assert "Second judge: openai:second-judge" in section.inner_text()
    rows = section.locator("tr.agreement-row")
    assert rows.count() == 2  # pooled, then pick-version: rubric
    pooled = rows.nth(0)
    assert pooled.get_attribute("data-flagged") == "true"
    assert "⚠ low agreement" in pooled.inner_text()
    assert "κ 0.00" in pooled.inner_text() and "agree 2/4 (50%)" in pooled.inner_text()
    banners = page.locator(".banner").all_inner_texts()
    assert any("Low judge agreement (κ under 0.6)" in b for b in banners)
    # Each verdict: a split vote is marked, the second judge's votes are beside it.
    assert page.locator(".badge.split-vote").count() == 1
    assert page.locator(".badge.second-judge").count() == 4
    # The judge's hostile reply is shown as text, never run.
    page.locator("details.case summary").first.click()
    assert page.get_by_text(IMG, exact=False).count() >= 1
