"""``--eval-aa`` as users run it, with a ``cmd:`` agent: an A/A session is not gated by the
threshold (its runs are measurements), and what it cannot combine with is one line. (The real
``claude`` binary's A/A sessions, wiring faults included: tests/e2e/test_aa_claude.py; the
merge of an A/A session's shards: tests/unit/test_merge.py.)"""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import pytest

from pytest_plugin_evals.stats.intervals import clopper_pearson
from tests.helpers import write_tree

#: Says "fine" in run 1 of either arm, "nope" otherwise: every case scores 1/3 in both arms.
AGENT = """\
import os, sys
sys.stdin.read()
print("fine" if os.environ["EVAL_RUN"] == "1" else "nope")
"""


def aa_suite(pytester: pytest.Pytester, **more: str) -> str:
    write_tree(
        pytester.path,
        {
            "agent.py": AGENT,
            ".claude-plugin/plugin.json": '{"name": "kit", "version": "1.0.0"}',
            **{
                f"evals/{name}/{path}": text
                for name in ("one", "two")
                for path, text in (
                    ("prompt.md", "---\nruns: 3\n---\nDo it.\n"),
                    ("graders/fine.md", "---\ntype: regex\npattern: fine\n---\n"),
                )
            },
            **more,
        },
    )
    return "cmd:" + shlex.join([sys.executable, str(pytester.path / "agent.py")])


@pytest.mark.workers
def test_an_aa_session_is_not_gated_and_its_markdown_leads_with_its_false_call_rate(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    """An A/A session's runs below the threshold are measurements: it passes. The summary a
    pull request shows leads with the false-call rate against the nominal level, with its
    exact interval, and the wiring faults first; no threshold and no mean Δ."""
    agent = aa_suite(pytester)
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", agent, "--eval-aa", "--eval-json", "out.json",
        "--eval-gate", "not-worse", "--eval-markdown", "aa.md",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.assert_outcomes(passed=12)  # runs below the threshold 1 are measurements
    doc: dict[str, Any] = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["aggregates"]["thresholdMet"] is False  # as the numbers say; it gates nothing
    assert [r["arm"] for r in doc["cases"][0]["arms"]["baseline"]] == ["baseline"] * 3
    assert doc["aa"]["casesWithVerdict"] == 2 and doc["aa"]["casesCalled"] == 0
    result.stdout.fnmatch_lines(
        [
            "--eval-aa: 0 of 2 case(s) with a verdict called a difference; *",
            "--eval-aa: an A/A session gates on its wiring faults only (none found)*",
        ]
    )
    assert "below the threshold" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()

    text = (pytester.path / "aa.md").read_text(encoding="utf-8")
    low, high = clopper_pearson(0, 2) or (0.0, 0.0)
    said = " ".join(text.split())
    assert said.index("## Plugin evals (A/A calibration): passed ### A/A calibration") > 0
    assert (
        "**False-call rate:** 0 of 2 case(s) with a verdict, 0.0% (exact 95% interval "
        f"{low:.1%} to {high:.1%}) against the nominal 5%"
    ) in said
    assert said.index("False-call rate") < said.index("No wiring fault") < said.index("| one")
    assert "Threshold" not in said and "Mean Δ" not in said and "Below the threshold" not in said


def test_a_trigger_file_under_aa_is_one_load_error(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    queries = [{"query": f"Q{n}", "should_trigger": True} for n in range(4)]
    agent = aa_suite(
        pytester,
        **{
            "skills/greet/SKILL.md": "---\nname: greet\ndescription: d\n---\nx\n",
            "skills/greet/evals/trigger_eval.json": json.dumps(queries),
        },
    )
    result = pytester.runpytest(
        "skills/greet/evals", *plugin_args, "--eval-agent", agent, "--eval-aa"
    )
    result.assert_outcomes(errors=1)  # one error for the file's four queries
    result.stdout.fnmatch_lines(
        ["*trigger_eval.json*: --eval-aa needs two arms of the plugin: a trigger query is asked "
         "of the with arm only*"]
    )  # fmt: skip
