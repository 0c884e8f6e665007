"""The real Claude Code binary against the scripted model, offline.

The binary is ``$EVAL_CLAUDE_BIN``, else ``claude`` on PATH. Without it these tests skip, except
under CI (``$CI`` set), where a missing binary is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from pytest_plugin_evals.testing import Rule, ScriptedModel, error, text, tool_use
from tests.helpers import claude_argv

TIMEOUT = 30


def run_claude(
    claude_bin: str, model: ScriptedModel, prompt: str, home: Path, *args: str
) -> tuple[int, list[dict[str, Any]]]:
    cwd = home / "cwd"
    cwd.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_"))}
    env.update(model.env(), HOME=str(home))
    cmd = claude_argv(claude_bin, *args, max_turns=3)
    done = subprocess.run(
        cmd,
        input=prompt,
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=TIMEOUT,
        check=False,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return done.returncode, events


def test_a_text_answer_arrives_in_the_result_event(
    claude_bin: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    scripted_model.add(Rule(when_prompt="capital", reply=text("Paris is the capital.")))
    code, events = run_claude(
        claude_bin, scripted_model, "What is the capital of France?", tmp_path
    )
    assert code == 0, events[-1:]
    assert events[0]["type"] == "system" and events[0]["subtype"] == "init"
    result = events[-1]
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False
    assert result["result"] == "Paris is the capital."
    assert result["total_cost_usd"] > 0
    (request,) = scripted_model.message_requests
    assert request["prompt"] == "What is the capital of France?"
    assert request["stream"] is True and request["rule"] == 0


def test_a_scripted_tool_call_round_trips_through_the_stream(
    claude_bin: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    notes = tmp_path / "cwd" / "notes.txt"
    notes.parent.mkdir(parents=True)
    notes.write_text("the launch code is 4711\n", encoding="utf-8")
    scripted_model.add(
        Rule(when_tool_result="launch code is 4711", reply=text("The code is 4711.")),
        Rule(
            when_prompt="notes",
            reply=text("Reading.") + tool_use("Read", {"file_path": str(notes)}),
        ),
    )
    code, events = run_claude(claude_bin, scripted_model, "What do my notes say?", tmp_path)
    assert code == 0, events[-1:]
    calls = [
        block
        for event in events
        if event["type"] == "assistant"
        for block in event["message"]["content"]
        if block["type"] == "tool_use"
    ]
    assert [(c["name"], c["input"]) for c in calls] == [("Read", {"file_path": str(notes)})]
    results = [
        block
        for event in events
        if event["type"] == "user"
        for block in event["message"]["content"]
        if block["type"] == "tool_result"
    ]
    assert results[0]["tool_use_id"] == calls[0]["id"]
    assert "launch code is 4711" in results[0]["content"]
    assert events[-1]["result"] == "The code is 4711."
    assert events[-1]["num_turns"] == 2
    assert [r["rule"] for r in scripted_model.message_requests] == [1, 0]


def test_a_rate_limit_ends_the_run_as_an_api_error(
    claude_bin: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    scripted_model.add(Rule(reply=error(429)))
    code, events = run_claude(claude_bin, scripted_model, "hi", tmp_path)
    assert code == 1
    result = events[-1]
    assert result["is_error"] is True and result["api_error_status"] == 429
    assert result["terminal_reason"] == "api_error"
    assert len(scripted_model.message_requests) == 1, "CLAUDE_CODE_MAX_RETRIES=0 from env()"


def make_plugin(root: Path) -> Path:
    plugin = root / "release-helper"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(
        '{"name": "release-helper", "version": "0.1.0"}', encoding="utf-8"
    )
    skill = plugin / "skills" / "next-version"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: next-version\ndescription: Work out the next version.\n---\n"
        "Bump the minor part of the last released version.\n",
        encoding="utf-8",
    )
    return plugin


def test_a_plugin_skill_call_is_scripted_with_and_without_the_plugin(
    claude_bin: str, scripted_model: ScriptedModel, tmp_path: Path
) -> None:
    plugin = make_plugin(tmp_path)
    scripted_model.add(
        Rule(when_tool_result="Launching skill: release-helper:next-version", reply=text("1.3.0")),
        Rule(when_tool_result="Unknown skill", reply=text("no such skill")),
        Rule(
            when_prompt="version", reply=tool_use("Skill", {"skill": "release-helper:next-version"})
        ),
    )
    prompt = "What is the next version?"
    code, events = run_claude(
        claude_bin, scripted_model, prompt, tmp_path / "with", "--plugin-dir", str(plugin)
    )
    assert code == 0, events[-1:]
    init = events[0]
    assert "release-helper:next-version" in init["skills"]
    (loaded,) = [p for p in init["plugins"] if p["name"] == "release-helper"]
    assert loaded["version"] == "0.1.0" and loaded["path"] == str(plugin)
    assert events[-1]["result"] == "1.3.0"
    first = scripted_model.message_requests[0]
    assert "- release-helper:next-version: Work out the next version." in first["system"]

    code, events = run_claude(claude_bin, scripted_model, prompt, tmp_path / "without")
    assert code == 0, events[-1:]
    assert events[-1]["result"] == "no such skill"
    assert "release-helper" not in scripted_model.message_requests[-2]["system"]
