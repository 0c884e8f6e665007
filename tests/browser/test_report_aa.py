"""The HTML report of an A/A session (``--eval-aa``), as a person sees it in a browser: the
false-call rate against the nominal level, and each wiring fault naming its case and arm (a
hostile case name shown as text)."""

from __future__ import annotations

import shlex
import sys
from typing import TYPE_CHECKING

import pytest

from tests.browser.test_report_escaping import assert_inert, open_page
from tests.helpers import write_tree

if TYPE_CHECKING:
    from playwright.sync_api import Browser

HOSTILE = '<img src=x onerror="window.__pwned=1">'
#: Fires the plugin's skill (a Skill call in its trace) in the with arm only, and passes.
AGENT = """\
import json, os, sys
sys.stdin.read()
if os.environ["EVAL_ARM"] == "with":
    with open(os.environ["EVAL_TRACE_FILE"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"type": "tool_call", "name": "Skill",
                             "input": {"skill": "kit:greet"}}) + "\\n")
print("hello")
"""


def test_the_aa_section_reads_as_a_person_sees_it(
    pytester: pytest.Pytester, browser: Browser
) -> None:
    write_tree(
        pytester.path,
        {
            "agent.py": AGENT,
            ".claude-plugin/plugin.json": '{"name": "kit"}',
            "skills/greet/SKILL.md": "---\nname: greet\ndescription: d\n---\nx\n",
            "evals/cases.yaml": (
                "cases:\n  - name: 'odd " + HOSTILE.replace("'", "''") + "'\n"
                "    prompt: Greet me.\n"
                "    graders:\n      - type: regex\n        pattern: hello\n"
            ),
        },
    )
    agent = "cmd:" + shlex.join([sys.executable, str(pytester.path / "agent.py")])
    result = pytester.runpytest(
        "evals", "-p", "no:cacheprovider", "--eval-agent", agent, "--eval-aa",
        "--eval-runs", "3", "--eval-report", "r.html",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    page, found = open_page(browser, (pytester.path / "r.html").as_uri(), "#aa")
    assert_inert(found)
    section = page.locator("#aa")
    assert section.is_visible()
    rate = " ".join(section.locator(".aa-rate").inner_text().split())
    assert "0 of 1 case(s) with a verdict called a difference" in rate
    assert "false-call rate of 0.0% (exact 95% interval 0.0% to 97.5%)" in rate
    assert "against the nominal 5%" in rate
    (fault,) = section.locator(".aa-faults li").all_inner_texts()
    assert fault == (
        f"Wiring fault: case odd {HOSTILE}: the plugin's skill never fired in the baseline "
        "arm (0 of 3 run(s)), and fired in every run of the other (3 of 3)"
    )
    assert section.locator(".aa-faults li").get_attribute("data-arm") == "baseline"
