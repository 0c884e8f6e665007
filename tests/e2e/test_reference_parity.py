"""The same suite, the same scripted model: the same verdicts, scores and Δ as the reference.

The reference is ``claude plugin eval`` in the same binary. Both runs answer from one script,
so every per-grader verdict, every case score and every Δ must agree: on the example plugin's
suite in ``test_reference_documents.py`` (whose sessions are that suite's), and here on one
plugin that both evaluate once: a granted shell, and MCP mocks (``mock_calls`` verdicts,
aborts and per-run mock summaries).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.helpers import write_tree

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


CREATE = "mcp__plugin_tracker-kit_tracker__create_issue"
REAL = {"command": "sh", "args": ["-c", "exit 1"]}

#: The tracker plugin with MCP mocks (two cases), and a skill with a case whose granted Bash
#: builds a file in the working directory.
FILES = {
    ".claude-plugin/plugin.json": json.dumps(
        {"name": "tracker-kit", "version": "0.3.0", "mcpServers": {"people": REAL}}
    ),
    ".mcp.json": json.dumps({"mcpServers": {"tracker": REAL}}),
    "evals/mocks/tracker/create_issue.md": (
        "---\nexpect:\n  title: string\n  priority: [low, medium, high]\n---\n\n"
        "Created issue #4821: {{input.title}}\n"
    ),
    "evals/mocks/people/lookup.md": "alice is on call",
    "evals/files-bug/prompt.md": "---\nruns: 1\n---\nFile a bug: the app crashes on start.\n",
    "evals/files-bug/graders/created.md": (
        "---\ntype: regex\npattern: 'create_issue.*Crash on start'\ntarget: mock_calls\n---\n"
    ),
    "evals/files-bug/graders/answer.md": "---\ntype: regex\npattern: '#4821'\n---\n",
    "evals/urgent-bug/prompt.md": "---\nruns: 1\n---\nFile an URGENT bug: data loss.\n",
    "evals/urgent-bug/graders/answer.md": "---\ntype: regex\npattern: '#4821'\n---\n",
    "skills/build/SKILL.md": "---\nname: build\ndescription: Build the project.\n---\nRun make.\n",
    "evals/build/prompt.md": "---\nruns: 1\nallowed_tools: [Bash]\n---\nRun the build.\n",
    "evals/build/graders/ran.md": "---\ntype: tool_used\ntool: Bash\n---\n",
    "evals/build/graders/answer.md": "---\ntype: regex\npattern: Built\n---\n",
    "evals/build/graders/made.md": "---\ntype: file_exists\npath: made.txt\n---\n",
}

RULES = [
    Rule(when_prompt="Run the build", when_tool_result="", reply=text("Built.")),
    Rule(
        when_prompt="Run the build",
        reply=tool_use("Bash", {"command": "echo built > made.txt", "description": "build"}),
    ),
    Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
    Rule(
        when_prompt="URGENT",
        when_tool_offered=CREATE,
        reply=tool_use(CREATE, {"title": "Data loss", "priority": "urgent"}),
    ),
    Rule(
        when_tool_offered=CREATE,
        reply=tool_use(CREATE, {"title": "Crash on start", "priority": "high"}),
    ),
    Rule(
        when_prompt="bug",
        reply=tool_use("ToolSearch", {"query": f"select:{CREATE}", "max_results": 1}),
    ),
]


@pytest.fixture(scope="module")
def both(
    tmp_path_factory: pytest.TempPathFactory, claude_bin: str, run_both: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    """:data:`FILES` evaluated once by the reference and once by pytest, Bash granted to both;
    both documents (the reference's first)."""
    work = tmp_path_factory.mktemp("parity")
    plugin = write_tree(work / "tracker-kit", FILES)
    with ScriptedModel(RULES) as model:
        documents: tuple[dict[str, Any], dict[str, Any]] = run_both(
            plugin, model, claude_bin, work, grants=("Bash",)
        )
    return documents


def test_a_granted_shell_gets_the_reference_verdicts(
    both: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    """Both run the Bash call inside Claude Code's sandbox, and every verdict agrees but one:
    the reference's sandbox keeps none of what the command writes in the working directory (a
    root host: ``Read-only file system``; an ordinary user: a layer that is thrown away), where
    ours, inside the run's sandbox, keeps the file the build made — as
    docs/explanation/differences-from-claude-plugin-eval.md says."""
    reference_doc, ours_doc = both
    reference, mine = verdicts(reference_doc)["build"], verdicts(ours_doc)["build"]
    for arm in ("with", "without"):
        (theirs,) = reference["arms"][arm]
        (ours,) = mine["arms"][arm]
        agree = [v for v in ours if v[0] != "made"]
        assert agree == [v for v in theirs if v[0] != "made"], arm
        made = next(v for v in ours if v[0] == "made")
        assert made[1:] == (True, True, "made.txt exists as expected"), made
        assert next(v for v in theirs if v[0] == "made")[1] is False


def runs_of(doc: dict[str, Any]) -> dict[tuple[str, str, int], Any]:
    """Per run of the tracker's cases: score, abort, every grader's verdict, mock summary."""
    out = {}
    for case in doc["cases"]:
        if case["name"] == "build":
            continue
        for arm, runs in case["arms"].items():
            for index, run in enumerate(runs, 1):
                out[(case["name"], arm, index)] = {
                    "score": run["score"],
                    "aborted": run.get("aborted"),
                    "graders": sorted(
                        (g["name"], g["passed"], g["scored"], g["explanation"])
                        for g in run["graders"]
                    ),
                    "mocks": run.get("mocks"),
                }
    return out


def test_mock_verdicts_aborts_and_summaries_match_claude_plugin_eval(
    both: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    reference_doc, ours_doc = both
    reference = runs_of(reference_doc)
    mine = runs_of(ours_doc)
    assert len(mine) == 4, sorted(mine)  # two cases, two arms, a run each
    assert mine == reference
    assert mine[("urgent-bug", "with", 1)]["aborted"]["tool"] == "create_issue"
