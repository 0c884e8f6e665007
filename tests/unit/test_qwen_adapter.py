"""The Qwen Code adapter's pure parts: its tools, settings and command line, its stream-json
reader, the trust check and how a run's end is classified."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.agents import AgentError
from pytest_plugin_evals.agents.qwen.agent import QwenAgent, own_tools, settings_for
from pytest_plugin_evals.agents.qwen.stream import StreamSummary, api_status, parse_events
from pytest_plugin_evals.model import Transcript
from pytest_plugin_evals.util.process import ProcessResult

#: A run's events as Qwen Code 0.24.4 wrote them (shortened).
EVENTS: list[dict[str, Any]] = [
    {
        "type": "system",
        "subtype": "init",
        "tools": ["read_file", "skill", "run_shell_command"],
        "slash_commands": ["bump", "release-helper:next-version", "review"],
        "qwen_code_version": "0.24.4",
    },
    {"type": "stream_event", "event": {"type": "goal_state"}},
    {
        "type": "assistant",
        "message": {
            "content": [
                {"type": "text", "text": "Let me check."},
                {
                    "type": "tool_use",
                    "id": "call_1",
                    "name": "run_shell_command",
                    "input": {"command": "git tag"},
                },
            ]
        },
    },
    {
        "type": "user",
        "message": {
            "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "is_error": False, "content": "v1"}
            ]
        },
    },
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "1.4.1"}]}},
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 2,
        "result": "1.4.1",
        "usage": {"input_tokens": 2400, "output_tokens": 80},
    },
]


def lines(events: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(e) for e in events] + ["not json", "{}"]


def test_the_stream_becomes_a_transcript_with_canonical_names() -> None:
    transcript, summary = parse_events(lines(EVENTS))
    (call,) = transcript.tool_calls
    assert (call.name, call.original_name, call.input) == (
        "Bash",
        "run_shell_command",
        {"command": "git tag"},
    )
    assert (call.output, call.is_error) == ("v1", False)
    assert transcript.final_message == "1.4.1"
    assert (transcript.turns, transcript.input_tokens, transcript.output_tokens) == (2, 2400, 80)
    assert summary.slash_commands == ["bump", "release-helper:next-version", "review"]
    assert summary.error_message is None


def test_a_failed_result_says_why() -> None:
    failed = {
        "type": "result",
        "subtype": "error_during_execution",
        "is_error": True,
        "error": {"message": "Loop detection halted the run"},
    }
    _, summary = parse_events(lines([EVENTS[0], failed]))
    assert summary.error_message == "Loop detection halted the run"
    assert api_status("[API Error: 429 Too many requests]") == 429
    assert api_status("Loop detection halted the run") is None


def test_the_tools_offered_are_qwens_names_of_the_canonical_plan() -> None:
    core, missing = own_tools(["Read", "Bash", "Skill", "BashOutput"])
    assert core == ["read_file", "read_many_files", "run_shell_command", "skill"]
    assert missing == ["BashOutput"]
    settings = settings_for(core, servers={"kb": {"command": "x"}}, exclude=["write_file"])
    assert settings["tools"]["core"] == core
    excluded = settings["tools"]["exclude"]
    assert excluded[0] == "write_file" and not set(core) & set(excluded)
    assert {"agent", "edit", "tool_call", "get_goal", "list_agents"} <= set(excluded)
    assert settings["memory"]["enableManagedAutoMemory"] is False
    assert settings["mcpServers"] == {"kb": {"command": "x"}}
    assert settings["telemetry"]["enabled"] is False
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["security"]["auth"]["selectedType"] == "openai"


def test_a_missing_binary_is_one_line() -> None:
    with pytest.raises(AgentError) as info:
        QwenAgent.find_binary("/nowhere/qwen")
    assert str(info.value) == "--eval-qwen-bin: /nowhere/qwen is not an executable file"


class _Case:
    def __init__(self, root: Path) -> None:
        self.suite_root = root / "evals"


class _Request:
    def __init__(self, plugin: Path | None, arm: str) -> None:
        self.plugin_dir = plugin
        self.arm = arm
        self.case = _Case(plugin or Path("/nowhere"))


def plugin(tmp_path: Path) -> Path:
    (tmp_path / ".claude-plugin").mkdir()
    (tmp_path / ".claude-plugin" / "plugin.json").write_text('{"name": "release-helper"}')
    (tmp_path / "skills" / "next-version").mkdir(parents=True)
    (tmp_path / "skills" / "next-version" / "SKILL.md").write_text("---\nname: next-version\n---\n")
    (tmp_path / "commands").mkdir()
    (tmp_path / "commands" / "bump.md").write_text("Bump\n")
    return tmp_path


PLUGIN = "plugin release-helper was loaded"
SKILL = "release-helper:next-version"


@pytest.mark.parametrize(
    ("listed", "arm", "problem"),
    [
        (["bump", SKILL], "with", None),
        (["bump"], "with", f"{PLUGIN} without its skill {SKILL}"),
        ([SKILL], "with", f"{PLUGIN} without its command release-helper:bump"),
        (["review"], "without", None),
        ([SKILL], "without", f"{PLUGIN} in the without arm: skill {SKILL}"),
    ],
)
def test_the_trust_check_reads_the_init_events_commands(
    tmp_path: Path, listed: list[str], arm: str, problem: str | None
) -> None:
    root = plugin(tmp_path)
    request: Any = _Request(root if arm == "with" else None, arm)
    if arm == "without":
        request.case.suite_root = root / "evals"
    summary = StreamSummary(init={}, result={}, slash_commands=listed)
    assert QwenAgent("qwen").trust_problem(request, summary) == problem


def test_an_api_error_is_an_infrastructure_error_and_a_failed_run_is_graded(tmp_path: Path) -> None:
    request: Any = _Request(None, "with")
    request.case.suite_root = tmp_path / "evals"
    agent = QwenAgent("qwen")
    exit_1 = ProcessResult(1, tmp_path / "out", tmp_path / "err", False, 0.0)
    refused = Transcript()
    summary = StreamSummary(
        init={}, result={"is_error": True, "error": {"message": "429 Too many"}}
    )
    agent.classify(request, refused, summary, exit_1)
    assert (refused.infra_error, refused.error) == ("rate_limit", "exit 1: 429 Too many")
    looped = Transcript(final_message="x")
    summary = StreamSummary(
        init={}, result={"is_error": True, "error": {"message": "Loop detected"}}
    )
    agent.classify(request, looped, summary, exit_1)
    assert looped.infra_error is None and looped.error == "exit 1: Loop detected"
    unstarted = Transcript(stderr_tail="boom\n")
    agent.classify(request, unstarted, StreamSummary(), exit_1)
    assert unstarted.infra_error == "agent_start"
    assert unstarted.error == "qwen exited 1 without finishing the run: boom"
