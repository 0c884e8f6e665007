"""MCP mocks end to end: the real ``claude`` binary, the scripted model, the stand-in servers.

Each test builds a tracker plugin that declares real servers (which would leave a marker file
if they ever started), prepares one run's mocks and drives ``claude -p`` directly. The scripted
model does what a model does with deferred MCP tools: ``ToolSearch {"query": "select:<name>"}``
first, then the call.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from pytest_plugin_evals.mocks import MockOptions, MockSetup, collect_calls, prepare_mocks
from pytest_plugin_evals.model import Abort, Case
from pytest_plugin_evals.records import mocks_to_json
from pytest_plugin_evals.testing import Rule, ScriptedModel, delay, text, tool_use
from tests.helpers import claude_argv, mocks_doc, write_tree

PREFIX = "mcp__plugin_tracker-kit_tracker__"
CREATE = PREFIX + "create_issue"
FAIL = PREFIX + "fail_op"
SEARCH = "mcp__kb__search"

CREATE_MD = """---
expect:
  title: string
  priority: [low, medium, high]
  meta:
    owner: [alice, bob]
  labels: array
  kind: /^crash$/i
---

Created issue #4821: {{input.title}} labels={{input.labels}}
{{file:fixtures/issue.json}}
"""

TOOLS_JSON = {
    "tools": [
        {
            "name": "create_issue",
            "description": "Create an issue in the tracker and return its number.",
            "inputSchema": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "priority": {"type": "string"}},
                "required": ["title"],
            },
        }
    ]
}

GOOD_INPUT = {
    "title": "Crash bug",
    "priority": "high",
    "meta": {"owner": "alice"},
    "labels": ["bug", "p1"],
    "kind": "Crash",
}


def real_server(marker: Path) -> dict[str, Any]:
    """A "real" server that leaves a marker when started (and then fails)."""
    return {"command": "sh", "args": ["-c", f"touch {shlex.quote(str(marker))}; exit 1"]}


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    root = tmp_path / "tracker-kit"
    markers = tmp_path / "markers"
    markers.mkdir()
    manifest = {
        "name": "tracker-kit",
        "version": "0.1.0",
        "mcpServers": {"wiki": real_server(markers / "wiki")},
    }
    write_tree(
        root,
        {
            ".claude-plugin/plugin.json": json.dumps(manifest),
            ".mcp.json": json.dumps({"mcpServers": {"tracker": real_server(markers / "tracker")}}),
            "evals/mocks/tracker/create_issue.md": CREATE_MD,
            "evals/mocks/tracker/fail_op.md": "---\nerror: true\n---\nservice unavailable (503)",
            "evals/mocks/tracker/fixtures/issue.json": '{"id": 4821}',
            "evals/mocks/tracker/_tools.json": json.dumps(TOOLS_JSON),
            "evals/mocks/kb/search.md": "Found 1 page for {{input.q}}",
            "evals/file-issue/prompt.md": "File an issue about the crash.",
        },
    )
    return root


@dataclass
class Run:
    returncode: int
    seconds: float
    events: list[dict[str, Any]]
    setup: MockSetup

    @property
    def init(self) -> dict[str, Any]:
        return next(e for e in self.events if e.get("subtype") == "init")

    def tool_results(self) -> list[dict[str, Any]]:
        return [
            block
            for e in self.events
            if e.get("type") == "user"
            for block in e["message"]["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        ]


def run_claude(
    claude_bin: str,
    model: ScriptedModel,
    plugin: Path,
    tmp_path: Path,
    *,
    loads_plugin: bool = True,
    mode: Literal["on", "off"] = "on",
    shared_host: bool = True,
) -> Run:
    case_dir = plugin / "evals" / "file-issue"
    case = Case("file-issue", "x", "prose", case_dir / "prompt.md", case_dir, plugin / "evals")
    home = tmp_path / "home"
    (home / "cwd").mkdir(parents=True)
    setup = prepare_mocks(
        case,
        plugin,
        loads_plugin,
        tmp_path / "out",
        MockOptions(mode, shared_host=shared_host),
    )
    argv = claude_argv(
        claude_bin,
        *(["--plugin-dir", str(plugin)] if loads_plugin else []),
        *setup.claude_args(),
        "--allowed-tools=" + ",".join(("Read", *setup.allowed_tools)),
    )
    # The run's token, as the runner sets it: an abort kills the processes carrying it.
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), **model.env()}
    env.update(setup.environment())
    start = time.monotonic()
    try:
        done = subprocess.run(
            argv,
            input="Please file an issue about the crash.",
            capture_output=True,
            text=True,
            env=env,
            cwd=home / "cwd",
            start_new_session=True,  # as the harness runs agents: a stand-in may kill this group
            timeout=120,
        )
    finally:
        setup.close()
    seconds = time.monotonic() - start
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return Run(done.returncode, seconds, events, setup)


def test_shadow_answers_are_templated_recorded_and_described(
    claude_bin: str, scripted_model: ScriptedModel, plugin: Path, tmp_path: Path
) -> None:
    scripted_model.add(
        Rule(
            when_tool_result="service unavailable", reply=text("The tracker is down for closing.")
        ),
        Rule(when_tool_result="Created issue", reply=tool_use(FAIL, {"id": 4821})),
        Rule(when_tool_offered=CREATE, reply=tool_use(CREATE, GOOD_INPUT), times=1),
        Rule(
            when_prompt="file an issue",
            reply=tool_use("ToolSearch", {"query": f"select:{CREATE},{FAIL}"}),
            times=1,
        ),
    )
    run = run_claude(claude_bin, scripted_model, plugin, tmp_path)
    assert run.returncode == 0, run.events[-1]
    # The stand-ins are registered under the plugin's own names; the real servers never start.
    servers = {s["name"]: s["status"] for s in run.init["mcp_servers"]}
    assert servers == {"plugin:tracker-kit:tracker": "connected", "kb": "connected"}
    mcp_tools = sorted(t for t in run.init["tools"] if t.startswith("mcp__"))
    assert mcp_tools == [SEARCH, CREATE, FAIL]  # no tool without a mock file, none of wiki's
    assert not (tmp_path / "markers" / "tracker").exists()
    assert not (tmp_path / "markers" / "wiki").exists()
    # The deferred list names them; after ToolSearch the schema from _tools.json is sent.
    first = scripted_model.message_requests[0]
    assert CREATE in first["system"] and FAIL in first["system"]
    later = scripted_model.message_requests[1]["body"]["tools"]
    create = next(t for t in later if t["name"] == CREATE)
    assert create["description"].startswith("Create an issue in the tracker")
    assert create["input_schema"]["required"] == ["title"]
    # The templated answer came back to the model, then the error answer.
    results = run.tool_results()
    assert results[1]["content"][0]["text"] == (
        'Created issue #4821: Crash bug labels=["bug","p1"]\n{"id": 4821}'
    )
    assert results[2]["is_error"] is True
    assert "service unavailable (503)" in json.dumps(results[2]["content"])
    # Both calls are recorded, in order.
    outcome = collect_calls(run.setup)
    assert outcome.aborted is None
    assert [(c.tool, c.is_error) for c in outcome.calls or []] == [(CREATE, False), (FAIL, True)]
    assert (outcome.calls or [])[0].input == GOOD_INPUT
    assert outcome.totals.total == 2 and outcome.totals.errors == 1
    summary = mocks_to_json(outcome.summary(run.setup))
    assert {"server": "wiki", "kind": "shadow", "withheld": True, "tools": []} in summary["servers"]
    assert summary["warnings"] == [  # servers are listed by name, as the reference lists them
        "kb: no _tools.json entry for search — served with a permissive schema and no "
        "description; save the server's tools/list response as mocks/kb/_tools.json so the "
        "model sees the real tool",
        "tracker: no _tools.json entry for fail_op — served with a permissive schema and no "
        "description; save the server's tools/list response as mocks/tracker/_tools.json so the "
        "model sees the real tool",
    ]


@pytest.mark.parametrize("shared_host", [True, False], ids=["host", "direct"])
def test_an_expect_violation_aborts_the_run_at_once(
    claude_bin: str,
    scripted_model: ScriptedModel,
    plugin: Path,
    tmp_path: Path,
    shared_host: bool,
) -> None:
    scripted_model.add(
        # If the stand-in did not stop the run, the model would stall here for a minute.
        Rule(when_tool_result="violates", reply=delay(60) + text("carried on")),
        Rule(
            when_tool_offered=CREATE, reply=tool_use(CREATE, {**GOOD_INPUT, "priority": "urgent"})
        ),
        Rule(
            when_prompt="file an issue",
            reply=tool_use("ToolSearch", {"query": f"select:{CREATE}"}),
            times=1,
        ),
    )
    run = run_claude(claude_bin, scripted_model, plugin, tmp_path, shared_host=shared_host)
    outcome = collect_calls(run.setup)
    assert outcome.aborted == Abort(
        "tracker",
        "create_issue",
        'the model\'s call violates expect: priority = "urgent" is not one of [low, medium, high]',
    )
    assert outcome.calls == []
    assert run.returncode == -9  # the agent's process group was killed
    assert run.seconds < 30
    assert len(scripted_model.message_requests) == 2  # nothing reached the model after the call
    assert not any(e.get("type") == "result" for e in run.events)


def test_standalone_servers_serve_the_without_arm(
    claude_bin: str, scripted_model: ScriptedModel, plugin: Path, tmp_path: Path
) -> None:
    scripted_model.add(
        Rule(when_tool_result="Found 1 page", reply=text("The KB has it.")),
        Rule(when_tool_offered=SEARCH, reply=tool_use(SEARCH, {"q": "release"}), times=1),
        Rule(
            when_prompt="file an issue",
            reply=tool_use("ToolSearch", {"query": f"select:{SEARCH}"}),
            times=1,
        ),
    )
    run = run_claude(claude_bin, scripted_model, plugin, tmp_path, loads_plugin=False)
    assert run.returncode == 0
    assert [s["name"] for s in run.init["mcp_servers"]] == ["kb"]
    assert [t for t in run.init["tools"] if t.startswith("mcp__")] == [SEARCH]
    assert run.tool_results()[1]["content"][0]["text"] == "Found 1 page for release"
    outcome = collect_calls(run.setup)
    assert [(c.server, c.tool, c.output) for c in outcome.calls or []] == [
        ("kb", SEARCH, "Found 1 page for release")
    ]
    assert mocks_doc(run.setup)["servers"] == [
        {"server": "kb", "kind": "standalone", "tools": [{"tool": "search", "responder": "fixed"}]}
    ]


def test_mocks_off_starts_the_real_servers(
    claude_bin: str, scripted_model: ScriptedModel, plugin: Path, tmp_path: Path
) -> None:
    scripted_model.add(Rule(reply=text("Nothing to do.")))
    run = run_claude(claude_bin, scripted_model, plugin, tmp_path, mode="off")
    assert run.returncode == 0
    assert run.setup.claude_args() == []
    assert (tmp_path / "markers" / "tracker").exists()
    assert (tmp_path / "markers" / "wiki").exists()
    assert not [t for t in run.init["tools"] if t.startswith("mcp__")]
    assert collect_calls(run.setup).calls is None
