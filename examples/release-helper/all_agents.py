"""Run this example's suite under five of the six agent CLIs (all but Qwen Code) in one
session, offline, against one scripted model.

    python examples/release-helper/all_agents.py [--agents claude,codex] [--output DIR]
        [--claude-bin PATH] [--copilot-bin PATH] ... [pytest args ...]

Claude Code, GitHub Copilot CLI, Codex CLI, opencode and Gemini CLI each speak their own wire API
(Anthropic Messages, OpenAI Responses, Gemini); the scripted model (``pytest_plugin_evals.testing``)
speaks them all, and each CLI is pointed at it through its operator's usual variables. The rules
make every agent reach for the ``next-version`` skill the way that CLI does — a ``Skill`` call for
Claude Code, ``skill`` for Copilot and opencode, reading ``SKILL.md`` with the shell for Codex,
``activate_skill`` for Gemini CLI — and answer well when the skill loaded, badly when the without
arm finds none. The session prints its per-agent table; this script then prints one line per
agent from the JSON document.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use

HERE = Path(__file__).resolve().parent
AGENTS = ("claude", "copilot", "codex", "opencode", "gemini")
#: Left out (``-k``): the Write case (each CLI has its own file tool, and Codex writes with
#: ``apply_patch``, which these rules do not script) and the golden case that needs a secret
#: (skipped without it anyway).
LEFT_OUT = "not writes-release-notes and not release-with-token"
KEY = "sk-test"
#: Copilot's model (``COPILOT_MODEL``: it needs one with a custom provider). The others run
#: their own default model: the scripted model answers any. Codex's default model calls its
#: tools from JavaScript, through one ``exec`` tool; the scripted model turns the rules'
#: ``exec_command`` call into such a script, and the run records the command as Codex ran it.
MODEL = "claude-sonnet-4-5"
SKILL = "release-helper:next-version"
#: Codex lists the plugin's skills with their paths and the model reads one with the shell: the
#: with arm installed the plugin in ``CODEX_HOME`` (``config/codex`` beside the run's ``home/cwd``).
SKILL_FILE = (
    "../../config/codex/plugins/cache/eval/release-helper/1.2.0/skills/next-version/SKILL.md"
)
#: A tool result that says the skill loaded, for each CLI: Claude Code ``Launching skill``,
#: opencode ``<skill_content``, Gemini CLI ``<activated_skill``, Codex the file's own text.
LOADED = re.compile(r"Launching skill: |<skill_content |<activated_skill |Classify the changes")
#: Copilot sends the skill's body as a user message of its own: the prompt becomes the body.
BODY = "Classify the changes since then"


def skill_rules(prompt: str, good: str, bad: str) -> list[Rule]:
    """A case that should use the skill: each CLI's way to call it, then an answer by whether
    it loaded (any other tool result: the without arm found no such skill)."""
    return [
        Rule(when_prompt=prompt, when_tool_result=LOADED, reply=text(good)),
        Rule(when_prompt=prompt, when_tool_result="", reply=text(bad)),
        Rule(
            when_prompt=prompt, when_tool_offered="Skill", reply=tool_use("Skill", {"skill": SKILL})
        ),
        Rule(
            when_prompt=prompt,
            when_tool_offered="activate_skill",
            reply=tool_use("activate_skill", {"name": "next-version"}),
        ),
        Rule(
            when_prompt=prompt,
            when_tool_offered="exec_command",
            reply=tool_use("exec_command", {"cmd": f"cat {SKILL_FILE}"}),
        ),
        # Copilot's skill tool takes ``skill``, opencode's ``name``: each ignores the other's.
        Rule(
            when_prompt=prompt,
            when_tool_offered="skill",
            reply=tool_use("skill", {"skill": "next-version", "name": "next-version"}),
        ),
    ]


RULES = [
    *skill_rules(
        "release next",
        "1.4.1 — two bug fixes and nothing else is a patch release.",
        "Two fixes since v1.4.0 — I would go to 2.0.0 to be safe.",
    ),
    *skill_rules(
        "Next version?",
        "2.4.0: one new feature since 2.3.1 bumps the minor part.",
        "2.3.2 should do.",
    ),
    # Copilot, after its skill loaded: the prompt is the skill's body, not the case's, so one
    # answer serves both skill cases.
    Rule(
        when_prompt=BODY,
        reply=text(
            "1.4.1 for fixes only — a patch release; one new feature since 2.3.1 makes it 2.4.0."
        ),
    ),
    # A decoy: no skill, in either arm.
    Rule(when_prompt="capital of France", reply=text("The capital of France is Paris.")),
    Rule(
        when_prompt="patch release",
        reply=text(
            "A patch release only fixes bugs in a backwards-compatible way: 1.4.0 becomes 1.4.1."
        ),
    ),
    Rule(
        when_prompt="release helper could do",
        reply=text("It can work out the next version, tag releases and write release notes."),
    ),
    Rule(
        when_prompt="changelog entry",
        reply=text("Write each changelog entry for the user: say what changed for them, not how."),
    ),
]


def endpoints(model: ScriptedModel) -> dict[str, str]:
    """Each CLI's usual variables, pointing it at the scripted model."""
    return {
        **model.env(),  # Claude Code and opencode: ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY
        **model.gemini_env(),  # Gemini CLI: GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY
        "OPENAI_BASE_URL": model.openai_base_url,  # Codex (a Responses API provider)
        "OPENAI_API_KEY": KEY,
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_BASE_URL": model.base_url,
        "COPILOT_PROVIDER_API_KEY": KEY,
        "COPILOT_MODEL": MODEL,
    }


def agent_lines(doc: dict[str, Any]) -> list[str]:
    """One line per agent from the JSON document's ``agents`` summary."""

    def num(value: float | None, sign: str = "") -> str:
        return "-" if value is None else f"{value:{sign}.2f}"

    return [
        f"{a['agent']:<9} with {num(a['overallScore'])}  without {num(a['overallScoreWithout'])}"
        f"  Δ {num(a['meanDelta'], '+')}  cases passed {a['casesPassed']}/{a['cases']}"
        f"  runs graded {a['runsGraded']}/{a['runsTotal']}"
        + (f"  errors {a['errors']}" if a["errors"] else "")
        for a in doc.get("agents", [])
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--output", type=Path, default=None)
    for name in AGENTS:
        default = os.environ.get(f"EVAL_{name.upper()}_BIN") or name
        parser.add_argument(f"--{name}-bin", default=default)
    args, rest = parser.parse_known_args()
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    output = args.output or Path(tempfile.mkdtemp(prefix="release-helper-agents-"))
    with ScriptedModel(RULES, usage=(1200, 40)) as model:
        env = {**os.environ, **endpoints(model)}
        command = [
            sys.executable, "-m", "pytest", str(HERE), "-p", "no:cacheprovider",
            "--rootdir", str(HERE), "--eval-agents", ",".join(agents),
            *[f"--eval-{name}-bin={getattr(args, name + '_bin')}" for name in agents],
            "--eval-runs", "1", "-k", LEFT_OUT,
            f"--eval-output-dir={output}", *rest,
        ]  # fmt: skip
        status = subprocess.call(command, env=env, cwd=HERE)
    documents = sorted(output.rglob("aggregate-result.json"))
    if documents:
        doc = json.loads(documents[-1].read_text(encoding="utf-8"))
        print(f"\nper agent ({documents[-1].parent}):")
        for line in agent_lines(doc):
            print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
