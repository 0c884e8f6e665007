"""``--eval-agent opencode`` end to end: the real opencode CLI against the scripted model.

opencode's built-in Anthropic provider speaks the Messages API, so the scripted model serves it
as it is: ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY`` (the operator's usual variables,
through the allowlist) point it there, offline. Each test builds a small plugin with pytester
and runs ``pytest evals`` as a plugin author would; the last ones give it MCP servers (and
their stand-ins), an agent and a hook.

What every agent CLI does (the skill in the with arm only, a shell call recorded as ``Bash``
and confined, the operator's secrets kept out) is tested on one session per CLI in
``test_agent_contract.py``; this module holds what needs a session of its own.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.e2e.conftest import Run, by_session
from tests.e2e.release_kit import make_plugin as make_release_plugin
from tests.e2e.release_kit import meta
from tests.e2e.tracker_kit import CREATE, CREATE_MD, files_bug


def make_plugin(pytester: pytest.Pytester, front: str, graders: dict[str, str]) -> None:
    make_release_plugin(pytester, front, graders, command="---\ndescription: Bump it\n---\nBump.\n")


def sessions(model: ScriptedModel) -> dict[str, list[dict[str, Any]]]:
    """The logged requests by opencode session (its ``x-session-id`` header), oldest first."""
    return by_session(model.message_requests, "x-session-id")


def test_a_refused_key_is_an_auth_error(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_opencode: Run
) -> None:
    make_plugin(pytester, "", {"answer": "---\ntype: regex\npattern: x\n---\n"})
    scripted_model.add(Rule(reply=error(401)))
    result, doc = run_opencode("--eval-ablation", "none")
    result.assert_outcomes(errors=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["infraError"] == "auth", run
    assert "401" in run["error"] or "authentication" in run["error"].lower(), run["error"]


# MCP servers and the plugin's agents. The tracker plugin declares two servers (``tracker`` in
# ``.mcp.json``, ``people`` inline) that leave a marker file if they ever start, an agent and a
# hook; its mocks shadow both servers and add a standalone one (``kb``). opencode names an MCP
# tool ``<server>_<tool>``; the run's transcript carries Claude Code's name.

TRIAGER_MD = """---
name: triager
description: Files bugs in the tracker. Use for every bug report.
tools: Read, mcp__plugin_tracker-kit_tracker__create_issue
model: inherit
---
You triage bugs and file them.
"""


#: What a real server of the tracker leaves in the run's working directory (where opencode
#: starts it; the confined CLI can write nowhere else) when it starts.
MARKER = "real-server-started"


def make_tracker(pytester: pytest.Pytester, front: str = "") -> None:
    real = {"command": "sh", "args": ["-c", f"touch {MARKER}; exit 1"]}
    manifest = {"name": "tracker-kit", "version": "0.3.0", "mcpServers": {"people": real}}
    pytester.makefile(".json", **{".claude-plugin/plugin": json.dumps(manifest)})
    pytester.makefile(".json", **{".mcp": json.dumps({"mcpServers": {"tracker": real}})})
    pytester.makefile(".json", **{"hooks/hooks": json.dumps({"hooks": {}})})
    pytester.makefile(
        ".md",
        **{
            "agents/triager": TRIAGER_MD,
            "evals/mocks/tracker/create_issue": CREATE_MD,
            "evals/mocks/people/lookup": "alice is on call",
            "evals/mocks/kb/search": "No known issue.",
            **files_bug(front),
        },
    )


def first_requests(model: ScriptedModel) -> list[dict[str, Any]]:
    """Each session's first request, the main sessions' (the prompt's) first."""
    return [rs[0] for rs in sessions(model).values()]


def test_stand_ins_answer_and_the_real_servers_are_withheld(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_opencode: Run
) -> None:
    make_tracker(pytester)
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(when_tool_result="", reply=text("I could not file it.")),
        Rule(
            when_prompt="File a bug",
            reply=tool_use("tracker_create_issue", {"title": "Crash on start", "priority": "high"}),
        ),
    )
    result, doc = run_opencode("-n2")
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    verdicts = {g["name"]: g for g in with_run["graders"]}
    assert verdicts["created"]["passed"] is True, verdicts
    assert verdicts["answer"]["passed"] is True
    mocks = with_run["mocks"]
    kinds = {s["server"]: s["kind"] for s in mocks["servers"]}
    assert kinds == {"tracker": "shadow", "people": "shadow", "kb": "standalone"}, kinds
    assert mocks["calls"]["total"] == 1 and mocks["calls"]["errors"] == 0
    assert [c["tool"] for c in with_run["mockCalls"]] == [CREATE]
    (call,) = meta(with_run)["toolCalls"]
    assert (call["name"], call["originalName"]) == (CREATE, "tracker_create_issue")
    assert call["isError"] is False and "#4821" in call["output"]
    # The without arm does not load the plugin: no shadow there, the standalone mock is.
    assert without_run["answer"] == "I could not file it."
    (missed,) = meta(without_run)["toolCalls"]
    assert missed["isError"] is True or "unavailable tool" in (missed["output"] or "")
    offered = sorted(tuple(r["tools"]) for r in first_requests(scripted_model))
    assert offered == [
        ("glob", "grep", "kb_search", "people_lookup", "read", "skill", "tracker_create_issue"),
        ("glob", "grep", "kb_search", "read", "skill"),
    ], offered
    # Strict: the plugin's own servers never started, in either arm.
    assert MARKER not in with_run["filesCreated"] + without_run["filesCreated"]
    # The plugin's hooks have no opencode form: the with arm says so.
    assert any("hooks" in n and "opencode" in n for n in with_run["notes"]), with_run["notes"]
    result.assert_outcomes(passed=2)


def test_mocks_off_starts_the_real_servers_and_a_file_outside_the_run_is_refused(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_opencode: Run
) -> None:
    """One run for two things: the plugin's own servers start when mocks are off, and the
    model's read of a file outside the run (a grader of the case) is refused."""
    make_tracker(pytester)
    grader = pytester.path / "evals" / "files-bug" / "graders" / "answer.md"
    scripted_model.add(
        Rule(when_tool_result="#4821", reply=text("I read the grader: #4821")),
        Rule(when_tool_result="", reply=text("I could not read it.")),
        Rule(when_prompt="File a bug", reply=tool_use("read", {"filePath": str(grader)})),
    )
    _, doc = run_opencode("-n0", "--eval-ablation", "none", "--eval-mocks", "off")
    (run,) = doc["cases"][0]["arms"]["with"]
    created = {g["name"]: g for g in run["graders"]}["created"]
    assert created["passed"] is False
    assert created["explanation"].startswith("no mock stand-ins were active")
    assert MARKER in run["filesCreated"]
    assert run["answer"] == "I could not read it."
    (call,) = meta(run)["toolCalls"]
    assert (call["name"], call["originalName"], call["isError"]) == ("Read", "read", True)


def test_an_expect_violation_aborts_the_run(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_opencode: Run
) -> None:
    """The stand-in kills the run's processes (those carrying its token): opencode stops at
    the call, the run is ungraded."""
    make_tracker(pytester)
    scripted_model.add(
        Rule(when_tool_result="", reply=text("Filed it anyway.")),
        Rule(
            when_prompt="File a bug",
            reply=tool_use("tracker_create_issue", {"title": "Crash", "priority": "urgent"}),
        ),
    )
    result, doc = run_opencode("-n0", "--eval-ablation", "none")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["aborted"] == {
        "server": "tracker",
        "tool": "create_issue",
        "reason": 'the model\'s call violates expect: priority = "urgent" is not one of '
        "[low, medium, high]",
    }
    assert run["score"] == 0 and run["graders"] == [] and run["error"] is None
    # Stopped at the call: the model never saw an answer to it.
    assert all(r["tool_result"] is None for r in scripted_model.message_requests)
    result.stdout.fnmatch_lines(["*aborted by mock tracker/create_issue*"])
    result.assert_outcomes(failed=1)


def test_the_plugin_agent_is_a_subagent_within_the_run(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_opencode: Run
) -> None:
    """The agent is offered to the task tool as Claude Code names it, in the with arm only; it
    runs with its own prompt and only the tools its ``tools`` lists that the run allows."""
    make_tracker(pytester, front="allowed_tools: [Task]\n")
    task = {
        "description": "file the bug",
        "prompt": "Triage: the app crashes on start",
        "subagent_type": "tracker-kit:triager",
    }
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(when_tool_result="Filed as", reply=text("The triager filed #4821.")),
        Rule(when_tool_result="", reply=text("No triager here.")),
        Rule(
            when_prompt="Triage:",
            reply=tool_use("tracker_create_issue", {"title": "Crash on start", "priority": "low"}),
        ),
        Rule(when_prompt="File a bug", reply=tool_use("task", task)),
    )
    result, doc = run_opencode("-n0")
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["answer"] == "The triager filed #4821."
    assert without_run["answer"] == "No triager here."
    assert [c["tool"] for c in with_run["mockCalls"]] == [CREATE]
    assert {g["name"]: g["passed"] for g in with_run["graders"]}["created"] is True
    calls = {c["name"]: c for c in meta(with_run)["toolCalls"]}
    assert calls["Task"]["input"]["subagent_type"] == "tracker-kit:triager"
    firsts = first_requests(scripted_model)
    listed = sorted(
        "tracker-kit:triager" in json.dumps([t for t in r["body"]["tools"] if t["name"] == "task"])
        for r in firsts
        if "File a bug" in r["prompt"]
    )
    assert listed == [False, True], listed
    (sub,) = [r for r in firsts if "Triage:" in r["prompt"]]
    assert "You triage bugs and file them." in sub["system"]
    # Read and the one mocked tool it lists: not glob, skill, task or the other servers'.
    assert sub["tools"] == ["read", "tracker_create_issue"], sub["tools"]
    assert MARKER not in with_run["filesCreated"]
    result.assert_outcomes(passed=2)
