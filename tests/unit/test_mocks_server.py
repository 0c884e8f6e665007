"""The stand-in: answers, records, guards; the run's MCP config; reading the calls back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from pytest_plugin_evals.graders.targets import mock_call_line
from pytest_plugin_evals.mocks import MockOptions, attach, collect_calls, prepare_mocks
from pytest_plugin_evals.mocks.server import StandIn, build_server
from pytest_plugin_evals.model import Abort, Case, MockTotals, ToolCall, Transcript
from tests.helpers import mocks_doc, write_tree

TOOLS_JSON = {
    "tools": [
        {
            "name": "create_issue",
            "description": "Create an issue.",
            "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
        }
    ]
}


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "kit"
    write_tree(
        root,
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "tracker-kit"}),
            ".mcp.json": json.dumps(
                {"mcpServers": {"tracker": {"command": "x"}, "gh": {"command": "y"}}}
            ),
            "evals/mocks/tracker/create_issue.md": (
                "---\nexpect:\n  priority: [low, medium, high]\n---\n\n"
                "Created issue #4821: {{input.title}} {{input.labels}}\n{{file:fixtures/f.txt}}\n"
            ),
            "evals/mocks/tracker/fixtures/f.txt": "fixture text",
            "evals/mocks/tracker/fail_op.md": "---\nerror: true\n---\nservice unavailable",
            "evals/mocks/tracker/by_name.md": "{{file:fixtures/{input.name}}}",
            "evals/mocks/tracker/_tools.json": json.dumps(TOOLS_JSON),
            "evals/mocks/kb/search.md": "Found {{input.q}}",
            "evals/c/prompt.md": "x",
        },
    )
    return root


def written(path: Path | None) -> str:
    assert path is not None
    return path.read_text(encoding="utf-8")


def make_case(plugin: Path) -> Case:
    return Case(
        "c", "x", "prose", plugin / "evals/c/prompt.md", plugin / "evals/c", plugin / "evals"
    )


def stand_in(setup: Any, name: str) -> StandIn:
    assert [s.name for s in setup.servers].count(name) == 1
    path = setup.mcp_config.parent / f"{name}.spec.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["onAbort"] = "record"  # never kill anything from a unit test
    return StandIn.from_spec(doc)


def test_with_arm_config(plugin: Path, tmp_path: Path) -> None:
    setup = prepare_mocks(
        make_case(plugin), plugin, True, tmp_path / "run", MockOptions(shared_host=False)
    )
    config = json.loads((tmp_path / "run/mcp.json").read_text(encoding="utf-8"))
    assert sorted(config["mcpServers"]) == ["kb", "plugin:tracker-kit:tracker"]
    entry = config["mcpServers"]["plugin:tracker-kit:tracker"]
    assert entry["command"] == sys.executable
    assert entry["args"][:2] == ["-m", "pytest_plugin_evals.mocks.server"]
    assert Path(entry["args"][2]).is_file()
    assert setup.claude_args() == [
        "--strict-mcp-config",
        f"--mcp-config={tmp_path / 'run/mcp.json'}",
    ]
    assert setup.withheld == ("gh",)
    assert set(setup.allowed_tools) == {
        "mcp__plugin_tracker-kit_tracker__by_name",
        "mcp__plugin_tracker-kit_tracker__create_issue",
        "mcp__plugin_tracker-kit_tracker__fail_op",
        "mcp__kb__search",
    }
    summary = mocks_doc(setup)
    by_name = {s["server"]: s for s in summary["servers"] if not s.get("withheld")}
    assert by_name["tracker"] == {
        "server": "tracker",
        "kind": "shadow",
        "tools": [
            {"tool": "by_name", "responder": "fixed"},
            {"tool": "create_issue", "responder": "fixed"},
            {"tool": "fail_op", "responder": "fixed"},
        ],
    }
    assert summary["servers"][2] == {
        "server": "gh",
        "kind": "shadow",
        "withheld": True,
        "tools": [],
    }
    assert any(
        w.startswith("tracker: no _tools.json entry for by_name, fail_op — ")
        for w in summary["warnings"]
    )


def test_without_arm_gets_standalone_servers_only(plugin: Path, tmp_path: Path) -> None:
    setup = prepare_mocks(make_case(plugin), plugin, False, tmp_path / "run")
    config = json.loads((tmp_path / "run/mcp.json").read_text(encoding="utf-8"))
    assert list(config["mcpServers"]) == ["kb"]
    assert setup.withheld == () and setup.active and setup.strict


def test_real_servers_allowed_drops_strict(plugin: Path, tmp_path: Path) -> None:
    setup = prepare_mocks(
        make_case(plugin), plugin, True, tmp_path / "run", MockOptions(allow_real_servers=True)
    )
    assert setup.withheld == () and not setup.strict
    assert setup.claude_args() == [f"--mcp-config={tmp_path / 'run/mcp.json'}"]


def test_mocks_off_and_nothing_to_mock(plugin: Path, tmp_path: Path) -> None:
    off = prepare_mocks(make_case(plugin), plugin, True, tmp_path / "off", MockOptions("off"))
    assert off.claude_args() == [] and not off.active and not (tmp_path / "off").exists()
    assert collect_calls(off).calls is None
    bare = tmp_path / "bare"
    write_tree(bare, {"evals/c/prompt.md": "x"})
    none = prepare_mocks(make_case(bare), bare, True, tmp_path / "none")
    assert none.claude_args() == [] and not none.active


def test_declared_servers_without_mocks_are_withheld_by_an_empty_strict_config(
    tmp_path: Path,
) -> None:
    write_tree(tmp_path / "p", {".mcp.json": json.dumps({"mcpServers": {"db": {"command": "db"}}})})
    setup = prepare_mocks(make_case(tmp_path / "p"), tmp_path / "p", True, tmp_path / "run")
    assert json.loads(written(setup.mcp_config)) == {"mcpServers": {}}
    assert setup.strict and setup.withheld == ("db",) and not setup.active


def test_answers_are_rendered_and_recorded(plugin: Path, tmp_path: Path) -> None:
    setup = prepare_mocks(make_case(plugin), plugin, True, tmp_path / "run")
    tracker = stand_in(setup, "tracker")
    text, is_error = tracker.answer(
        "create_issue", {"title": "Crash", "priority": "low", "labels": ["a"]}
    )
    assert (text, is_error) == ('Created issue #4821: Crash ["a"]\nfixture text', False)
    assert tracker.answer("fail_op", None) == ("service unavailable", True)
    text, is_error = tracker.answer("by_name", {"name": "../f.txt"})
    assert is_error and "must be one plain path segment" in text
    outcome = collect_calls(
        setup,
        [
            ToolCall("mcp__plugin_tracker-kit_tracker__create_issue"),
            ToolCall("mcp__plugin_tracker-kit_tracker__delete_issue"),
            ToolCall("mcp__plugin_tracker-kit_tracker__delete_issue"),
            ToolCall("mcp__plugin_tracker-kit_gh__pr"),
            ToolCall("mcp__other__x"),
            ToolCall("Read"),
        ],
    )
    assert outcome.aborted is None
    assert [c.tool for c in outcome.calls or []] == [
        "mcp__plugin_tracker-kit_tracker__create_issue",
        "mcp__plugin_tracker-kit_tracker__fail_op",
        "mcp__plugin_tracker-kit_tracker__by_name",
    ]
    first = (outcome.calls or [])[0]
    assert first.server == "tracker" and first.input["labels"] == ["a"]
    assert mock_call_line(first) == (
        '{"tool":"mcp__plugin_tracker-kit_tracker__create_issue","input":{"title":"Crash",'
        '"priority":"low","labels":["a"]},"output":"Created issue #4821: Crash [\\"a\\"]\\n'
        'fixture text","verdict":"ok"}'
    )
    assert '"isError":true,"verdict":"ok"' in mock_call_line((outcome.calls or [])[1])
    assert outcome.totals == MockTotals(
        total=3,
        errors=2,
        unmocked=(
            ("mcp__plugin_tracker-kit_gh__pr", 1),
            ("mcp__plugin_tracker-kit_tracker__delete_issue", 2),
        ),
    )
    assert all("time" in r for r in outcome.records)
    assert outcome.summary(setup).calls.total == 3


def test_a_violation_records_the_abort(plugin: Path, tmp_path: Path) -> None:
    setup = prepare_mocks(make_case(plugin), plugin, True, tmp_path / "run")
    tracker = stand_in(setup, "tracker")
    tracker.answer("fail_op", {})
    text, is_error = tracker.answer("create_issue", {"title": "x", "priority": "urgent"})
    assert is_error and "violates expect" in text
    assert setup.calls_file is not None
    with setup.calls_file.open("a", encoding="utf-8") as fh:
        fh.write('{"server":"tracker","tool":"cut sho')  # a line cut short by the kill
    transcript = Transcript(error="exit -9: killed", infra_error="agent_start")
    outcome = attach(setup, transcript)
    reason = (
        'the model\'s call violates expect: priority = "urgent" is not one of [low, medium, high]'
    )
    assert outcome.aborted == Abort("tracker", "create_issue", reason)
    assert [c.tool for c in transcript.mock_calls or []] == [
        "mcp__plugin_tracker-kit_tracker__fail_op"
    ]
    assert transcript.skip_grading and transcript.error is None and transcript.infra_error is None
    assert f"aborted by mock tracker/create_issue: {reason}" in transcript.notes
    assert any(n.startswith("tracker: no _tools.json entry") for n in transcript.notes)


def test_the_sdk_server_lists_and_calls(plugin: Path, tmp_path: Path) -> None:
    from mcp import Client

    setup = prepare_mocks(make_case(plugin), plugin, True, tmp_path / "run")
    server = build_server(stand_in(setup, "tracker"))

    async def talk() -> tuple[Any, Any, Any]:
        async with Client(server) as client:
            tools = await client.list_tools()
            ok = await client.call_tool("create_issue", {"title": "T", "priority": "high"})
            bad = await client.call_tool("fail_op", {})
            return tools, ok, bad

    tools, ok, bad = anyio.run(talk)
    listed = {t.name: t for t in tools.tools}
    assert sorted(listed) == ["by_name", "create_issue", "fail_op"]
    assert listed["create_issue"].description == "Create an issue."
    assert listed["create_issue"].input_schema["properties"] == {"title": {"type": "string"}}
    assert listed["fail_op"].input_schema == {"type": "object", "additionalProperties": True}
    assert ok.is_error is False and ok.content[0].text.startswith("Created issue #4821: T")
    assert bad.is_error is True and bad.content[0].text == "service unavailable"
    assert [c.tool.rsplit("__", 1)[1] for c in collect_calls(setup).calls or []] == [
        "create_issue",
        "fail_op",
    ]


def talk_over_stdio(argv: list[str], env: dict[str, str] | None = None) -> tuple[list[str], str]:
    """Start ``argv`` as an MCP stdio server with the SDK's client (in ``env``, when given);
    list tools and call one."""
    from mcp import Client, StdioServerParameters, types

    async def talk() -> tuple[list[str], str]:
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
        async with Client(params) as client:
            tools = await client.list_tools()
            result = await client.call_tool("search", {"q": "release"})
            first = result.content[0]
            assert isinstance(first, types.TextContent)
            return sorted(t.name for t in tools.tools), first.text

    return anyio.run(talk)


@pytest.mark.parametrize("shared_host", [True, False], ids=["host", "direct"])
def test_stand_in_processes_speak_mcp(plugin: Path, tmp_path: Path, shared_host: bool) -> None:
    setup = prepare_mocks(
        make_case(plugin),
        plugin,
        False,
        tmp_path / "run",
        MockOptions(shared_host=shared_host),
        kill_agent=False,
    )
    config = json.loads(written(setup.mcp_config))
    entry = config["mcpServers"]["kb"]
    if shared_host:
        assert entry["args"][:2] == ["-I", "-S"] and entry["args"][2].endswith("stub.py")
    else:
        assert entry["args"][:2] == ["-m", "pytest_plugin_evals.mocks.server"]
    assert talk_over_stdio([entry["command"], *entry["args"]]) == (["search"], "Found release")
    assert [c.output for c in collect_calls(setup).calls or []] == ["Found release"]


def test_the_stub_says_so_when_the_host_is_not_there(plugin: Path, tmp_path: Path) -> None:
    """No spec path, no fallback: a stub that cannot reach its run's socket fails to start,
    with one line on its stderr (the agent's MCP log)."""
    setup = prepare_mocks(
        make_case(plugin), plugin, False, tmp_path / "run", MockOptions(), kill_agent=False
    )
    entry = json.loads(written(setup.mcp_config))["mcpServers"]["kb"]
    assert entry["args"][3:] == [str(setup.socket), "kb"]  # the run's socket, the server: no spec
    setup.close()
    done = subprocess.run(
        [entry["command"], *entry["args"]], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 1
    assert done.stderr.startswith("mock stand-in kb: the mock host is not reachable: ")


def test_one_host_per_process() -> None:
    from pytest_plugin_evals.mocks.host import ensure_host, supported

    if not supported():
        pytest.skip("no fork or Unix sockets here: stand-ins start directly")
    first = ensure_host()
    assert first.running() and first.folder.is_dir()
    assert ensure_host() is first
