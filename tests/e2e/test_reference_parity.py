"""The same suite, the same scripted model: the same verdicts, scores and Δ as the reference.

The reference is ``claude plugin eval`` in the same binary. Both runs answer from one script,
so every per-grader verdict, every case score and every Δ must agree: on the example plugin's
suite in ``test_reference_documents.py`` (whose sessions are that suite's), and here on a
granted shell.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import ScriptedModel

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "release-helper"


def example_rules() -> list[Any]:
    """The scripted model the example's runs were recorded with (its ``record.py``)."""
    spec = importlib.util.spec_from_file_location("release_helper_record", EXAMPLE / "record.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rules: list[Any] = module.RULES
    return rules


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


#: A case whose granted Bash builds a file in the working directory.
BUILD_CASE = {
    ".claude-plugin/plugin.json": '{"name": "build-kit", "version": "1.0.0"}',
    "skills/build/SKILL.md": "---\nname: build\ndescription: Build the project.\n---\nRun make.\n",
    "evals/build/prompt.md": "---\nruns: 1\nallowed_tools: [Bash]\n---\nRun the build.\n",
    "evals/build/graders/ran.md": "---\ntype: tool_used\ntool: Bash\n---\n",
    "evals/build/graders/answer.md": "---\ntype: regex\npattern: Built\n---\n",
    "evals/build/graders/made.md": "---\ntype: file_exists\npath: made.txt\n---\n",
}


def test_a_granted_shell_gets_the_reference_verdicts(
    tmp_path: Path, claude_bin: str, run_both: Any
) -> None:
    """Both run the Bash call inside Claude Code's sandbox, and every verdict agrees but one:
    the reference's sandbox keeps none of what the command writes in the working directory (a
    root host: ``Read-only file system``; an ordinary user: a layer that is thrown away), where
    ours, inside the run's sandbox, keeps the file the build made — as
    docs/explanation/differences-from-claude-plugin-eval.md says."""
    from pytest_plugin_evals.testing import Rule, text, tool_use
    from tests.helpers import write_tree

    plugin = write_tree(tmp_path / "build-kit", BUILD_CASE)
    rules = [
        Rule(when_prompt="Run the build", when_tool_result="", reply=text("Built.")),
        Rule(
            when_prompt="Run the build",
            reply=tool_use("Bash", {"command": "echo built > made.txt", "description": "build"}),
        ),
    ]
    with ScriptedModel(rules) as model:
        reference_doc, ours_doc = run_both(plugin, model, claude_bin, tmp_path, grants=("Bash",))
    reference, mine = verdicts(reference_doc)["build"], verdicts(ours_doc)["build"]
    for arm in ("with", "without"):
        (theirs,) = reference["arms"][arm]
        (ours,) = mine["arms"][arm]
        agree = [v for v in ours if v[0] != "made"]
        assert agree == [v for v in theirs if v[0] != "made"], arm
        made = next(v for v in ours if v[0] == "made")
        assert made[1:] == (True, True, "made.txt exists as expected"), made
        assert next(v for v in theirs if v[0] == "made")[1] is False
