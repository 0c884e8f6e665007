"""The opencode adapter's parts that need no real binary: the stream, the configuration, the
plugin folder, and (with a stand-in executable) the trust check and the run's errors."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_plugin_evals.agents import AgentError
from pytest_plugin_evals.agents.mcp import McpPlan, McpServer, plugin_prefix
from pytest_plugin_evals.agents.opencode.agent import OpencodeAgent
from pytest_plugin_evals.agents.opencode.config import (
    agent_permission,
    mcp_block,
    mcp_tool_name,
    model_id,
    permission_rules,
    run_config,
)
from pytest_plugin_evals.agents.opencode.events import parse_events
from pytest_plugin_evals.agents.opencode.plugin import (
    HOOKS_NOTE,
    ClaudeAgent,
    agent_markdown,
    plugin_config_dir,
    read_agent,
)
from pytest_plugin_evals.agents.permissions import ToolAccess


def event(kind: str, **part: object) -> str:
    return json.dumps({"type": kind, "timestamp": 1, "sessionID": "ses_1", "part": part})


STREAM = [
    event("step_start", messageID="m1"),
    event("text", messageID="m1", text="Let me look."),
    event(
        "tool_use",
        tool="bash",
        callID="c1",
        state={"status": "completed", "input": {"command": "ls"}, "output": "a.txt\n"},
    ),
    event(
        "tool_use",
        tool="skill",
        callID="c2",
        state={"status": "error", "input": {"name": "next-version"}, "error": "not found"},
    ),
    event("tool_use", tool="my_mcp_tool", callID="c3", state={"status": "completed"}),
    event("step_finish", tokens={"input": 1200, "output": 40, "reasoning": 5}, cost=0.0042),
    "not json",
    event("step_start", messageID="m2"),
    event("text", messageID="m2", text="The answer "),
    event("text", messageID="m2", text="is 1.4.1."),
    event("step_finish", tokens={"input": 1300, "output": 10, "reasoning": 0}, cost=0.004),
]


def test_the_stream_becomes_the_common_transcript() -> None:
    transcript, summary = parse_events(
        STREAM, qualify_skill={"next-version": "release-helper:next-version"}
    )
    assert transcript.final_message == "The answer is 1.4.1."
    assert transcript.turns == 2
    assert (transcript.input_tokens, transcript.output_tokens) == (2500, 55)
    assert transcript.cost_usd == pytest.approx(0.0082)
    bash, skill, other = transcript.tool_calls
    assert (bash.name, bash.original_name, bash.output, bash.is_error) == (
        "Bash",
        "bash",
        "a.txt\n",
        False,
    )
    assert (skill.name, skill.original_name, skill.is_error, skill.output) == (
        "Skill",
        "skill",
        True,
        "not found",
    )
    assert skill.input == {"name": "next-version", "skill": "release-helper:next-version"}
    assert (other.name, other.original_name) == ("my_mcp_tool", None)
    assert summary.error_name is None and summary.skills_called == ["next-version"]


def test_a_stream_without_steps_reports_no_usage() -> None:
    transcript, summary = parse_events([])
    assert transcript.input_tokens is None and transcript.output_tokens is None
    assert transcript.cost_usd == 0.0 and summary.events == 0


def test_an_api_error_event_keeps_its_status_and_retry_after() -> None:
    line = json.dumps(
        {
            "type": "error",
            "error": {
                "name": "APIError",
                "data": {
                    "message": "fake 429 rate_limit_error",
                    "statusCode": 429,
                    "responseHeaders": {"retry-after": "7"},
                },
            },
        }
    )
    _, summary = parse_events([line])
    assert (summary.error_name, summary.error_status, summary.retry_after) == (
        "APIError",
        429,
        7.0,
    )
    assert summary.error_message == "fake 429 rate_limit_error"


def test_permissions_deny_everything_not_granted(tmp_path: Path) -> None:
    rules, unmapped = permission_rules(
        ["Read(//x/**)", "Skill", "Edit(//x/home/**)", "Bash(git:*)", "Bash(npm test *)", "Foo"],
        external_allowed=[tmp_path / "skills"],
    )
    assert rules["*"] == "deny"
    assert rules["read"] == rules["skill"] == rules["edit"] == "allow"
    assert "webfetch" not in rules and "task" not in rules
    assert rules["bash"] == {"*": "deny", "git": "allow", "git *": "allow", "npm test *": "allow"}
    assert rules["external_directory"] == {"*": "deny", f"{tmp_path}/skills/*": "allow"}
    assert unmapped == ["Foo"]
    whole, _ = permission_rules(["Bash", "Bash(ls)"])
    assert whole["bash"] == "allow"


def test_the_model_and_the_endpoint() -> None:
    assert model_id(None) == "anthropic/claude-sonnet-4-5"
    assert model_id("sonnet") == "anthropic/claude-sonnet-4-5"
    assert model_id("claude-opus-4-1") == "anthropic/claude-opus-4-1"
    assert model_id("openrouter/x/y") == "openrouter/x/y"
    config = run_config(model=None, permission={}, env={})
    assert config["autoupdate"] is False and config["share"] == "disabled"
    assert "provider" not in config and config["small_model"] == config["model"]
    config = run_config(
        model=None, permission={"*": "deny"}, env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}
    )
    assert config["provider"] == {"anthropic": {"options": {"baseURL": "http://127.0.0.1:9/v1"}}}
    assert "agent" not in config
    limited = run_config(model=None, permission={}, env={}, max_turns=3)
    assert limited["agent"] == {"build": {"steps": 3}}


def test_the_plugin_becomes_a_config_folder(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    (plugin / "skills" / "next").mkdir(parents=True)
    (plugin / "skills" / "next" / "SKILL.md").write_text("---\nname: next\n---\nbody\n")
    (plugin / "commands").mkdir()
    (plugin / "commands" / "bump.md").write_text("Bump.\n")
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text("{}")
    (plugin / "agents").mkdir()
    (plugin / "agents" / "review.md").write_text(TRIAGER)
    made = plugin_config_dir(plugin, tmp_path / "run" / "opencode-plugin")
    folder = made.folder
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.md")) == [
        "commands/bump.md",
        "skills/next/SKILL.md",
    ]
    assert not (folder / "hooks").exists()
    assert made.notes == (HOOKS_NOTE,)
    # With the run's permission, the agents come too, named as Claude Code names them.
    made = plugin_config_dir(
        plugin,
        tmp_path / "run2",
        run_permission={"*": "deny", "read": "allow", "grep": "allow", "bash": "allow"},
        run_model="anthropic/claude-sonnet-4-5",
    )
    assert made.agents == ("plugin:triager",)
    text = (made.folder / "agents" / "plugin:triager.md").read_text(encoding="utf-8")
    head, body = text.split("---\n")[1:]
    front = yaml.safe_load(head)
    assert front == {
        "description": "Files bugs: in the tracker.",
        "mode": "subagent",
        "model": "anthropic/claude-haiku-4-5",
        "permission": {"grep": "deny", "bash": "deny", "task": "deny"},
    }
    assert body == "You triage bugs.\n"


TRIAGER = """---
name: triager
description: "Files bugs: in the tracker."
tools: Read, Bash(git log:*, git show:*)
disallowedTools: Bash
model: haiku
---
You triage bugs.
"""


def test_a_claude_agent_is_read() -> None:
    agent = read_agent_text(TRIAGER)
    assert agent.name == "triager" and agent.model == "haiku"
    assert agent.tools == ("Read", "Bash(git log:*, git show:*)")
    assert agent.disallowed == ("Bash",)
    bare = read_agent_text("---\ntools: [Read, Grep]\nmodel: inherit\n---\nHi\n")
    assert (bare.name, bare.description, bare.model) == ("agent", "agent", None)
    assert bare.tools == ("Read", "Grep") and bare.prompt == "Hi"
    assert read_agent_text("No front matter.\n").tools is None


def read_agent_text(text: str) -> ClaudeAgent:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "agent.md"
        path.write_text(text, encoding="utf-8")
        return read_agent(path)


def test_an_agent_model_applies_only_to_an_anthropic_run() -> None:
    agent = read_agent_text("---\nname: a\nmodel: opus\n---\nHi\n")
    text, notes = agent_markdown(agent, run_permission={"*": "deny"}, run_model="openai/gpt-5")
    assert "model:" not in text
    assert notes == ["agent a: model opus not applied (the run's model is openai/gpt-5)"]
    text, notes = agent_markdown(
        agent, run_permission={"*": "deny"}, run_model="anthropic/claude-sonnet-4-5"
    )
    assert "model: anthropic/claude-opus-4-5" in text and notes == []


def server(name: str, config: dict[str, Any], *, stand_in: bool) -> McpServer:
    return McpServer(name, config, plugin_prefix("tracker-kit", name), stand_in=stand_in)


def tracker_plan() -> McpPlan:
    servers = (
        server("t", {"command": "/py", "args": ["stub.py"], "env": {"A": "1"}}, stand_in=True),
        server(
            "t.b", {"type": "http", "url": "https://x/mcp", "headers": {"H": "v"}}, stand_in=False
        ),
        server("empty", {}, stand_in=False),
    )
    return McpPlan(servers=servers, prefixes={s.name: s.prefix for s in servers})


def test_the_mcp_block_and_its_permissions() -> None:
    plan = tracker_plan()
    create = "mcp__plugin_tracker-kit_t_b__create"
    access = ToolAccess(
        case_tools=[create, "mcp__plugin_tracker-kit_t_b__drop"],
        grants=[create],
        disallowed=["mcp__plugin_tracker-kit_t__purge"],
    )
    block, rules, notes = mcp_block(plan, access)
    assert block == {
        "t": {"type": "local", "command": ["/py", "stub.py"], "enabled": True,
              "environment": {"A": "1"}},
        "t_b": {"type": "remote", "url": "https://x/mcp", "enabled": True, "headers": {"H": "v"}},
    }  # fmt: skip
    # Shorter names first, a real server's wildcard denied before its granted tools, so the
    # stand-in's ``t_*`` does not open ``t_b``'s tools; a disallowed tool goes last.
    assert list(rules.items()) == [
        ("t_*", "allow"),
        ("t_b_*", "deny"),
        ("t_b_create", "allow"),
        ("t_purge", "deny"),
    ]
    assert notes == ["MCP server empty: no command or url, left out"]


def test_opencode_mcp_tools_get_claude_code_names() -> None:
    plan = tracker_plan()
    assert mcp_tool_name(plan, "t_b_create") == "mcp__plugin_tracker-kit_t_b__create"
    assert mcp_tool_name(plan, "t_create-x") == "mcp__plugin_tracker-kit_t__create-x"
    assert mcp_tool_name(plan, "bash") is None
    names = {"t_b_create": "mcp__plugin_tracker-kit_t_b__create"}
    transcript, _ = parse_events(
        [event("tool_use", tool="t_b_create", callID="c", state={"status": "completed"})],
        mcp_name=names.get,
    )
    (call,) = transcript.tool_calls
    assert (call.name, call.original_name) == ("mcp__plugin_tracker-kit_t_b__create", "t_b_create")


def test_an_agent_never_gets_more_than_the_run() -> None:
    plan = tracker_plan()
    run = {
        "*": "deny",
        "read": "allow",
        "skill": "allow",
        "bash": {"*": "deny", "git *": "allow"},
        "t_*": "allow",
        "t_b_*": "deny",
        "t_b_create": "allow",
        "external_directory": {"*": "deny"},
    }
    # No tools listed: all the run allows, but no subagents of its own.
    assert agent_permission(run, None, plan) == {"task": "deny"}
    # Asking for webfetch, which the run does not allow, allows nothing more.
    listed = ["Read", "Bash", "WebFetch", "mcp__plugin_tracker-kit_t__create"]
    assert agent_permission(run, listed, plan) == {
        "skill": "deny",
        "t_*": "deny",
        "t_create": "allow",  # within the run's ``t_*``
        "t_b_create": "deny",
        "task": "deny",
    }
    whole = agent_permission(run, ["mcp__plugin_tracker-kit_t_b__*"], plan, ["Skill"])
    assert whole == {
        "read": "deny",
        "skill": "deny",
        "bash": "deny",
        "t_*": "deny",
        "task": "deny",
    }


def test_a_missing_binary_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(AgentError, match="the opencode binary was not found on PATH"):
        OpencodeAgent.find_binary(None)
    with pytest.raises(AgentError, match=r"--eval-opencode-bin: .*nope is not an executable"):
        OpencodeAgent.find_binary(str(tmp_path / "nope"))


#: A stand-in for ``opencode``: ``debug skill`` lists $EVAL_FAKE_SKILLS, ``run`` prints
#: $EVAL_FAKE_EVENTS (and records what it got in its working directory).
FAKE = """\
import json, os, sys
if sys.argv[1:3] == ["debug", "skill"]:
    names = os.environ.get("EVAL_FAKE_SKILLS", "").split(",")
    if os.environ.get("EVAL_FAKE_LISTINGS"):  # list the config folder's skills, and say so
        with open(os.environ["EVAL_FAKE_LISTINGS"], "a") as fh:
            fh.write(os.environ.get("OPENCODE_CONFIG_DIR", "-") + "\\n")
        folder = os.path.join(os.environ.get("OPENCODE_CONFIG_DIR", "/nowhere"), "skills")
        names = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    print(json.dumps([{"name": n} for n in names if n]))
    sys.exit(0)
with open("fake-env.json", "w") as fh:
    json.dump({"argv": sys.argv[1:], "env": dict(os.environ), "stdin": sys.stdin.read()}, fh)
sys.stdout.write(os.environ.get("EVAL_FAKE_EVENTS", ""))
sys.exit(int(os.environ.get("EVAL_FAKE_EXIT", "0")))
"""


@pytest.fixture
def fake_opencode(pytester: pytest.Pytester) -> str:
    script = pytester.path / "fake_opencode.py"
    script.write_text(FAKE, encoding="utf-8")
    binary = pytester.path / "opencode"
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n', encoding="utf-8")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    pytester.makefile(
        ".json",
        **{".claude-plugin/plugin": json.dumps({"name": "release-helper", "version": "1.0.0"})},
    )
    pytester.makefile(
        ".md", **{"skills/next-version/SKILL": "---\nname: next-version\ndescription: d\n---\nb\n"}
    )
    pytester.makefile(
        ".md",
        **{
            "evals/next/prompt": "---\nruns: 1\n---\nWhich version next?\n",
            "evals/next/graders/answer": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
        },
    )
    return str(binary)


def run_evals(
    pytester: pytest.Pytester, binary: str, plugin_args: list[str], *args: str
) -> tuple[pytest.RunResult, dict[str, Any]]:
    # The stand-in is a script in the project: unconfined, or bubblewrap would hide it (the
    # confinement itself is tested with the real binary, in tests/e2e).
    result = pytester.runpytest(
        "evals", *plugin_args, "--eval-agent", "opencode", f"--eval-opencode-bin={binary}",
        "--eval-json", "out.json", "--eval-keep-temp", "--eval-unconfined-shell", *args,
    )  # fmt: skip
    out = pytester.path / "out.json"
    return result, json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}


ANSWER = event("step_start", messageID="m") + "\n" + event("text", messageID="m", text="1.4.1")


def test_the_with_arm_must_see_the_plugin_skills(
    pytester: pytest.Pytester,
    fake_opencode: str,
    plugin_args: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVAL_FAKE_SKILLS", "customize-opencode")
    monkeypatch.setenv("EVAL_FAKE_EVENTS", ANSWER)
    result, doc = run_evals(pytester, fake_opencode, plugin_args)
    result.assert_outcomes(passed=1, errors=1)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["infraError"] == "plugin_load"
    assert with_run["error"] == "plugin release-helper was loaded without its skill " + (
        "release-helper:next-version"
    )
    assert without_run["score"] == 1.0


def test_the_without_arm_must_not_see_them(
    pytester: pytest.Pytester,
    fake_opencode: str,
    plugin_args: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVAL_FAKE_SKILLS", "next-version")
    monkeypatch.setenv("EVAL_FAKE_EVENTS", ANSWER)
    monkeypatch.setenv("MY_SECRET_TOKEN", "s3cr3t")
    result, doc = run_evals(pytester, fake_opencode, plugin_args)
    result.assert_outcomes(passed=1, errors=1)
    (case,) = doc["cases"]
    with_run, without_run = case["arms"]["with"][0], case["arms"]["without"][0]
    assert with_run["score"] == 1.0
    assert without_run["infraError"] == "plugin_load"
    assert "loaded in the without arm: skill next-version" in without_run["error"]
    # What the with arm's opencode got: the prompt on stdin, its own folders, no secret.
    kept = Path(with_run["tracePath"]).parent / "files" / "fake-env.json"
    seen = json.loads(kept.read_text(encoding="utf-8"))
    assert seen["stdin"].strip() == "Which version next?"
    assert seen["argv"][:3] == ["run", "--format", "json"] and "--title" in seen["argv"]
    env = seen["env"]
    assert "MY_SECRET_TOKEN" not in env
    assert env["OPENCODE_DISABLE_CLAUDE_CODE_SKILLS"] == "1"
    assert env["OPENCODE_DISABLE_AUTOUPDATE"] == "1"
    folder = Path(env["OPENCODE_CONFIG_DIR"])
    assert folder.is_relative_to(Path(env["HOME"]).parent)
    config = json.loads(env["OPENCODE_CONFIG_CONTENT"])
    assert config["permission"]["*"] == "deny"
    assert config["permission"]["external_directory"]["*"] == "deny"


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limit"), (401, "auth"), (529, "overloaded")]
)
def test_an_api_error_is_an_infrastructure_error(
    pytester: pytest.Pytester,
    fake_opencode: str,
    monkeypatch: pytest.MonkeyPatch,
    status: int,
    kind: str,
) -> None:
    error = {"name": "APIError", "data": {"message": f"fake {status}", "statusCode": status}}
    monkeypatch.setenv("EVAL_FAKE_SKILLS", "next-version")
    monkeypatch.setenv("EVAL_FAKE_EVENTS", json.dumps({"type": "error", "error": error}) + "\n")
    monkeypatch.setenv("EVAL_FAKE_EXIT", "1")
    result, doc = run_evals(
        pytester, fake_opencode, ["-n0", "-p", "no:cacheprovider"], "--eval-ablation", "none",
        "--eval-rate-limit-retries", "0",
    )  # fmt: skip
    result.assert_outcomes(errors=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["infraError"] == kind
    assert run["error"] == f"exit 1: fake {status}"


def test_a_binary_that_prints_nothing_did_not_start(
    pytester: pytest.Pytester, fake_opencode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVAL_FAKE_SKILLS", "next-version")
    monkeypatch.setenv("EVAL_FAKE_EXIT", "3")
    result, doc = run_evals(
        pytester, fake_opencode, ["-n0", "-p", "no:cacheprovider"], "--eval-ablation", "none"
    )
    result.assert_outcomes(errors=1)
    (run,) = doc["cases"][0]["arms"]["with"]
    assert run["infraError"] == "agent_start"
    assert run["error"].startswith("opencode exited 3 without starting the session")
    assert os.sep not in run["error"].split(":")[0]


def test_env_references_become_opencodes_own() -> None:
    from pytest_plugin_evals.agents.mcp import McpServer
    from pytest_plugin_evals.agents.opencode.config import mcp_entry

    local = McpServer(
        "tracker",
        {"command": "${TOOLS}/serve", "args": ["--token", "${TRACKER_TOKEN}", "$HOME"],
         "env": {"TOKEN": "${TRACKER_TOKEN}"}},
        "mcp__t__", stand_in=False,
    )  # fmt: skip
    assert mcp_entry(local) == {
        "type": "local",
        "command": ["{env:TOOLS}/serve", "--token", "{env:TRACKER_TOKEN}", "$HOME"],
        "enabled": True,
        "environment": {"TOKEN": "{env:TRACKER_TOKEN}"},
    }
    remote = McpServer(
        "docs", {"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${KEY}"}},
        "mcp__d__", stand_in=False,
    )  # fmt: skip
    assert mcp_entry(remote) == {
        "type": "remote",
        "url": "https://{env:HOST}/mcp",
        "enabled": True,
        "headers": {"Authorization": "Bearer {env:KEY}"},
    }


def test_the_skills_are_listed_once_per_process_and_arm(
    pytester: pytest.Pytester,
    fake_opencode: str,
    plugin_args: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``opencode debug skill`` costs seconds: every run of an arm gets the same translated
    skills, so each process lists them once per arm; a changed skill is listed again."""
    listings = pytester.path / "listings.txt"
    monkeypatch.setenv("EVAL_FAKE_LISTINGS", str(listings))
    monkeypatch.setenv("EVAL_FAKE_EVENTS", ANSWER)
    prompt = pytester.path / "evals" / "next" / "prompt.md"
    # Three runs: one more than the processes, so a listing per run could not pass for one
    # per process.
    prompt.write_text(prompt.read_text().replace("runs: 1", "runs: 3"), encoding="utf-8")
    result, _ = run_evals(pytester, fake_opencode, plugin_args, "--eval-threshold", "0")
    result.assert_outcomes(passed=6)
    lines = listings.read_text(encoding="utf-8").splitlines()
    processes = 1 if "-n0" in plugin_args else 2
    with_arm = [line for line in lines if line != "-"]
    assert 1 <= len(with_arm) <= processes and 1 <= lines.count("-") <= processes, lines
    if processes == 1:  # the same process: the cache holds across sessions
        skill = pytester.path / "skills" / "next-version" / "SKILL.md"
        skill.write_text(skill.read_text().replace("description: d", "description: e"))
        result, _ = run_evals(pytester, fake_opencode, plugin_args, "--eval-threshold", "0")
        result.assert_outcomes(passed=6)
        again = listings.read_text(encoding="utf-8").splitlines()[len(lines) :]
        assert len(again) == 1 and again[0] != "-", again  # the with arm's, once
