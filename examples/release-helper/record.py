"""Record this example's runs: the real ``claude`` binary against a scripted model, offline.

    python examples/release-helper/record.py [--claude-bin PATH] [pytest args ...]

The scripted model (``pytest_plugin_evals.testing``) answers each prompt the way a model would,
including trying the ``next-version`` skill in both arms — where the without arm finds no such
skill. The runs land in ``examples/release-helper/recorded/``; replay them with
``--eval-agent replay:examples/release-helper/recorded``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from pytest_plugin_evals.testing import Rule, ScriptedModel, text, tool_use

HERE = Path(__file__).resolve().parent
SANDBOXES = Path(tempfile.gettempdir()) / "release-helper-runs"
SKILL = "release-helper:next-version"
LAUNCHED = f"Launching skill: {SKILL}"
UNKNOWN = f"Unknown skill: {SKILL}"

NOTES = "## 1.4.1\n\n- Fix a crash when the config file is empty.\n- Fix a typo in --help.\n"

RULES = [
    # The skill's own case: the model reaches for the skill in both arms.
    Rule(
        when_prompt="release next",
        when_tool_result=LAUNCHED,
        reply=text("1.4.1 — two bug fixes and nothing else is a patch release."),
    ),
    Rule(
        when_prompt="release next",
        when_tool_result=UNKNOWN,
        reply=text("Two fixes since v1.4.0 — I would go to 2.0.0 to be safe."),
    ),
    Rule(when_prompt="release next", reply=tool_use("Skill", {"skill": SKILL})),
    Rule(
        when_prompt="Next version?",
        when_tool_result=LAUNCHED,
        reply=text("2.4.0: one new feature since 2.3.1 bumps the minor part."),
    ),
    Rule(when_prompt="Next version?", when_tool_result=UNKNOWN, reply=text("2.3.2 should do.")),
    Rule(when_prompt="Next version?", reply=tool_use("Skill", {"skill": SKILL})),
    # A decoy: no skill, in either arm.
    Rule(when_prompt="capital of France", reply=text("The capital of France is Paris.")),
    # A file-writing case: the plugin does not matter here, and Δ says so.
    Rule(
        when_prompt="RELEASE_NOTES.md",
        when_tool_result="File created",
        reply=text("Wrote RELEASE_NOTES.md."),
    ),
    Rule(
        when_prompt="RELEASE_NOTES.md",
        reply=tool_use("Write", {"file_path": "RELEASE_NOTES.md", "content": NOTES}),
    ),
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude-bin", default=os.environ.get("EVAL_CLAUDE_BIN") or "claude")
    args, rest = parser.parse_known_args()
    out = HERE / "recorded"
    shutil.rmtree(out, ignore_errors=True)
    with ScriptedModel(RULES, usage=(1200, 40)) as model:
        env = {**os.environ, **model.env()}
        command = [
            sys.executable,
            "-m",
            "pytest",
            str(HERE),
            "-p",
            "no:cacheprovider",
            "--eval-agent",
            "claude",
            f"--eval-claude-bin={args.claude_bin}",
            "--eval-allow-tools",
            "Write",
            f"--eval-output-dir={out}",
            "--basetemp",
            "/tmp/release-helper-runs",
            *rest,
        ]
        status = subprocess.call(command, env=env)
    scrub(out)
    return status


def scrub(folder: Path) -> None:
    """Recorded files name no machine's folders: the example's path becomes ``<example>``, the
    runs' sandboxes ``<sandbox>``."""
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".jsonl", ".html"):
            data = path.read_text(encoding="utf-8")
            data = data.replace(str(HERE), "<example>").replace(str(SANDBOXES), "<sandbox>")
            path.write_text(data, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
