"""An A/B with the real ``claude`` binary: the with arm loads the plugin as it is, the baseline
arm the plugin at the previous commit (``--eval-baseline-plugin git:HEAD~1``), which had no
skill yet. Offline, against the scripted model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.helpers import git, write_tree

SKILL = "release-helper:next-version"
LAUNCHED = f"Launching skill: {SKILL}"

SKILL_MD = """---
name: next-version
description: Work out the next semantic version. Use when asked which version to release.
---
Bump the patch part for fixes, the minor part for features.
"""


def test_the_baseline_arm_loads_the_previous_commit(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    root = pytester.path  # the plugin sits at the top of its repository
    git(root, "init", "-q")
    write_tree(
        root,
        {
            ".claude-plugin/plugin.json": json.dumps(
                {"name": "release-helper", "version": "1.0.0"}
            ),
            "evals/next/prompt.md": (
                "---\nruns: 1\nallowed_tools: [Skill]\n---\n"
                "We fixed two bugs since v1.4.0. Which version should we release next?\n"
            ),
            "evals/next/graders/answer.md": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
            "evals/next/graders/skill-fired.md": "---\ntype: tool_used\ntool: Skill\n---\n",
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "release-helper without its skill")
    write_tree(
        root,
        {
            ".claude-plugin/plugin.json": json.dumps(
                {"name": "release-helper", "version": "1.1.0"}
            ),
            "skills/next-version/SKILL.md": SKILL_MD,
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "next-version skill")
    scripted_model.add(
        Rule(when_tool_result=LAUNCHED, reply=text("1.4.1: fixes only.")),
        Rule(when_tool_result="Unknown skill", reply=text("Let us say 2.0.0.")),
        Rule(when_prompt="release next", reply=tool_use("Skill", {"skill": SKILL})),
    )
    result, doc = run_evals("--eval-baseline-plugin", "git:HEAD~1", "-n0")
    result.assert_outcomes(passed=2)
    result.stdout.re_match_lines([r"CASE +WITH +BASE +Δ "])
    assert doc["suite"]["ablation"] == "with-baseline"
    assert doc["suite"]["baselinePlugin"] == {
        "spec": "git:HEAD~1",
        "name": "release-helper",
        "version": "1.0.0",
        "path": ".",
        "commit": git(root, "rev-parse", "HEAD~1"),
    }
    (case,) = doc["cases"]
    (with_run,) = case["arms"]["with"]
    (base_run,) = case["arms"]["baseline"]
    # Claude Code loaded each arm's version (a run that did not load it would be an error).
    assert with_run["infraError"] is None and base_run["infraError"] is None
    assert with_run["answer"] == "1.4.1: fixes only."
    assert base_run["answer"] == "Let us say 2.0.0."
    # The skill was tried in both arms and is scored in both: an A/B has no indicator.
    for run in (with_run, base_run):
        fired = {g["name"]: g for g in run["graders"]}["skill-fired"]
        assert fired["passed"] is True and fired["scored"] is True
    assert with_run["score"] == 1.0 and base_run["score"] == 0.5
    assert case["aggregates"]["delta"] == 0.5
    tool_results = [r["tool_result"] for r in scripted_model.message_requests if r["tool_result"]]
    assert any("Unknown skill" in t for t in tool_results)
    assert any(t.startswith(LAUNCHED) for t in tool_results)
