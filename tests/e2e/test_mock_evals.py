"""MCP mocks through ``pytest evals``: a tracker plugin with a ``.mcp.json`` server and an
inline one, the real ``claude`` binary, the scripted model, stand-ins on the ``mcp`` SDK."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.e2e.tracker_kit import CREATE, CREATE_MD

#: What the plugin's real servers leave in the run's working folder when they start: a
#: created file of the run (a confined run writes nowhere else).
MARKER = "real-server-started"


def started(run: dict[str, Any]) -> bool:
    """Whether a real server of the plugin started in ``run``."""
    return MARKER in run["filesCreated"]


def make_tracker(pytester: pytest.Pytester) -> None:
    real = {"command": "sh", "args": ["-c", f"touch {MARKER}; exit 1"]}
    pytester.makefile(
        ".json",
        **{
            ".claude-plugin/plugin": json.dumps(
                {"name": "tracker-kit", "version": "0.3.0", "mcpServers": {"people": real}}
            )
        },
    )
    pytester.makefile(".json", **{".mcp": json.dumps({"mcpServers": {"tracker": real}})})
    pytester.makefile(
        ".md",
        **{
            "evals/mocks/tracker/create_issue": CREATE_MD,
            "evals/mocks/people/lookup": "alice is on call",
            "evals/files-bug/prompt": "---\nruns: 1\n---\nFile a bug: the app crashes on start.\n",
            "evals/files-bug/graders/created": (
                "---\ntype: regex\npattern: 'create_issue.*Crash on start'\n"
                "target: mock_calls\n---\n"
            ),
            "evals/files-bug/graders/answer": "---\ntype: regex\npattern: '#4821'\n---\n",
        },
    )


def script(model: ScriptedModel, priority: str) -> None:
    model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(
            when_tool_offered=CREATE,
            reply=tool_use(CREATE, {"title": "Crash on start", "priority": priority}),
        ),
        Rule(
            when_prompt="File a bug",
            reply=tool_use("ToolSearch", {"query": f"select:{CREATE}", "max_results": 1}),
        ),
    )


def test_mocked_tool_answers_and_its_call_is_graded(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    make_tracker(pytester)
    script(scripted_model, "high")
    result, doc = run_evals()
    (case,) = doc["cases"]
    with_run = case["arms"]["with"][0]
    verdicts = {g["name"]: g for g in with_run["graders"]}
    assert verdicts["answer"]["passed"] is True
    # Every mock shadows a plugin server: the mock_calls grader is a with-only indicator.
    assert verdicts["created"]["passed"] is True and verdicts["created"]["withOnly"] is True
    mocks = with_run["mocks"]
    assert {s["server"]: s["kind"] for s in mocks["servers"]} == {
        "tracker": "shadow",
        "people": "shadow",
    }
    assert mocks["calls"]["total"] == 1 and mocks["calls"]["errors"] == 0
    # The without arm has no stand-ins: the tool is not there, and nothing real started.
    without = case["arms"]["without"][0]
    assert "created" not in {g["name"] for g in without["graders"]}
    assert not started(with_run) and not started(without)
    result.assert_outcomes(passed=2)


def test_an_expect_violation_aborts_the_run(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    make_tracker(pytester)
    script(scripted_model, "urgent")
    result, doc = run_evals("--eval-ablation", "none")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["aborted"] == {
        "server": "tracker",
        "tool": "create_issue",
        "reason": 'the model\'s call violates expect: priority = "urgent" is not one of '
        "[low, medium, high]",
    }
    assert run["score"] == 0 and run["graders"] == [] and run["error"] is None
    result.stdout.fnmatch_lines(["*aborted by mock tracker/create_issue*"])
    result.assert_outcomes(failed=1)


def test_mocks_off_starts_the_real_servers(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    make_tracker(pytester)
    scripted_model.add(Rule(reply=text("nothing to do")))
    _, doc = run_evals("--eval-ablation", "none", "--eval-mocks", "off")
    (run,) = doc["cases"][0]["arms"]["with"]
    created = {g["name"]: g for g in run["graders"]}["created"]
    assert created["passed"] is False
    assert created["explanation"].startswith("no mock stand-ins were active")
    assert started(run)


TODOS = "mcp__todo-list__get-todos"


def test_package_json_mocks_are_served_and_calls_tool_reads_them(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_evals: Any
) -> None:
    evals = [
        {
            "input": "@todo-list What are my todos?",
            "mocks": {"get-todos": {"todos": [{"id": "t1", "text": "Post the announcement"}]}},
            "expected": [{"callsTool": "get-todos"}, {"includes": "announcement"}],
        }
    ]
    pytester.makefile(
        ".json", **{"evals/package": json.dumps({"name": "todo-list", "ai": {"evals": evals}})}
    )
    scripted_model.add(
        Rule(
            when_tool_result="Post the announcement",
            reply=text("You have one todo: Post the announcement."),
        ),
        Rule(when_tool_offered=TODOS, reply=tool_use(TODOS, {})),
        Rule(
            when_prompt="todos",
            reply=tool_use("ToolSearch", {"query": f"select:{TODOS}", "max_results": 1}),
        ),
    )
    result, doc = run_evals()
    (run,) = doc["cases"][0]["arms"]["with"]
    verdicts = {g["type"]: g for g in run["graders"]}
    assert verdicts["callsTool"]["passed"] is True, verdicts
    assert verdicts["includes"]["passed"] is True
    assert [c["tool"] for c in run["mockCalls"]] == [TODOS]
    assert "Post the announcement" in run["mockCalls"][0]["output"]
    result.assert_outcomes(passed=1)
