"""A run whose ``Skill`` call failed says why, with the real ``claude`` binary: the error text
Claude Code returned beside the call in the failure block and in the JSON document, and the
``tool_used`` indicator saying the skill did not load."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use


def test_an_unknown_skill_is_shown_where_the_user_looks(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    """In one process (the failure block a worker's run gets from the controller is
    tests/integration/test_failure_reports.py's)."""
    pytester.makefile(".json", **{".claude-plugin/plugin": json.dumps({"name": "math-olympiad"})})
    pytester.makefile(
        ".md",
        **{
            "skills/solve/SKILL": "---\nname: solve\ndescription: Olympiad proofs.\n---\nQED.\n",
            "evals/prove/prompt": "---\nruns: 1\nallowed_tools: [Skill]\n---\nProve that 2 > 1\n",
            "evals/prove/graders/fired": "---\ntype: tool_used\ntool: Skill\n---\n",
            "evals/prove/graders/qed": "---\ntype: regex\npattern: QED\n---\n",
        },
    )
    scripted_model.add(
        Rule(when_tool_result="Unknown skill", reply=text("I could not load it.")),
        Rule(when_prompt="Prove", reply=tool_use("Skill", {"skill": "math-olympiad:olympiad"})),
    )
    result, doc = run_evals("--eval-ablation", "none")
    result.stdout.fnmatch_lines(
        [
            "⚠ fired: Skill called 1x (expected 1..∞) — the skill did not load: "
            "Unknown skill: math-olympiad:olympiad",
            '  @0 Skill {"skill":"math-olympiad:olympiad"} ✗ error: '
            "Unknown skill: math-olympiad:olympiad",
        ]
    )
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["toolCallList"][0]["error"] == "Unknown skill: math-olympiad:olympiad"
    fired = {g["name"]: g for g in run["graders"]}["fired"]
    assert fired["passed"] is True
