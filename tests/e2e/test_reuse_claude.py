"""``--eval-reuse last`` with the real ``claude`` binary, offline against the scripted model:
a pull request's session makes the with arm's runs only. What another model, agent, mocks or
baseline does to a recorded run (made again) is tests/unit/test_reuse_stamps.py's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.helpers import write_tree

SKILL = "release-helper:next-version"

SKILL_MD = """---
name: next-version
description: Work out the next semantic version. Use when asked which version to release.
---
Bump the patch part for fixes, the minor part for features.
"""


def without_arm_runs(model: ScriptedModel) -> int:
    """The runs made without the plugin: the skill they ask for is unknown to them."""
    return sum(
        1 for r in model.message_requests if "Unknown skill" in str(r.get("tool_result") or "")
    )


def test_a_pr_session_pays_for_the_with_arm_only(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    write_tree(
        pytester.path,
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "release-helper"}),
            "skills/next-version/SKILL.md": SKILL_MD,
            "evals/next/prompt.md": (
                "---\nruns: 1\nallowed_tools: [Skill]\n---\n"
                "We fixed two bugs since v1.4.0. Which version should we release next?\n"
            ),
            "evals/next/graders/answer.md": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
        },
    )
    scripted_model.add(
        Rule(when_tool_result=f"Launching skill: {SKILL}", reply=text("1.4.1: fixes only.")),
        Rule(when_tool_result="Unknown skill", reply=text("Let us say 2.0.0.")),
        Rule(when_prompt="release next", reply=tool_use("Skill", {"skill": SKILL})),
    )
    result, first = run_evals("-n0")
    result.assert_outcomes(passed=2)
    assert without_arm_runs(scripted_model) == 1
    spent = first["costUsd"]
    # A pull request edits the skill: the without arm cannot have changed.
    (pytester.path / "skills" / "next-version" / "SKILL.md").write_text(SKILL_MD + "\nNew.\n")
    result, second = run_evals("-n0", "--eval-reuse", "last")
    result.assert_outcomes(passed=2)
    assert without_arm_runs(scripted_model) == 1  # none more
    (case,) = second["cases"]
    assert all(r.get("reusedFrom") for r in case["arms"]["without"])
    assert [r["passed"] for r in case["arms"]["without"]] == [False]
    assert second["costUsd"] < spent
    result.stdout.fnmatch_lines(["--eval-reuse: 1 of 1 without-arm run(s) reused from *"])
