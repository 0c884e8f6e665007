"""MCP mocks against the reference: the same tracker suite, the same scripted model, run by
``claude plugin eval`` and by ``pytest`` — mock_calls verdicts, aborts and per-run mock
summaries must agree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use

CREATE = "mcp__plugin_tracker-kit_tracker__create_issue"
REAL = {"command": "sh", "args": ["-c", "exit 1"]}

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
}

RULES = [
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


def runs_of(doc: dict[str, Any]) -> dict[tuple[str, str, int], Any]:
    out = {}
    for case in doc["cases"]:
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
    tmp_path: Path, claude_bin: str, run_both: Any
) -> None:
    plugin = tmp_path / "tracker-kit"
    for name, content in FILES.items():
        path = plugin / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    with ScriptedModel(RULES) as model:
        reference_doc, ours_doc = run_both(plugin, model, claude_bin, tmp_path)
    reference = runs_of(reference_doc)
    mine = runs_of(ours_doc)
    assert mine == reference
    assert mine[("urgent-bug", "with", 1)]["aborted"]["tool"] == "create_issue"
