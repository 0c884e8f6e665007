"""The HTML report's trigger accuracy section, as a person sees it in a browser: the matrix,
the four numbers with their intervals, the sibling that fired instead, each query's verdict
(a hostile query shown as text), and the cards that count cases and queries apart."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.test_report_escaping import assert_inert, open_page
from tests.helpers import write_tree

if TYPE_CHECKING:
    from playwright.sync_api import Browser

AGENT = Path(__file__).parent.parent / "agents" / "trigger_agent.py"
HOSTILE = '<img src=x onerror="window.__pwned=1">'


def test_the_trigger_section_and_the_cards_read_as_a_person_sees_them(
    pytester: pytest.Pytester, browser: Browser
) -> None:
    """Two cases beside four trigger queries: the trigger section's matrix, numbers and wrong
    queries are the queries'; the suite score and "Cases" are the two cases', and the queries
    have their own card (they once read "Cases 4 of 6")."""
    cases = {
        f"skills/olympiad/evals/{name}/{path}": text
        for name, pattern in (("passes", "done"), ("fails", "nothing"))
        for path, text in (
            ("prompt.md", "Say it.\n"),
            ("graders/g.md", f"---\ntype: regex\npattern: {pattern}\n---\n"),
        )
    }
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "kit"}',
            "skills/olympiad/SKILL.md": "---\nname: olympiad\ndescription: d\n---\nx\n",
            "skills/olympiad/evals/trigger_eval.json": json.dumps(
                [
                    {"query": "A fires on runs 1", "should_trigger": True},
                    {"query": "B " + HOSTILE, "should_trigger": True},
                    {"query": "C fires on runs 1", "should_trigger": False},
                    {"query": "D", "should_trigger": False},
                ]
            ),
            **cases,
        },
    )
    agent = "cmd:" + shlex.join([sys.executable, str(AGENT)])
    pytester.runpytest(
        "skills/olympiad/evals", "-p", "no:cacheprovider", "--eval-agent", agent,
        "--eval-runs", "1", "--eval-threshold", "0.5", "--eval-report", "r.html",
    )  # fmt: skip
    page, found = open_page(browser, (pytester.path / "r.html").as_uri(), "#triggers")
    assert_inert(found)
    section = page.locator("#triggers")
    assert section.is_visible()
    assert section.locator("h4").inner_text().startswith("olympiad")
    cells = [" ".join(t.split()) for t in section.locator(".matrix td").all_inner_texts()]
    assert cells == ["TP 1", "FN 1", "FP 1", "TN 1"]
    metrics = section.locator(".trigger-metrics tr").all_inner_texts()
    assert [" ".join(m.split()) for m in metrics] == [
        "Precision 0.50 [0.09, 0.91]",
        "Recall 0.50 [0.09, 0.91]",
        "F1 0.50 [0.12, 0.88]",
        "Accuracy 0.50 [0.15, 0.85]",
    ]
    wrong = section.locator(".trigger-queries tr.wrong td:first-child").all_inner_texts()
    assert wrong == ["B " + HOSTILE, "C fires on runs 1"]
    cards = {
        str(card.locator(".label").text_content()): card.locator(".value").inner_text()
        for card in page.locator(".cards .card").all()
    }
    assert cards["Suite score · with plugin"] == "50%"
    assert cards["Cases"] == "1 of 2"
    assert cards["Trigger accuracy"] == "2 of 4 queries"
    page.close()
