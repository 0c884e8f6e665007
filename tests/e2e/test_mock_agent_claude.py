"""``type: agent`` mocks end to end: the real ``claude`` binary calls a server a model plays.

The scripted model is both the agent's model and the judge playing the server (the anthropic
backend pointed at it). The first run asks the judge and records its answer; the recording is
adopted into ``mocks/.replay/``; the second run replays it and the judge is never asked.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.mocks import (
    MockJudge,
    MockOptions,
    MockSetup,
    collect_calls,
    prepare_mocks,
)
from pytest_plugin_evals.model import Case
from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.helpers import claude_argv, mocks_doc

pytest.importorskip("anthropic")

SEARCH = "mcp__kb__search"
ANSWER = "Release 1.3 shipped on May 2 with the new exporter."
SERVER_MD = """---
type: agent
tools: [search]
---

The team's knowledge base: release notes and how-to pages.
"""


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    root = tmp_path / "kit"
    for name, content in {
        "evals/mocks/kb/_server.md": SERVER_MD,
        "evals/notes/prompt.md": "Find the release notes.",
    }.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def script(model: ScriptedModel) -> None:
    model.add(
        Rule(when_prompt="Current call: search", reply=text(ANSWER)),  # the judge's turn
        Rule(when_tool_result="Release 1.3", reply=text("The notes say 1.3 shipped.")),
        Rule(when_tool_offered=SEARCH, reply=tool_use(SEARCH, {"q": "release"}), times=1),
        Rule(
            when_prompt="release notes",
            reply=tool_use("ToolSearch", {"query": f"select:{SEARCH}"}),
            times=1,
        ),
    )


def run_claude(
    claude_bin: str, model: ScriptedModel, suite: Path, out: Path
) -> tuple[int, list[dict[str, Any]], MockSetup]:
    case_dir = suite / "evals/notes"
    case = Case("notes", "x", "prose", case_dir / "prompt.md", case_dir, suite / "evals")
    setup = prepare_mocks(
        case,
        None,
        False,
        out / "run",
        MockOptions(
            judge=MockJudge(
                "anthropic", env=model.env(), recordings_dir=out / "results/mock-recordings"
            )
        ),
    )
    home = out / "home"
    (home / "cwd").mkdir(parents=True)
    argv = claude_argv(
        claude_bin,
        *setup.claude_args(),
        "--allowed-tools=" + ",".join(setup.allowed_tools),
    )
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), **model.env()}
    try:
        done = subprocess.run(
            argv,
            input="Please find the release notes.",
            capture_output=True,
            text=True,
            env={**env, **setup.environment()},  # the run's token, as the runner sets it
            cwd=home / "cwd",
            start_new_session=True,
            timeout=120,
        )
    finally:
        setup.close()
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, events, setup


def search_result(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(
        block
        for e in events
        if e.get("type") == "user"
        for block in e["message"]["content"]
        if isinstance(block, dict)
        and block.get("type") == "tool_result"
        and isinstance(block.get("content"), list)
        and any(c.get("type") == "text" for c in block["content"])
    )


def judge_calls(model: ScriptedModel) -> list[dict[str, Any]]:
    return [r for r in model.message_requests if "standing in for" in r["system"]]


def test_record_then_replay(claude_bin: str, suite: Path, tmp_path: Path) -> None:
    with ScriptedModel() as model:
        script(model)
        code, events, setup = run_claude(claude_bin, model, suite, tmp_path / "first")
        assert code == 0, events[-1:]
        (judged,) = judge_calls(model)
    assert judged["prompt"] == 'Current call: search\nArguments:\n{\n  "q": "release"\n}'
    assert judged["system"].startswith('You are standing in for the MCP server "kb"')
    assert search_result(events)["content"][0]["text"] == ANSWER
    first = collect_calls(setup)
    assert (first.totals.replay_hits, first.totals.replay_misses) == (0, 1)
    assert first.totals.cost_usd > 0
    assert mocks_doc(setup)["servers"] == [
        {"server": "kb", "kind": "standalone", "tools": [{"tool": "search", "responder": "agent"}]}
    ]
    recordings = tmp_path / "first/results/mock-recordings/kb"
    (recorded,) = recordings.glob("search-*.json")
    assert (recordings / "ADOPT.txt").is_file()
    assert json.loads(recorded.read_text(encoding="utf-8"))["output"] == ANSWER

    # Adopt the recording: the next run replays it and asks no model to play the server.
    replay = suite / "evals/mocks/.replay/kb"
    replay.mkdir(parents=True)
    shutil.copy(recorded, replay)
    with ScriptedModel() as model:
        script(model)
        code, events, setup = run_claude(claude_bin, model, suite, tmp_path / "second")
        assert code == 0, events[-1:]
        assert judge_calls(model) == []
        assert any(r["tool_result"] == ANSWER for r in model.message_requests)
    assert search_result(events)["content"][0]["text"] == ANSWER
    second = collect_calls(setup)
    assert (second.totals.replay_hits, second.totals.replay_misses) == (1, 0)
    assert second.totals.cost_usd == 0
    assert [(c.tool, c.output) for c in second.calls or []] == [(SEARCH, ANSWER)]
    assert not (tmp_path / "second/results/mock-recordings").exists()


def test_the_claude_cli_judge_plays_the_server(
    claude_bin: str, suite: Path, tmp_path: Path
) -> None:
    from pytest_plugin_evals.mocks.server import StandIn

    case_dir = suite / "evals/notes"
    case = Case("notes", "x", "prose", case_dir / "prompt.md", case_dir, suite / "evals")
    with ScriptedModel() as model:
        script(model)
        setup = prepare_mocks(
            case,
            None,
            False,
            tmp_path / "run",
            MockOptions(
                shared_host=False,
                judge=MockJudge(
                    "claude",
                    env={"PATH": os.environ.get("PATH", ""), **model.env()},
                    claude_bin=claude_bin,
                ),
            ),
        )
        spec = json.loads((tmp_path / "run/kb.spec.json").read_text(encoding="utf-8"))
        assert StandIn.from_spec(spec).answer("search", {"q": "release"}) == (ANSWER, False)
        (judged,) = judge_calls(model)
    # Claude Code adds its own lines around the system prompt it is given.
    assert 'You are standing in for the MCP server "kb"' in judged["system"]
    assert "strict, terse evaluation judge" not in judged["system"]
    assert collect_calls(setup).totals.cost_usd > 0
