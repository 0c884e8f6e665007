"""The gemini adapter's pure parts: the plugin as an extension, the tool plan, the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_plugin_evals.agents import AgentError
from pytest_plugin_evals.agents.gemini.agent import (
    GeminiAgent,
    drop_stale_lock,
    pick_model,
    settings_for,
)
from pytest_plugin_evals.agents.gemini.extension import translate
from pytest_plugin_evals.agents.gemini.stream_json import api_status, parse_events, tool_name
from pytest_plugin_evals.agents.gemini.tools import plan_tools, shell_granted
from pytest_plugin_evals.agents.mcp import McpPlan, McpServer
from pytest_plugin_evals.agents.mcp_settings import mcp_servers
from pytest_plugin_evals.agents.mcp_settings import settings_server as gemini_server
from pytest_plugin_evals.agents.permissions import ToolAccess


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
    # The plugin's MCP servers go to the run's settings (as the run's plan says), not here.
    assert "mcpServers" not in doc and ext.mcp_servers == ()
    assert any("hooks/" in n for n in ext.notes)


def test_claude_mcp_entries_in_gemini_clis_form() -> None:
    assert gemini_server(
        {"type": "stdio", "command": "node", "args": ["s.js"], "env": {"A": "1"}}
    ) == {
        "command": "node",
        "args": ["s.js"],
        "env": {"A": "1"},
    }
    assert gemini_server({"type": "http", "url": "https://x.test/mcp", "headers": {"K": "v"}}) == {
        "httpUrl": "https://x.test/mcp",
        "headers": {"K": "v"},
    }
    assert gemini_server({"type": "sse", "url": "https://x.test/sse"}) == {
        "url": "https://x.test/sse"
    }
    assert gemini_server({"type": "stdio"}) is None


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


def test_an_own_extension_manifest_loses_the_servers_the_run_gives_or_withholds(
    tmp_path: Path,
) -> None:
    plugin = make_plugin(tmp_path)
    shipped = {"s": {"command": "x"}, "tracker": {"command": "y"}}
    (plugin / "gemini-extension.json").write_text(
        json.dumps({"name": "own-name", "version": "2.0.0", "mcpServers": shipped})
    )
    ext = translate(plugin, tmp_path / "ext", drop_mcp={"tracker"})
    doc = json.loads((tmp_path / "ext" / "gemini-extension.json").read_text())
    assert ext.mcp_servers == ("s",) and doc["mcpServers"] == {"s": {"command": "x"}}
    assert json.loads((plugin / "gemini-extension.json").read_text())["mcpServers"] == shipped
    ext = translate(plugin, tmp_path / "strict", own_mcp=False)
    doc = json.loads((tmp_path / "strict" / "gemini-extension.json").read_text())
    assert ext.mcp_servers == () and doc["mcpServers"] == {} and doc["name"] == "own-name"


def test_tools_offered_follow_the_case_and_the_grants() -> None:
    plan = plan_tools(
        ToolAccess(
            ("Read", "Skill", "Write", "Bash(git status *)", "WebFetch", "Frobnicate"),
            grants=("Write", "Bash"),
        )
    )
    assert plan.core[:6] == (
        "read_file", "read_many_files", "glob", "grep_search", "list_directory", "activate_skill"
    )  # fmt: skip
    assert "Skill" in plan.canonical
    assert "write_file" in plan.core
    assert "run_shell_command(git status)" in plan.core and "run_shell_command" not in plan.core
    assert "web_fetch" not in plan.core  # listed but not granted
    assert plan.not_granted == ("WebFetch", "Frobnicate")
    assert shell_granted(plan)


def test_a_shell_is_offered_only_when_granted_and_disallowed_tools_are_excluded() -> None:
    # The case's disallowed tools, then the operator's.
    plan = plan_tools(ToolAccess(("Bash", "Skill", "Write"), ("Write",), ("Skill", "Write")))
    assert not shell_granted(plan)
    assert "activate_skill" not in plan.core and "write_file" not in plan.core
    assert set(plan.exclude) == {"activate_skill", "write_file"}
    assert plan.not_granted == ("Bash",)


def test_settings_pin_auth_and_turn_off_telemetry() -> None:
    plan = plan_tools(ToolAccess())
    settings = settings_for(
        plan, max_turns=7, max_attempts=1, mcp_servers={"m": {"command": "x"}},
        extension_servers=("own",),
    )  # fmt: skip
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["telemetry"]["enabled"] is False
    assert settings["general"]["enableAutoUpdate"] is False
    assert settings["general"]["maxAttempts"] == 1
    assert settings["model"]["maxSessionTurns"] == 7
    assert settings["mcpServers"] == {"m": {"command": "x"}}
    # tools.core denies what it does not name, MCP tools too: each server's are named.
    assert settings["tools"]["core"][-2:] == ["mcp_m_*", "mcp_own_*"]


def test_the_skill_tool_is_offered_whatever_the_case_lists_unless_disallowed() -> None:
    plan = plan_tools(ToolAccess())
    assert "activate_skill" in plan.core and "Skill" in plan.canonical
    for listed in ((), ("Skill",)):
        plan = plan_tools(ToolAccess(listed, disallowed=("Skill",)))
        assert "activate_skill" not in plan.core and plan.exclude == ("activate_skill",)
        assert "Skill" not in plan.canonical


PREFIX = "mcp__plugin_kit_tracker__"


def mcp_plan() -> McpPlan:
    stand_in = McpServer(
        "tracker",
        {"type": "stdio", "command": "/py", "args": ["stub.py", "host.sock"]},
        PREFIX,
        stand_in=True,
    )
    real = McpServer(
        "people", {"command": "node", "args": ["/p/people.js"]}, "mcp__plugin_kit_people__", False
    )
    docs = McpServer(
        "docs", {"type": "http", "url": "https://x.test/mcp"}, "mcp__plugin_kit_docs__", False
    )
    kb = McpServer("kb", {"command": "/py", "args": []}, "mcp__kb__", stand_in=True)
    return McpPlan(
        servers=(stand_in, real, docs, kb),
        suppressed=("wiki",),
        prefixes={
            "tracker": PREFIX,
            "people": "mcp__plugin_kit_people__",
            "docs": "mcp__plugin_kit_docs__",
            "kb": "mcp__kb__",
            "wiki": "mcp__plugin_kit_wiki__",
            "web": "mcp__plugin_kit_web__",
        },
    )


def test_mcp_servers_offer_a_real_servers_tools_only_when_listed_and_granted() -> None:
    access = ToolAccess(
        case_tools=(
            "mcp__plugin_kit_people__lookup",
            "mcp__plugin_kit_people__delete",
            "mcp__plugin_kit_docs__*",
        ),
        grants=("mcp__plugin_kit_people__lookup", " mcp__plugin_kit_docs__* "),
        disallowed=(PREFIX + "close_issue", "mcp__kb"),
    )
    servers, notes = mcp_servers(mcp_plan(), access)
    assert list(servers) == ["tracker", "people", "docs", "kb"]
    # A stand-in offers every tool (less those disallowed), under the plan's name.
    assert servers["tracker"] == {
        "command": "/py",
        "args": ["stub.py", "host.sock"],
        "excludeTools": ["close_issue"],
    }
    assert servers["people"] == {
        "command": "node",
        "args": ["/p/people.js"],
        "includeTools": ["lookup"],
    }
    assert servers["docs"] == {"httpUrl": "https://x.test/mcp"}  # all granted
    assert servers["kb"]["includeTools"] == []  # the whole server disallowed
    assert notes == ("not granted (add --eval-allow-tools): mcp__plugin_kit_people__delete",)


def test_a_real_server_with_nothing_granted_starts_with_no_tool_offered() -> None:
    servers, _ = mcp_servers(mcp_plan(), ToolAccess(grants=("Bash",)))
    assert servers["people"]["includeTools"] == [] and "includeTools" not in servers["tracker"]


def test_gemini_mcp_tool_names_get_claude_codes_names_back() -> None:
    plan = mcp_plan()
    assert tool_name("mcp_tracker_create_issue", plan) == PREFIX + "create_issue"
    assert tool_name("mcp_kb_search", plan) == "mcp__kb__search"
    assert tool_name("mcp_wiki_page", plan) == "mcp__plugin_kit_wiki__page"
    # A built-in tool is never taken for a server's ("web" is a server here).
    assert tool_name("web_fetch", plan) == "WebFetch"
    assert tool_name("mcp_own_get", plan, ("own",)) == "mcp__own__get"
    assert tool_name("mcp_other_get", plan) == "mcp_other_get"


def test_a_claude_model_name_is_not_sent_to_gemini() -> None:
    assert pick_model("gemini-2.5-pro", {}) == ("gemini-2.5-pro", None)
    model, note = pick_model("sonnet", {"GEMINI_MODEL": "gemini-3-flash"})
    assert model == "gemini-3-flash" and note is not None and "sonnet" in note
    assert pick_model(None, {}) == ("gemini-2.5-flash", None)


def test_the_lock_the_link_command_left_is_removed_and_nothing_else(tmp_path: Path) -> None:
    gemini = tmp_path / ".gemini"
    (gemini / "projects.json.lock").mkdir(parents=True)
    (gemini / "projects.json").write_text("{}")
    drop_stale_lock(gemini)
    assert sorted(p.name for p in gemini.iterdir()) == ["projects.json"]
    # A lock that is not an empty folder of the home's own is left alone.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (gemini / "projects.json.lock").symlink_to(elsewhere)
    drop_stale_lock(gemini)
    assert (gemini / "projects.json.lock").is_symlink() and elsewhere.is_dir()
    (gemini / "projects.json.lock").unlink()
    (gemini / "projects.json.lock").mkdir()
    (gemini / "projects.json.lock" / "inside").write_text("x")
    drop_stale_lock(gemini)
    assert (gemini / "projects.json.lock" / "inside").exists()
    drop_stale_lock(tmp_path / "no-home")  # nothing there: nothing to do
    # Nor through a home's .gemini that is a link to somewhere else.
    (elsewhere / "projects.json.lock").mkdir()
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / ".gemini").symlink_to(elsewhere)
    drop_stale_lock(tmp_path / "linked" / ".gemini")
    assert (elsewhere / "projects.json.lock").is_dir()


def test_a_missing_binary_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(AgentError, match=r"^--eval-gemini-bin: .* is not an executable file$"):
        GeminiAgent.find_binary(str(tmp_path / "nope"))


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
    transcript, summary = parse_events([json.dumps(e) for e in TRACE] + ["not json"], mcp_plan())
    assert transcript.final_message == "Done: hi."
    assert transcript.turns == 2
    shell, mcp = transcript.tool_calls
    assert (shell.name, shell.original_name) == ("Bash", "run_shell_command")
    assert shell.input == {"command": "echo hi"} and shell.output == "hi" and not shell.is_error
    assert (mcp.name, mcp.original_name) == (PREFIX + "list_issues", "mcp_tracker_list_issues")
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
