"""The project's example plugin, as ``scripts/example.sh`` evaluates it: its committed runs,
recorded by the real ``claude`` binary, replay for every suite format with no error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import trace_diffs

# What crosses from the workers to the controller is tested: -n 0 and -n 2.
pytestmark = pytest.mark.workers

SKILL = "release-helper:next-version"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "release-helper"


def test_the_example_replays_its_recorded_runs_for_every_format(
    pytester: pytest.Pytester, plugin_args: list[str]
) -> None:
    copy = pytester.path / "release-helper"
    shutil.copytree(
        EXAMPLE, copy, ignore=shutil.ignore_patterns("results", "__pycache__", ".runs.lock")
    )
    result = pytester.runpytest(
        str(copy), *plugin_args, f"--eval-agent=replay:{copy / 'recorded'}",
        "--eval-json=out.json", "--eval-report=report.html",
    )  # fmt: skip
    result.assert_outcomes(passed=16, skipped=2)
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["errors"] == {} and doc["partial"] is False
    sources = {case["source"] for case in doc["cases"]}
    assert {"prose", "case_yaml", "evals_json", "sy", "package_json"} <= sources
    recorded = json.loads((copy / "recorded" / "aggregate-result.json").read_text("utf-8"))
    scores = {c["name"]: c["aggregates"]["score"] for c in recorded["cases"]}
    assert {c["name"]: c["aggregates"]["score"] for c in doc["cases"]} == scores
    # Every two-arm case's report section holds the aligned diff of its typical pair.
    diffs = trace_diffs((pytester.path / "report.html").read_text(encoding="utf-8"))
    two_arm = [c["name"] for c in doc["cases"] if c["arms"].get("without")]
    assert len(diffs) == len(two_arm) == 7
    for diff in diffs.values():
        assert diff["caption"].endswith(
            ("They part at step 0.", "They took the same steps and gave the same answer.")
        ), diff
        assert diff["rows"][-1][1].startswith("answer ")
    # uses-the-skill and suggests-next-version: the with arm's skill loaded where the without
    # arm's Skill call failed (the binary had no such skill to give it).
    skill = [d["rows"][0] for d in diffs.values() if d["rows"][0][1].startswith("skill loaded")]
    assert len(skill) == 2
    for first, with_step, without_step in skill:
        assert (first, with_step) == ("0 first divergence", f"skill loaded {SKILL}")
        assert without_step.startswith(f'tool Skill {{"skill":"{SKILL}"}} error')
