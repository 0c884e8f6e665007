"""The HTML report shows the comparison with an earlier session (--eval-compare), as written."""

from __future__ import annotations

import html
import json
import re

import pytest

HOSTILE = "<img src=x onerror=alert(1)>"


def make_case(pytester: pytest.Pytester, name: str) -> None:
    """A case of three runs (all passed before and all failed after are beyond noise),
    passed by an answer that says hi."""
    pytester.makefile(".md", **{f"evals/{name}/prompt": "---\nruns: 3\n---\nSay hi\n"})
    pytester.makefile(".md", **{f"evals/{name}/graders/hi": "---\ntype: regex\npattern: hi\n---\n"})


#: ``py:`` agents (called in the session's process: no interpreter started per run): one says
#: hi, the other bye.
AGENTS = """\
def hi(request):
    return "hi"


def bye(request):
    return "bye"
"""


def test_the_report_shows_a_case_that_regressed_since_the_earlier_session(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    """Every run passed before and fails after: the report's comparison section shows both
    cases worse, their names as text."""
    make_case(pytester, "greets")
    make_case(pytester, HOSTILE)
    pytester.makepyfile(greeters=AGENTS)
    pytester.makeini("[pytest]\npythonpath = .\n")
    before = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", "py:greeters:hi", "--eval-output-dir", "before",
    )  # fmt: skip
    before.assert_outcomes(passed=6)
    after = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", "py:greeters:bye",
        "--eval-output-dir", "after", "--eval-compare", "before",
    )  # fmt: skip
    after.assert_outcomes(failed=6)

    page = (pytester.path / "after" / "report.html").read_text(encoding="utf-8")
    doc = json.loads((pytester.path / "after" / "aggregate-result.json").read_text())
    assert doc["comparison"]["counts"]["worse"] == 2
    section = re.search(r'<section class="comparison".*?</section>', page, re.DOTALL)
    assert section, "a comparison section"
    text = html.unescape(re.sub(r"<[^>]+>", " ", section.group(0)))
    assert "2 case(s) worse since that session." in text
    rows = re.findall(r'<tr class="change-row" data-verdict="(\w+)">(.*?)</tr>', section.group(0))
    assert [verdict for verdict, _ in rows] == ["worse", "worse"]
    cells = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split()) for _, row in rows]
    # A name is text: the case named like an image tag is shown as those characters.
    assert any(c.startswith(f"worse {HOSTILE} 100% → 0%") for c in cells), cells
    assert HOSTILE not in section.group(0)
    for cell in cells:
        assert "100% → 0%" in cell and "-100.0 pts" in cell, cell
    assert section.group(0).count('class="mark delta sig down"') == 2
