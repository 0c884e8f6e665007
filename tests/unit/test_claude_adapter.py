"""The claude adapter against a stand-in binary: its command line, its settings, its verdicts on
how a run ended. (The real binary is exercised in tests/e2e.)"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.agents.base import AgentError, RunRequest, infra_kind
from pytest_plugin_evals.agents.claude.agent import ClaudeAgent
from pytest_plugin_evals.agents.cli import UNCONFINED_NOTE
from pytest_plugin_evals.model import Arm, Case
from pytest_plugin_evals.sandbox import Sandbox

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX stand-in script")

#: Records what it was given, then prints the scripted stream-json lines.
FAKE = f"""#!{sys.executable}
import json, os, sys
scenario = json.loads(os.environ["FAKE_SCENARIO"])
log = {{"argv": sys.argv[1:], "stdin": sys.stdin.read(), "cwd": os.getcwd(),
        "settings": json.load(open(os.path.join(os.environ["CLAUDE_CONFIG_DIR"],
                                                "settings.json")))}}
with open(os.environ["FAKE_LOG"], "w") as fh:
    json.dump(log, fh)
for line in scenario.get("lines", []):
    print(line if isinstance(line, str) else json.dumps(line))
sys.stderr.write(scenario.get("stderr", ""))
sys.exit(scenario.get("exit", 0))
"""

PLUGIN = "release-helper"


def init(plugin: bool = True, skills: tuple[str, ...] = ("next-version",)) -> dict[str, Any]:
    names = [f"{PLUGIN}:{s}" for s in skills] if plugin else []
    return {
        "type": "system",
        "subtype": "init",
        "plugins": ([{"name": PLUGIN, "path": "/p"}] if plugin else [])
        + [{"name": "cc-plugin-privacy", "path": "builtin"}],
        "skills": [*names, "debug"],
        "slash_commands": [*names, f"{PLUGIN}:ship" if plugin else "debug"],
    }


def say(words: str) -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {"id": "msg_1", "content": [{"type": "text", "text": words}]},
        "parent_tool_use_id": None,
    }


def result(**fields: Any) -> dict[str, Any]:
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 1,
        "result": "done",
        "total_cost_usd": 0.0056,
        "usage": {"input_tokens": 1200, "output_tokens": 40},
        **fields,
    }


class Setup:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.plugin = tmp_path / "plugin"
        manifest = self.plugin / ".claude-plugin" / "plugin.json"
        manifest.parent.mkdir(parents=True)
        manifest.write_text(json.dumps({"name": PLUGIN}), encoding="utf-8")
        skill = self.plugin / "skills" / "next-version" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        skill.write_text("---\nname: next-version\n---\nBump.\n", encoding="utf-8")
        command = self.plugin / "commands" / "ship.md"
        command.parent.mkdir(parents=True)
        command.write_text("Ship it.\n", encoding="utf-8")
        self.case_dir = self.plugin / "evals" / "next"
        self.case_dir.mkdir(parents=True)
        self.binary = tmp_path / "fake-claude"
        self.binary.write_text(FAKE, encoding="utf-8")
        self.binary.chmod(self.binary.stat().st_mode | stat.S_IXUSR)
        self.log = tmp_path / "log.json"
        self.runs = 0

    def case(self, **fields: Any) -> Case:
        return Case(
            "next", "What next?", "case_yaml", self.case_dir / "case.yaml", self.case_dir,
            self.plugin / "evals", **fields,
        )  # fmt: skip

    def run(
        self,
        lines: list[Any],
        *,
        arm: Arm = "with",
        case: Case | None = None,
        exit: int = 0,
        stderr: str = "",
        agent: ClaudeAgent | None = None,
        model: str | None = None,
    ) -> tuple[Any, dict[str, Any], Sandbox]:
        self.runs += 1
        box = Sandbox.create(self.tmp_path / f"run{self.runs}")
        case = case or self.case()
        scenario = {"lines": lines, "exit": exit, "stderr": stderr}
        env = box.environment({"PATH": os.environ.get("PATH", "")})
        env.update({"FAKE_SCENARIO": json.dumps(scenario), "FAKE_LOG": str(self.log)})
        request = RunRequest(
            case=case,
            arm=arm,
            run=1,
            prompt=case.prompt,
            sandbox=box,
            plugin_dir=self.plugin.resolve() if arm != "without" else None,
            model=model,
            max_turns=7,
            timeout_seconds=30,
            allowed_tools=case.allowed_tools,
            env=env,
            # The stand-in logs what it was given outside its run: no sandbox around it
            # (the sandbox itself is tested in test_confine.py).
            unconfined=True,
        )
        transcript = (agent or ClaudeAgent(str(self.binary))).run(request)
        transcript.notes = [n for n in transcript.notes if n != UNCONFINED_NOTE]
        log = json.loads(self.log.read_text("utf-8")) if self.log.exists() else {}
        self.log.unlink(missing_ok=True)
        return transcript, log, box


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def test_the_command_line(setup: Setup) -> None:
    case = setup.case(allowed_tools=("Skill", "Write"), append_system_prompt="Be brief.")
    agent = ClaudeAgent(str(setup.binary), grants=("Write",), disallow=("WebSearch",))
    transcript, log, box = setup.run(
        [init(), say("done"), result()], case=case, agent=agent, model="sonnet"
    )
    argv = log["argv"]
    assert argv[:11] == [
        "-p", "--output-format", "stream-json", "--verbose", "--max-turns", "7",
        "--permission-mode", "dontAsk", "--setting-sources", "user", "--plugin-dir",
    ]  # fmt: skip
    assert argv[11] == str(setup.plugin.resolve())
    assert "--model=sonnet" in argv
    allowed = next(a for a in argv if a.startswith("--allowed-tools="))
    assert allowed.split("=", 1)[1].split(",")[-5:] == [
        "Skill", f"Edit(/{box.home}/**)", f"Write(/{box.home}/**)", f"Edit(/{box.tmp}/**)",
        f"Write(/{box.tmp}/**)",
    ]  # fmt: skip
    assert f"Read(/{box.home}/**)" in allowed
    disallowed = next(a for a in argv if a.startswith("--disallowed-tools="))
    assert "WebSearch" in disallowed and "Write" not in disallowed.split("=", 1)[1].split(",")
    assert "--append-system-prompt=Be brief." in argv
    assert not any(a.startswith("--resume") for a in argv)
    assert log["stdin"] == "What next?"
    assert Path(log["cwd"]) == box.cwd
    assert transcript.error is None and transcript.infra_error is None
    assert transcript.final_message == "done"
    assert transcript.trace_path == box.trace_file
    assert transcript.notes == []


def test_the_without_arm_loads_no_plugin_and_still_protects_it(setup: Setup) -> None:
    transcript, log, box = setup.run([init(plugin=False), say("hi"), result()], arm="without")
    assert "--plugin-dir" not in log["argv"]
    deny = log["settings"]["permissions"]["deny"]
    plugin = setup.plugin.resolve()
    assert f"Edit(/{plugin}/**)" in deny and f"Write(/{plugin}/**)" in deny
    assert f"Read(/{plugin / 'evals'}/**)" in deny
    assert f"Read(/{box.config}/**)" in deny and f"Read(/{box.out}/**)" in deny
    assert transcript.infra_error is None


def test_add_dirs_are_announced_and_a_missing_one_is_noted(setup: Setup) -> None:
    (setup.case_dir / "fixtures").mkdir()
    (setup.case_dir / "fixtures" / "data.txt").write_text("42", encoding="utf-8")
    case = setup.case(add_dirs=("fixtures", "nope"))
    transcript, log, box = setup.run([init(), say("ok"), result()], case=case)
    copy = box.root / "context" / "fixtures"
    assert (copy / "data.txt").read_text(encoding="utf-8") == "42"
    prompt = next(a for a in log["argv"] if a.startswith("--append-system-prompt="))
    assert prompt == f"--append-system-prompt=Reference folders you may read (read-only): {copy}"
    assert f"Edit(/{copy}/**)" in log["settings"]["permissions"]["deny"]
    assert transcript.notes == [
        "add_dirs: nope is not a folder in the case directory (not given to the agent)"
    ]


def test_history_is_resumed_from_a_copy(setup: Setup) -> None:
    (setup.case_dir / "history.jsonl").write_text('{"type":"user"}\n', encoding="utf-8")
    _, log, box = setup.run(
        [init(), say("ok"), result()], case=setup.case(history_file="history.jsonl")
    )
    at = log["argv"].index("--resume")
    assert log["argv"][at + 1] == str(box.config / "history.jsonl")


def test_a_missing_history_file_is_one_clear_error(setup: Setup) -> None:
    transcript, log, _ = setup.run([init()], case=setup.case(history_file="gone.jsonl"))
    assert log == {}  # the binary was not started
    assert transcript.infra_error == "harness"
    assert transcript.error == f"history_file gone.jsonl is not a file in {setup.case_dir}"


def test_a_tool_that_is_not_granted_is_noted(setup: Setup) -> None:
    transcript, _, _ = setup.run(
        [init(), say("ok"), result()], case=setup.case(allowed_tools=("Skill", "Write"))
    )
    assert transcript.notes == ["not granted (add --eval-allow-tools): Write"]


@pytest.mark.parametrize(
    ("lines", "arm", "problem"),
    [
        ([init(plugin=False), say("x"), result()], "with", "plugin release-helper was not loaded"),
        (
            [init(skills=()), say("x"), result()],
            "with",
            "plugin release-helper was loaded without its skill release-helper:next-version",
        ),
        ([init(), say("x"), result()], "without", "plugin release-helper was loaded in the "
         "without arm"),
    ],
)  # fmt: skip
def test_trust_checks(setup: Setup, lines: list[Any], arm: Arm, problem: str) -> None:
    transcript, _, _ = setup.run(lines, arm=arm)
    assert transcript.infra_error == "plugin_load"
    assert transcript.error == problem


def test_a_run_in_which_the_model_never_answered(setup: Setup) -> None:
    transcript, _, _ = setup.run([init(), result(result="")])
    assert transcript.infra_error == "no_answer"
    assert transcript.error == "the model never answered"


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limit"), (529, "overloaded"), (401, "auth"), (None, "api")]
)
def test_api_errors(setup: Setup, status: int | None, kind: str) -> None:
    text = f"API Error: {status}"
    synthetic = say(text)
    synthetic["message"]["model"] = "<synthetic>"
    synthetic.update({"is_api_error_message": True, "api_error_status": status})
    transcript, _, _ = setup.run(
        [init(), synthetic, result(is_error=True, result=text, terminal_reason="api_error",
                                   api_error_status=status, total_cost_usd=0)],
        exit=1,
    )  # fmt: skip
    assert transcript.infra_error == kind
    assert transcript.error == f"exit 1: {text}"
    assert infra_kind(status) == kind


def test_max_turns_is_a_run_error_graded_on_what_it_produced(setup: Setup) -> None:
    transcript, _, _ = setup.run(
        [init(), say("step two"),
         {"type": "result", "subtype": "error_max_turns", "is_error": True, "num_turns": 3,
          "errors": ["Reached maximum number of turns (2)"], "total_cost_usd": 0.0112}],
        exit=1,
    )  # fmt: skip
    assert transcript.infra_error is None
    assert transcript.error == "exit 1: Reached maximum number of turns (2)"
    assert transcript.final_message == "step two"
    assert transcript.turns == 3


def test_a_binary_that_prints_no_stream_is_a_start_error(setup: Setup) -> None:
    transcript, _, _ = setup.run(
        ["not json"], exit=1, stderr="Error: something\nError: unknown option '--bogus'\n"
    )
    assert transcript.infra_error == "agent_start"
    assert transcript.error == (
        "claude exited 1 without finishing the run: Error: something "
        "Error: unknown option '--bogus'"
    )


def test_a_binary_that_cannot_start(setup: Setup, tmp_path: Path) -> None:
    missing = tmp_path / "not-executable"
    missing.write_text("", encoding="utf-8")
    transcript, _, _ = setup.run([], agent=ClaudeAgent(str(missing)))
    assert transcript.infra_error == "agent_start"
    assert transcript.error is not None and transcript.error.startswith("could not start")


def test_find_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AgentError, match=r"^--eval-claude-bin /no/such: no such file$"):
        ClaudeAgent.find_binary("/no/such")
    binary = tmp_path / "claude"
    binary.write_text("", encoding="utf-8")
    assert ClaudeAgent.find_binary(str(binary)) == str(binary.resolve())
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(AgentError, match="the claude binary was not found on PATH"):
        ClaudeAgent.find_binary(None)
