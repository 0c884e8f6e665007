"""The gemini adapter's pure parts: the plugin as an extension, the tool plan, the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.agents import AgentError
from pytest_plugin_evals.agents.gemini.agent import find_binary, pick_model, settings_for
from pytest_plugin_evals.agents.gemini.extension import translate
from pytest_plugin_evals.agents.gemini.stream_json import api_status, parse_events
from pytest_plugin_evals.agents.gemini.tools import plan_tools, shell_granted


def make_plugin(root: Path) -> Path:
    plugin = root / "My_Plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({"name": "Release_Helper", "version": "1.2.0", "description": "Helps."})
    )
    (plugin / "skills" / "next").mkdir(parents=True)
    (plugin / "skills" / "next" / "SKILL.md").write_text(
        "---\nname: next-version\ndescription: d\n---\nbody\n"
    )
    (plugin / "commands").mkdir()
    (plugin / "commands" / "bump.md").write_text(
        '---\ndescription: Bump "it"\n---\nBump $ARGUMENTS now.\nTab\there \\ \x7f end\n'
    )
    (plugin / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "tracker": {"command": "node", "args": ["${CLAUDE_PLUGIN_ROOT}/server.js"]},
                    "docs": {"type": "http", "url": "https://example.test/mcp"},
                    "broken": {"type": "stdio"},
                }
            }
        )
    )
    (plugin / "hooks").mkdir()
    (plugin / "GEMINI.md").write_text("context\n")
    return plugin


def test_a_claude_plugin_becomes_an_extension(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path)
    ext = translate(plugin, tmp_path / "ext")
    doc = json.loads((tmp_path / "ext" / "gemini-extension.json").read_text())
    assert ext.name == doc["name"] == "release-helper"
    assert doc["version"] == "1.2.0" and doc["description"] == "Helps."
    assert doc["contextFileName"] == "GEMINI.md"
    assert (tmp_path / "ext" / "GEMINI.md").read_text() == "context\n"
    assert ext.skills == ("next-version",)
    assert (tmp_path / "ext" / "skills" / "next" / "SKILL.md").is_file()
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+: the TOML is checked by a parser
    command = tomllib.loads((tmp_path / "ext" / "commands" / "bump.toml").read_text())
    assert command["description"] == 'Bump "it"'
    assert command["prompt"] == "Bump {{args}} now.\nTab\there \\ \x7f end\n"
    assert ext.commands == ("bump",)
    assert doc["mcpServers"] == {
        "tracker": {"command": "node", "args": [f"{plugin.resolve()}/server.js"]},
        "docs": {"httpUrl": "https://example.test/mcp"},
    }
    assert ext.mcp_servers == ("tracker", "docs")
    assert any("broken" in n for n in ext.notes)
    assert any("hooks/" in n for n in ext.notes)


def test_stand_ins_replace_the_plugins_servers(tmp_path: Path) -> None:
    ext = translate(make_plugin(tmp_path), tmp_path / "ext", with_mcp=False)
    doc = json.loads((tmp_path / "ext" / "gemini-extension.json").read_text())
    assert "mcpServers" not in doc and ext.mcp_servers == ()


def test_a_plugin_with_its_own_extension_manifest_is_used_as_it_is(tmp_path: Path) -> None:
    plugin = make_plugin(tmp_path)
    (plugin / "gemini-extension.json").write_text(
        json.dumps({"name": "own-name", "version": "2.0.0", "mcpServers": {"s": {"command": "x"}}})
    )
    (plugin / "evals" / "case").mkdir(parents=True)
    ext = translate(plugin, tmp_path / "ext")
    assert ext.name == "own-name" and ext.mcp_servers == ("s",)
    assert not (tmp_path / "ext" / "evals").exists()
    assert (
        json.loads((tmp_path / "ext" / "gemini-extension.json").read_text())["version"] == "2.0.0"
    )


def test_tools_offered_follow_the_case_and_the_grants() -> None:
    plan = plan_tools(
        case_tools=("Read", "Skill", "Write", "Bash(git status *)", "WebFetch", "Frobnicate"),
        case_disallowed=(),
        grants=("Write", "Bash"),
        operator_disallowed=(),
    )
    assert plan.core[:6] == (
        "read_file", "read_many_files", "glob", "grep_search", "list_directory", "activate_skill"
    )  # fmt: skip
    assert "write_file" in plan.core
    assert "run_shell_command(git status)" in plan.core and "run_shell_command" not in plan.core
    assert "web_fetch" not in plan.core  # listed but not granted
    assert plan.not_granted == ("WebFetch", "Frobnicate")
    assert shell_granted(plan)


def test_a_shell_is_offered_only_when_granted_and_disallowed_tools_are_excluded() -> None:
    plan = plan_tools(
        case_tools=("Bash", "Skill", "Write"),
        case_disallowed=("Skill",),
        grants=("Write",),
        operator_disallowed=("Write",),
    )
    assert not shell_granted(plan)
    assert "activate_skill" not in plan.core and "write_file" not in plan.core
    assert set(plan.exclude) == {"activate_skill", "write_file"}
    assert plan.not_granted == ("Bash",)


def test_settings_pin_auth_and_turn_off_telemetry() -> None:
    plan = plan_tools(case_tools=(), case_disallowed=(), grants=(), operator_disallowed=())
    settings = settings_for(plan, max_turns=7, max_attempts=1, mcp_servers={"m": {"command": "x"}})
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["telemetry"]["enabled"] is False
    assert settings["general"]["enableAutoUpdate"] is False
    assert settings["general"]["maxAttempts"] == 1
    assert settings["model"]["maxSessionTurns"] == 7
    assert settings["mcpServers"] == {"m": {"command": "x"}}
    assert "activate_skill" not in settings["tools"]["core"]


def test_a_claude_model_name_is_not_sent_to_gemini() -> None:
    assert pick_model("gemini-2.5-pro", {}) == ("gemini-2.5-pro", None)
    model, note = pick_model("sonnet", {"GEMINI_MODEL": "gemini-3-flash"})
    assert model == "gemini-3-flash" and note is not None and "sonnet" in note
    assert pick_model(None, {}) == ("gemini-2.5-flash", None)


def test_a_missing_binary_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match=r"^--eval-gemini-bin: .* is not an executable file$"):
        find_binary(str(tmp_path / "nope"))


TRACE = [
    {"type": "init", "session_id": "s", "model": "gemini-2.5-flash"},
    {"type": "message", "role": "user", "content": "please run"},
    {"type": "message", "role": "assistant", "content": "Running.", "delta": True},
    {
        "type": "tool_use",
        "tool_name": "run_shell_command",
        "tool_id": "t1",
        "parameters": {"command": "echo hi"},
    },
    {"type": "tool_use", "tool_name": "mcp_tracker_list_issues", "tool_id": "t2", "parameters": {}},
    {"type": "tool_result", "tool_id": "t1", "status": "success", "output": "hi"},
    {
        "type": "tool_result",
        "tool_id": "t2",
        "status": "error",
        "error": {"type": "x", "message": "boom"},
    },
    {"type": "error", "severity": "warning", "message": "loop detected"},
    {"type": "message", "role": "assistant", "content": "Done: ", "delta": True},
    {"type": "message", "role": "assistant", "content": "hi.", "delta": True},
    {
        "type": "result",
        "status": "success",
        "stats": {"input_tokens": 2400, "output_tokens": 80, "duration_ms": 529, "tool_calls": 2},
    },
]


def test_the_trace_becomes_a_transcript() -> None:
    transcript, summary = parse_events([json.dumps(e) for e in TRACE] + ["not json"], ["tracker"])
    assert transcript.final_message == "Done: hi."
    assert transcript.turns == 2
    shell, mcp = transcript.tool_calls
    assert (shell.name, shell.original_name) == ("Bash", "run_shell_command")
    assert shell.input == {"command": "echo hi"} and shell.output == "hi" and not shell.is_error
    assert (mcp.name, mcp.original_name) == ("mcp__tracker__list_issues", "mcp_tracker_list_issues")
    assert mcp.is_error and mcp.output == "boom"
    assert (transcript.input_tokens, transcript.output_tokens) == (2400, 80)
    assert transcript.latency_ms == 529
    assert transcript.cost_usd == 0.0
    assert summary.warnings == ["loop detected"]
    assert summary.init is not None and summary.error_message is None


def test_a_run_that_ends_on_a_tool_result_has_no_final_message() -> None:
    transcript, _ = parse_events([json.dumps(e) for e in TRACE[:6]])
    assert transcript.final_message == ""


@pytest.mark.parametrize(
    ("message", "stderr", "status"),
    [
        ('[API Error: {"error":{"code":401,"message":"m","status":"UNAUTHENTICATED"}}]', "", 401),
        ("[API Error: fake]\nPlease wait and try again later.", "", 429),
        ("[API Error: x]", "  status: 529\n}", 529),
        ("[API Error: x]", "", None),
    ],
)
def test_the_status_of_an_api_error(message: str, stderr: str, status: int | None) -> None:
    assert api_status(message, stderr) == status
