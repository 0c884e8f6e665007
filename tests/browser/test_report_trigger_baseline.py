"""The HTML report's trigger section in an A/B (``--eval-baseline-plugin git:REF``), as a person
sees it: each number before and after a description edit and the difference with its interval,
each query's rate before and after (a hostile query shown as text)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from tests.browser.test_report_escaping import assert_inert, open_page
from tests.helpers import git, write_tree
from tests.integration.test_trigger_baseline import AGENT, NEW, OLD

if TYPE_CHECKING:
    from playwright.sync_api import Browser

HOSTILE = '<img src=x onerror="window.__pwned=1">'


def test_the_trigger_section_shows_before_after_and_the_difference(
    pytester: pytest.Pytester, browser: Browser
) -> None:
    root = pytester.path
    git(root, "init", "-q")
    write_tree(
        root,
        {
            ".claude-plugin/plugin.json": '{"name": "kit", "version": "1.0.0"}',
            "skills/olympiad/SKILL.md": OLD,
            "trigger_baseline_agent.py": AGENT,
            "pytest.ini": "[pytest]\npythonpath = .\n",
            "skills/olympiad/evals/trigger_eval.json": json.dumps(
                [
                    {"query": "an alpha problem", "should_trigger": True},
                    {"query": "a gamma problem", "should_trigger": True},
                    {"query": "a delta chat " + HOSTILE, "should_trigger": False},
                    {"query": "an omega chat", "should_trigger": False},
                ]
            ),
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "olympiad")
    commit = git(root, "rev-parse", "HEAD")[:12]
    (root / "skills/olympiad/SKILL.md").write_text(NEW, encoding="utf-8")
    result = pytester.runpytest(
        "skills/olympiad/evals", "-p", "no:cacheprovider",
        "--eval-agent", "py:trigger_baseline_agent:answer",
        "--eval-runs", "1", "--eval-baseline-plugin", "git:HEAD", "--eval-report", "r.html",
    )  # fmt: skip
    result.assert_outcomes(passed=8)  # 4 queries, each with the plugin and the baseline
    page, found = open_page(browser, (root / "r.html").as_uri(), "#triggers")
    assert_inert(found)
    section = page.locator("#triggers")
    assert section.is_visible()
    heading = " ".join(section.locator("h4").inner_text().split())
    assert heading == "olympiad 4 queries · the matrix and verdicts: after (the plugin under test)"
    before = section.locator(".trigger-before").inner_text()
    assert before == f"Before — kit v1.0.0 from git:HEAD ({commit}): TP 1 · FP 1 · FN 1 · TN 1"
    # The matrix is the working tree's (after).
    cells = [" ".join(t.split()) for t in section.locator(".matrix td").all_inner_texts()]
    assert cells == ["TP 2", "FN 0", "FP 0", "TN 2"]
    table = section.locator(".trigger-change")
    heads = [" ".join(h.split()) for h in table.locator("thead th").all_inner_texts()]
    assert heads == ["", "Before", "After", "Difference (after − before)"]
    rows = [" ".join(r.split()) for r in table.locator("tbody tr").all_inner_texts()]
    assert [r.split(" [")[0] for r in rows] == [
        "Precision 0.50",
        "Recall 0.50",
        "F1 0.50",
        "Accuracy 0.50",
    ]
    for row in rows:  # before [interval] · after [interval] · difference [interval]
        assert " 1.00 [" in row and " +0.50 [" in row, row
    # Accuracy 4/4 against 2/4 on the same queries: Newcombe's paired interval, whose phi
    # is 0 here (no query is right before and wrong after).
    low, high = confint_proportions_2indep(4, 4, 2, 4, method="newcomb", compare="diff")
    assert rows[3].endswith(f"+0.50 [{low:+.2f}, {high:+.2f}]"), rows[3]
    queries = [
        [" ".join(c.split()) for c in r.locator("td").all_inner_texts()]
        for r in section.locator(".trigger-queries tbody tr").all()
    ]
    assert queries == [
        ["an alpha problem", "trigger", "1/1 ✓", "1/1", "✓"],
        ["a gamma problem", "trigger", "0/1 ✗", "1/1", "✓"],
        ["a delta chat " + HOSTILE, "not", "1/1 ✗", "0/1", "✓"],
        ["an omega chat", "not", "0/1 ✓", "0/1", "✓"],
    ]
    page.close()
