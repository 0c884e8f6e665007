"""Trigger queries through pytest: a query is decided on its last run by skill-creator's
verdict (rate ≥ 0.5 for should-trigger, < 0.5 for should-not), under -n 0 and -n 2."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_tree

#: A ``py:`` agent (called in the session's process: no interpreter started per run), as
#: tests/agents/trigger_agent.py: a prompt ``... fires on runs 1,3`` calls the ``Skill`` tool for
#: ``kit:olympiad`` in those runs and answers in the others.
AGENT_MODULE = """\
import re

from pytest_plugin_evals.model import ToolCall, Transcript


def answer(request):
    found = re.search(r"fires on runs ([\\d,]+)", request.prompt)
    runs = {int(n) for n in found.group(1).split(",")} if found else set()
    calls = [ToolCall("Skill", {"skill": "kit:olympiad"})] if request.run in runs else []
    return Transcript(final_message="done", tool_calls=calls)
"""


def agent_in(root: Path) -> str:
    """Write the agent's module under ``root`` (on the sessions' path); its ``--eval-agent``."""
    (root / "trigger_py_agent.py").write_text(AGENT_MODULE, encoding="utf-8")
    (root / "pytest.ini").write_text("[pytest]\npythonpath = .\n", encoding="utf-8")
    return "py:trigger_py_agent:answer"


QUERIES = [
    {"query": "Alpha fires on runs 1,2", "should_trigger": True},  # 2/3: right
    {"query": "Beta fires on runs 1", "should_trigger": True},  # 1/3: wrong
    {"query": "Gamma fires on runs 3", "should_trigger": False},  # 1/3: right
    {"query": "Delta fires on runs 2,3", "should_trigger": False},  # 2/3: wrong
]


def test_a_query_is_decided_by_its_rate(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "kit"}',
            "skills/olympiad/SKILL.md": "---\nname: olympiad\ndescription: d\n---\nx\n",
            "skills/olympiad/evals/trigger_eval.json": json.dumps(QUERIES),
        },
    )
    agent = agent_in(pytester.path)
    result = pytester.runpytest(
        "skills/olympiad/evals", *plugin_args, "--eval-agent", agent, "--eval-json", "o.json"
    )
    # 12 runs; the two queries judged wrong fail the item of their last run.
    result.assert_outcomes(passed=10, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*trigger query trigger-olympiad-02: the skill fired in 1 of 3 run(s); should "
            "trigger needs a rate at least 0.5*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*trigger query trigger-olympiad-04: the skill fired in 2 of 3 run(s); should not*"]
    )
    (triggers,) = read_doc("o.json")["triggers"]
    assert triggers["matrix"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 1}
    assert [q["rate"] for q in triggers["queries"]] == pytest.approx([2 / 3, 1 / 3, 1 / 3, 2 / 3])
    assert result.ret == 1
    # Without a baseline plugin each query runs in one arm (12 items): no before, no Δ.
    assert "baseline" not in triggers
    assert "before (" not in result.stdout.str()
    assert re.search(r"precision 0\.50 \[[\d.]+, [\d.]+\] · recall", result.stdout.str())


def test_the_trigger_threshold_gates_on_each_skills_f1(pytester: pytest.Pytester) -> None:
    """The ini's threshold reaches the gate: an F1 of 0.50 is below 0.6. (An F1 at or above
    the threshold passes: tests/unit/test_engine_gates.py.)"""
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "kit"}',
            "skills/olympiad/SKILL.md": "---\nname: olympiad\ndescription: d\n---\nx\n",
            # F1 = 2·1 / (2·1 + 1 + 1) = 0.5; every query right or wrong on all its runs
            "skills/olympiad/evals/trigger_eval.json": json.dumps(
                [
                    {"query": "A fires on runs 1", "should_trigger": True},
                    {"query": "B", "should_trigger": True},
                    {"query": "C fires on runs 1", "should_trigger": False},
                    {"query": "D", "should_trigger": False},
                ]
            ),
        },
    )
    agent = agent_in(pytester.path)
    result = pytester.runpytest(
        "skills/olympiad/evals", "-p", "no:cacheprovider", "--eval-agent", agent,
        "--eval-runs", "1", "-o", "eval_trigger_threshold=0.6",
    )  # fmt: skip
    below = "the trigger F1 of 1 skill(s) is below it: olympiad (0.50)"
    assert f"--eval-trigger-threshold 0.6: {below}" in result.outlines
    assert result.ret == 1


def mixed_suite(pytester: pytest.Pytester) -> str:
    """Two cases (one passes, one fails: score 0.5) beside four trigger queries of which three
    are judged right; the ``--eval-agent`` value that runs them."""
    queries = [{"query": f"Q{n} fires on runs 1", "should_trigger": True} for n in range(3)]
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": '{"name": "kit"}',
            "skills/olympiad/SKILL.md": "---\nname: olympiad\ndescription: d\n---\nx\n",
            "skills/olympiad/evals/trigger_eval.json": json.dumps(
                [*queries, {"query": "Q3", "should_trigger": True}]
            ),
            **{
                f"skills/olympiad/evals/{name}/{path}": text
                for name, pattern in (("passes", "done"), ("fails", "nothing"))
                for path, text in (
                    ("prompt.md", "Say it.\n"),
                    ("graders/g.md", f"---\ntype: regex\npattern: {pattern}\n---\n"),
                )
            },
        },
    )
    return agent_in(pytester.path)


def test_trigger_queries_are_not_counted_as_cases(
    pytester: pytest.Pytester, plugin_args: list[str], read_doc: Any
) -> None:
    """The suite score, the case counts and the threshold are the cases'; the queries are
    trigger accuracy (a suite of 2 cases and 4 queries once read "Cases 4 of 6")."""
    agent = mixed_suite(pytester)
    result = pytester.runpytest(
        "skills/olympiad/evals", *plugin_args, "--eval-agent", agent, "--eval-runs", "1",
        "--eval-threshold", "0.5", "--eval-json", "o.json",
    )  # fmt: skip
    agg = read_doc("o.json")["aggregates"]
    assert (agg["casesTotal"], agg["casesPassed"]) == (2, 1)
    assert agg["overallScore"] == pytest.approx(0.5)
    (triggers,) = read_doc("o.json")["triggers"]
    assert triggers["matrix"] == {"tp": 3, "fp": 0, "fn": 1, "tn": 0}
    result.stdout.fnmatch_lines(["2 case(s) + 4 trigger queries · mean Δ +0.00 *"])
    # The threshold gates the two cases only: one of them fails it, the queries do not count.
    result.stdout.fnmatch_lines(["1 of 2 case(s) below the threshold 0.50: fails (0.00)"])
    assert result.ret == 1
