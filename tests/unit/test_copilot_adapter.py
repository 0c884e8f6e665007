"""The copilot adapter's pure parts: which tools a run gets, and how its event stream reads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.agents import AgentError
from pytest_plugin_evals.agents.copilot.agent import TurnLimit, find_binary
from pytest_plugin_evals.agents.copilot.events import parse_events
from pytest_plugin_evals.agents.copilot.tools import CopilotTools, plan_tools, shell_rule


def plan(
    tools: list[str],
    grants: tuple[str, ...] | list[str] = (),
    disallowed: tuple[str, ...] | list[str] = (),
) -> CopilotTools:
    return plan_tools(
        case_tools=tools, case_disallowed=disallowed, grants=grants, operator_disallowed=()
    )


def test_readers_always_and_read_only_tools_as_listed() -> None:
    tools = plan(["Skill", "Read"])
    assert tools.available == ("view", "glob", "grep", "skill")
    assert tools.allow == () and not tools.shell


def test_a_tool_that_acts_needs_the_case_and_a_grant() -> None:
    assert plan(["Write"]).not_granted == ("Write",)
    assert "create" not in plan(["Write"]).available
    granted = plan(["Write", "Edit"], grants=["Write", "Edit"])
    assert {"create", "edit"} <= set(granted.available) and granted.allow == ("write",)
    assert "create" not in plan([], grants=["Write"]).available  # a grant alone gives nothing


def test_a_path_pattern_copilot_cannot_hold_is_dropped() -> None:
    tools = plan(["Write(docs/**)"], grants=["Write(docs/**)"])
    assert tools.unsupported == ("Write(docs/**)",) and "create" not in tools.available
    assert plan(["WebFetch"], grants=["WebFetch"]).unsupported == ("WebFetch",)


@pytest.mark.parametrize(
    ("grant", "rule"),
    [
        ("Bash", "shell"),
        ("Bash(npm test *)", "shell(npm test:*)"),
        ("Bash(git:*)", "shell(git:*)"),
        ("Bash(git status)", "shell(git status)"),
    ],
)
def test_shell_grants_become_copilot_rules(grant: str, rule: str) -> None:
    assert shell_rule(grant) == rule
    tools = plan(["Bash"], grants=[grant])
    assert tools.shell and tools.allow == (rule,) and "bash" in tools.available


def test_disallowed_tools_win() -> None:
    tools = plan(["Bash", "Skill"], grants=["Bash"], disallowed=["Bash", "Read"])
    assert not tools.shell and "bash" not in tools.available and "view" not in tools.available
    assert tools.deny == ("shell",) and tools.allow == ()


def line(kind: str, **data: Any) -> str:
    return json.dumps({"type": kind, "data": data})


def test_events_become_a_transcript_with_canonical_names() -> None:
    lines = [
        line("session.skills_loaded", skills=[{"commandName": "rh:next", "source": "plugin"}]),
        line("assistant.turn_start", turnId="0"),
        line(
            "assistant.message",
            content="",
            toolRequests=[{"toolCallId": "t1", "name": "bash", "arguments": {"command": "ls"}}],
        ),
        line("tool.execution_start", toolCallId="t1", toolName="bash", arguments={"command": "ls"}),
        line("tool.execution_complete", toolCallId="t1", success=True, result={"content": "a"}),
        line(
            "tool.execution_start",
            toolCallId="t2",
            toolName="tracker-create_issue",
            mcpServerName="tracker",
            mcpToolName="create_issue",
        ),
        line("tool.execution_complete", toolCallId="t2", success=False, error={"message": "no"}),
        line("assistant.turn_start", turnId="1"),
        line("assistant.message", content="Done.", toolRequests=[]),
        "not json",
        json.dumps({"type": "result", "exitCode": 0, "usage": {"sessionDurationMs": 900}}),
    ]
    transcript, summary = parse_events(lines)
    bash, mcp = transcript.tool_calls
    assert (bash.name, bash.original_name, bash.output, bash.is_error) == (
        "Bash",
        "bash",
        "a",
        False,
    )
    assert (mcp.name, mcp.original_name) == ("mcp__tracker__create_issue", "tracker-create_issue")
    assert mcp.is_error and mcp.output == "no"
    assert transcript.final_message == "Done." and transcript.turns == 2
    assert transcript.input_tokens is None and transcript.output_tokens is None
    assert transcript.latency_ms == 900
    assert summary.plugin_skills("rh") == ["rh:next"] and summary.plugin_skills("other") == []


def test_a_session_error_is_read() -> None:
    _, summary = parse_events(
        [line("session.error", errorType="rate_limit", statusCode=429, message="slow down")]
    )
    assert (summary.error_type, summary.error_status, summary.error_text) == (
        "rate_limit",
        429,
        "slow down",
    )


def test_the_turn_limit_counts_across_chunks() -> None:
    limit = TurnLimit(1)
    event = b'{"type":"assistant.turn_start","data":{}}\n'
    assert limit(event) is False
    assert limit(event[:10]) is False
    assert limit(event[10:]) is True and limit.turns == 2


def test_a_missing_binary_is_one_line(tmp_path: Any) -> None:
    with pytest.raises(AgentError, match=r"--eval-copilot-bin: .* is not an executable file"):
        find_binary(str(tmp_path / "nope"))


def test_the_allowlist_passes_copilot_settings_and_nothing_that_widens_a_run() -> None:
    from pytest_plugin_evals.util.environment import allowed_environment

    passed = allowed_environment(
        {
            "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:1",
            "COPILOT_PROVIDER_API_KEY": "k",
            "COPILOT_MODEL": "m",
            "COPILOT_GITHUB_TOKEN": "t",
            "COPILOT_HOME": "/home/me/.copilot",
            "COPILOT_ALLOW_ALL": "true",
            "COPILOT_CUSTOM_INSTRUCTIONS_DIRS": "/home/me",
            "GITHUB_TOKEN": "g",
        }
    )
    assert sorted(passed) == [
        "COPILOT_GITHUB_TOKEN",
        "COPILOT_MODEL",
        "COPILOT_PROVIDER_API_KEY",
        "COPILOT_PROVIDER_BASE_URL",
    ]
