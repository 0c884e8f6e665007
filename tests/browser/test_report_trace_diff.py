"""A two-arm case's trace diff as a person sees it: the typical pair side by side with its first
divergence marked, other pairs picked from the selects, and every hostile tool name, input,
file name and answer shown as text, long ones cut, nothing spilling out of the page."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.test_report_escaping import FOUND_ACTIVE, SETTLE, assert_inert, open_page

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "</script><script>window.__pwned=1</script>"
FILE = "<img src=x onerror=window.__pwned=1>.md"
LONG = "y" * 3000  # one line, longer than a diff shows

RULES: list[dict[str, Any]] = [
    {
        "match": "next version",
        "arm": "with",
        "reply": f"Ship 1.4.1. {SCRIPT} {LONG}",
        "tool_calls": [
            {"name": "Skill", "input": {"skill": "release-helper:next-version"}},
            {"name": "Read", "input": {"file_path": "CHANGELOG.md"}},
            {"name": IMG, "input": {"q": SCRIPT}},
        ],
        "files": {FILE: "notes\n"},
    },
    {
        "match": "next version",
        "arm": "without",
        "reply": f"Ship 2.0.0. {IMG}",
        "tool_calls": [{"name": "Read", "input": {"file_path": "CHANGELOG.md"}}],
    },
]

PROMPT = "---\nruns: 4\n---\nWe fixed two bugs since v1.4.0. What is the next version?\n"
ANSWER = f"---\ntype: regex\npattern: '1\\.4\\.1'\n---\n{IMG}\n"


def test_the_trace_diff_shows_hostile_steps_as_text_and_swaps_pairs(
    pytester: pytest.Pytester, scripted_agent: Any, browser: Browser
) -> None:
    pytester.makefile(".json", **{".claude-plugin/plugin": '{"name": "release-helper"}'})
    pytester.makefile(".md", **{"evals/next/prompt": PROMPT, "evals/next/graders/answer": ANSWER})
    agent = scripted_agent(RULES)
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-report", "ours.html"
    )
    result.assert_outcomes(passed=8)
    url = (pytester.path / "ours.html").as_uri()

    page, found = open_page(browser, url, "section.trace-diff select")
    assert_inert(found)
    check_typical_pair(page)
    check_summary(page)
    check_other_pair(page)
    page.close()


def rows(page: Page) -> list[list[str]]:
    cells = page.locator("section.trace-diff .diff-shown table.diff-steps tbody tr")
    return [
        [" ".join(t.split()) for t in cells.nth(i).locator("td").all_inner_texts()]
        for i in range(cells.count())
    ]


def check_typical_pair(page: Page) -> None:
    diff = page.locator("section.trace-diff")
    caption = diff.locator(".diff-shown .diff-caption").inner_text()
    assert caption == (
        "With plugin, run 1, beside Without plugin, run 1: the most typical run of each arm."
        " They part at step 0."
    )
    steps = rows(page)
    assert steps[0] == [
        "0 first divergence",
        "skill loaded release-helper:next-version",
        "—",
    ]
    assert steps[1] == [
        "1",
        'tool Read {"file_path":"CHANGELOG.md"}',
        'tool Read {"file_path":"CHANGELOG.md"}',
    ]
    assert steps[2] == ["2 only here", f'tool {IMG} {{"q":"{SCRIPT}"}}', "—"]
    assert steps[3] == ["3 only here", f"file written {FILE}", "—"]
    answer = steps[4]
    assert answer[0] == "4 differs"
    assert answer[1].startswith(f"answer Ship 1.4.1. {SCRIPT} yyy")
    given = len(RULES[0]["reply"])
    assert answer[1].endswith(f"… (cut: 1,000 of {given:,} characters)")
    assert answer[2] == f"answer Ship 2.0.0. {IMG}"
    assert diff.locator(".first-divergence").count() == 1
    # The graders' verdicts beside each run, the hostile explanation as text.
    sides = diff.locator(".diff-shown .diff-side").all_inner_texts()
    assert "✓ answer matched" in " ".join(sides[0].split())
    assert "✗ answer pattern not found" in " ".join(sides[1].split())
    # A long answer wraps inside its cell: nothing spills out of the page sideways.
    assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0


def check_summary(page: Page) -> None:
    table = page.locator("section.trace-diff table.diff-summary tbody tr")
    lines = [" ".join(t.split()) for t in table.all_inner_texts()]
    assert "runs graded 4 4" in lines
    assert "a skill loaded 4 of 4 (100%): release-helper:next-version 0 of 4 (0%)" in lines
    assert "files written per run 1.00 0.00" in lines
    assert "Read 1.00 1.00" in lines
    assert f"{IMG} 1.00 0.00" in lines
    assert f"{FILE} 4 of 4 (100%) 0 of 4 (0%)" in lines


def check_other_pair(page: Page) -> None:
    diff = page.locator("section.trace-diff")
    # 4 × 4 pairs: those that keep a run of the typical pair, one of them on the page.
    assert diff.locator("template").count() == 6
    diff.get_by_label("Without plugin run").select_option("2")
    caption = diff.locator(".diff-shown .diff-caption").inner_text()
    assert caption == "With plugin, run 1, beside Without plugin, run 2. They part at step 0."
    assert rows(page)[2] == ["2 only here", f'tool {IMG} {{"q":"{SCRIPT}"}}', "—"]
    page.evaluate(SETTLE)
    found = page.evaluate(FOUND_ACTIVE)
    assert (found["pwned"], found["handlers"], found["scripts"]) == (None, [], [])
    diff.get_by_label("With plugin run").select_option("2")  # 2-2: not kept
    assert diff.locator(".diff-shown").inner_text() == (
        "This pair is not in the report: with many runs it keeps only the pairs that share a"
        " run with the most typical pair."
    )
    diff.get_by_label("With plugin run").select_option("1")
    # Back to the typical pair: the same nodes as the page was served with.
    diff.get_by_label("Without plugin run").select_option("1")
    assert "the most typical run of each arm" in diff.locator(".diff-caption").inner_text()
