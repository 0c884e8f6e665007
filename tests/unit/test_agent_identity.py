"""What names an agent in ``--eval-reuse``'s fingerprint (``agents.identity``): a change to the
agent or to where its model answers is a change of its identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_plugin_evals.agents import make_agent
from pytest_plugin_evals.agents.base import RunRequest
from pytest_plugin_evals.agents.command import CommandAgent
from pytest_plugin_evals.agents.identity import agent_identity, model_context
from pytest_plugin_evals.agents.python import PythonAgent
from pytest_plugin_evals.util.digests import file_digest


def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _answer(request: RunRequest) -> str:
    return "done"


def test_an_agent_cli_is_named_by_its_version_else_by_its_binary(tmp_path: Path) -> None:
    talks = _script(tmp_path / "claude", "echo '9.9.9 (Claude Code)'")
    found = agent_identity(make_agent("claude", claude_bin=str(talks), binaries={}))
    assert found["name"] == "claude" and found["version"] == "9.9.9 (Claude Code)"
    silent = _script(tmp_path / "silent", "exit 3")
    found = agent_identity(make_agent("claude", claude_bin=str(silent), binaries={}))
    assert found["version"] == file_digest(silent)


def test_a_command_agent_is_named_by_its_command_line_and_the_files_it_names(
    tmp_path: Path,
) -> None:
    program = _script(tmp_path / "agent.sh", "echo one")
    agent = CommandAgent((str(program), "--fast"))
    before = agent_identity(agent)
    assert before["argv"] == [str(program), "--fast"] and len(before["files"]) == 1
    _script(program, "echo two")
    assert agent_identity(agent)["files"] != before["files"]


def test_a_python_agent_is_named_by_its_target_and_its_module_source() -> None:
    agent = PythonAgent("tests.unit.test_agent_identity:_answer", _answer)
    found = agent_identity(agent)
    assert found["target"] == "tests.unit.test_agent_identity:_answer"
    assert found["source"] == file_digest(Path(__file__))


def test_the_model_context_is_the_endpoint_and_the_agents_own_model_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent("claude", claude_bin=str(_script(tmp_path / "claude", "")), binaries={})
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-test")
    monkeypatch.setenv("UNRELATED_MODEL", "other")
    found = model_context(agent)
    assert found["endpoints"] == {"ANTHROPIC_BASE_URL": "https://api.anthropic.com"}
    assert found["variables"].get("ANTHROPIC_MODEL") == "claude-test"
    assert "UNRELATED_MODEL" not in found["variables"]
    assert model_context(CommandAgent(("true",))) == {}
