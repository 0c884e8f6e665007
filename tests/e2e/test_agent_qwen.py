"""``--eval-agent qwen`` end to end: the real Qwen Code against the scripted model, offline.

Qwen Code speaks the OpenAI chat completions API, which the scripted model serves; the
operator's usual variables (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``OPENAI_MODEL``) point it
there. Each test builds a small plugin with pytester and runs ``pytest evals`` as a plugin
author would.

What every agent CLI does (the skill in the with arm only, a shell call recorded as ``Bash``
and confined, the operator's secrets kept out) is tested on one session per CLI in
``test_agent_contract.py``; this module holds what needs a session of its own.
"""

from __future__ import annotations

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.e2e.conftest import Run, first_requests
from tests.e2e.release_kit import make_skill_plugin as make_plugin
from tests.e2e.tracker_kit import CREATE, SEARCH, make_tracker, markers


def test_stand_ins_answer_with_claude_codes_names_in_the_with_arm_only(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_qwen: Run
) -> None:
    """The plugin's servers (``.mcp.json``, its manifest's) are served by their stand-ins in
    the with arm, none of them starts for real; the standalone mock is there in both arms."""
    make_tracker(pytester)
    scripted_model.add(
        Rule(when_tool_result="Created issue", reply=text("Filed as #4821.")),
        Rule(when_tool_result="Found 1 page", reply=text("I found a page, no tracker.")),
        Rule(
            when_tool_offered="mcp__tracker__create_issue",
            reply=tool_use(
                "mcp__tracker__create_issue", {"title": "Crash on start", "priority": "high"}
            ),
        ),
        Rule(when_tool_offered="mcp__kb__search", reply=tool_use("mcp__kb__search", {"q": "x"})),
    )
    result, doc = run_qwen()
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["error"] is None and without_run["error"] is None, (with_run, without_run)
    result.assert_outcomes(passed=2)
    (call,) = with_run["toolCallList"]
    assert call["name"] == CREATE and call["originalName"] == "mcp__tracker__create_issue"
    (served,) = with_run["mockCalls"]
    assert served["tool"] == CREATE and "Created issue #4821: Crash on start" in served["output"]
    (call,) = without_run["toolCallList"]
    assert call["name"] == SEARCH
    offered = [set(r["tools"]) for r in first_requests(scripted_model.chat_requests) if r["tools"]]
    with_tools = [t for t in offered if "mcp__tracker__create_issue" in t]
    without_tools = [t for t in offered if "mcp__tracker__create_issue" not in t]
    assert len(with_tools) == len(without_tools) == 1
    assert "mcp__kb__search" in without_tools[0]
    assert not {t for t in without_tools[0] if t.startswith(("mcp__tracker", "mcp__people"))}
    # Strict mocks: no real server started, in either arm.
    assert markers(with_run) == markers(without_run) == set()


def test_a_rejected_key_is_an_infrastructure_error_and_only_granted_tools_are_offered(
    pytester: pytest.Pytester, scripted_model: ScriptedModel, run_qwen: Run
) -> None:
    """The case lists Bash, which the session does not grant: the request the key was refused
    for offered the readers and the skill tool, no shell, and the run says why."""
    make_plugin(
        pytester, tools="[Bash, Skill]", graders={"ok": "---\ntype: regex\npattern: OK\n---\n"}
    )
    scripted_model.add(Rule(reply=error(401)))
    result, doc = run_qwen("--eval-ablation", "none")
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["infraError"] == "auth", run
    result.assert_outcomes(errors=1)
    firsts = [r for r in first_requests(scripted_model.chat_requests) if r["tools"]]
    assert firsts
    for first in firsts:
        offered = set(first["tools"])
        assert {"skill", "read_file", "glob", "grep_search"} <= offered
        assert not offered & {"run_shell_command", "write_file", "edit", "web_fetch", "agent"}
    assert "not granted (add --eval-allow-tools): Bash" in run["notes"]
