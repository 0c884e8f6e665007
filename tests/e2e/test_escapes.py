"""A hostile shell under every agent: the escape probes, as root and as an ordinary user.

Each agent's shell (Claude Code's Bash inside its own sandbox, Copilot's, Codex's, opencode's,
Gemini CLI's and Qwen Code's shells, a ``cmd:`` agent itself) runs a script its CLI cannot read,
which tries every way out the sandbox must close (:mod:`tests.escape_kit`): a hidden file of the
repository around the plugin, a sibling checkout, the operator's home and runtime folder,
``/etc/shadow``, a host process's environment, its ``cwd``, a signal to it, a loopback listener,
an abstract Unix socket, a file written outside, a daemon left behind, and another agent's
credentials. Every canary must be untouched. CI runs this module as root and again as an
ordinary user.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.conftest import agent_cli
from tests.e2e.conftest import CODEX_KEY, cli_environment
from tests.e2e.escape_kit import DONE, Canaries, make_canaries, visible_variables

#: Each agent's shell tool, and how it takes the command.
SHELLS: dict[str, tuple[str, str]] = {
    "claude": ("Bash", "command"),
    "copilot": ("bash", "command"),
    "codex": ("exec_command", "cmd"),
    "opencode": ("bash", "command"),
    "gemini": ("run_shell_command", "command"),
    "qwen": ("run_shell_command", "command"),
}

#: The credentials each agent's shell sees: its own, unless its CLI hides them from its
#: commands (Claude Code's sandbox, Codex's `core` environment, Copilot's --secret-env-vars);
#: every other one must stay out of sight.
OWN_CREDENTIALS = {
    "claude": set(),
    "copilot": set(),
    "codex": set(),
    "opencode": {"ANTHROPIC_API_KEY"},
    "gemini": {"GEMINI_API_KEY"},
    "qwen": {"OPENAI_API_KEY"},
    "cmd": set(),
}
#: Every credential the operator holds in these tests.
CREDENTIALS = {
    "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "COPILOT_PROVIDER_API_KEY", "GEMINI_API_KEY",
    "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY",
}  # fmt: skip


#: A ``cmd:`` agent that runs the probe itself and reports it as a tool call.
CMD_AGENT = """\
import json, os, subprocess, sys
sys.stdin.read()
command = open(sys.argv[1]).read()
done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60)
with open(os.environ["EVAL_TRACE_FILE"], "a") as fh:
    call = {"type": "tool_call", "name": "Bash", "input": {"command": "probe"},
            "output": done.stdout + done.stderr}
    fh.write(json.dumps(call) + "\\n")
print("probed")
"""


#: The operator's keys, long enough to be redacted (the scripted model takes any key).
KEYS = {
    "ANTHROPIC_API_KEY": "sk-ant-operator-4f1c9e2b7a",
    "COPILOT_PROVIDER_API_KEY": "copilot-operator-8d3a6b1e",
    "GEMINI_API_KEY": "gemini-operator-2c7f5a9d",
    "OPENAI_API_KEY": CODEX_KEY,
    "GITHUB_TOKEN": "ghp-operator-token-0123456789",
    "AWS_SECRET_ACCESS_KEY": "aws-operator-secret-0123456789",
}


def every_agents_credentials(model: ScriptedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator holds the credentials of every agent at once (one CI job, several CLIs)."""
    for agent in ("claude", "copilot", "codex", "gemini"):
        for key, value in cli_environment(agent, model).items():
            monkeypatch.setenv(key, value)
    for key, value in KEYS.items():
        monkeypatch.setenv(key, value)


def make_case(canaries: Canaries) -> None:
    files = {
        ".claude-plugin/plugin.json": json.dumps({"name": "kit", "version": "1.0.0"}),
        "evals/probe/prompt.md": "---\nruns: 1\nallowed_tools: [Bash]\n---\nRun the probe.\n",
        "evals/probe/graders/done.md": "---\ntype: regex\npattern: .\n---\n",
    }
    for name, body in files.items():
        path = canaries.plugin / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")


def probe_output(doc: dict[str, Any], agent: str) -> str:
    """What the probe printed: its tool call's output in the kept run."""
    (case,) = doc["cases"]
    (run,) = case["arms"]["with"]
    assert run["infraError"] is None, run
    meta = json.loads((Path(run["tracePath"]).parent / "meta.json").read_text("utf-8"))
    outputs = [str(c.get("output") or "") for c in meta["toolCalls"]]
    return "\n".join(outputs)


@pytest.mark.parametrize(
    "agent", ["claude", "copilot", "codex", "opencode", "gemini", "qwen", "cmd"]
)
def test_a_hostile_shell_touches_no_canary(
    pytester: pytest.Pytester,
    scripted_model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    claude_bin: str,
    agent: str,
) -> None:
    canaries = make_canaries(pytester, monkeypatch)
    try:
        make_case(canaries)
        every_agents_credentials(scripted_model, monkeypatch)
        command = canaries.probe_command()
        args = ["plugins/kit/evals", "-p", "no:cacheprovider", "--eval-ablation", "none",
                "--eval-allow-tools", "Bash", "--eval-json", "out.json"]  # fmt: skip
        if agent == "cmd":
            (pytester.path / "probe.sh").write_text(command, encoding="utf-8")
            (pytester.path / "agent.py").write_text(CMD_AGENT, encoding="utf-8")
            spec = "cmd:" + shlex.join(
                [sys.executable, str(pytester.path / "agent.py"), str(pytester.path / "probe.sh")]
            )
            args += ["--eval-agent", spec]
        else:
            tool, field = SHELLS[agent]
            given: dict[str, Any] = {field: command}
            if tool == "Bash" or tool == "bash":
                given["description"] = "Run the probe"
            scripted_model.add(
                Rule(when_tool_result=DONE, reply=text("Probed.")),
                Rule(when_prompt="Run the probe", reply=tool_use(tool, given)),
            )
            binary = claude_bin if agent == "claude" else agent_cli(agent)
            args += ["--eval-agent", agent, f"--eval-{agent}-bin={binary}"]
            if agent in ("codex", "qwen"):
                args += ["--eval-model", "fake-model"]
        result = pytester.runpytest(*args)
        doc = json.loads((pytester.path / "out.json").read_text(encoding="utf-8"))
        output = probe_output(doc, agent)
        canaries.assert_untouched(output)
        foreign = visible_variables(output) & (CREDENTIALS - OWN_CREDENTIALS[agent])
        assert not foreign, f"{agent}'s shell sees {foreign}"
        # What it prints of a key — its own, which some shells see — reaches no report.
        for name, value in KEYS.items():
            assert value not in output, f"{name} unredacted"
        for name in OWN_CREDENTIALS[agent]:
            assert f"[redacted {name}]" in output, f"{agent}'s own {name}"
        canaries.assert_no_daemon()
        result.assert_outcomes(passed=1)
    finally:
        canaries.close()
