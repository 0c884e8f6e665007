"""A failed run explains itself in both HTML pages, as a person sees them in a browser: its tool
calls in order (a failed one marked, hostile names as text, long inputs wrapped, not spilling
out of the page), and a case file's problems each on a line of their own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.test_report_escaping import assert_inert, open_page
from tests.helpers import write_tree

if TYPE_CHECKING:
    from playwright.sync_api import Browser

HOSTILE_TOOL = '<img src=x onerror="window.__pwned=1">'
LONG = "x" * 400

CALLS: list[dict[str, Any]] = [
    {"name": "Skill", "input": {"skill": "release-helper:changelog"}},
    {"name": "Read", "input": {"file_path": "CHANGELOG.md", "pad": LONG}},
    {"name": "Bash", "input": {"command": "npm test"}, "is_error": True},
    {"name": HOSTILE_TOOL, "input": {"q": "</script><script>window.__pwned=1</script>"}},
]

#: Three problems in one case file.
THREE_MISTAKES = """\
schema_version: "1.1"
name: three
retries: 2
runs: three
execution:
  prompt: Say hi
graders:
  - name: bad
    type: regexx
"""


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def suite(root: Path) -> None:
    write_tree(
        root / "evals",
        {
            "release/prompt.md": "---\nruns: 1\n---\nWhat is the next version?\n",
            "release/graders/skill.md": (
                "---\ntype: tool_used\ntool: Skill\ninput_match: 'release-helper:next'\n---\n"
            ),
            "three/case.yaml": THREE_MISTAKES,
        },
    )


def test_the_tool_calls_and_the_problems_read_as_a_person_sees_them(
    pytester: pytest.Pytester, scripted_agent: Any, browser: Browser
) -> None:
    suite(pytester.path)
    agent = scripted_agent([{"match": "next version", "reply": "no idea", "tool_calls": CALLS}])
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "--eval-agent", agent,
        "--html", "ph.html", "--self-contained-html", "--eval-report", "ours.html",
    )  # fmt: skip
    result.assert_outcomes(failed=1, errors=1)
    ours, theirs = pytester.path / "ours.html", pytester.path / "ph.html"

    check_our_report(browser, ours.as_uri())
    check_pytest_html(browser, theirs.as_uri())


def check_our_report(browser: Browser, url: str) -> None:
    page, found = open_page(browser, url, "#toolbar button")
    assert_inert(found)
    heading = page.get_by_text("Tool calls (4)", exact=True)
    calls = page.locator("details.run .tool-calls li")
    assert not heading.is_visible()
    assert not calls.first.is_visible()  # the run is folded to its line, which counts them
    run_line = page.locator("details.run > summary")
    assert "4 tool calls" in run_line.inner_text()
    run_line.click()
    assert heading.is_visible()
    shown = [" ".join(text.split()) for text in calls.all_inner_texts()]
    assert shown == [
        'Skill {"skill":"release-helper:changelog"}',
        f"Read {compact(CALLS[1]['input'])[:299]}…",  # cut at 300 characters
        '✗ Bash {"command":"npm test"} error',
        f"{HOSTILE_TOOL} {json.dumps(CALLS[3]['input'], separators=(',', ':'))}",
    ]
    # The list counts from 0, as tool_used and tool_order name a call (Skill@0).
    assert page.locator("details.run .tool-calls ol").get_attribute("start") == "0"
    # A long input wraps inside its run: nothing spills out of the page sideways.
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    explanation = page.locator("ul.verdicts li").inner_text()
    assert "Skill called 1x, but no call's input matched /release-helper:next/" in explanation
    # The case file's three problems, one line each.
    problems = page.locator("ul.errors li").inner_text().split("\n")
    assert len(problems) == 3
    assert problems[0].endswith('case.yaml:3: unknown key "retries" (expected one of: '
                                "schema_version, name, description, tags, plugins, runs, "
                                "expected_outcome, context, execution, graders)")  # fmt: skip
    assert (
        problems[1] == 'three/case.yaml:4: runs must be a whole number from 1 to 50 (got "three")'
    )
    assert problems[2].startswith("three/case.yaml:9: graders[0].type must be one of regex")
    page.close()


def check_pytest_html(browser: Browser, url: str) -> None:
    page, found = open_page(browser, url, "#results-table .col-testId")
    assert_inert(found)
    text = page.inner_text("body")
    assert "Tool calls (4):" in text
    assert 'Skill {"skill":"release-helper:changelog"}' in text
    assert '✗ Bash {"command":"npm test"} (error)' in text
    assert HOSTILE_TOOL in text
    page.close()
