"""Which graders discriminate, as an author sees it: real sessions of a ``py:`` agent of known
behaviour, whose graders pass in both arms, in neither, or only with the plugin; the terminal
line (on a terminal and in a log), the document's ``graderSplits`` and the report's table,
with and without xdist workers; an A/B whose baseline lost a run to an error; one arm."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree
from tests.integration.test_progress import run_in_terminal, screen

#: Says VERSION in every run; ANSWER only with the plugin under test (not the released one);
#: the released plugin's third run reports a cost no agent can have (it is not graded).
AGENT = """\
from pytest_plugin_evals.model import Transcript


def answer(request):
    loaded = request.plugin_dir is not None
    released = loaded and request.plugin_dir.name == "released"
    if released and request.run == 3:
        return Transcript(final_message="VERSION", cost_usd=-1.0)
    return "VERSION ANSWER" if loaded and not released else "VERSION"
"""

CASES = {
    # alpha: one grader passes in both arms, one in neither, one tells them apart.
    "evals/alpha/prompt.md": "---\nruns: 3\n---\nWhat is the next version?\n",
    "evals/alpha/graders/mentions-version.md": "---\ntype: regex\npattern: VERSION\n---\n",
    "evals/alpha/graders/cites-rfc.md": "---\ntype: regex\npattern: RFC-\\d+\n---\n",
    "evals/alpha/graders/answer.md": "---\ntype: regex\npattern: ANSWER\n---\n",
    # beta: its one grader tells the arms apart.
    "evals/beta/prompt.md": "---\nruns: 3\n---\nAnd the answer?\n",
    "evals/beta/graders/answer.md": "---\ntype: regex\npattern: ANSWER\n---\n",
}

ALPHA_LINE = (
    'alpha: grader "mentions-version" (3/3, 3/3) passes in both arms; grader "cites-rfc" '
    "(0/3, 0/3) fails in both arms — they cannot tell the arms apart"
)


@pytest.fixture
def suite(pytester: pytest.Pytester) -> Path:
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "helper", "version": "2.0.0"}',
            "gs_agent.py": AGENT,
            "pytest.ini": "[pytest]\npythonpath = .\n",
            **CASES,
        },
    )
    return pytester.path


def run(pytester: pytest.Pytester, plugin_args: list[str], *extra: str) -> Any:
    return pytester.runpytest(
        "evals",
        *plugin_args,
        "--eval-agent",
        "py:gs_agent:answer",
        "--eval-threshold",
        "0",
        "--eval-json",
        "out.json",
        "--eval-report",
        "out.html",
        *extra,
    )


def splits(doc: dict[str, Any], case: str) -> dict[str, tuple[Any, ...]]:
    entry = next(c for c in doc["cases"] if c["name"] == case)
    return {
        s["name"]: (
            s["passWith"],
            s["runsWith"],
            s.get("passWithout"),
            s.get("runsWithout"),
            s.get("flag"),
        )
        for s in entry["graderSplits"]
    }


@pytest.mark.workers
def test_a_session_names_the_graders_that_cannot_tell_the_arms_apart(
    pytester: pytest.Pytester, suite: Path, plugin_args: list[str], read_doc: Any
) -> None:
    result = run(pytester, plugin_args, "--eval-markdown", "out.md")
    assert result.ret == 0, result.stdout.str()
    blind = [line for line in result.stdout.lines if "cannot tell" in line]
    assert blind == [ALPHA_LINE]  # and none for beta, whose one grader discriminates
    summary = " ".join((pytester.path / "out.md").read_text(encoding="utf-8").split())
    assert "**2 grader(s) in 1 case(s) cannot tell the arms apart:**" in summary
    doc = read_doc()
    assert splits(doc, "alpha") == {
        "mentions-version": (3, 3, 3, 3, "both"),
        "cites-rfc": (0, 3, 0, 3, "neither"),
        "answer": (3, 3, 0, 3, "discriminates"),
    }
    assert splits(doc, "beta") == {"answer": (3, 3, 0, 3, "discriminates")}
    page = (pytester.path / "out.html").read_text(encoding="utf-8")
    rows = re.findall(r'<tr class="grader-split( blind)?" data-flag="([a-z-]*)"', page)
    assert sorted(rows) == [
        ("", "discriminates"),
        ("", "discriminates"),
        (" blind", "both"),
        (" blind", "neither"),
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_on_a_terminal_the_line_is_whole(suite: Path, plugin_args: list[str]) -> None:
    """On a pseudo-terminal the line is one whole line (the controller's printing of it under
    two workers: the first test, in a log)."""
    output = run_in_terminal(
        ["evals", *plugin_args, "--eval-agent", "py:gs_agent:answer", "--eval-threshold", "0"],
        suite,
        columns=220,
    )
    assert "\x1b[" in output, output  # a terminal indeed: colours
    shown = screen(output)
    assert [line for line in shown if "cannot tell" in line] == [ALPHA_LINE], "\n".join(shown)


def test_an_ab_counts_the_baselines_graded_runs(
    pytester: pytest.Pytester, suite: Path, plugin_args: list[str], read_doc: Any
) -> None:
    """Against a baseline plugin a grader's second rate is the baseline's graded runs (a run
    that could not be made is left out). (A single arm has one rate and no flag:
    tests/unit/test_grader_splits.py; the splits crossing from two workers: the first test.)"""
    write_tree(suite / "released", {".claude-plugin/plugin.json": '{"name": "helper"}'})
    result = run(pytester, plugin_args, "--eval-baseline-plugin", "released")
    assert result.ret == 1, result.stdout.str()  # a run that could not be made fails it
    doc = read_doc()
    alpha = next(c for c in doc["cases"] if c["name"] == "alpha")
    assert [r.get("infraError") for r in alpha["arms"]["baseline"]] == [None, None, "invalid_cost"]
    assert splits(doc, "alpha") == {
        "mentions-version": (3, 3, 2, 2, "both"),
        "cites-rfc": (0, 3, 0, 2, "neither"),
        "answer": (3, 3, 0, 2, "discriminates"),
    }
    assert [line for line in result.stdout.lines if "cannot tell" in line] == [
        ALPHA_LINE.replace("(3/3, 3/3)", "(3/3, 2/2)").replace("(0/3, 0/3)", "(0/3, 0/2)")
    ]
    assert "<th>Baseline</th>" in (pytester.path / "out.html").read_text(encoding="utf-8")
