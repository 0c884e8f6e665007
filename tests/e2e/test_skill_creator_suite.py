"""skill-creator's ``evals/evals.json`` beside a bare skill, with the real ``claude`` binary and
the Anthropic judge on the scripted model: both arms, input files in the run's folder, each
expectation judged by three votes, ``expected_output`` in the document and the HTML report."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use

SKILL_MD = """---
name: pdf
description: Fill PDF forms. Use when the user has a PDF form to fill.
---
Read the form's fields, then fill them. End with FORM-FILLED.
"""

SUITE = {
    "skill_name": "pdf",
    "evals": [
        {
            "id": 1,
            "prompt": "Fill the PDF form with my name, Ada",
            "expected_output": "intake.pdf with the name field set to Ada",
            "files": ["evals/files/intake.txt"],
            "expectations": ["The answer says the form was filled", "The name Ada is used"],
        },
    ],
}


def test_a_skill_creator_suite_runs_in_both_arms(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    run_evals: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In one process: what crosses to the controller is tested by the -n 2 sessions of the
    other end-to-end modules."""
    monkeypatch.setenv("HOME", str(pytester.path / "elsewhere"))
    pytester.makefile(".md", SKILL=SKILL_MD)
    pytester.makefile(".json", **{"evals/evals": json.dumps(SUITE)})
    pytester.makefile(".txt", **{"evals/files/intake": "FORM name=____\n"})
    scripted_model.add(
        # The judge: each expectation's criterion is in its prompt; the with arm's answer passes.
        Rule(when_prompt="FORM-FILLED for Ada", reply=text("PASS")),
        Rule(when_prompt="Agent output (last_message)", reply=text("FAIL")),
        Rule(when_tool_result="FORM name=____", reply=text("FORM-FILLED for Ada")),
        Rule(when_tool_result="Unknown skill", reply=text("I cannot fill forms.")),
        Rule(
            when_tool_result="Launching skill",
            reply=tool_use("Read", {"file_path": "evals/files/intake.txt"}),
        ),
        Rule(
            when_prompt="Input files: evals/files/intake.txt",
            reply=tool_use("Skill", {"skill": "pdf"}),
        ),
    )
    _, doc = run_evals("-n0", "--eval-judge", "anthropic", "--eval-report", "r.html")
    cases = {c["name"]: c for c in doc["cases"]}
    assert set(cases) == {"eval-1"}  # (one with no expectation: test_skill_creator_workspace)
    fill = cases["eval-1"]
    assert fill["source"] == "skill_creator"
    assert fill["expectedOutput"] == "intake.pdf with the name field set to Ada"
    assert [g["type"] for g in fill["graders"]] == ["llm", "llm"]
    with_run, without_run = fill["arms"]["with"][0], fill["arms"]["without"][0]
    # The input file was in the run's folder: the agent read it and answered from it.
    assert with_run["score"] == 1.0, with_run
    assert all(len(g["judgeVotes"]) == 3 for g in with_run["graders"])
    # Scored in both arms: the without arm had no skill and its answer was judged FAIL.
    assert without_run["score"] == 0.0
    assert all(g["scored"] for g in without_run["graders"])
    assert fill["aggregates"]["delta"] == 1.0
    html = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert "Expected output" in html and "intake.pdf with the name field set to Ada" in html


def test_a_file_in_no_known_format_says_what_was_tried(
    pytester: pytest.Pytester, run_evals: Any
) -> None:
    pytester.makefile(".json", **{"evals/evals": json.dumps({"tests": [{"q": "x"}]})})
    result, _ = run_evals()
    result.stdout.fnmatch_lines(
        [
            "*evals/evals.json:1: not a suite in a known format: tried evals.json / sy suites "
            "(a cases: list) and skill-creator's evals.json (an evals list) (found keys: tests)"
        ]
    )
