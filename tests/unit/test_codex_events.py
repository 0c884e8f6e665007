"""Reading ``codex exec --json`` traces: items into tool calls with canonical names, usage,
failures, and a skill file read as a Skill call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.codex.events import parse_file, skill_read


def trace(tmp_path: Path, *events: dict[str, Any]) -> Path:
    path = tmp_path / "trace.jsonl"
    lines = [json.dumps(e) for e in ({"type": "thread.started", "thread_id": "t"}, *events)]
    path.write_text("\n".join([*lines, "not json", ""]), encoding="utf-8")
    return path


def done(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "item.completed", "item": item}


def test_items_become_tool_calls_with_canonical_and_original_names(tmp_path: Path) -> None:
    path = trace(
        tmp_path,
        {"type": "item.started", "item": {"id": "i1", "type": "command_execution"}},
        done({"id": "i1", "type": "command_execution", "command": "/bin/bash -lc ls",
              "aggregated_output": "a.txt\n", "exit_code": 0, "status": "completed"}),
        done({"id": "i2", "type": "command_execution", "command": "false",
              "aggregated_output": "", "exit_code": 1, "status": "failed"}),
        done({"id": "i3", "type": "file_change", "status": "completed",
              "changes": [{"path": "/w/new.txt", "kind": "add"}]}),
        done({"id": "i4", "type": "file_change", "status": "completed",
              "changes": [{"path": "/w/a.txt", "kind": "update"}]}),
        done({"id": "i5", "type": "mcp_tool_call", "server": "docs", "tool": "search",
              "arguments": {"q": "x"}, "result": {"content": [{"type": "text", "text": "hit"}]},
              "error": None, "status": "completed"}),
        done({"id": "i6", "type": "web_search", "query": "semver"}),
        done({"id": "i7", "type": "todo_list", "items": [{"text": "a", "completed": False}]}),
        done({"id": "i8", "type": "error", "message": "Model metadata for `m` not found."}),
        done({"id": "i9", "type": "agent_message", "text": "first"}),
        done({"id": "i10", "type": "agent_message", "text": "The end."}),
        {"type": "turn.completed", "usage": {"input_tokens": 1200, "output_tokens": 40}},
        {"type": "turn.completed", "usage": {"input_tokens": 300, "output_tokens": 2}},
    )  # fmt: skip
    transcript, summary = parse_file(path)
    got = [(c.name, c.original_name, c.is_error) for c in transcript.tool_calls]
    assert got == [
        ("Bash", "exec_command", False),
        ("Bash", "exec_command", True),
        ("Write", "apply_patch", False),
        ("Edit", "apply_patch", False),
        ("mcp__docs__search", "mcp__docs__search", False),
        ("WebSearch", "web_search", False),
        ("TodoWrite", "update_plan", False),
    ]
    first = transcript.tool_calls[0]
    assert (first.input, first.output, first.id) == (
        {"command": "/bin/bash -lc ls"},
        "a.txt\n",
        "i1",
    )
    assert transcript.tool_calls[4].input == {"q": "x"}
    assert transcript.tool_calls[4].output == "hit"
    assert transcript.final_message == "The end."
    assert (transcript.input_tokens, transcript.output_tokens) == (1500, 42)
    assert transcript.turns == 8
    assert summary.thread_started and summary.turn_completed and summary.failure is None
    assert summary.warnings == ["Model metadata for `m` not found."]


def test_a_skill_file_read_is_a_skill_call_of_the_loaded_plugin_only(tmp_path: Path) -> None:
    cached = "/run/config/codex/plugins/cache/eval/release-helper/1.2.0/skills/next-version"
    command = f"/bin/bash -lc 'cat {cached}/SKILL.md'"
    assert skill_read(command, "release-helper") == "release-helper:next-version"
    assert skill_read("sed -n 1,80p r1/release-helper/1.2.0/skills/bump/SKILL.md",
                      "release-helper") == "release-helper:bump"  # fmt: skip
    assert skill_read(command, "other-plugin") is None
    assert skill_read(command, None) is None
    assert skill_read("cat r0/imagegen/SKILL.md", "release-helper") is None
    path = trace(
        tmp_path,
        done({"id": "i1", "type": "command_execution", "command": command,
              "aggregated_output": "Bump it.", "exit_code": 0, "status": "completed"}),
    )  # fmt: skip
    (call,) = parse_file(path, plugin="release-helper")[0].tool_calls
    assert (call.name, call.original_name) == ("Skill", "exec_command")
    assert call.input == {"skill": "release-helper:next-version", "command": command}
    (call,) = parse_file(path, plugin=None)[0].tool_calls
    assert call.name == "Bash"


def test_a_failed_turn_names_its_status(tmp_path: Path) -> None:
    message = "unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses"
    path = trace(
        tmp_path,
        {"type": "turn.started"},
        {"type": "error", "message": message},
        {"type": "turn.failed", "error": {"message": message}},
    )
    transcript, summary = parse_file(path)
    assert (summary.failure, summary.status) == (message, 401)
    assert transcript.tool_calls == [] and transcript.input_tokens is None
    path = trace(tmp_path, {"type": "turn.failed", "error": {"message": "stream disconnected"}})
    assert parse_file(path)[1].status is None
    assert parse_file(tmp_path / "missing.jsonl")[1].thread_started is False


def test_an_mcp_call_gets_the_name_the_run_gives_it_and_keeps_codexs(tmp_path: Path) -> None:
    path = trace(
        tmp_path,
        done({"id": "i1", "type": "mcp_tool_call", "server": "tracker", "tool": "create_issue",
              "arguments": {"title": "Crash"}, "result": None,
              "error": {"message": "MCP tool call requires approval, but approval policy is never"},
              "status": "failed"}),
    )  # fmt: skip
    names: list[tuple[str, str]] = []

    def naming(server: str, tool: str) -> str:
        names.append((server, tool))
        return f"mcp__plugin_tracker-kit_{server}__{tool}"

    (call,) = parse_file(path, mcp=naming)[0].tool_calls
    assert names == [("tracker", "create_issue")]
    assert call.name == "mcp__plugin_tracker-kit_tracker__create_issue"
    assert call.original_name == "mcp__tracker__create_issue"
    assert call.is_error is True and call.output is not None and "approval" in call.output
    assert call.input == {"title": "Crash"}
