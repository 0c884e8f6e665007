"""Which servers a run gets: shadows, standalone and withheld servers, overrides, _tools.json."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_plugin_evals.mocks import declared_servers, discover_mocks
from pytest_plugin_evals.mocks.discover import PERMISSIVE_SCHEMA, load_tools_json
from pytest_plugin_evals.model import LoadError
from tests.helpers import write_tree

MOCK = "---\nexpect:\n  title: string\n---\nCreated {{input.title}}\n"


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "tracker-kit"
    write_tree(
        root,
        {
            ".claude-plugin/plugin.json": json.dumps(
                {"name": "tracker-kit", "mcpServers": {"wiki": {"command": "wiki-server"}}}
            ),
            ".mcp.json": json.dumps(
                {"mcpServers": {"tracker": {"command": "tracker"}, "github": {"command": "gh"}}}
            ),
            "evals/mocks/tracker/create_issue.md": MOCK,
            "evals/mocks/tracker/get_issue.md": "Issue {{input.id}} (suite)",
            "evals/mocks/tracker/_tools.json": json.dumps(
                {
                    "tools": [
                        {
                            "name": "create_issue",
                            "description": "Create an issue in the tracker.",
                            "inputSchema": {
                                "type": "object",
                                "properties": {"title": {"type": "string"}},
                                "required": ["title"],
                            },
                        },
                        {"name": "delete_issue", "inputSchema": {"type": "object"}},
                    ]
                }
            ),
            "evals/mocks/tracker/fixtures/x.json": "{}",
            "evals/mocks/kb/search.md": "Found: {{input.q}}",
            "evals/mocks/.replay/kb/x.json": "{}",
            "evals/mocks/wiki/README.txt": "not a mock",
            "evals/case-a/prompt.md": "File an issue",
            "evals/case-a/mocks/tracker/get_issue.md": "Issue {{input.id}} (case)",
            "evals/case-a/mocks/tracker/close_issue.md": "---\nerror: true\n---\nnope",
            "evals/case-b/prompt.md": "Other",
        },
    )
    return root


def test_declared_servers_from_mcp_json_and_plugin_json(plugin: Path) -> None:
    assert declared_servers(plugin) == {
        "tracker": {"command": "tracker"},
        "github": {"command": "gh"},
        "wiki": {"command": "wiki-server"},
    }


def test_plugin_json_may_point_at_other_files(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".claude-plugin/plugin.json": json.dumps(
                {
                    "name": "p",
                    "mcpServers": ["./servers.json", "bundle.mcpb", {"inline": {"command": "i"}}],
                }
            ),
            "servers.json": json.dumps({"mcpServers": {"listed": {"command": "l"}}}),
        },
    )
    assert sorted(declared_servers(tmp_path)) == ["inline", "listed"]


def test_bare_mcp_json_map(tmp_path: Path) -> None:
    write_tree(tmp_path, {".mcp.json": json.dumps({"db": {"command": "db"}})})
    assert declared_servers(tmp_path) == {"db": {"command": "db"}}


def test_bad_mcp_json_is_a_load_error(tmp_path: Path) -> None:
    write_tree(tmp_path, {".mcp.json": "{\n  nope"})
    with pytest.raises(LoadError, match=r"\.mcp\.json:2: invalid JSON"):
        declared_servers(tmp_path)


def test_shadow_standalone_and_withheld(plugin: Path) -> None:
    plan = discover_mocks(plugin / "evals/case-b", plugin / "evals", plugin)
    assert plan.plugin == "tracker-kit"
    by_name = {s.name: s for s in plan.servers}
    assert sorted(by_name) == ["kb", "tracker"]
    tracker, kb = by_name["tracker"], by_name["kb"]
    assert tracker.kind == "shadow" and tracker.registered == "plugin:tracker-kit:tracker"
    assert tracker.qualified("create_issue") == "mcp__plugin_tracker-kit_tracker__create_issue"
    assert kb.kind == "standalone" and kb.qualified("search") == "mcp__kb__search"
    # github has no folder, wiki's folder holds no mock: both withheld.
    assert plan.withheld == ("github", "wiki")
    assert [s.name for s in plan.active(loads_plugin=False)] == ["kb"]
    # Listed by name, as the reference lists them.
    assert [s.name for s in plan.active(loads_plugin=True)] == ["kb", "tracker"]
    assert plan.shadow_only is False


def test_case_mocks_override_per_tool(plugin: Path) -> None:
    plan = discover_mocks(plugin / "evals/case-a", plugin / "evals", plugin)
    tracker = next(s for s in plan.servers if s.name == "tracker")
    tools = {t.name: t for t in tracker.tools}
    assert sorted(tools) == ["close_issue", "create_issue", "get_issue"]
    assert tools["get_issue"].spec.body == "Issue {{input.id}} (case)"
    assert tools["get_issue"].root == plugin / "evals/case-a/mocks/tracker"
    assert tools["create_issue"].root == plugin / "evals/mocks/tracker"
    assert tools["close_issue"].spec.error is True


def test_tools_json_gives_description_and_schema(plugin: Path) -> None:
    plan = discover_mocks(plugin / "evals/case-b", plugin / "evals", plugin)
    tracker = next(s for s in plan.servers if s.name == "tracker")
    tools = {t.name: t for t in tracker.tools}
    assert tools["create_issue"].description == "Create an issue in the tracker."
    assert tools["create_issue"].schema["required"] == ["title"]
    assert tools["get_issue"].description is None
    assert tools["get_issue"].schema == PERMISSIVE_SCHEMA
    assert "delete_issue" not in tools  # an entry without a mock file is not offered
    assert tracker.warnings == (
        "tracker: no _tools.json entry for get_issue — served with a permissive schema and no "
        "description; save the server's tools/list response as mocks/tracker/_tools.json so the "
        "model sees the real tool",
    )
    assert "kb: no _tools.json entry for search" in plan.warnings[0]


def test_tools_json_forms(tmp_path: Path) -> None:
    tool = {"name": "t", "description": "d", "inputSchema": {"type": "object"}}
    for doc in (
        {"tools": [tool]},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}},
        [tool],
    ):
        (tmp_path / "_tools.json").write_text(json.dumps(doc), encoding="utf-8")
        assert load_tools_json(tmp_path / "_tools.json") == {
            "t": {"description": "d", "inputSchema": {"type": "object"}}
        }


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"tools": {}}, "expected a tools/list response"),
        ({"tools": [{"description": "x"}]}, "tools[0] must be an object with a name"),
        (
            {"tools": [{"name": "t", "inputSchema": {"type": "string"}}]},
            "tools[0] (t): inputSchema must",
        ),
    ],
)
def test_bad_tools_json(tmp_path: Path, doc: object, message: str) -> None:
    (tmp_path / "_tools.json").write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(
        LoadError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")
    ):
        load_tools_json(tmp_path / "_tools.json")


def test_folder_may_use_the_normalized_registered_name(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".claude-plugin/plugin.json": json.dumps({"name": "kit"}),
            ".mcp.json": json.dumps({"mcpServers": {"my.db": {"command": "db"}}}),
            "evals/mocks/plugin_kit_my_db/query.md": "rows",
        },
    )
    plan = discover_mocks(tmp_path / "evals/c", tmp_path / "evals", tmp_path)
    (server,) = plan.servers
    assert (server.name, server.kind, server.qualified("query")) == (
        "my.db",
        "shadow",
        "mcp__plugin_kit_my_db__query",
    )
    assert plan.withheld == () and plan.shadow_only is True


def test_no_plugin_means_every_folder_stands_alone(plugin: Path) -> None:
    plan = discover_mocks(plugin / "evals/case-b", plugin / "evals", None)
    assert sorted((s.name, s.kind) for s in plan.servers) == [
        ("kb", "standalone"),
        ("tracker", "standalone"),
    ]


def test_agent_servers_are_played_by_a_model(plugin: Path) -> None:
    write_tree(
        plugin,
        {
            "evals/mocks/docs/_server.md": (
                "---\ntype: agent\ntools: [search, fetch]\nabort_when: asked to delete\n---\n"
                "\nA knowledge base of release notes.\n"
            ),
            "evals/mocks/docs/summarize.md": "---\ntype: agent\n---\nSummaries are one line.",
            "evals/case-b/mocks/docs/fetch.md": "Fixed page {{input.id}}",
        },
    )
    plan = discover_mocks(plugin / "evals/case-b", plugin / "evals", plugin)
    assert plan.errors == ()
    docs = next(s for s in plan.servers if s.name == "docs")
    assert docs.instructions == "A knowledge base of release notes."
    assert docs.abort_when == "asked to delete"
    responders = {t.name: (t.spec.type, t.spec.path.name) for t in docs.tools}
    assert responders == {
        "fetch": ("fixed", "fetch.md"),  # a fixed file answers its own tool
        "search": ("agent", "_server.md"),
        "summarize": ("agent", "summarize.md"),
    }
    assert [t.name for t in docs.agent_tools] == ["search", "summarize"]
    assert docs.replay_dirs == (
        plugin / "evals/case-b/mocks/.replay/docs",
        plugin / "evals/mocks/.replay/docs",
    )
    assert docs.kind == "standalone"
    assert ".replay" not in {s.name for s in plan.servers}  # not a server folder


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("---\ntools: [search]\n---\nA KB", "_server.md describes a type: agent server", 1),
        ("---\n\ntype: agent\n---\nA KB", "_server.md must list the tools the model", 3),
    ],
)
def test_a_bad_server_file_leaves_the_server_out(
    plugin: Path, text: str, message: str, line: int
) -> None:
    write_tree(plugin, {"evals/mocks/kb/_server.md": text})
    plan = discover_mocks(plugin / "evals/case-b", plugin / "evals", plugin)
    (error,) = plan.errors
    assert error.message.startswith(message)
    assert (error.path.name, error.line) == ("_server.md", line)
    assert "kb" not in {s.name for s in plan.servers}


def test_a_bad_mock_file_is_a_load_error(plugin: Path) -> None:
    write_tree(plugin, {"evals/case-b/mocks/kb/search.md": "---\nexpected: {}\n---\nx"})
    plan = discover_mocks(plugin / "evals/case-b", plugin / "evals", plugin)
    (error,) = plan.errors  # reported once by the collector; the tool is not offered
    assert re.search(r'search\.md:2: unknown key "expected"', str(error))
    assert all(t.name != "search" for s in plan.servers for t in s.tools)
