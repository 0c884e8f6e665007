"""The agent contract: one ``pytest evals`` session per agent CLI over one fixture suite, whose
result every contract test reads (``test_agent_contract.py``).

The suite is the release-helper plugin with its case ``next`` (the skill, two arms) and, in a
project beside it with no plugin (so one arm), the case ``sealed-case``: a shell command that
tries the sandbox's fences (:func:`tests.helpers.fence_probe`) and prints the environment,
with the operator's secrets set. Each CLI asks for the same things in its own words: a
:class:`Dialect` holds its tool names and the scripted model's rules. The session runs in a
process of its own (``python -m pytest``), so a module-scoped fixture can hold it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use
from tests.e2e.conftest import CODEX_KEY, cli_environment
from tests.e2e.release_kit import PROMPT, SKILL_MD
from tests.helpers import FENCE_DONE, fence_probe

#: The one-arm case that tries the fences and lists the environment.
SEALED = "sealed-case"
SEALED_PROMPT = "Try the fences and show me your environment."
#: The operator's variables the session is started with: none is on the allow-list.
SECRETS = {
    "DEPLOY_SECRET": "s3cr3t-d3pl0y-value",
    "MY_SECRET_TOKEN": "s3cr3t-value",
    "PLAIN_SETTING": "plain-value-42",
    "PLUGIN_EVAL_TEST_SECRET_TOKEN": "codex-e2e-secret-4815162342",
}
#: The skill's file as Codex's model reads it: from the run's working directory (``home/cwd``)
#: to its ``CODEX_HOME`` (``config/codex``), where the with arm installed the plugin.
CODEX_SKILL_FILE = (
    "../../config/codex/plugins/cache/eval/release-helper/1.2.0/skills/next-version/SKILL.md"
)
#: What each CLI sends back when the skill loaded (Gemini CLI, opencode).
GEMINI_ACTIVATED = '<activated_skill name="next-version">'
GEMINI_UNKNOWN_SKILL = "must be equal to one of the allowed values"
OPENCODE_LOADED = '<skill_content name="next-version">'


@dataclass(frozen=True)
class Dialect:
    """How one agent CLI is asked for the contract's tool calls."""

    agent: str
    #: The :class:`ScriptedModel` attribute that logs this CLI's requests.
    log: str
    #: The CLI's own names of its skill and shell tools.
    skill_tool: str
    shell_tool: str
    #: The scripted model's rules for the case ``next`` (the skill in the with arm only).
    skill_rules: tuple[Rule, ...]
    #: Whether the ``skill-fired`` grader matches the skill's full name (``input_match``):
    #: Copilot's skill input names the skill alone.
    full_name: bool = True
    #: The session's own options (``-n``, a pinned model).
    options: tuple[str, ...] = ("-n0",)
    #: The key the CLI reads from the operator's environment, where it is long enough to be
    #: redacted (the scripted model's Anthropic and Gemini key is shorter than
    #: ``util.redact.MIN_LENGTH``: a CLI that hands it to its shell shows it there).
    key: str | None = None

    def shell_call(self, command: str) -> dict[str, Any]:
        """The shell tool's input for ``command``."""
        if self.agent == "codex":
            return {"cmd": command}
        if self.shell_tool == "bash":
            return {"command": command, "description": "Try the fences"}
        return {"command": command}


DIALECTS = {
    d.agent: d
    for d in (
        Dialect(
            "codex", "responses_requests", "exec_command", "exec_command",
            (
                Rule(when_tool_result="Bump the patch part", reply=text("1.4.1: fixes only.")),
                Rule(when_tool_result="", reply=text("Let us say 2.0.0.")),
                Rule(
                    when_prompt="release next",
                    reply=tool_use("exec_command", {"cmd": f"cat {CODEX_SKILL_FILE}"}),
                ),
            ),
            options=("-n0", "--eval-model", "fake-model"),
            key=CODEX_KEY,
        ),
        Dialect(
            "copilot", "message_requests", "skill", "bash",
            (
                Rule(when_tool_result="not found", reply=text("Let us say 2.0.0.")),
                # Copilot sends the skill's body as a user message after the result.
                Rule(when_prompt="Bump the patch part", reply=text("1.4.1: fixes only.")),
                Rule(
                    when_prompt="release next", reply=tool_use("skill", {"skill": "next-version"})
                ),
            ),
            full_name=False,
        ),
        Dialect(
            "gemini", "gemini_requests", "activate_skill", "run_shell_command",
            (
                Rule(when_tool_result=GEMINI_ACTIVATED, reply=text("1.4.1: fixes only.")),
                Rule(when_tool_result=GEMINI_UNKNOWN_SKILL, reply=text("Let us say 2.0.0.")),
                Rule(
                    when_prompt="release next",
                    reply=tool_use("activate_skill", {"name": "next-version"}),
                ),
            ),
        ),
        Dialect(
            "opencode", "message_requests", "skill", "bash",
            (
                Rule(when_tool_result=OPENCODE_LOADED, reply=text("1.4.1: fixes only.")),
                Rule(when_tool_result="", reply=text("Let us say 2.0.0.")),
                Rule(when_prompt="release next", reply=tool_use("skill", {"name": "next-version"})),
            ),
        ),
        Dialect(
            "qwen", "chat_requests", "skill", "run_shell_command",
            (
                Rule(when_tool_result="Bump the patch part", reply=text("1.4.1: fixes only.")),
                Rule(when_tool_result="not found", reply=text("Let us say 2.0.0.")),
                Rule(
                    when_prompt="release next",
                    reply=tool_use("skill", {"skill": "release-helper:next-version"}),
                ),
            ),
            # Qwen Code's session runs under two workers: its one -n 2 end-to-end session.
            options=("-n2",),
            key=CODEX_KEY,
        ),
    )
}  # fmt: skip


@dataclass
class ContractSession:
    """One agent's contract session: what it printed, wrote and sent to the model."""

    dialect: Dialect
    root: Path
    model: ScriptedModel
    output: str
    returncode: int
    doc: dict[str, Any]
    #: The file the fence probe tried to write in the project (it must not exist).
    outside: Path

    def case(self, name: str) -> dict[str, Any]:
        (found,) = [c for c in self.doc["cases"] if c["name"] == name]
        return found

    def run(self, case: str, arm: str = "with") -> dict[str, Any]:
        (found,) = self.case(case)["arms"][arm]
        return found

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The requests this CLI sent, in its API's form."""
        found: list[dict[str, Any]] = getattr(self.model, self.dialect.log)
        return found

    def firsts(self, words: str) -> list[dict[str, Any]]:
        """Each run's first request (no tool result yet) whose prompt holds ``words``."""
        return [r for r in self.requests if r["tool_result"] is None and words in r["prompt"]]

    def outcomes(self) -> dict[str, int]:
        return pytest.RunResult.parse_summary_nouns(self.output.splitlines())


def write_suite(root: Path, dialect: Dialect) -> tuple[Path, str]:
    """The contract's fixture suite under ``root``: ``release-helper/`` (the plugin and its
    case ``next``) and ``evals/sealed-case`` beside it (no plugin: one arm). Returns the file
    the fence probe tries to write and the sealed case's shell command."""
    plugin = root / "release-helper"
    files = {
        ".claude-plugin/plugin.json": json.dumps({"name": "release-helper", "version": "1.2.0"}),
        "skills/next-version/SKILL.md": SKILL_MD,
        "commands/bump.md": "---\ndescription: Bump it\n---\nBump $ARGUMENTS\n",
        "evals/next/prompt.md": f"---\nruns: 1\nallowed_tools: [Skill]\n---\n{PROMPT}\n",
        "evals/next/graders/answer.md": "---\ntype: regex\npattern: '1\\.4\\.1'\n---\n",
        "evals/next/graders/skill-fired.md": "---\ntype: tool_used\ntool: Skill\n"
        + ("input_match: release-helper:next-version\n" if dialect.full_name else "")
        + "---\n",
    }
    for name, body in files.items():
        (plugin / name).parent.mkdir(parents=True, exist_ok=True)
        (plugin / name).write_text(body, encoding="utf-8")
    sealed = root / "evals" / SEALED
    (sealed / "graders").mkdir(parents=True)
    front = "---\nruns: 1\nallowed_tools: [Bash]\n---\n"
    (sealed / "prompt.md").write_text(f"{front}{SEALED_PROMPT}\n", encoding="utf-8")
    graders = {
        "ran": "---\ntype: tool_used\ntool: Bash\n---\n",
        "made": "---\ntype: file_exists\npath: made.txt\n---\n",
    }
    for name, body in graders.items():
        (sealed / "graders" / f"{name}.md").write_text(body, encoding="utf-8")
    probe, _, outside = fence_probe(root)
    return outside, f"{probe}; env"


def run_contract(dialect: Dialect, binary: str, root: Path) -> ContractSession:
    """Write the fixture suite under ``root`` and run it with ``dialect``'s CLI against a
    scripted model of its own; the model is stopped when the caller calls ``model.stop()``."""
    outside, command = write_suite(root, dialect)
    model = ScriptedModel().start()
    model.add(
        Rule(when_tool_result=FENCE_DONE, reply=text("Done.")),
        Rule(
            when_prompt="Try the fences",
            reply=tool_use(dialect.shell_tool, dialect.shell_call(command)),
        ),
        *dialect.skill_rules,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(cli_environment(dialect.agent, model))
    env.update(SECRETS)
    agent = dialect.agent
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "evals", "release-helper/evals", "-p", "no:cacheprovider",
         "--rootdir", str(root), "--eval-agent", agent, f"--eval-{agent}-bin={binary}",
         "--eval-allow-tools", "Bash", "--eval-json", "out.json", *dialect.options],
        cwd=root, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    out = root / "out.json"
    doc = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return ContractSession(
        dialect, root, model, done.stdout + done.stderr, done.returncode, doc, outside
    )
