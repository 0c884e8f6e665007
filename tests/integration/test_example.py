"""The project's example plugin, as ``scripts/example.sh`` evaluates it: its committed runs,
recorded by the real ``claude`` binary, replay for every suite format with no error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

# What crosses from the workers to the controller is tested: -n 0 and -n 2.
pytestmark = pytest.mark.workers

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
        "--eval-json=out.json",
    )  # fmt: skip
    result.assert_outcomes(passed=16, skipped=2)
    doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
    assert doc["errors"] == {} and doc["partial"] is False
    sources = {case["source"] for case in doc["cases"]}
    assert {"prose", "case_yaml", "evals_json", "sy", "package_json"} <= sources
    recorded = json.loads((copy / "recorded" / "aggregate-result.json").read_text("utf-8"))
    scores = {c["name"]: c["aggregates"]["score"] for c in recorded["cases"]}
    assert {c["name"]: c["aggregates"]["score"] for c in doc["cases"]} == scores
