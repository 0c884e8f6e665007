"""Trigger accuracy before and after a description edit, with the real ``claude`` binary: the
commit's SKILL.md does not say the skill checks proofs, the working tree's does, and the
scripted model calls the skill for a proof only when the skill listing Claude Code sends it
says so. ``--eval-baseline-plugin git:HEAD`` runs each query with both versions."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from pytest_plugin_evals.testing.rules import Request
from tests.helpers import git, write_tree

OLD = "---\nname: olympiad\ndescription: Solves olympiad problems.\n---\nWork it out.\n"
NEW = (
    "---\nname: olympiad\ndescription: Solves olympiad problems and checks proofs.\n---\n"
    "Work it out.\n"
)
QUERIES = [
    {"query": "Solve this olympiad problem: find all n with n^2+1 prime.", "should_trigger": True},
    {"query": "Check my proof that the square root of 2 is irrational.", "should_trigger": True},
    {"query": "Write a Python function that sorts a list.", "should_trigger": False},
]


@dataclass(frozen=True)
class WhenListed(Rule):
    """A rule that also needs ``listed`` in the system text (where Claude Code lists the
    skills it has, with their descriptions)."""

    listed: str = ""

    def matches(self, request: Request) -> bool:
        return self.listed in request.system and super().matches(request)


def test_a_description_edit_changes_whether_the_skill_fires(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    """In one process (before and after under two workers are
    tests/integration/test_trigger_baseline.py's)."""
    root = pytester.path
    git(root, "init", "-q")
    write_tree(
        root,
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "kit", "version": "1.0.0"}),
            "skills/olympiad/SKILL.md": OLD,
            "skills/olympiad/evals/trigger_eval.json": json.dumps(QUERIES),
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "olympiad")
    (root / "skills/olympiad/SKILL.md").write_text(NEW, encoding="utf-8")  # not committed
    (root / "evals").mkdir()
    fire = tool_use("Skill", {"skill": "kit:olympiad"})
    scripted_model.add(
        Rule(when_tool_result="Launching skill", reply=text("Done, with the skill.")),
        Rule(when_prompt="olympiad problem", reply=fire),
        WhenListed(when_prompt="Check my proof", listed="checks proofs", reply=fire),
        Rule(reply=text("Sure.")),
    )
    result, doc = run_evals(
        "--eval-runs", "1", "--eval-baseline-plugin", "git:HEAD",
        "skills/olympiad/evals",
    )  # fmt: skip
    result.assert_outcomes(passed=6)
    # Claude Code listed each arm's own description.
    systems = [r["system"] for r in scripted_model.message_requests]
    assert any("checks proofs" in s for s in systems)
    assert any("Solves olympiad problems." in s for s in systems)
    (skill,) = doc["triggers"]
    assert skill["matrix"] == {"tp": 2, "fp": 0, "fn": 0, "tn": 1}
    before = skill["baseline"]
    assert before["matrix"] == {"tp": 1, "fp": 0, "fn": 1, "tn": 1}
    assert [q["triggered"] for q in before["queries"]] == [True, False, False]
    assert before["recall"]["value"] == 0.5 and skill["recall"]["value"] == 1.0
    diff = before["difference"]
    assert diff["recall"]["value"] == 0.5
    low, high = diff["recall"]["interval"]
    assert low < 0 < 0.5 < high  # three queries cannot show the edit helped
    assert diff["precision"]["value"] == 0.0
    result.stdout.fnmatch_lines(
        [
            "TRIGGERS olympiad: 3 queries · TP 2 FP 0 FN 0 TN 1",
            "  before (git:HEAD): TP 1 FP 0 FN 1 TN 1",
            "  before → after, Δ = after − before (95% intervals)",
            "  recall    0.50 [[]*] → 1.00 [[]*] Δ +0.50 [[]-*, +*]",
        ]
    )
