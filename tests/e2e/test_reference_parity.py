"""The same suite, the same scripted model: the same verdicts, scores and Δ as the reference.

The reference is ``claude plugin eval`` in the same binary. Both runs answer from one script,
so every per-grader verdict, every case score and every Δ must agree.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "release-helper"
SKILL = "release-helper:next-version"

RULES = [
    Rule(
        when_prompt="release next",
        when_tool_result=f"Launching skill: {SKILL}",
        reply=text("1.4.1 — two bug fixes are a patch release."),
    ),
    Rule(
        when_prompt="release next",
        when_tool_result="Unknown skill",
        reply=text("I would go to 2.0.0 to be safe."),
    ),
    Rule(when_prompt="release next", reply=tool_use("Skill", {"skill": SKILL})),
    Rule(when_prompt="capital of France", reply=text("The capital of France is Paris.")),
    Rule(
        when_prompt="RELEASE_NOTES.md",
        when_tool_result="File created",
        reply=text("Wrote RELEASE_NOTES.md."),
    ),
    Rule(
        when_prompt="RELEASE_NOTES.md",
        reply=tool_use(
            "Write", {"file_path": "RELEASE_NOTES.md", "content": "## 1.4.1\n\n- Fixes.\n"}
        ),
    ),
]


def verdicts(doc: dict[str, Any]) -> dict[str, Any]:
    """Per case: score, Δ, and per arm and run every grader's (passed, scored, explanation)."""
    out: dict[str, Any] = {}
    for case in doc["cases"]:
        arms = {
            arm: [
                sorted(
                    (g["name"], g["passed"], g["scored"], g["explanation"]) for g in run["graders"]
                )
                for run in runs
            ]
            for arm, runs in case["arms"].items()
        }
        agg = case["aggregates"]
        out[case["name"]] = {
            "score": agg["score"],
            "scoreWithout": agg.get("scoreWithout"),
            "delta": agg.get("delta"),
            "arms": arms,
        }
    return out


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    """The example plugin's directory-format cases (the format the reference reads)."""
    target = tmp_path / "release-helper"
    shutil.copytree(
        EXAMPLE,
        target,
        ignore=shutil.ignore_patterns(
            "recorded", "results", "record.py", "package.json", "evals.json", "golden"
        ),
    )
    return target


def test_same_verdicts_scores_and_delta_as_claude_plugin_eval(
    plugin: Path, tmp_path: Path, claude_bin: str, run_both: Any
) -> None:
    with ScriptedModel(RULES) as model:
        reference_doc, ours_doc = run_both(plugin, model, claude_bin, tmp_path, grants=("Write",))
    reference = verdicts(reference_doc)
    mine = verdicts(ours_doc)
    assert mine == reference
    assert mine["suggests-next-version"]["delta"] == 1
