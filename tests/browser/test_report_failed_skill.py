"""Why a run failed, where a person looks first: a failed ``Skill`` call's error text beside the
call in the HTML run viewer (escaped), and its plugin-fired indicator saying the skill did not
load although ``tool_used`` counts the call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.test_report_escaping import assert_inert, open_page
from tests.helpers import write_tree

if TYPE_CHECKING:
    from playwright.sync_api import Browser

UNKNOWN = "<tool_use_error>Unknown skill: math-olympiad:math-olympiad</tool_use_error>"
HOSTILE = '<img src=x onerror="window.__pwned=1">'

CALLS: list[dict[str, Any]] = [
    {
        "name": "Skill",
        "input": {"skill": "math-olympiad:math-olympiad"},
        "output": UNKNOWN,
        "is_error": True,
    },
    {"name": "Bash", "input": {"command": "ls"}, "output": HOSTILE + "y" * 400, "is_error": True},
]


def test_a_failed_skill_call_is_visible_in_the_run_viewer(
    pytester: pytest.Pytester, scripted_agent: Any, browser: Browser
) -> None:
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "math-olympiad"}',
            "evals/prove/prompt.md": "---\nruns: 1\n---\nProve the inequality\n",
            "evals/prove/graders/fired.md": "---\ntype: tool_used\ntool: Skill\n---\n",
            "evals/prove/graders/qed.md": "---\ntype: regex\npattern: QED\n---\n",
        },
    )
    agent = scripted_agent([{"match": "Prove", "reply": "I could not", "tool_calls": CALLS}])
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-ablation", "with-without",
        "--eval-report", "ours.html",
    )  # fmt: skip
    # The terminal failure block: the error text beside the call, bounded.
    result.stdout.fnmatch_lines(
        [
            "⚠ fired [with-only, not scored]: Skill called 1x (expected 1..∞) — the skill did "
            "not load: Unknown skill: math-olympiad:math-olympiad",
            '  @0 Skill {"skill":"math-olympiad:math-olympiad"} ✗ error: '
            "Unknown skill: math-olympiad:math-olympiad",
        ]
    )
    bash = next(line for line in result.outlines if line.startswith("  @1 Bash"))
    assert len(bash) < 360 and bash.endswith("…")

    page, found = open_page(browser, (pytester.path / "ours.html").as_uri(), "#toolbar button")
    assert_inert(found)  # the hostile error text is text, not markup
    run = page.locator('details.run[data-arm="with"]').first
    run.locator("summary").click()
    calls = [" ".join(t.split()) for t in run.locator(".tool-calls li").all_inner_texts()]
    assert calls[0] == (
        '✗ Skill {"skill":"math-olympiad:math-olympiad"} error '
        "Unknown skill: math-olympiad:math-olympiad"
    )
    assert HOSTILE in calls[1] and calls[1].endswith("…")
    errors = run.locator(".tool-calls .tool-error")
    assert errors.first.is_visible()
    indicator = run.locator("ul.verdicts li", has_text="fired")
    text = " ".join(indicator.inner_text().split())
    assert "plugin-fired indicator · called, did not load · not scored" in text
    assert "Skill called 1x (expected 1..∞) — the skill did not load" in text
    assert indicator.locator(".badge.warn").is_visible()
    page.close()
