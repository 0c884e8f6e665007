"""The copilot adapter's pure parts: which tools a run gets, and how its event stream reads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_plugin_evals.agents import AgentError
from pytest_plugin_evals.agents.copilot.agent import CopilotAgent, TurnLimit
from pytest_plugin_evals.agents.copilot.events import parse_events
from pytest_plugin_evals.agents.copilot.tools import (
    CopilotTools,
    copilot_server,
    plan_mcp,
    plan_tools,
    shell_rule,
)
from pytest_plugin_evals.agents.mcp import McpPlan, McpServer, plugin_prefix
from pytest_plugin_evals.agents.permissions import ToolAccess


def plan(
    tools: list[str],
    grants: tuple[str, ...] | list[str] = (),
    disallowed: tuple[str, ...] | list[str] = (),
) -> CopilotTools:
    return plan_tools(ToolAccess(tools, grants, disallowed))


def test_readers_always_and_read_only_tools_as_listed() -> None:
    tools = plan(["Skill", "Read"])
    assert tools.available == ("view", "glob", "grep", "skill")
    assert tools.allow == () and not tools.shell
    assert "task" in plan(["Task"]).available and "task" not in plan([]).available


def test_the_skill_tool_is_offered_whatever_the_case_lists_unless_disallowed() -> None:
    assert "skill" in plan([]).available  # Claude Code offers its Skill tool the same way
    assert "skill" not in plan([], disallowed=["Skill"]).available
    assert "skill" not in plan(["Skill"], disallowed=["Skill"]).available


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


def test_mcp_entries_are_left_to_the_mcp_plan() -> None:
    tools = plan(["mcp__plugin_tk_tracker__create_issue"], grants=["mcp__*"])
    assert tools.unsupported == () and tools.not_granted == ()


TRACKER = plugin_prefix("tracker-kit", "tracker")


def mcp_plan(*, strict: bool = False) -> McpPlan:
    """A shadow stand-in for ``people``, a standalone ``kb`` and, unless strict, the plugin's
    real ``tracker`` (withheld when strict, with ``billing``)."""
    stub = {"type": "stdio", "command": "/py", "args": ["-I", "stub.py", "/s/host.sock", "p"]}
    servers = [
        McpServer("people", stub, plugin_prefix("tracker-kit", "people"), stand_in=True),
        McpServer("kb", stub, "mcp__kb__", stand_in=True),
    ]
    if not strict:
        real = {"command": "tracker-mcp", "args": ["--root", "/plugin"], "env": {"A": "1"}}
        servers.append(McpServer("tracker", real, TRACKER, stand_in=False))
    prefixes = {s.name: s.prefix for s in servers}
    prefixes.update(tracker=TRACKER, billing=plugin_prefix("tracker-kit", "billing"))
    suppressed = ("tracker", "people", "billing") if strict else ("people",)
    return McpPlan(servers=tuple(servers), suppressed=suppressed, prefixes=prefixes)


def test_every_server_is_given_and_offered_whole_and_stand_ins_are_approved() -> None:
    given = plan_mcp(mcp_plan(), ToolAccess())
    servers = given.config["mcpServers"]
    assert list(servers) == ["people", "kb", "tracker"]
    assert servers["tracker"] == {
        "type": "stdio",
        "command": "tracker-mcp",
        "tools": ["*"],
        "args": ["--root", "/plugin"],
        "env": {"A": "1"},
    }
    assert given.available == ("people", "kb", "tracker")
    assert given.allow == ("people", "kb")  # a real server's tools need a grant
    assert given.disable == ()  # people is replaced by its stand-in of the same name


def test_strict_turns_off_the_withheld_plugin_servers_but_not_a_shadowed_one() -> None:
    given = plan_mcp(mcp_plan(strict=True), ToolAccess())
    assert list(given.config["mcpServers"]) == ["people", "kb"]
    assert given.disable == ("tracker", "billing")


def test_a_real_server_s_tools_run_only_when_listed_and_granted() -> None:
    create, search = TRACKER + "create_issue", TRACKER + "search"
    given = plan_mcp(mcp_plan(), ToolAccess([create, search], [create]))
    assert "tracker(create_issue)" in given.allow and "tracker(search)" not in given.allow
    assert given.not_granted == (search,)
    everything = plan_mcp(mcp_plan(), ToolAccess([TRACKER + "*"], ["mcp__*"]))
    assert "tracker" in everything.allow
    assert plan_mcp(mcp_plan(), ToolAccess(grants=[create])).allow == (
        "people",
        "kb",
    )


def test_disallowed_mcp_tools_are_denied_and_a_disallowed_server_is_not_offered() -> None:
    one = plan_mcp(mcp_plan(), ToolAccess(disallowed=["mcp__kb__search"]))
    assert one.deny == ("kb(search)",) and "kb" in one.available and "kb" in one.allow
    whole = plan_mcp(mcp_plan(), ToolAccess(disallowed=["mcp__kb__*"]))
    assert whole.deny == ("kb",) and "kb" not in whole.available and "kb" not in whole.allow


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            {"type": "sse", "url": "https://x/sse", "headers": {"A": "b"}},
            {"type": "sse", "url": "https://x/sse", "tools": ["*"], "headers": {"A": "b"}},
        ),
        ({"url": "https://x/mcp"}, {"type": "http", "url": "https://x/mcp", "tools": ["*"]}),
        ({"type": "stdio"}, None),
    ],
)
def test_remote_servers_keep_their_transport(
    config: dict[str, Any], expected: dict[str, Any] | None
) -> None:
    assert copilot_server(config) == expected


def test_mcp_calls_get_claude_code_s_names_from_the_plan() -> None:
    lines = [
        line("assistant.message", content="", toolRequests=[]),
        line(
            "tool.execution_start",
            toolCallId="t1",
            toolName="people-lookup",
            mcpServerName="people",
            mcpToolName="lookup",
        ),
        # Never ran (withheld): only the name Copilot's model used.
        line("assistant.message", toolRequests=[{"toolCallId": "t2", "name": "billing-charge"}]),
        line("assistant.message", toolRequests=[{"toolCallId": "t3", "name": "kb-search"}]),
        line("assistant.message", toolRequests=[{"toolCallId": "t4", "name": "view"}]),
    ]
    transcript, _ = parse_events(lines, mcp_plan(strict=True))
    names = [(c.name, c.original_name) for c in transcript.tool_calls]
    assert names == [
        ("mcp__plugin_tracker-kit_people__lookup", "people-lookup"),
        ("mcp__plugin_tracker-kit_billing__charge", "billing-charge"),
        ("mcp__kb__search", "kb-search"),
        ("Read", "view"),
    ]


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
        CopilotAgent.find_binary(str(tmp_path / "nope"))


def test_the_allowlist_passes_copilot_settings_and_nothing_that_widens_a_run() -> None:
    from pytest_plugin_evals.agents.base import passed_of
    from pytest_plugin_evals.agents.copilot.agent import CopilotAgent
    from pytest_plugin_evals.util.environment import allowed_environment

    passed = allowed_environment(
        {
            "ANTHROPIC_API_KEY": "another agent's",
            "OPENAI_API_KEY": "another agent's",
            "COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:1",
            "COPILOT_PROVIDER_API_KEY": "k",
            "COPILOT_MODEL": "m",
            "COPILOT_GITHUB_TOKEN": "t",
            "COPILOT_HOME": "/home/me/.copilot",
            "COPILOT_ALLOW_ALL": "true",
            "COPILOT_CUSTOM_INSTRUCTIONS_DIRS": "/home/me",
            "GITHUB_TOKEN": "g",
        },
        passed=passed_of(CopilotAgent("copilot"), None),
    )
    assert sorted(passed) == [
        "COPILOT_GITHUB_TOKEN",
        "COPILOT_MODEL",
        "COPILOT_PROVIDER_API_KEY",
        "COPILOT_PROVIDER_BASE_URL",
    ]


def test_the_with_arm_must_load_the_plugin_s_skills_when_the_skill_tool_is_offered(
    tmp_path: Any,
) -> None:
    from types import SimpleNamespace

    from pytest_plugin_evals.agents.copilot.agent import CopilotAgent
    from pytest_plugin_evals.agents.copilot.events import CopilotSummary

    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin" / "plugin.json").write_text('{"name": "rh"}', encoding="utf-8")
    (tmp_path / "skills" / "next").mkdir(parents=True)
    (tmp_path / "skills" / "next" / "SKILL.md").write_text("---\nname: next\n---\n", "utf-8")
    request: Any = SimpleNamespace(plugin_dir=tmp_path, arm="with", case=None)
    agent = CopilotAgent("copilot")
    builtin = CopilotSummary(skills=[{"commandName": "github-pr-media", "source": "builtin"}])
    problem = agent._trust_problem(request, builtin)
    assert problem == "plugin rh was loaded without its skill rh:next"
    loaded = CopilotSummary(skills=[{"commandName": "rh:next", "source": "plugin"}])
    assert agent._trust_problem(request, loaded) is None
    # Skill disallowed: Copilot loads no skill at all, there is nothing to check.
    assert agent._trust_problem(request, builtin, skills_offered=False) is None
